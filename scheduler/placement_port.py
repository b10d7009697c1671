"""The scheduler's one way to placement: finding candidates and claiming
them.

Behind the port sit an allocation writer and, for a scheduler, a
candidates finder:

- embedded (the Scheduler's): placement.direct.PlacementDirect writes
  on the scheduler's own store, and the in-memory candidates engine
  (placement.candidates.engine) finds;
- over HTTP: rpc.cell_retry.PlacementHttp writes through a placement
  REST API (gantt-placement-api or OpenStack Placement). It finds
  nothing: the cell retry that uses it only claims the alternates the
  scheduler found.

Both writers raise the typed errors of placement.errors, so one claim
loop (scheduler.claims) serves both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from placement.candidates import request as request_mod
from placement.candidates import result as result_mod
from placement.objects import consumer_groups
from scheduler import claims

# (instance uuid, what it is given) of a claim of several instances.
Write = tuple[str, result_mod.AllocationRequest]


class CandidatesFinder(Protocol):
    """Placement's allocation candidates search, as the embedded
    engine (placement.candidates.engine.CandidatesEngine) offers it."""

    def find(self, request: request_mod.CandidatesRequest,
             lean: bool = ..., sync: bool = ...
             ) -> result_mod.CandidateResult: ...


class PlacementPort:
    """Finding candidates and claiming them in one placement.

    ``writer`` writes allocations; ``finder`` (None: this port claims
    only) searches candidates. Claims follow scheduler.claims: a lost
    race is an Outcome, not an error."""

    def __init__(self, writer: claims.AllocationWriter,
                 finder: CandidatesFinder | None = None) -> None:
        self.writer = writer
        self.finder = finder

    def find(self, request: request_mod.CandidatesRequest,
             sync: bool = True) -> result_mod.CandidateResult:
        """The candidates of ``request``, without provider summaries
        (the scheduler only claims them). ``sync=False``: search the
        index as it stands (the caller has just brought it up to
        date). Placement's ResourceClassNotFound and TraitNotFound
        come through as they are."""
        if self.finder is None:
            raise NotImplementedError(
                "this placement port claims only: it has no candidates "
                "engine behind it")
        return self.finder.find(request, lean=True, sync=sync)

    def claim(self, consumer_uuid: str,
              allocation_request: result_mod.AllocationRequest,
              project_id: str | None, user_id: str | None,
              held: dict[str, claims.Held] | None = None,
              group: consumer_groups.GroupRule | None = None,
              group_seen: claims.GroupSeen | None = None
              ) -> claims.Outcome:
        """Allocate ``allocation_request`` to ``consumer_uuid``, beside
        what it holds already (an evacuation: recorded in ``held``),
        keeping ``group``'s rule; see claims.claim."""
        return claims.claim(self.writer, consumer_uuid, allocation_request,
                            project_id, user_id, held, group, group_seen)

    def claim_all(self, writes: Sequence[Write], project_id: str | None,
                  user_id: str | None,
                  groups: Sequence[consumer_groups.GroupRule | None] = ()
                  ) -> claims.Outcome:
        """Allocate each (consumer, request) of ``writes`` in one
        transaction: all of them or none (see claims.claim_all)."""
        return claims.claim_all(self.writer, writes, project_id, user_id,
                                groups)

    def group_members(self, group_uuid: str) -> claims.GroupSeen:
        """{member: root providers} of a consumer group, as the writer's
        placement recorded them; empty when it records none (a writer
        over HTTP)."""
        read = getattr(self.writer, "group_members", None)
        return read(group_uuid) if read is not None else {}

    def claim_together(self, owned: Sequence[claims.OwnedClaim]
                       ) -> claims.Outcome:
        """Several requests' claims, each with its own owner, in one
        transaction: all of them or none (see claims.claim_together)."""
        return claims.claim_together(self.writer, owned)

    def unclaim(self, consumer_uuid: str) -> None:
        """Remove the consumer's allocations, if it holds any."""
        claims.unclaim(self.writer, consumer_uuid)

    def release(self, consumer_uuid: str,
                before: claims.Held | None) -> None:
        """Undo a claim: put back what the consumer held ``before`` it,
        or remove its allocations (see claims.release)."""
        claims.release(self.writer, consumer_uuid, before)


def for_writer(placement: PlacementPort | claims.AllocationWriter
               ) -> PlacementPort:
    """``placement`` as a port: itself when it is one, else a port that
    claims through it (PlacementDirect or PlacementHttp)."""
    if isinstance(placement, PlacementPort):
        return placement
    return PlacementPort(placement)
