"""Claiming a candidate: write the instance's allocations in placement in
one transaction that checks capacity and provider generations (DESIGN.md,
decision 2). A lost race is not an error here: the caller tries again on
fresh state or moves on."""

import enum

from placement import errors as placement_errors
from placement.objects import allocations
from scheduler import errors

# Retries of one allocation request after a concurrent update: each
# retry reads fresh state in a new transaction.
CONCURRENT_RETRIES = 3


class Outcome(enum.Enum):
    CLAIMED = "claimed"
    NO_ROOM = "no room"  # capacity or constraints changed under us
    GONE = "gone"  # a provider of the request no longer exists
    RACE = "lost race"  # still losing after the retries


def claim(placement, consumer_uuid, allocation_request, project_id,
          user_id):
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


def claim_all(placement, writes, project_id, user_id):
    """Allocate each (consumer uuid, AllocationRequest) of ``writes`` to
    its new consumer in one transaction: all of them or none; an
    Outcome."""
    batch = [allocations.ConsumerAllocations(
        consumer, wanted.allocations, project_id=project_id,
        user_id=user_id, consumer_generation=None)
        for consumer, wanted in writes]
    return _write(
        lambda: placement.post_allocations(batch),
        lambda exc: "an instance of the request holds allocations "
                    f"already: {exc}")


def _write(write, already_held):
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


def unclaim(placement, consumer_uuid):
    """Remove the consumer's allocations (all-or-nothing rollback)."""
    try:
        placement.delete_allocations(consumer_uuid)
    except placement_errors.AllocationsNotFound:
        pass
