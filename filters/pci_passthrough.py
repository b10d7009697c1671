"""PciPassthroughFilter: does the node have the PCI devices the request
asks for?

A request (count, spec) is met when the node's PCI pools matching its
spec (filters.pci_fit) hold at least ``count`` devices in all. Each
request is judged on its own, not after the others took their devices
(Nova's filter does the same).

Differences from Nova: NUMA affinity of devices is not considered here
(NUMATopologyFilter does not either), and with [filter_scheduler]
pci_in_placement the pools are not narrowed to the providers placement
allocated.
"""

import numpy as np

from filters import base, pci_fit


class PciPassthroughFilter(base.BaseFilter):
    name = "PciPassthroughFilter"
    RUN_ON_REBUILD = False

    def mask(self, request, rows):
        needs = pci_fit.needs_of(request)
        if not needs:
            return base.all_pass(rows)
        table = request.table

        def passes(row):
            pools = pci_fit.pools_of(table, row)
            return bool(pools) and all(n.available(pools) >= n.count
                                       for n in needs)

        return np.fromiter((passes(r) for r in rows), bool,
                           count=len(rows))

    def why(self, request, row):
        pools = pci_fit.pools_of(request.table, row)
        for need in pci_fit.needs_of(request):
            have = need.available(pools)
            if have < need.count:
                return (f"PCI request {need.label} wants {need.count} "
                        f"devices; the host has {have} that match")
        return super().why(request, row)
