"""AggregateInstanceExtraSpecsFilter: flavor extra specs against the
metadata of the host's aggregates.

Extra specs taken: keys with no scope and keys in the
``aggregate_instance_extra_specs:`` scope (the rest of the key, colons
and all, is the metadata key); other scopes are ignored. A host passes a
key when one of the values its aggregates give that key matches the
requirement (filters.extra_specs_ops). A metadata value may list several
values separated by commas. A host none of whose aggregates sets the key
fails, even for a key with no scope: so with this filter enabled every
unscoped extra spec needs aggregate metadata to match.

Computed once per aggregate, not per host: which aggregates hold a
matching value, then a host passes when it is in one of them.
"""

import numpy as np

from filters import base, extra_specs_ops, host_utils

_SCOPE = "aggregate_instance_extra_specs"


def _specs(request):
    """[(extra spec key, metadata key, requirement, predicate)]."""
    memo_key = ("AggregateInstanceExtraSpecsFilter", "specs")
    specs = request.memo.get(memo_key)
    if specs is None:
        specs = []
        for key, req in request.spec.flavor.extra_specs.items():
            scope, sep, rest = key.partition(":")
            if sep and scope != _SCOPE:
                continue
            specs.append((key, rest if sep else key, req,
                          extra_specs_ops.parse(req)))
        request.memo[memo_key] = specs
    return specs


def _matching_columns(table, meta_key, predicate):
    """Per aggregate column: holds a value of ``meta_key`` that matches."""
    return np.fromiter(
        (record is not None and meta_key in record.metadata
         and any(predicate(v)
                 for v in host_utils.value_set(record.metadata[meta_key]))
         for record in table.agg_records),
        bool, count=len(table.agg_records))


class AggregateInstanceExtraSpecsFilter(base.BaseFilter):
    name = "AggregateInstanceExtraSpecsFilter"
    # Aggregates and the flavor do not change within a request.
    run_filter_once_per_request = True
    RUN_ON_REBUILD = False

    def mask(self, request, rows):
        specs = _specs(request)
        if not specs:
            return base.all_pass(rows)
        table = request.table
        member = table.aggregates[rows]
        out = base.all_pass(rows)
        for _key, meta_key, _req, predicate in specs:
            ok = _matching_columns(table, meta_key, predicate)
            out &= member[:, ok].any(axis=1)
        return out

    def why(self, request, row):
        records = request.table.aggregates_of(row)
        for key, meta_key, req, predicate in _specs(request):
            values = set()
            for record in records:
                if meta_key in record.metadata:
                    values |= host_utils.value_set(record.metadata[meta_key])
            if not values:
                return (f"extra spec {key}: no aggregate of the host sets "
                        f"{meta_key}")
            if not any(predicate(v) for v in values):
                return (f"extra spec {key} wants {req!r}, the host's "
                        f"aggregates give {sorted(values)}")
        return super().why(request, row)
