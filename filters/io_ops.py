"""IoOpsFilter and AggregateIoOpsFilter: keep hosts busy with I/O heavy
work (builds, resizes, snapshots...) out.

A host passes while its count is strictly below the limit: with the
default of 8, a host already running 8 such operations is full."""

import numpy as np

from filters import base, host_utils

KEY = "max_io_ops_per_host"


class IoOpsFilter(base.BaseFilter):
    name = "IoOpsFilter"
    # The count grows with each instance placed: judge every instance.

    def limits(self, request, rows):
        return np.full(len(rows), self.conf.filter_scheduler.
                       max_io_ops_per_host, np.int64)

    def mask(self, request, rows):
        return request.table.num_io_ops[rows] < self.limits(request, rows)

    def why(self, request, row):
        limit = self.limits(request, np.array([row]))[0]
        return (f"{request.table.num_io_ops[row]} I/O heavy operations in "
                f"progress, the limit is {limit}")


class AggregateIoOpsFilter(IoOpsFilter):
    """The limit may be set per aggregate (metadata max_io_ops_per_host,
    higher or lower than the option); a host in several aggregates gets
    the smallest of their values, a host in none the option."""

    name = "AggregateIoOpsFilter"

    def limits(self, request, rows):
        return host_utils.aggregate_limit(
            request.table, rows, KEY,
            self.conf.filter_scheduler.max_io_ops_per_host)
