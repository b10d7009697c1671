"""Between placing and NoValidHost: asking placement again when its
answer was cut at the query's limit.

The query asks placement for at most ``[scheduler] max_placement_results``
candidates, as Nova's does. When the filters leave no host for an
instance among those (or every claim on the hosts that passed is lost),
the hosts placement left out were never looked at: Nova answers
NoValidHost there. gantt asks once more, without the limit, when

- the answer held as many candidates as the limit (it may have been
  cut), and
- placing failed for some instance of the request (it is all or
  nothing: placing has already undone every pick and claim), and
- this request has not been asked again yet.

That is one more search of the candidates index, on the same view of
it, and at most one more placing pass: no pages, no loop. It goes ahead
only when the full answer holds hosts the first one did not. The hosts
the filters rejected for the first instance in the first pass are left
out of the second: the host state is back as it was, so the first
instance would reject them again, and a later instance only ranks hosts
that passed for the earlier ones in Nova too. A NoValidHost after the
second pass counts them with the filters that removed them
(:func:`counted`).

RequestState.requery records what happened (``limit``,
``candidates_before``, ``candidates_after``, ``hosts_before``,
``hosts_new``, ``hosts_not_ranked``), also when the full answer held no
new host; an explanation holds it under ``requery``, with the first
pass's per-instance records.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from placement.candidates import result as result_mod
from scheduler import framework
from scheduler.pipeline import candidates as candidates_mod
from scheduler.pipeline import state as state_mod


class Requery:
    """Decides on a re-query and sets the state up for the second
    placing pass."""

    def __init__(self, find: candidates_mod.FindCandidates) -> None:
        self.find = find

    def __call__(self, state: state_mod.RequestState) -> bool:
        """After placing failed: whether to place the request again, on
        the candidates of the query without its limit (the state then
        holds them)."""
        query, first = state.query, state.candidates
        if (state.requery is not None or query is None or not query.limit
                or first is None or len(first) < query.limit):
            return False
        find = self.find
        unlimited = dataclasses.replace(query, limit=None)
        result = find.find(unlimited)
        hosts = find.host_rows(result.anchors)
        size = find.table.size
        distinct = result_mod.distinct_rows(hosts, size)
        rows = find.restrict(state, distinct, unlimited)
        new = np.setdiff1d(rows, state.rows, assume_unique=True)
        ranking = state.first_ranking
        rejected = (np.setdiff1d(state.rows, ranking.passed,
                                 assume_unique=True)
                    if ranking is not None else state.rows[:0])
        kept = np.setdiff1d(rows, rejected, assume_unique=True)
        state.requery = {
            "limit": query.limit, "candidates_before": len(first),
            "candidates_after": len(result),
            "hosts_before": len(state.rows), "hosts_new": len(new),
            "hosts_not_ranked": len(rows) - len(kept)}
        if state.explain is not None:
            state.explain["requery"] = dict(
                state.requery, query=unlimited.query(),
                instances=state.explain.pop("instances", []))
        if not len(new):
            return False
        state.query = unlimited
        state.hold_candidates(result, hosts, distinct, size)
        state.rows = kept
        state.rejected_before = (ranking.runs if ranking is not None
                                 else [])
        _forget_picks(state)
        return True


def _forget_picks(state: state_mod.RequestState) -> None:
    """What the failed pass left on the state once placing undid its
    claims and gave back what its picks took."""
    state.once = {}
    state.first_ranking = None
    state.turns = []
    state.claimed = []
    state.pending = []
    state.allocations = {}
    state.host_request.chosen_rows.clear()


def counted(state: state_mod.RequestState,
            runs: list[framework.FilterRun]
            ) -> tuple[list[framework.FilterRun], int]:
    """(filter runs, hosts) for a NoValidHost message: ``runs`` over the
    state's rows plus, after a re-query, the hosts the first pass's
    filters rejected and the second did not rank, each with the filter
    that removed it."""
    total = len(state.rows)
    removed: dict[str | None, int] = {}
    for run in state.rejected_before:
        if run.before != run.after:
            removed[run.name] = (removed.get(run.name, 0)
                                 + run.before - run.after)
    if not removed:
        return runs, total
    left = sum(removed.values())
    total += left
    merged = []
    for run in runs:
        gone = removed.pop(run.name, 0)
        merged.append(framework.FilterRun(run.name, run.before + left,
                                          run.after + left - gone))
        left -= gone
    # Filters the second pass did not run (the chain differs for a
    # later instance): what they removed first comes last.
    for name, gone in removed.items():
        merged.append(framework.FilterRun(name, left, left - gone))
        left -= gone
    return merged, total


def explain_line(record: dict[str, Any]) -> str:
    """The re-query, in words, for ``gantt-manage schedule --explain``."""
    line = (f"re-queried: placement's answer was cut at the limit "
            f"({record['limit']}) and left no valid host; asked again "
            f"without it: {record['candidates_after']} candidates")
    if not record["hosts_new"]:
        return line + ", on no host beyond the first answer's"
    return (line + f", {framework.hosts(record['hosts_new'], 'more host')}"
            f"; the {framework.hosts(record['hosts_not_ranked'])} the "
            "filters rejected first were not ranked again")
