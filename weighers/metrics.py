"""MetricsWeigher: weigh hosts by the metrics their compute nodes report.

``[metrics] weight_setting`` lists ``name=ratio`` pairs; a host weighs
the sum of ``value * ratio``. Malformed pairs are skipped, as Nova
skips them (with a warning). As in Nova, a name is taken as written:
``cpu.percent = 1`` names ``"cpu.percent "``, which no host reports.

Values are read as Nova's host state reads a compute node's metrics
(MonitorMetricList.from_json): the host state table keeps them as the
node reported them, and for Nova's own metric names (cpu.frequency,
cpu.*.time, cpu.*percent, numa.membw.*) the weigher takes the whole
number Nova's MonitorMetric holds, after multiplying the cpu.*percent
ones by 100 (a compute node stores those as fractions: 0.25 weighs 25).
Other names, which a Nova compute cannot report, keep their value.

A host missing a metric weighs ``[metrics] weight_of_unavailable``
(a large negative number by default), unless that metric's ratio times
the host's multiplier is 0, when the metric is simply left out. This is
Nova's rule for ``required = false``.

Difference from Nova: with ``required = true`` (the default) Nova raises
ComputeHostMetricNotFound and the whole request fails; here such a host
weighs ``weight_of_unavailable`` too (whatever the ratio), so one bad
host cannot fail a request. MetricsFilter should remove those hosts
first, as Nova's documentation advises.

The multiplier is ``[metrics] weight_multiplier``, overridden per host
by aggregate metadata ``metrics_weight_multiplier``.
"""

import logging

import numpy as np

from weighers import base

LOG = logging.getLogger(__name__)


# Nova's metric names (MonitorMetricType): its host state holds their
# values as integers, those of the percentages times 100 first.
PERCENTAGES = frozenset((
    "cpu.user.percent", "cpu.kernel.percent", "cpu.idle.percent",
    "cpu.iowait.percent", "cpu.percent"))
NOVA_METRICS = PERCENTAGES | frozenset((
    "cpu.frequency", "cpu.user.time", "cpu.kernel.time", "cpu.idle.time",
    "cpu.iowait.time", "numa.membw.max", "numa.membw.current"))


def parse_setting(entries, option):
    """[(name, ratio)] of ``name=ratio`` entries; bad ones are logged and
    left out. Names are not stripped, as Nova does not strip them."""
    good, bad = [], []
    for entry in entries:
        name, sep, value = entry.partition("=")
        try:
            ratio = float(value)
        except ValueError:
            ratio = None
        if sep and name and ratio is not None:
            good.append((name, ratio))
        else:
            bad.append(entry)
    if bad:
        LOG.warning("ignoring invalid entries of %s: %s", option,
                    ", ".join(bad))
    return good


def as_nova_reads(name, values):
    """Metric ``name``'s reported ``values`` (a float array, NaN where
    absent) as Nova's host state holds them."""
    if name in PERCENTAGES:
        values = values * 100
    if name in NOVA_METRICS:
        return np.trunc(values)
    return values


class MetricsWeigher(base.BaseWeigher):
    name = "MetricsWeigher"
    multiplier_group = "metrics"
    multiplier_option = "weight_multiplier"
    aggregate_key = "metrics_weight_multiplier"

    def raw(self, request, rows):
        opts = self.conf.metrics
        setting = parse_setting(opts.weight_setting, "metrics.weight_setting")
        total = np.zeros(len(rows))
        unavailable = np.zeros(len(rows), bool)
        if not setting:
            return total
        multipliers = self.multipliers(request, rows)
        for name, ratio in setting:
            values = as_nova_reads(name, request.table.metric(name)[rows])
            absent = np.isnan(values)
            if opts.required:
                unavailable |= absent
            else:
                # Nova ignores a metric that could not count anyway.
                unavailable |= absent & (ratio * multipliers != 0)
            total += np.where(absent, 0.0, values * ratio)
        return np.where(unavailable, float(opts.weight_of_unavailable),
                        total)
