"""Claiming a candidate: write the instance's allocations in placement in
one transaction that checks capacity and provider generations
(docs/architecture.md, "The store"). A lost race is not an error here:
the caller tries again on fresh state or moves on.

The writes go through an :class:`AllocationWriter`: the embedded
placement (placement.direct.PlacementDirect) or its REST API
(rpc.cell_retry.PlacementHttp); both raise placement.errors' types.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, Protocol

from placement import errors as placement_errors
from placement.candidates import result as result_mod
from placement.objects import allocations
from scheduler import errors

# Retries of one allocation request after a concurrent update: each
# retry reads fresh state in a new transaction.
CONCURRENT_RETRIES = 3


class AllocationWriter(Protocol):
    """Placement's allocation writes, as PlacementDirect and
    rpc.cell_retry.PlacementHttp offer them."""

    def put_allocations(self, consumer_uuid: Any, allocation_map: Any,
                        project_id: Any, user_id: Any,
                        consumer_generation: Any = ...) -> object: ...

    def post_allocations(
            self, writes: Iterable[allocations.ConsumerAllocations]
    ) -> object: ...

    def delete_allocations(self, consumer_uuid: Any) -> object: ...


class Outcome(enum.Enum):
    CLAIMED = "claimed"
    NO_ROOM = "no room"  # capacity or constraints changed under us
    GONE = "gone"  # a provider of the request no longer exists
    RACE = "lost race"  # still losing after the retries


def claim(placement: AllocationWriter, consumer_uuid: str,
          allocation_request: result_mod.AllocationRequest,
          project_id: str | None, user_id: str | None) -> Outcome:
    """Allocate ``allocation_request`` (placement.candidates
    AllocationRequest) to the new consumer ``consumer_uuid``; an Outcome.
    An instance that holds allocations already is the caller's error."""
    return _write(
        lambda: placement.put_allocations(
            consumer_uuid, allocation_request.allocations,
            project_id=project_id, user_id=user_id,
            consumer_generation=None),
        lambda exc: f"instance {consumer_uuid} holds allocations already: "
                    "remove them before scheduling it again")


def claim_all(placement: AllocationWriter,
              writes: Sequence[tuple[str, result_mod.AllocationRequest]],
              project_id: str | None, user_id: str | None) -> Outcome:
    """Allocate each (consumer uuid, AllocationRequest) of ``writes`` to
    its new consumer in one transaction: all of them or none; an
    Outcome."""
    return claim_together(placement, [
        OwnedClaim(consumer, wanted, project_id, user_id)
        for consumer, wanted in writes])


class OwnedClaim(NamedTuple):
    """One new consumer's claim, with its owner in placement."""

    consumer_uuid: str
    allocation_request: result_mod.AllocationRequest
    project_id: str | None
    user_id: str | None


def claim_together(placement: AllocationWriter,
                   owned: Sequence[OwnedClaim]) -> Outcome:
    """Allocate every claim of ``owned`` (new consumers, each with its
    own owner: several requests' claims) in one transaction: all of them
    or none; an Outcome."""
    batch = [allocations.ConsumerAllocations(
        c.consumer_uuid, c.allocation_request.allocations,
        project_id=c.project_id, user_id=c.user_id, consumer_generation=None)
        for c in owned]
    return _write(
        lambda: placement.post_allocations(batch),
        lambda exc: "an instance of the request holds allocations "
                    f"already: {exc}")


def _write(write: Callable[[], object],
           already_held: Callable[[Exception], str]) -> Outcome:
    """Run ``write`` (a claim for new consumers), retrying a concurrent
    update on fresh state; an Outcome. A consumer that holds allocations
    already raises SchedulerError(``already_held(exc)``)."""
    for _ in range(1 + CONCURRENT_RETRIES):
        try:
            write()
            return Outcome.CLAIMED
        except placement_errors.ConsumerGenerationConflict as exc:
            raise errors.SchedulerError(already_held(exc)) from None
        except placement_errors.ConcurrentUpdate:
            continue
        except placement_errors.InvalidInventory:
            return Outcome.NO_ROOM
        except (placement_errors.AllocationProviderNotFound,
                placement_errors.NotFound):
            return Outcome.GONE
    return Outcome.RACE


def unclaim(placement: AllocationWriter, consumer_uuid: str) -> None:
    """Remove the consumer's allocations (all-or-nothing rollback)."""
    try:
        placement.delete_allocations(consumer_uuid)
    except placement_errors.AllocationsNotFound:
        pass
