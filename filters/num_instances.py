"""NumInstancesFilter and AggregateNumInstancesFilter: keep full hosts
out. A host passes while it holds strictly fewer instances than the
limit, so max_instances_per_host is the most a host ever gets."""

import numpy as np

from filters import base, host_utils

KEY = "max_instances_per_host"


class NumInstancesFilter(base.BaseFilter):
    name = "NumInstancesFilter"
    # The count grows with each instance placed: judge every instance.

    def limits(self, request, rows):
        return np.full(len(rows), self.conf.filter_scheduler.
                       max_instances_per_host, np.int64)

    def mask(self, request, rows):
        return request.table.num_instances[rows] < self.limits(request, rows)

    def why(self, request, row):
        limit = self.limits(request, np.array([row]))[0]
        return (f"{request.table.num_instances[row]} instances on the host, "
                f"the limit is {limit}")


class AggregateNumInstancesFilter(NumInstancesFilter):
    """The limit may be set per aggregate (metadata
    max_instances_per_host); a host in several aggregates gets the
    smallest of their values, a host in none the option."""

    name = "AggregateNumInstancesFilter"

    def limits(self, request, rows):
        return host_utils.aggregate_limit(
            request.table, rows, KEY,
            self.conf.filter_scheduler.max_instances_per_host)
