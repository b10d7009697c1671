"""PCIWeigher: keep hosts with free PCI devices for the requests that
need them.

Nova's rule does not look at the request: a host weighs
``MAX_DEVS - min(free, MAX_DEVS - 1)``, free being the sum of its PCI
pool counts, so fewer free devices weigh more:

- a request without PCI devices prefers hosts with none (weight 100),
  then those with the fewest;
- a request with PCI devices only sees hosts that passed the PCI filters
  and stacks onto the one with the fewest free devices, keeping large
  pools whole for larger requests.

Beyond MAX_DEVS - 1 devices hosts weigh the same (1): there is no
scarcity to protect. Nova sets no minval/maxval on this weigher, so
neither do we; the raw range is [1, 100].

Free devices are those the node reported less what the scheduler has
placed there since (scheduler.host_devices), as in Nova's host state.
"""

import numpy as np

from weighers import base

MAX_DEVS = 100


class PCIWeigher(base.BaseWeigher):
    name = "PCIWeigher"
    multiplier_option = "pci_weight_multiplier"

    def raw(self, request, rows):
        # The table keeps the sum of pool counts per node as a column.
        free = request.table.pci_devices[rows].astype(np.float64)
        return MAX_DEVS - np.minimum(free, MAX_DEVS - 1)
