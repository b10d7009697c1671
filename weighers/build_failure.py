"""BuildFailureWeigher: weigh hosts down by their recent failed builds.

The raw value is the failed build count; as in Nova the multiplier is
the *negated* build_failure_weight_multiplier (or aggregate override),
so that each failure lowers the host. The large default (1000000.0)
makes a failing host lose to any healthy one.
"""

import numpy as np

from weighers import base


class BuildFailureWeigher(base.BaseWeigher):
    name = "BuildFailureWeigher"
    multiplier_option = "build_failure_weight_multiplier"

    def raw(self, request, rows):
        return request.table.failed_builds[rows].astype(np.float64)

    def multiplier(self, request, rows):
        # Negated after the aggregate override, as Nova does.
        return -super().multiplier(request, rows)
