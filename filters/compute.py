"""ComputeFilter: only hosts whose compute service is enabled and up."""

import math

from filters import base


class ComputeFilter(base.BaseFilter):
    name = "ComputeFilter"
    # Service state is read once per request, as Nova does.
    run_filter_once_per_request = True
    # A rebuild stays on its host whatever the service says.
    RUN_ON_REBUILD = False

    def mask(self, request, rows):
        table = request.table
        return table.enabled[rows] & table.service_up(request.now, rows)

    def why(self, request, row):
        table = request.table
        service = table.service(row)
        if not table.enabled[row]:
            reason = service.disabled_reason
            return ("compute service is disabled"
                    + (f": {reason}" if reason else ""))
        if table.forced_down[row]:
            return "compute service is forced down"
        seen = table.last_seen_up[row]
        if not math.isnan(seen):
            return (f"compute service is down: last heartbeat "
                    f"{request.now - seen:.0f}s ago (service_down_time "
                    f"{table.conf.service_down_time}s)")
        return "compute service is down"
