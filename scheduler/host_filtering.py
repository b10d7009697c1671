"""Running the enabled filters over candidate rows, in order, each on the
rows the previous ones left, and keeping what explain and NoValidHost
need: how many hosts each filter took out (and, when asked, why)."""

import dataclasses

import numpy as np

from filters import base
from scheduler import plugins


def load(conf):
    """The filters of [filter_scheduler] enabled_filters, in order."""
    return plugins.load(conf.filter_scheduler.enabled_filters, conf,
                        "filters", plugins.FILTER_GROUP, base.BaseFilter)


@dataclasses.dataclass
class FilterRun:
    name: str
    before: int
    after: int
    # {row: reason}, only when explaining
    reasons: dict = dataclasses.field(default_factory=dict)


class FilterChain:
    def __init__(self, filters):
        self.filters = list(filters)
        # Masks of run-once filters, per request: {filter name: {row:
        # passed}} filled by the first instance.
        self._once = {}

    def start_request(self):
        self._once = {}

    def run(self, request, rows, first, explain=False):
        """(rows that pass, [FilterRun]) for the candidate ``rows``."""
        runs = []
        for f in self.filters:
            if request.rebuild and not f.RUN_ON_REBUILD:
                continue
            if not len(rows):
                runs.append(FilterRun(f.name, 0, 0))
                continue
            if f.run_filter_once_per_request and not first:
                passed = self._once.get(f.name)
                if passed is None:
                    continue
                mask = np.isin(rows, passed)
            else:
                mask = np.asarray(f.mask(request, rows), bool)
            after = int(np.count_nonzero(mask))
            run = FilterRun(f.name, len(rows), after)
            if explain:
                run.reasons = {int(r): f.why(request, int(r))
                               for r in rows[~mask]}
            runs.append(run)
            if after != len(rows):  # most filters pass every row
                rows = rows[mask]
            if f.run_filter_once_per_request and first:
                self._once[f.name] = rows
        return rows, runs


def summary(runs, total):
    """One line for NoValidHost: where the hosts went."""
    taken = [f"{r.name} removed {r.before - r.after}" for r in runs
             if r.before != r.after]
    if not taken:
        return f"{total} candidate hosts"
    return f"{total} candidate hosts; " + ", ".join(taken)
