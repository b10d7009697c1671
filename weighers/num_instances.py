"""NumInstancesWeigher: weigh hosts by how many instances they run.

Off by default (multiplier 0.0); positive packs, negative spreads.
"""

import numpy as np

from weighers import base


class NumInstancesWeigher(base.BaseWeigher):
    name = "NumInstancesWeigher"
    multiplier_option = "num_instances_weight_multiplier"

    def raw(self, request, rows):
        return request.table.num_instances[rows].astype(np.float64)
