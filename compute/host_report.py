"""What a compute node tells the scheduler that placement does not hold:
the ``report`` of gantt's ``update_host_info`` call (rpc.client), made
from a HostDescription.

Sizes (vcpus, memory_mb, local_gb), the allocation ratios, the
hypervisor type, and the NUMA topology in the form the scheduler's NUMA
fitting reads (filters/numa_fit.py: cells with ``cpuset`` for shared
guest CPUs, ``pcpuset`` for pinned ones, ``memory`` in MB and
``mempages`` per page size, usage at zero: the scheduler counts the
instances it placed). PCI device pools are not reported yet: discovery
does not read the virtual functions' own device ids, which a pool is
matched by.
"""

from compute.discovery import DiscoveryConfig, HostDescription

HYPERVISOR_TYPE = "gantt"
SMALL_PAGE_KB = 4


def _mempages(node):
    """Page sizes of one NUMA cell: the huge pages the node holds, and
    the small pages of the rest of its memory."""
    huge = sorted(node.hugepages.values(), key=lambda p: p.size_kb)
    huge_kb = sum(p.size_kb * p.total for p in huge)
    small = max(node.memory_mb * 1024 - huge_kb, 0) // SMALL_PAGE_KB
    pages = [{"size_kb": SMALL_PAGE_KB, "total": small, "used": 0,
              "reserved": 0}]
    pages += [{"size_kb": p.size_kb, "total": p.total,
               "used": p.total - p.free, "reserved": 0} for p in huge]
    return pages


def numa_topology(host: HostDescription) -> dict | None:
    """{"cells": [...]} of the host's NUMA nodes; None without any."""
    if not host.numa_nodes:
        return None
    cells = []
    for node in sorted(host.numa_nodes, key=lambda n: n.id):
        cells.append({
            "id": node.id,
            "cpuset": sorted(node.cpus & host.cpus.shared),
            "pcpuset": sorted(node.cpus & host.cpus.dedicated),
            "pinned_cpus": [],
            "cpu_usage": 0,
            "memory": node.memory_mb,
            "memory_usage": 0,
            "siblings": [],
            "mempages": _mempages(node),
        })
    return {"cells": cells}


def host_report(host: HostDescription,
                config: DiscoveryConfig | None = None) -> dict:
    """The ``report`` fields of update_host_info for ``host``."""
    config = config or DiscoveryConfig()
    report = {
        "hypervisor_type": HYPERVISOR_TYPE,
        "vcpus": len(host.cpus.shared),
        "memory_mb": host.memory.total_mb,
        "local_gb": host.disk.total_gb if host.disk is not None else 0,
        "cpu_allocation_ratio": config.cpu_allocation_ratio,
        "ram_allocation_ratio": config.ram_allocation_ratio,
        "disk_allocation_ratio": config.disk_allocation_ratio,
    }
    topology = numa_topology(host)
    if topology is not None:
        report["numa_topology"] = topology
    return report
