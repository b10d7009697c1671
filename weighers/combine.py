"""Adding the weighers up: ``weigh`` gives each candidate row its total
weight, ``load`` builds the weighers ``[filter_scheduler]
weight_classes`` names.

Per weigher, as Nova's weight handler does: the raw values are clamped
to the weigher's minval/maxval where it sets them, normalised to [0, 1]
over the candidates (weighers.base.normalize), multiplied by the
per-row multiplier and added to the total. With one candidate or none
Nova weighs nothing (every weight stays 0) and neither do we.
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
    for weigher in weighers:
        multiplier = np.asarray(weigher.multipliers(request, rows),
                                np.float64)
        if not explain and not multiplier.any():
            continue  # weighs every row 0: no need to compute it
        raw = np.asarray(weigher.raw(request, rows), np.float64)
        # Nova keeps raw values within the weigher's bounds first, so that
        # e.g. overcommitted (negative) free RAM counts as none.
        bounded = raw
        if weigher.minval is not None or weigher.maxval is not None:
            bounded = np.clip(raw, weigher.minval, weigher.maxval)
        normalized = base.normalize(bounded, weigher.minval, weigher.maxval)
        weighted = multiplier * normalized
        total += weighted
        if explain:
            key = weigher.name
            n = 2
            while key in details:  # the same weigher listed twice
                key = f"{weigher.name}#{n}"
                n += 1
            details[key] = {"raw": raw, "normalized": normalized,
                            "multiplier": multiplier, "weighted": weighted}
    return total, details


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
