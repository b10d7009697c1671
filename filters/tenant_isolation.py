"""AggregateMultiTenancyIsolation: hosts in aggregates whose metadata has
keys starting with filter_tenant_id (filter_tenant_id,
filter_tenant_id_2, ...; comma-separated project ids) take only those
projects. The ids of all the host's aggregates add up: a host in two
such aggregates takes the projects of both. Hosts in no such aggregate
take any project. It isolates hosts, not projects: the listed projects
may still land elsewhere."""

import numpy as np

from filters import base, host_utils

PREFIX = "filter_tenant_id"


class AggregateMultiTenancyIsolation(base.BaseFilter):
    name = "AggregateMultiTenancyIsolation"
    # Aggregates and project do not change within a request.
    run_filter_once_per_request = True

    def mask(self, request, rows):
        project = request.spec.project_id
        records = request.table.agg_records
        restricts = np.zeros(len(records), bool)
        admits = np.zeros(len(records), bool)
        for col, record in enumerate(records):
            if record is None:
                continue
            for key, value in record.metadata.items():
                if key.startswith(PREFIX):
                    restricts[col] = True
                    admits[col] |= project in host_utils.split_values(value)
        return host_utils.aggregate_gate(request.table, rows, restricts,
                                         admits)

    def why(self, request, row):
        listed = host_utils.aggregate_values(request.table, row,
                                             prefix=PREFIX)
        return (f"project {request.spec.project_id} is not among the "
                f"tenants of the host's aggregates ({listed})")
