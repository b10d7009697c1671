"""RAMWeigher: weigh hosts by free RAM (MB).

A positive ram_weight_multiplier spreads instances over the hosts with
the most free memory; a negative one stacks them.
"""

import numpy as np

from weighers import base


class RAMWeigher(base.BaseWeigher):
    name = "RAMWeigher"
    multiplier_option = "ram_weight_multiplier"
    # Overcommitted hosts report negative free RAM: Nova clamps at 0.
    minval = 0

    def raw(self, request, rows):
        return request.table.free_ram_mb[rows].astype(np.float64)
