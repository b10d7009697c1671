"""What one select_destinations call knows, as its stages fill it in.

One :class:`RequestState` per call, and nothing else per call but one
:class:`Ranking` per instance: the stages (scheduler.pipeline.*) are
built once per Scheduler and keep nothing of a request themselves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from placement.candidates import result as result_mod
from scheduler import best_first, claims, framework, request_spec
from scheduler import host_request as host_request_mod
from scheduler import resource_request as resource_request_mod
from scheduler import selection as selection_mod

Rows = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def _no_rows() -> Rows:
    return np.zeros(0, np.int64)


@dataclasses.dataclass(eq=False)
class Ranking:
    """One instance's pass through the filters and weighers."""

    # What each filter took out (none when the hosts were forced).
    runs: list[framework.FilterRun]
    # The rows that passed the filters, and their total weights.
    passed: Rows
    weights: Floats
    # The passed rows best first, the pick first (scheduler.best_first).
    ordered: best_first.BestFirst
    # Each weigher's share of any row's weight, kept when the request is
    # logged (RequestState.logged).
    weighing: framework.Weighing | None = None


@dataclasses.dataclass(eq=False)
class Turn:
    """Where one instance went, and the ranking it was picked from (its
    alternates come from there)."""

    chosen: int
    ranking: Ranking


@dataclasses.dataclass(eq=False)
class RequestState:
    """One select_destinations call, stage by stage."""

    # -- the request -------------------------------------------------------
    spec: request_spec.RequestSpec
    # Claimed for, one per instance; empty: claim nothing (Nova's
    # callers that send no uuids).
    instance_uuids: list[str]
    # Instances to place.
    count: int
    # The consumers' owner in placement.
    project_id: str | None
    user_id: str | None
    # What filters and weighers see; it carries the rows chosen so far.
    host_request: host_request_mod.HostRequest
    # Filled with the reasons when the caller asked for them.
    explain: dict[str, Any] | None = None
    # Pick every instance but claim none: the Scheduler claims several
    # requests' picks together (Place.claim_later).
    claim_later: bool = False
    # The caller's request id (the RPC context's), for the decision log.
    request_id: str | None = None
    # The decision log wants this request (scheduler.decision_log): the
    # rankings keep their weighings, and each filter run that many of
    # the rows it removed.
    logged: bool = False
    keep_removed: int = 0

    # -- candidates (scheduler.pipeline.candidates) -------------------------
    # The placement query (None for a rebuild, which asks placement
    # nothing) and its answer.
    query: resource_request_mod.ResourceRequest | None = None
    candidates: result_mod.CandidateResult | None = None
    # The host table row of each candidate's anchor (-1: not a host).
    candidate_hosts: Rows | None = None
    # When every candidate is on a host of its own: the candidate of
    # each of their rows, by row (other rows hold anything; see
    # candidates_on). None: some host has several, or none is known.
    candidate_by_row: Rows | None = None
    # The candidate hosts' rows, sorted, as restricted by the request.
    rows: Rows = dataclasses.field(default_factory=_no_rows)
    # The rows of the forced hosts, which skip the filters; None: none
    # is forced.
    forced: Rows | None = None

    # -- ranking and picks (ranking, placing) ------------------------------
    # The rows that passed each run-once filter for the first instance
    # (a mask by row number once a later instance read them).
    once: dict[str | None, framework.Rows | framework.Mask] = (
        dataclasses.field(default_factory=dict))
    # The first instance's latest ranking: after a re-query, the rows it
    # rejected are not ranked again (scheduler.pipeline.requery).
    first_ranking: Ranking | None = None
    turns: list[Turn] = dataclasses.field(default_factory=list)
    # When logged: the last ranking made and its instance (the one a
    # NoValidHost failed on; after a request of several instances, the
    # one its alternates came from).
    last_ranked: tuple[int, Ranking] | None = None

    # -- claims and what they took (placing, consumption) ------------------
    claimed: list[str] = dataclasses.field(default_factory=list)
    # What a claimed instance held before its claim (an evacuation's
    # source allocation): put back, not removed, on a rollback.
    held: dict[str, claims.Held] = dataclasses.field(default_factory=dict)
    # With claim_later: the (instance uuid, allocation request) picked
    # for each instance, not claimed yet.
    pending: list[tuple[str, result_mod.AllocationRequest]] = \
        dataclasses.field(default_factory=list)
    # instance index -> the allocation request claimed (or, when nothing
    # is claimed, the one the selection reports)
    allocations: dict[int, result_mod.AllocationRequest | None] = \
        dataclasses.field(default_factory=dict)
    # Claims tried for this request, and the rows where one was refused
    # or a pick could not stand, with why (row None: the request's picks
    # as a whole): see claim_tried and conflict.
    claim_attempts: int = 0
    conflicts: list[tuple[int | None, str]] = dataclasses.field(
        default_factory=list)
    # Rows whose host state took an instance, once per instance.
    consumed: list[int] = dataclasses.field(default_factory=list)
    # row -> its node record before the instances' NUMA cells and PCI
    # devices were taken out (put back when the request fails).
    nodes_before: dict[int, Any] = dataclasses.field(default_factory=dict)

    # -- a re-query (scheduler.pipeline.requery) ---------------------------
    # Set when placement's answer was cut at the query's limit, placing
    # failed, and the query was asked again without the limit (also when
    # that found no new host: hosts_new 0): {"limit",
    # "candidates_before", "candidates_after", "hosts_before",
    # "hosts_new", "hosts_not_ranked"}.
    requery: dict[str, Any] | None = None
    # What the filters took out of the first answer for the first
    # instance (the rows not ranked again): a NoValidHost after the
    # re-query counts them too.
    rejected_before: list[framework.FilterRun] = dataclasses.field(
        default_factory=list)

    # -- the answer (selecting) -------------------------------------------
    selections: list[list[selection_mod.Selection]] = dataclasses.field(
        default_factory=list)
    # Each instance's alternates' rows, in its selections' order.
    alternate_rows: list[list[int]] = dataclasses.field(
        default_factory=list)

    @property
    def rebuild(self) -> bool:
        """A rebuild on the instance's own host: placement is asked
        nothing and nothing is claimed."""
        return self.host_request.rebuild

    def claim_tried(self, row: int | None,
                    outcome: claims.Outcome) -> None:
        """A claim was tried for this request on ``row`` (None: all of
        its picks in one transaction): counted, and a refused one kept
        as a conflict."""
        self.claim_attempts += 1
        if outcome is not claims.Outcome.CLAIMED:
            self.conflicts.append((row, outcome.value))

    def conflict(self, row: int | None, reason: str) -> None:
        """A pick on ``row`` could not stand, for ``reason`` (a check at
        claim time), without a claim being tried."""
        self.conflicts.append((row, reason))

    def hold_candidates(self, result: result_mod.CandidateResult,
                        hosts: Rows, distinct: Rows, size: int) -> None:
        """Hold placement's ``result`` and the host row of each of its
        candidates (``hosts``); ``distinct``: the distinct rows among
        those, ``size``: the host table's."""
        self.candidates = result
        self.candidate_hosts = hosts
        self.candidate_by_row = None
        if len(distinct) == len(hosts):
            # A candidate a host, every one on a host (a flat cloud): a
            # pick reads its candidate here instead of comparing every
            # candidate's host with its row, which costs several times
            # this, per pick. Left uninitialised: candidates_on checks
            # what it reads.
            by_row = np.empty(size, np.int64)
            by_row[hosts] = np.arange(len(hosts))
            self.candidate_by_row = by_row

    def candidates_on(self, row: int) -> Sequence[int]:
        """The candidates anchored on host ``row``, found when asked
        (only the rows that are claimed or returned as alternates ever
        are)."""
        hosts = self.candidate_hosts
        if hosts is None:
            return ()
        by_row = self.candidate_by_row
        if by_row is not None:
            # A row without a candidate reads whatever is there: a
            # candidate only when it is on that row. (A row added to
            # the table since has none.)
            k = by_row.item(row) if row < len(by_row) else -1
            return [k] if 0 <= k < len(hosts) and hosts.item(k) == row \
                else ()
        # The array's own method: np.flatnonzero wraps it in a dispatch
        # that costs as much again.
        found = (hosts == row).nonzero()[0]
        return found.tolist() if len(found) else ()

    def first_request(self, row: int
                      ) -> result_mod.AllocationRequest | None:
        """The allocation request of the first candidate on ``row``;
        None when it has none (a rebuild)."""
        indices = self.candidates_on(row)
        if not indices or self.candidates is None:
            return None
        return self.candidates.allocation_request(indices[0])


@dataclasses.dataclass
class Decision:
    # Per instance: [chosen Selection, alternates...]
    selections: list[list[selection_mod.Selection]]
    # The explanation, when asked for (see Scheduler.schedule).
    explain: dict[str, Any] | None = None
