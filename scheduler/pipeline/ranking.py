"""Stage 2, per instance: filter the candidate hosts, weigh what is
left, order it best first.

The order is the weights' (scheduler.best_first), shuffled among the
rows tied with the best when [filter_scheduler]
shuffle_best_same_weighed_hosts says so, then a random pick of the best
``host_subset_size`` is moved first: the host the instance is claimed
on, unless that claim fails and the next is tried.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from placement import option_values
from scheduler import best_first, framework
from scheduler.pipeline import state as state_mod

# Rows a decision sorts before it looks at any (the rest only when it
# gets that far): enough for the claim, its retries and the alternates.
HEAD_ROWS = 32


class Rank:
    """The filter chain, the weigher chain and the order, for one
    instance of a request at a time."""

    def __init__(self, filters: framework.FilterChain,
                 weighers: framework.WeigherChain, conf: Any,
                 rng: random.Random, table: Any) -> None:
        self.filters = filters
        self.weighers = weighers
        self.conf = conf
        self.rng = rng
        self.table = table

    def __call__(self, state: state_mod.RequestState,
                 i: int) -> state_mod.Ranking:
        """Instance ``i``'s ranking over the state's candidate rows."""
        explain = state.explain is not None
        request = state.host_request
        runs: list[framework.FilterRun]
        if state.forced is not None:
            passed, runs = state.forced, []
        else:
            passed, runs = self.filters.run(
                request, state.rows, state.once, first=(i == 0),
                explain=explain, keep_removed=state.keep_removed)
        weights, weigh_explain, weighing = self.weighers.weigh(
            request, passed, explain=explain, keep=state.logged)
        ranking = state_mod.Ranking(
            runs, passed, weights,
            self._order(passed, weights, state.logged), weighing)
        if i == 0:
            state.first_ranking = ranking
        if explain:
            self._record(state, ranking, weigh_explain)
        if state.logged:
            state.last_ranked = (i, ranking)
        return ranking

    def _order(self, rows: state_mod.Rows, weights: state_mod.Floats,
               keep: bool = False) -> best_first.BestFirst:
        """Rows best first: shuffled among equal best weights when asked,
        then a random pick of the best host_subset_size moved first.
        ``keep``: with the head's positions and weights (the decision
        log's), rearranged with it."""
        if not len(rows):
            return best_first.BestFirst([])
        subset_size, shuffle = option_values.read(self.conf, _order_options)
        # Sorted up front: the claim's pick and the alternates, from a
        # host subset that large, and for the shuffle every row tied
        # with the last.
        ordered = best_first.best_first(
            rows, weights, max(subset_size, HEAD_ROWS), ties=shuffle,
            keep=keep)
        head, at = ordered.head, ordered.head_at
        if shuffle:
            # The rows tied with the best (NaN weights sort last and tie
            # with nothing) are all in the head; their weights are
            # equal, so head_weights stands as it is.
            numbers = weights[~np.isnan(weights)]
            ties = (int(np.count_nonzero(weights == numbers.max()))
                    if len(numbers) else 0)
            if at is None:
                tied = head[:ties]
                self.rng.shuffle(tied)
                head[:ties] = tied
            else:
                # The same draws whatever is shuffled: the same order
                # as the rows alone would take.
                tied = list(zip(head[:ties], at[:ties], strict=True))
                self.rng.shuffle(tied)
                head[:ties] = [row for row, _ in tied]
                at[:ties] = [k for _, k in tied]
        subset = min(subset_size, len(head))
        if subset > 1:
            k = self.rng.randrange(subset)
            head.insert(0, head.pop(k))
            if at is not None:
                at.insert(0, at.pop(k))
                ordered.head_weights.insert(0, ordered.head_weights.pop(k))
            ordered.by_weight = False
        return ordered

    def _record(self, state: state_mod.RequestState,
                ranking: state_mod.Ranking,
                weigh_explain: framework.WeighExplanation | None) -> None:
        """The instance's part of the explanation: what each filter
        took out and why, and each weigher's share of the weights."""
        assert state.explain is not None
        names = self.table.nodenames
        passed = ranking.passed.tolist()
        record: dict[str, Any] = {
            "candidate_hosts": len(state.rows),
            "filters": [{"name": r.name, "before": r.before,
                         "after": r.after,
                         "rejected": {names[row]: why
                                      for row, why in r.reasons.items()}}
                        for r in ranking.runs],
            "passed": [names[r] for r in ranking.passed],
            "weights": {names[r]: float(w) for r, w in zip(
                passed, ranking.weights.tolist(), strict=True)},
            "weighers": weigh_explain and {
                w: {k: dict(zip([names[r] for r in passed],
                                np.asarray(v, float).tolist(), strict=True))
                    for k, v in parts.items()}
                for w, parts in weigh_explain.items()},
        }
        state.explain.setdefault("instances", []).append(record)


def _order_options(conf: Any) -> tuple[int, bool]:
    fs = conf.filter_scheduler
    return fs.host_subset_size, fs.shuffle_best_same_weighed_hosts
