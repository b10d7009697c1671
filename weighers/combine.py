"""Adding the weighers up: ``weigh`` gives each candidate row its total
weight, ``load`` builds the weighers ``[filter_scheduler]
weight_classes`` names.

Per weigher, as Nova's weight handler does: the raw values are clamped
to the weigher's minval/maxval where it sets them, normalised to [0, 1]
over the candidates (weighers.base.normalize, every weigher at once),
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
    total = np.zeros(len(rows))
    details = {} if explain else None
    if len(rows) <= 1:
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
    # One weigher per line, normalised all at once.
    raw = np.array(raws, np.float64).reshape(len(used), len(rows))
    minvals = [w.minval for w in used]
    maxvals = [w.maxval for w in used]
    bounded = raw.copy() if explain else raw  # the explanation keeps raw
    # Nova keeps raw values within the weigher's bounds first, so that
    # e.g. overcommitted (negative) free RAM counts as none. Line by
    # line, only where a bound is set: cheaper than one clip over all.
    for k in range(len(used)):
        if minvals[k] is not None:
            np.maximum(bounded[k], minvals[k], out=bounded[k])
        if maxvals[k] is not None:
            np.minimum(bounded[k], maxvals[k], out=bounded[k])
    normalized = base.normalize_lines(bounded, minvals, maxvals)
    for k, multiplier in enumerate(multipliers):
        weighted = multiplier * normalized[k]
        total += weighted
        if explain:
            weigher = used[k]
            key = weigher.name
            n = 2
            while key in details:  # the same weigher listed twice
                key = f"{weigher.name}#{n}"
                n += 1
            details[key] = {
                "raw": raw[k], "normalized": normalized[k],
                "multiplier": np.broadcast_to(
                    np.asarray(multiplier, np.float64), (len(rows),)),
                "weighted": weighted}
    return total, details


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
