"""AggregateImagePropertiesIsolation: aggregate metadata keys that name
image properties keep out images with other values.

For each metadata key of the host's aggregates (only keys starting with
``<namespace><separator>`` when [filter_scheduler]
aggregate_image_properties_isolation_namespace is set), if the image has
that property with a true value, its text (``str()``) must be one of the
values the host's aggregates give the key (comma separated lists
allowed). Keys the image does not set, or sets to a false value, do not
filter.

Computed per aggregate: for each property concerned, which aggregates
set the key and which of them allow the image's value; a host fails when
it is in one of the first and none of the second.

Difference from Nova: Nova reads the property through its image metadata
object, which knows only Nova's own property names (hw_*, img_*, os_*...),
so custom properties never filter there; here every image property can.
"""

import numpy as np

from filters import base, host_utils


def _concerned(request):
    """[(metadata key, allowed per aggregate column, set per column)]
    for the image properties that some aggregate names."""
    table = request.table
    props = request.spec.image.properties
    opts = request.conf.filter_scheduler
    prefix = None
    if opts.aggregate_image_properties_isolation_namespace:
        prefix = (opts.aggregate_image_properties_isolation_namespace
                  + opts.aggregate_image_properties_isolation_separator)
    records = table.agg_records
    keys = {key for record in records if record is not None
            for key in record.metadata
            if props.get(key) and (prefix is None or key.startswith(prefix))}
    out = []
    for key in sorted(keys):
        wanted = str(props[key])
        has = np.fromiter((r is not None and key in r.metadata
                           for r in records), bool, count=len(records))
        allowed = np.fromiter(
            (r is not None and key in r.metadata
             and wanted in host_utils.value_set(r.metadata[key])
             for r in records), bool, count=len(records))
        out.append((key, allowed, has))
    return out


class AggregateImagePropertiesIsolation(base.BaseFilter):
    name = "AggregateImagePropertiesIsolation"
    # Aggregates and the image do not change within a request.
    run_filter_once_per_request = True
    RUN_ON_REBUILD = True

    def mask(self, request, rows):
        if not request.spec.image.properties:
            return base.all_pass(rows)
        member = request.table.aggregates[rows]
        out = base.all_pass(rows)
        for _key, allowed, has in _concerned(request):
            out &= member[:, allowed].any(axis=1) | ~member[:, has].any(
                axis=1)
        return out

    def why(self, request, row):
        records = request.table.aggregates_of(row)
        props = request.spec.image.properties
        for key, _allowed, _has in _concerned(request):
            values = set()
            for record in records:
                if key in record.metadata:
                    values |= host_utils.value_set(record.metadata[key])
            if values and str(props[key]) not in values:
                return (f"image property {key}={props[key]!s} is not "
                        f"among the host's aggregate values "
                        f"{sorted(values)}")
        return super().why(request, row)
