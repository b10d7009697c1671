"""Stage 3: a host for every instance, claimed in placement, or none.

Instances are placed in turn, each ranked after the earlier ones were
taken out of the host state table. Two ways:

- together (several instance uuids): every instance is picked first,
  then all are claimed in one transaction: one commit instead of one
  per instance. When that claim fails (a host filled up meanwhile, or
  two picks did not fit one host), it is undone and the request is
  placed one claim at a time;
- one at a time: each instance is claimed on the first host of its
  order that takes it (a lost race is retried on fresh state, then the
  next candidate, then a re-query of that host's tree, then the next
  host).
- later (RequestState.claim_later): every instance is picked as
  together, and nothing is claimed yet; the Scheduler claims several
  requests' picks in one transaction (:meth:`Place.claim_later`), or
  gives them back when that fails.

A request that cannot place every instance removes the claims it made,
gives back what its instances took from the host state, and raises
NoValidHost saying where the hosts went. Without instance uuids (and
for a rebuild) nothing is claimed: the picks only take from the host
state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, MutableMapping
from typing import Any

from placement.candidates import result as result_mod
from scheduler import (
    claims,
    errors,
    framework,
    group_policies,
    placement_port,
)
from scheduler.pipeline import candidates as candidates_mod
from scheduler.pipeline import consumption as consumption_mod
from scheduler.pipeline import ranking as ranking_mod
from scheduler.pipeline import requery as requery_mod
from scheduler.pipeline import state as state_mod


class Place:
    """Fills the state's turns and claims."""

    def __init__(self, rank: ranking_mod.Rank,
                 find: candidates_mod.FindCandidates,
                 port: placement_port.PlacementPort,
                 consumption: consumption_mod.HostConsumption,
                 stats: MutableMapping[str, Any]) -> None:
        self.rank = rank
        self.find = find
        self.port = port
        self.consumption = consumption
        # Claim attempts and lost claims (capacity taken by another
        # writer since the view was read), with the time the lost ones
        # took: the Scheduler's stats.
        self.stats = stats

    def __call__(self, state: state_mod.RequestState) -> None:
        group_policies.read_members(state, self.port)
        try:
            turns = None
            if state.claim_later:
                turns, state.pending = self._pick_all(state)
                state.allocations = {
                    i: wanted for i, (_, wanted) in enumerate(state.pending)}
            elif len(state.instance_uuids) > 1 and not state.rebuild:
                turns = self._together(state)
            if turns is None:
                state.once = {}
                turns = [self._one(state, i) for i in range(state.count)]
        except BaseException:
            self.roll_back(state)
            raise
        state.turns = turns

    def _one(self, state: state_mod.RequestState,
             i: int) -> state_mod.Turn:
        """Place and claim instance ``i``. A claim its server group
        refused (another scheduler placed a member meanwhile) decides
        the instance again on what placement said of the group."""
        for _ in range(1 + group_policies.REDECISIONS):
            ranking = self.rank(state, i)
            try:
                for row in ranking.ordered:
                    if self._claim(state, i, row):
                        state.host_request.chosen_rows.append(row)
                        return state_mod.Turn(row, ranking)
            except _GroupChanged:
                continue
            raise self._no_valid_host(state, i, ranking)
        raise errors.NoValidHost(
            f"no valid host for instance {i + 1} of {state.count}: its "
            "server group kept changing under every claim "
            f"({1 + group_policies.REDECISIONS} decisions)", "group_changed")

    def _together(self, state: state_mod.RequestState
                  ) -> list[state_mod.Turn] | None:
        """Pick a host for every instance, then claim them all in one
        transaction; None (and nothing left of it) when that claim
        fails."""
        turns, writes = self._pick_all(state)
        rules = [group_policies.rule(state, turn.chosen) for turn in turns]
        try:
            outcome = self._timed(self.port.claim_all, writes,
                                  state.project_id, state.user_id, rules)
            state.claim_tried(None, outcome)
        except errors.SchedulerError:
            # An instance holds allocations already: one at a time
            # claims it beside them.
            outcome = claims.Outcome.RACE
        if outcome is claims.Outcome.CLAIMED:
            state.claimed = [consumer for consumer, _ in writes]
            state.allocations = {i: w for i, (_, w) in enumerate(writes)}
            return turns
        self._undo_picks(state)
        return None

    def _pick_all(self, state: state_mod.RequestState
                  ) -> tuple[list[state_mod.Turn],
                             list[placement_port.Write]]:
        """The best host with a candidate for every instance, each taken
        from the host state before the next is ranked; nothing claimed.
        NoValidHost when an instance finds none."""
        state.once = {}
        turns, writes = [], []
        for i in range(state.count):
            ranking = self.rank(state, i)
            row = next((r for r in ranking.ordered
                        if state.candidates_on(r)), None)
            if row is None:
                raise self._no_valid_host(state, i, ranking)
            wanted = state.first_request(row)
            assert wanted is not None  # the row was picked for its candidates
            writes.append((state.instance_uuids[i], wanted))
            self.consumption.take(state, row)
            state.host_request.chosen_rows.append(row)
            turns.append(state_mod.Turn(row, ranking))
        return turns, writes

    def _undo_picks(self, state: state_mod.RequestState) -> None:
        """Give back what the picks took, and forget them."""
        self.roll_back(state)
        state.claimed = []
        state.host_request.chosen_rows.clear()
        if state.explain is not None:
            state.explain["instances"] = []

    def claim_later(self, states: list[state_mod.RequestState]) -> bool:
        """Claim the picks of the ``states`` (placed with claim_later) in
        one transaction: every instance of every request, or none, so
        each request stays all-or-nothing. When that fails, what the
        picks took from the host state is given back, last request
        first; False (or the claim's error, raised)."""
        owned = [claims.OwnedClaim(consumer, wanted, state.project_id,
                                   state.user_id,
                                   group_policies.rule(state, turn.chosen))
                 for state in states
                 for (consumer, wanted), turn in zip(
                     state.pending, state.turns, strict=True)]
        claimed = False
        try:
            claimed = self._timed(self.port.claim_together,
                                  owned) is claims.Outcome.CLAIMED
        finally:
            for state in reversed(states):
                if claimed:
                    state.claimed = [c for c, _ in state.pending]
                else:
                    self._undo_picks(state)
        return claimed

    def _claim(self, state: state_mod.RequestState, i: int,
               row: int) -> bool:
        """Claim instance ``i`` on ``row``; whether it worked."""
        if state.rebuild or not state.instance_uuids:
            self.consumption.take(state, row)
            state.allocations[i] = state.first_request(row)
            return True
        consumer = state.instance_uuids[i]
        rule = group_policies.rule(state, row)
        seen: claims.GroupSeen = {}
        stale: list[tuple[Any, int]] = [
            (state.candidates, index)
            for index in state.candidates_on(row)]
        tries: list[tuple[Any, int]] | None
        for tries in (stale, None):
            if tries is None:
                # Fresh state for this host's tree, then the next host.
                fresh = self.find.of_host(state, row)
                tries = [(fresh, k) for k in range(len(fresh))]
            for result, index in tries:
                wanted: result_mod.AllocationRequest = \
                    result.allocation_request(index)
                outcome = self._timed(self.port.claim, consumer, wanted,
                                      state.project_id, state.user_id,
                                      state.held, rule, seen)
                state.claim_tried(row, outcome)
                if outcome is claims.Outcome.CLAIMED:
                    state.claimed.append(consumer)
                    state.allocations[i] = wanted
                    self.consumption.take(state, row)
                    return True
                if outcome is claims.Outcome.GROUP:
                    group_policies.learn(state, seen)
                    raise _GroupChanged()
                if outcome is claims.Outcome.GONE:
                    break
        return False

    def _timed(self, claim: Callable[..., claims.Outcome],
               *args: Any) -> claims.Outcome:
        stats = self.stats
        start, cpu = time.perf_counter(), time.thread_time()
        outcome = claim(*args)
        stats["claim_attempts"] += 1
        # What a claim costs this thread (the database driver's share of
        # a decision), and its wall time (the commit's round trips).
        stats["claim_cpu_s"] += time.thread_time() - cpu
        stats["claim_wall_s"] += time.perf_counter() - start
        if outcome is not claims.Outcome.CLAIMED:
            stats["claims_lost"] += 1
            stats["claims_lost_s"] += time.perf_counter() - start
            if outcome is claims.Outcome.GROUP:
                stats["group_conflicts"] += 1
        return outcome

    def _no_valid_host(self, state: state_mod.RequestState, i: int,
                       ranking: state_mod.Ranking) -> errors.NoValidHost:
        runs, total = requery_mod.counted(state, ranking.runs)
        why = framework.summary(runs, total)
        cause = "filtered" if total else "no_candidates"
        if len(ranking.passed):
            why += f"; {len(ranking.passed)} passed the filters but none " \
                   "could be claimed"
            cause = "claims_lost"
        return errors.NoValidHost(
            f"no valid host for instance {i + 1} of {state.count}: {why}",
            cause)

    def roll_back(self, state: state_mod.RequestState) -> None:
        """Remove the request's claims (putting back what an instance
        held before its own: an evacuation's source) and give back what
        its instances took from the host state."""
        for consumer in state.claimed:
            self.port.release(consumer, state.held.get(consumer))
        state.held.clear()
        self.consumption.give_back(state)


class _GroupChanged(Exception):
    """A claim found the server group changed: the instance is decided
    again (Place._one)."""
