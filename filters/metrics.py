"""MetricsFilter: hosts must report every metric [metrics] weight_setting
weighs, so that MetricsWeigher never meets a missing one. Entries of
weight_setting that do not parse as name=number are ignored, as Nova
ignores them; names are taken as written, spaces included, as Nova takes
them. A metric whose value is not a number counts as missing (Nova's
host state cannot hold such a value at all)."""

import numpy as np

from filters import base


def weighed_metrics(conf):
    names = []
    for entry in conf.metrics.weight_setting:
        name, sep, ratio = entry.partition("=")
        try:
            float(ratio)
        except ValueError:
            continue
        if sep and name:
            names.append(name)
    return names


class MetricsFilter(base.BaseFilter):
    name = "MetricsFilter"

    def mask(self, request, rows):
        table = request.table
        passes = np.ones(len(rows), bool)
        for name in weighed_metrics(self.conf):
            passes &= ~np.isnan(table.metric(name)[rows])
        return passes

    def why(self, request, row):
        missing = [n for n in weighed_metrics(self.conf)
                   if np.isnan(request.table.metric(n)[row])]
        return f"host does not report metric(s) {', '.join(missing)}"
