"""CPUs: the online ids (``/sys/devices/system/cpu/online``, else the
``processor`` lines of ``/proc/cpuinfo``) and the shared and dedicated
sets from config."""

from compute.discovery import sysfs
from compute.discovery.cpuset import CpuSetError, format_cpu_set, parse_cpu_set
from compute.discovery.model import Cpus


class CpuConfigError(ValueError):
    """The configured CPU sets do not fit the host."""


def online_cpus(root):
    text = sysfs.read(root, "sys/devices/system/cpu/online")
    if text:
        return parse_cpu_set(text)
    ids = set()
    for line in (sysfs.read(root, "proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "processor":
            ids.add(int(value))
    return frozenset(ids)


def _configured(name, spec, online):
    if spec is None:
        return None
    try:
        ids = parse_cpu_set(spec)
    except CpuSetError as exc:
        raise CpuConfigError(f"{name}: {exc}") from None
    missing = ids - online
    if missing:
        raise CpuConfigError(
            f"{name}: CPUs {format_cpu_set(missing)} are not online "
            f"(online: {format_cpu_set(online) or 'none'})")
    return ids


def discover_cpus(root, shared_set=None, dedicated_set=None):
    """Cpus of the host at ``root``, with the configured sets checked:
    they name online CPUs and do not overlap. Neither set: all online
    CPUs are shared; only a dedicated set: no shared CPUs (as Nova)."""
    online = online_cpus(root)
    return cpus_from_sets(online, shared_set, dedicated_set)


def cpus_from_sets(online, shared_set=None, dedicated_set=None):
    shared = _configured("cpu_shared_set", shared_set, online)
    dedicated = _configured("cpu_dedicated_set", dedicated_set, online)
    if shared is not None and dedicated is not None:
        both = shared & dedicated
        if both:
            raise CpuConfigError(
                f"cpu_shared_set and cpu_dedicated_set overlap on CPUs "
                f"{format_cpu_set(both)}")
    if shared is None:
        shared = frozenset() if dedicated is not None else online
    return Cpus(online=online, shared=shared,
                dedicated=dedicated or frozenset())
