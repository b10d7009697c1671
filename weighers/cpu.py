"""CPUWeigher: weigh hosts by free vCPUs, counting the allocation ratio
(vcpus_total * cpu_allocation_ratio - vcpus_used).

Positive cpu_weight_multiplier spreads, negative stacks.
"""

import numpy as np

from weighers import base


class CPUWeigher(base.BaseWeigher):
    name = "CPUWeigher"
    multiplier_option = "cpu_weight_multiplier"
    minval = 0

    def raw(self, request, rows):
        table = request.table
        usable = (table.vcpus_total[rows].astype(np.float64)
                  * table.cpu_allocation_ratio[rows])
        return usable - table.vcpus_used[rows]
