"""DiskWeigher: weigh hosts by free disk (MB; the table's free_disk_mb is
the lower of disk_available_least and free_disk_gb, as Nova's host state
has it).

Positive disk_weight_multiplier spreads, negative stacks.
"""

import numpy as np

from weighers import base


class DiskWeigher(base.BaseWeigher):
    name = "DiskWeigher"
    multiplier_option = "disk_weight_multiplier"
    minval = 0

    def raw(self, request, rows):
        return request.table.free_disk_mb[rows].astype(np.float64)
