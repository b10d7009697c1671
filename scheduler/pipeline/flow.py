"""select_destinations, stage after stage, over one RequestState:

1. candidates: the placement query and its candidate hosts;
2. placing: per instance, ranking (filters, weighers, order), the pick
   and its claim, and what the instance takes from the host state.
   When placing fails on a placement answer cut at the query's limit,
   the query is asked again without it and placing runs once more
   (scheduler.pipeline.requery);
3. selecting: the chosen hosts and their alternates. For a request of
   several instances the alternates come from one more ranking made
   once every pick was taken, as Nova's scheduler does: an alternate
   must pass the filters given all of the request's picks (an affinity
   group's second instance leaves no other host).
"""

from __future__ import annotations

from scheduler import errors
from scheduler.pipeline import candidates as candidates_mod
from scheduler.pipeline import placing as placing_mod
from scheduler.pipeline import requery as requery_mod
from scheduler.pipeline import selecting as selecting_mod
from scheduler.pipeline import state as state_mod


class Pipeline:
    """The stages in order; built once per Scheduler."""

    def __init__(self, find: candidates_mod.FindCandidates,
                 place: placing_mod.Place,
                 select: selecting_mod.Select) -> None:
        self.find = find
        self.place = place
        self.select = select
        self.requery = requery_mod.Requery(find)

    def run(self, state: state_mod.RequestState,
            alternates: bool = True) -> state_mod.Decision:
        """The decision for ``state``'s request. The caller holds the
        host state table's lock and has brought both caches up to
        date."""
        self.find(state)
        try:
            self.place(state)
        except errors.NoValidHost:
            if not self.requery(state):
                raise
            self.place.stats["requeries"] += 1
            self.place(state)
        after_picks = None
        if alternates and len(state.turns) > 1 and \
                self.select.conf.scheduler.max_attempts > 1:
            after_picks = self.place.rank(state, len(state.turns) - 1)
        self.select(state, alternates, after_picks)
        return state_mod.Decision(state.selections, state.explain)
