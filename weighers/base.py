"""The host weigher protocol.

A weigher gives a raw float per candidate row: ``raw(request, rows)``
(a scheduler.host_request.HostRequest and an int64 row array). The
scheduler normalises each weigher's raw values to [0, 1] over the hosts
that passed the filters (min-max; all equal -> all 0, as Nova does; a
weigher may fix ``minval``/``maxval``), multiplies by the weigher's
multiplier per host and adds the products up. The multiplier is the
config option ``multiplier_option`` of ``multiplier_group``, replaced per
host by the lowest value of aggregate metadata ``aggregate_key`` over the
host's aggregates, where one sets it. As in Nova, a host one of whose
aggregates sets the key to something that is not a number gets the
option (its other aggregates' values are not used either). Known
difference: "nan" counts as not a number here; Nova takes it (a lone
one weighs the host NaN, next to others the minimum depends on the
order of a set).
"""

import numpy as np


class BaseWeigher:
    name = None
    multiplier_group = "filter_scheduler"
    multiplier_option = None
    # Aggregate metadata key overriding the multiplier; None: the
    # option's name.
    aggregate_key = None
    minval = None
    maxval = None

    def __init__(self, conf):
        self.conf = conf

    def raw(self, request, rows):
        raise NotImplementedError

    # The option group's view (oslo.config keeps one per group; its
    # values stay live): looked up once, as every request asks.
    _options = None

    def configured_multiplier(self):
        options = self._options
        if options is None:
            options = self._options = getattr(self.conf,
                                              self.multiplier_group)
        return float(getattr(options, self.multiplier_option))

    def multiplier(self, request, rows):
        """The option, or per row the lowest aggregate override (the
        option where an override is not a number): a float when no
        aggregate sets the key to a number (every row has the option),
        else an array over ``rows``."""
        key = self.aggregate_key or self.multiplier_option
        table = request.table
        default = self.configured_multiplier()
        if not table.aggregate_sets(key):
            return default
        return table.aggregate_number_or(key, default, "min")[rows]

    def multipliers(self, request, rows):
        """The multiplier of each row, as an array."""
        return np.broadcast_to(
            np.asarray(self.multiplier(request, rows), np.float64),
            (len(rows),))


def bound(line, minval=None, maxval=None):
    """Keep ``line`` (a float array, changed in place) within the
    weigher's minval/maxval, where it sets them."""
    if minval is not None:
        np.maximum(line, minval, out=line)
    if maxval is not None:
        np.minimum(line, maxval, out=line)


def value_range(values, minval=None, maxval=None):
    """(low, span) of min-max normalisation: the weigher's bounds, or the
    values' own minimum and maximum where it sets none."""
    low = float(minval) if minval is not None else float(values.min())
    high = float(maxval) if maxval is not None else float(values.max())
    return low, high - low


def normalize(values, minval=None, maxval=None):
    """Min-max to [0, 1]; all zeros when every value is the same."""
    values = np.asarray(values, np.float64)
    if not len(values):
        return values
    low, span = value_range(values, minval, maxval)
    if span == 0:
        return np.zeros(len(values))
    return (values - low) / span
