"""DifferentHostFilter: with the hint different_host (instance uuids),
hosts holding any of those instances are rejected."""

import numpy as np

from filters import base, host_utils

HINT = "different_host"


class DifferentHostFilter(base.BaseFilter):
    name = "DifferentHostFilter"
    # Instances do not move within a request.
    run_filter_once_per_request = True

    def mask(self, request, rows):
        uuids = request.hints(HINT)
        if not uuids:
            return np.ones(len(rows), bool)
        table = request.table
        return ~host_utils.hosts_mask(
            table, host_utils.hosts_holding(table, uuids), rows)

    def why(self, request, row):
        held = request.table.instances_on(row)
        found = [u for u in request.hints(HINT) if u in held]
        return (f"host {request.table.hosts[row]} holds different_host "
                f"instance {', '.join(found)}")
