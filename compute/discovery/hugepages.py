"""Huge pages per size: ``hugepages-<size>kB/nr_hugepages`` and
``free_hugepages`` under ``/sys/kernel/mm/hugepages`` (host-wide) or
``/sys/devices/system/node/nodeN/hugepages`` (one NUMA node)."""

from compute.discovery import sysfs
from compute.discovery.model import HugePages


def read_hugepages(root, directory):
    """{size_kb: HugePages} for the ``hugepages-*`` entries under
    ``directory`` (relative to root)."""
    out = {}
    for entry in sysfs.listdir(root, directory):
        if not (entry.startswith("hugepages-") and entry.endswith("kB")):
            continue
        try:
            size = int(entry[len("hugepages-"):-2])
        except ValueError:
            continue
        here = f"{directory}/{entry}"
        out[size] = HugePages(
            size_kb=size,
            total=sysfs.read_int(root, f"{here}/nr_hugepages") or 0,
            free=sysfs.read_int(root, f"{here}/free_hugepages") or 0)
    return out


def discover_hugepages(root):
    return read_hugepages(root, "sys/kernel/mm/hugepages")
