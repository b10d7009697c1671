"""What a placed instance takes from its node's NUMA cells and PCI pools.

The host state table holds each node's NUMA topology and PCI pools as
the node last reported them. Once the scheduler places an instance on a
node, it takes the instance's share out of a copy of that record, as
Nova's host state does, so that the next instance of the request (and
any request before the node reports again) is judged on what is left.

The share follows the filters' own rules (filters.numa_fit and
filters.pci_fit, which the NUMA and PCI filters judge hosts by) and
Nova's accounting (nova.virt.hardware.numa_usage_from_instance_numa):
the guest cells go to the host cells Nova would pick; each takes its
memory from its host cell's memory usage and, where the host lists page
sizes, from the pages of the size the filter found for it (the smallest
when the guest asks none, whatever its CPU policy); shared CPUs add to
the cell's CPU usage; pinned CPUs are taken lowest id first (Nova packs
them onto sibling threads: the same CPUs on a host without hyperthreads
that lists its CPUs in order). PCI devices come from the pools the PCI
filter counts.

Known difference: Nova's host state fails (and logs, and leaves the
cells as they were) when it takes out a guest cell that asks no page
size from a host cell that lists none; we take the instance out all the
same.
"""

import copy
import dataclasses

from filters import numa_fit, pci_fit


def after_instance(request, node, cpu_ratio, ram_ratio):
    """``node`` (a host_reads.ComputeNode) with one instance of
    ``request`` taken out of its NUMA cells and PCI pools; ``node``
    itself when the request asks for neither."""
    spec = request.spec
    changes = {}
    if spec.numa_topology is not None and node.numa_topology:
        guests, _threads = numa_fit.requested_cells(request)
        topology = numa_after(node.numa_topology, guests, cpu_ratio,
                              ram_ratio, numa_fit.pci_per_cell(
                                  node.pci_device_pools),
                              bool(spec.pci_requests))
        if topology is not None:
            changes["numa_topology"] = topology
    if spec.pci_requests and node.pci_device_pools:
        changes["pci_device_pools"] = pci_after(node.pci_device_pools,
                                                pci_fit.needs_of(request))
    return dataclasses.replace(node, **changes) if changes else node


def numa_after(topology, guests, cpu_ratio, ram_ratio, pci=None,
               wants_pci=False):
    """A copy of ``topology`` with ``guests`` (numa_fit.GuestCell)
    placed on the host cells Nova would pick (``pci``, ``wants_pci``: as
    numa_fit.preference takes them); None when they do not fit (a forced
    host skips the filters)."""
    cells = numa_fit.host_cells(topology)
    assignment = numa_fit.assign(guests, cells, cpu_ratio, ram_ratio, pci,
                                 wants_pci)
    if assignment is None:
        return None
    out = copy.deepcopy(topology)
    raw_cells = numa_fit.object_fields(out)["cells"]
    for g, h in sorted(assignment.items()):
        _take(numa_fit.object_fields(raw_cells[h]), guests[g], cells[h])
    return out


def _take(cell, guest, host):
    """Record ``guest`` in the reported cell dict ``cell`` (the host
    cell ``host`` was parsed from)."""
    cell["memory_usage"] = int(cell.get("memory_usage") or 0) + guest.memory
    if guest.shared:
        cell["cpu_usage"] = int(cell.get("cpu_usage") or 0) + guest.shared
    if guest.pins and guest.pinned:
        cpus = cell.get("pcpuset") if "pcpuset" in cell else cell.get(
            "cpuset")
        pinned = set(cell.get("pinned_cpus") or ())
        free = sorted(set(cpus or ()) - pinned)
        cell["pinned_cpus"] = sorted(pinned | set(free[:guest.pinned]))
    size = numa_fit.page_size_used(guest, host)
    if size:
        for raw in cell.get("mempages") or ():
            page = numa_fit.object_fields(raw)
            if int(page.get("size_kb", 0)) == size:
                page["used"] = (int(page.get("used", 0))
                                + guest.memory * 1024 // size)
                break


def pci_after(pools, needs):
    """A copy of ``pools`` less the devices ``needs`` (the PCI filter's
    requests) take, each from the pools it may use, in pool order."""
    out = copy.deepcopy(list(pools))
    for need in needs:
        left = need.count
        for pool in out:
            if left <= 0:
                break
            if need.usable(pci_fit.pool_tags(pool)):
                take = min(left, int(pool.get("count", 0)))
                pool["count"] = int(pool.get("count", 0)) - take
                left -= take
    return out
