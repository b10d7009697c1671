"""SameHostFilter: with the hint same_host (instance uuids), only hosts
holding at least one of those instances pass. Uuids the scheduler does
not know match no host, so a hint naming only unknown instances rejects
every host."""

import numpy as np

from filters import base, host_utils

HINT = "same_host"


class SameHostFilter(base.BaseFilter):
    name = "SameHostFilter"
    # Instances do not move within a request.
    run_filter_once_per_request = True

    def mask(self, request, rows):
        uuids = request.hints(HINT)
        if not uuids:
            return np.ones(len(rows), bool)
        table = request.table
        return host_utils.hosts_mask(
            table, host_utils.hosts_holding(table, uuids), rows)

    def why(self, request, row):
        return (f"host {request.table.hosts[row]} holds none of the "
                f"same_host instances {', '.join(request.hints(HINT))}")
