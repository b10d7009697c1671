"""HypervisorVersionWeigher: weigh hosts by hypervisor version (an
integer; a node that reports none counts as 0).

Positive multiplier prefers newer hypervisors, negative older ones.
"""

import numpy as np

from weighers import base


class HypervisorVersionWeigher(base.BaseWeigher):
    name = "HypervisorVersionWeigher"
    multiplier_option = "hypervisor_version_weight_multiplier"

    def raw(self, request, rows):
        # The table stores a missing version as 0 already.
        return request.table.hypervisor_version[rows].astype(np.float64)
