"""NUMATopologyFilter: do the guest's NUMA cells fit on the node's?

A request without numa_topology passes every host; one with it fails
hosts that report no NUMA topology, hosts with fewer cells than the
guest, and hosts where no assignment of the guest's cells to distinct
host cells fits (the rules, and Nova's, are filters.numa_fit's). With
hw:cpu_policy dedicated and hw:cpu_thread_policy require (flavor or
image), a host with no sibling threads fails.
"""

import numpy as np

from filters import base, numa_fit


def _verdict(request, row):
    """None when ``row`` passes, else why not."""
    guests, need_threads = numa_fit.requested_cells(request)
    table = request.table
    node = table.node(row)
    hosts = (numa_fit.host_cells(node.numa_topology) if node is not None
             else [])
    if not hosts:
        return "the guest asks for a NUMA topology; the host reports none"
    if need_threads and not any(h.threads for h in hosts):
        return ("cpu_thread_policy require wants hyperthreads; the host "
                "has no sibling threads")
    if len(guests) > len(hosts):
        return (f"the guest has {len(guests)} NUMA cells; the host only "
                f"{len(hosts)}")
    cpu_ratio = float(table.cpu_allocation_ratio[row])
    ram_ratio = float(table.ram_allocation_ratio[row])
    options = [[h for h, host in enumerate(hosts)
                if numa_fit.fits(g, host, cpu_ratio, ram_ratio)]
               for g in guests]
    if numa_fit.completes(options, 0, set()):
        return None
    for g, fitting in zip(guests, options, strict=True):
        if not fitting:
            return (f"guest NUMA cell {g.id} ({g.shared} shared CPUs, "
                    f"{g.pinned} pinned CPUs, {g.memory} MB) fits no host "
                    f"cell")
    return "the guest NUMA cells do not fit on distinct host cells"


class NUMATopologyFilter(base.BaseFilter):
    name = "NUMATopologyFilter"
    # Nova validates a rebuild's NUMA topology in its API instead.
    RUN_ON_REBUILD = False

    def mask(self, request, rows):
        if request.spec.numa_topology is None:
            return base.all_pass(rows)
        return np.fromiter((_verdict(request, r) is None for r in rows),
                           bool, count=len(rows))

    def why(self, request, row):
        if request.spec.numa_topology is None:
            return super().why(request, row)
        return _verdict(request, row) or super().why(request, row)
