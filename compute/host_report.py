"""What a compute node tells the scheduler that placement does not hold:
the ``report`` of gantt's ``update_host_info`` call (rpc.client), made
from a HostDescription.

Sizes (vcpus, memory_mb, local_gb), the allocation ratios, the
hypervisor type, and the NUMA topology in the form the scheduler's NUMA
fitting reads (filters/numa_fit.py: cells with ``cpuset`` for shared
guest CPUs, ``pcpuset`` for pinned ones, ``memory`` in MB and
``mempages`` per page size, usage at zero: the scheduler counts the
instances it placed).

``pci_device_pools``: the enabled SR-IOV VFs, counted in pools as Nova's
PciDeviceStats keeps them (flat dicts, the form the scheduler's PCI
filter and device accounting read: filters/pci_fit.py) so that a PCI
alias or a Neutron SR-IOV port matches the same devices it would on a
nova-compute. One pool per PF and distinct (vendor_id, product_id,
numa_node) of its VFs, with the tags a request can name:

    {"vendor_id": "8086", "product_id": "154c", "numa_node": 0,
     "dev_type": "type-VF", "address": <the PF's PCI address>,
     "remote_managed": "false", "physical_network": "physnet1",
     "parent_ifname": "ens1f0", "count": 8}

- ``address`` is the PF's, as Nova splits pools per parent device: a
  pool is then one SRIOV_NET_VF provider's devices;
- ``remote_managed`` "false" because Neutron's port requests ask for it
  (the scheduler compares text case-insensitively);
- ``physical_network`` only when the PF has one (config or host file),
  ``parent_ifname`` only when its interface is known; a request without
  ``physical_network`` (a PCI alias) matches either way;
- the counts add up to ``num_vfs``, the SRIOV_NET_VF inventory: the
  VFs discovery read first, then, when ``num_vfs`` asks more (a host
  file), VFs like the PF's (its vendor, ``vf_product_id``, node). VFs
  whose vendor or product id is unknown are left out: no request could
  name them. PFs themselves are not offered (no ``type-PF`` pool).
"""

from collections import Counter

from compute.discovery import DiscoveryConfig, HostDescription

HYPERVISOR_TYPE = "gantt"
SMALL_PAGE_KB = 4
VF_TYPE = "type-VF"


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


def _vf_ids(pf):
    """(vendor_id, product_id, numa_node) of each of the PF's enabled
    VFs, as many as ``num_vfs`` (which a host file may have changed)."""
    ids = [(vf.vendor_id, vf.product_id, vf.numa_node)
           for vf in pf.vfs[:pf.num_vfs]]
    missing = pf.num_vfs - len(ids)
    ids += [(pf.vendor_id, pf.vf_product_id, pf.numa_node)] * missing
    # A VF without ids could match no request, and Nova's pools need them.
    return [(v, p, node) for v, p, node in ids if v and p]


def _vf_pool(pf, vendor_id, product_id, numa_node, count):
    pool = {"vendor_id": vendor_id, "product_id": product_id,
            "numa_node": numa_node, "dev_type": VF_TYPE,
            "address": pf.address, "remote_managed": "false"}
    if pf.physnet:
        pool["physical_network"] = pf.physnet
    if pf.interface:
        pool["parent_ifname"] = pf.interface
    pool["count"] = count
    return pool


def pci_device_pools(host: HostDescription) -> list:
    """The pools of the host's enabled VFs (see the module's doc)."""
    pools = []
    for pf in host.physical_functions:
        counts = Counter(_vf_ids(pf))
        pools += [_vf_pool(pf, vendor_id, product_id, numa_node, count)
                  for (vendor_id, product_id, numa_node), count
                  in counts.items()]
    return pools


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
    # Always sent, [] too: a node whose VFs went away must say so (an
    # update keeps the fields a report leaves out).
    report["pci_device_pools"] = pci_device_pools(host)
    return report
