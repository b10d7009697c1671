"""NUMA nodes: ``/sys/devices/system/node/node<N>/`` with ``cpulist``,
``meminfo`` (``Node N MemTotal``) and ``hugepages/``."""

from compute.discovery import sysfs
from compute.discovery.cpuset import parse_cpu_set
from compute.discovery.hugepages import read_hugepages
from compute.discovery.memory import meminfo
from compute.discovery.model import NumaNode

NODES = "sys/devices/system/node"


def discover_numa(root):
    """[NumaNode] sorted by id; [] where the kernel shows no nodes."""
    nodes = []
    for entry in sysfs.listdir(root, NODES):
        if not (entry.startswith("node") and entry[4:].isdigit()):
            continue
        here = f"{NODES}/{entry}"
        total_kb = meminfo(sysfs.read(root, f"{here}/meminfo")).get(
            "MemTotal", 0)
        nodes.append(NumaNode(
            id=int(entry[4:]),
            cpus=parse_cpu_set(sysfs.read(root, f"{here}/cpulist") or ""),
            memory_mb=total_kb // 1024,
            hugepages=read_hugepages(root, f"{here}/hugepages")))
    return sorted(nodes, key=lambda n: n.id)
