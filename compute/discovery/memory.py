"""Memory: ``MemTotal`` of ``/proc/meminfo`` (kB), in MB."""

from compute.discovery import sysfs
from compute.discovery.model import Memory


def meminfo(text):
    """{key: kB} from meminfo text (``/proc/meminfo`` lines ``MemTotal:
    1 kB``; a node's ``meminfo`` lines ``Node 0 MemTotal: 1 kB``)."""
    out = {}
    for line in (text or "").splitlines():
        key, _, value = line.partition(":")
        words = value.split()
        if not words:
            continue
        try:
            out[key.split()[-1]] = int(words[0])
        except (ValueError, IndexError):
            continue
    return out


def discover_memory(root, reserved_mb=0):
    total_kb = meminfo(sysfs.read(root, "proc/meminfo")).get("MemTotal", 0)
    return Memory(total_mb=total_kb // 1024, reserved_mb=reserved_mb)
