"""AggregateTypeAffinityFilter: hosts in aggregates with metadata
instance_type (comma-separated flavor names) take only those flavors. A
host in several such aggregates takes a flavor any of them names; a host
in none takes any flavor."""

import numpy as np

from filters import base, host_utils

KEY = "instance_type"


class AggregateTypeAffinityFilter(base.BaseFilter):
    name = "AggregateTypeAffinityFilter"
    # Aggregates and flavor do not change within a request.
    run_filter_once_per_request = True

    def mask(self, request, rows):
        flavor = request.spec.flavor.name
        records = request.table.agg_records
        restricts = np.zeros(len(records), bool)
        admits = np.zeros(len(records), bool)
        for col, record in enumerate(records):
            value = record.metadata.get(KEY) if record is not None else None
            if value is not None:
                restricts[col] = True
                admits[col] = flavor in host_utils.split_values(value)
        return host_utils.aggregate_gate(request.table, rows, restricts,
                                         admits)

    def why(self, request, row):
        listed = host_utils.aggregate_values(request.table, row, key=KEY)
        return (f"flavor {request.spec.flavor.name} is not among the "
                f"instance_type of the host's aggregates ({listed})")
