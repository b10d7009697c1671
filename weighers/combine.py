"""Adding the weighers up: ``weigh`` gives each candidate row its total
weight, ``load`` builds the weighers ``[filter_scheduler]
weight_classes`` names.

Per weigher, as Nova's weight handler does: the raw values are clamped
to the weigher's minval/maxval where it sets them, normalised to [0, 1]
over the candidates (weighers.base.normalize, one weigher at a time),
multiplied by the per-row multiplier and added to the total. With one
candidate or none Nova weighs nothing (every weight stays 0) and
neither do we.
"""

import numpy as np

from scheduler import plugins
from weighers import base

PACKAGE = "weighers"
# Nova's spelling of "every weigher", and its weighers' module prefix:
# accepted so that a nova.conf's weight_classes carries over.
_NOVA_ALL = "nova.scheduler.weights.all_weighers"
_NOVA_PREFIX = "nova.scheduler.weights."


def weigh(request, rows, weighers, explain=False):
    """(total weight per row of ``rows``, explanation or None).

    The explanation maps each weigher's name to its ``raw``,
    ``normalized``, ``multiplier`` and ``weighted`` (multiplier times
    normalised) arrays, in row order; it is empty when there was at most
    one row to weigh.
    """
    rows = np.asarray(rows, np.int64)
    count = len(rows)
    total = np.zeros(count)
    details = {} if explain else None
    if count <= 1:
        return total, details
    used, multipliers, raws = [], [], []
    for weigher in weighers:
        multiplier = _multiplier(weigher, request, rows)
        if not explain and not (multiplier if isinstance(multiplier, float)
                                else multiplier.any()):
            continue  # weighs every row 0: no need to compute it
        used.append(weigher)
        multipliers.append(multiplier)
        raws.append(weigher.raw(request, rows))
    if not used:
        return total, details
    # A line per weigher, a copy of their own: minima and maxima of all
    # lines in two calls; the rest line by line, on 1-D views (numpy
    # runs broadcast operations over a 2-D temporary many times slower).
    raw = np.array(raws, np.float64).reshape(len(used), count)
    # The explanation shows the raw values before Nova's clamping.
    kept = raw.copy() if explain else raw
    for k, weigher in enumerate(used):
        # Nova keeps raw values within the weigher's bounds first, so
        # that e.g. overcommitted (negative) free RAM counts as none.
        base.bound(kept[k], weigher.minval, weigher.maxval)
    lows, highs = kept.min(axis=1).tolist(), kept.max(axis=1).tolist()
    scratch = np.empty(count)
    for k, weigher in enumerate(used):
        low = lows[k] if weigher.minval is None else float(weigher.minval)
        high = highs[k] if weigher.maxval is None else float(weigher.maxval)
        span = high - low
        if span != 0:  # all values equal: every row weighs 0, as in Nova
            _add_weighted(total, kept[k], low, span, multipliers[k],
                          scratch)
        if explain:
            _explain(details, weigher, raw[k], kept[k], low, span,
                     multipliers[k])
    return total, details


def _add_weighted(total, line, low, span, multiplier, scratch):
    """``total += (line - low) / span * multiplier``: the operations
    and their order of normalize(), then times the multiplier, so the
    same floats, without the temporaries. Subtracting 0 and multiplying
    by 1 or -1 are exact in floating point, so they are skipped (most
    weighers have a minval of 0 and a multiplier of 1 or -1)."""
    if low != 0:
        np.subtract(line, low, out=scratch)
        line = scratch
    np.divide(line, span, out=scratch)
    if isinstance(multiplier, float) and multiplier in (1.0, -1.0):
        if multiplier > 0:
            total += scratch
        else:
            total -= scratch
        return
    scratch *= multiplier
    total += scratch


def _explain(details, weigher, raw, kept, low, span, multiplier):
    key = weigher.name
    n = 2
    while key in details:  # the same weigher listed twice
        key = f"{weigher.name}#{n}"
        n += 1
    normalized = ((kept - low) / span if span != 0
                  else np.zeros(len(kept)))
    details[key] = {
        "raw": raw, "normalized": normalized,
        "multiplier": np.broadcast_to(
            np.asarray(multiplier, np.float64), (len(kept),)),
        "weighted": multiplier * normalized}


def _multiplier(weigher, request, rows):
    """A float, or an array over ``rows`` when aggregates override it
    (or a plugin's own ``multipliers`` says so per row)."""
    if type(weigher).multipliers is not base.BaseWeigher.multipliers:
        return np.asarray(weigher.multipliers(request, rows), np.float64)
    return weigher.multiplier(request, rows)


def names(conf):
    """Weigher names of ``[filter_scheduler] weight_classes``, "all"
    expanded to every built-in weigher (sorted), duplicates dropped."""
    wanted = []
    for entry in conf.filter_scheduler.weight_classes:
        entry = entry.strip()
        if entry in ("all", _NOVA_ALL):
            wanted.extend(sorted(plugins.builtin(PACKAGE, base.BaseWeigher)))
        elif entry.startswith(_NOVA_PREFIX):
            wanted.append(entry.rsplit(".", 1)[-1])
        elif entry:
            wanted.append(entry)
    return list(dict.fromkeys(wanted))


def load(conf):
    """Instances of the weighers ``weight_classes`` names, in order;
    an unknown name raises SchedulerError."""
    return plugins.load(names(conf), conf, PACKAGE, plugins.WEIGHER_GROUP,
                        base.BaseWeigher)
