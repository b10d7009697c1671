"""IoOpsWeigher: weigh hosts by their concurrent I/O heavy operations.

The default multiplier (-1.0) prefers quiet hosts; a positive one
prefers busy ones.
"""

import numpy as np

from weighers import base


class IoOpsWeigher(base.BaseWeigher):
    name = "IoOpsWeigher"
    multiplier_option = "io_ops_weight_multiplier"
    minval = 0

    def raw(self, request, rows):
        return request.table.num_io_ops[rows].astype(np.float64)
