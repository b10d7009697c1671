"""Claiming a candidate: write the instance's allocations in placement in
one transaction that checks capacity and provider generations
(docs/architecture.md, "The store"). A lost race is not an error here:
the caller tries again on fresh state or moves on.

The writes go through an :class:`AllocationWriter`: the embedded
placement (placement.direct.PlacementDirect) or its REST API
(rpc.cell_retry.PlacementHttp); both raise placement.errors' types.

An instance that holds allocations already is being evacuated: Nova's
conductor asks for a host without moving the source's allocation to a
migration, and Nova's scheduler then claims the destination beside the
source in one write with the consumer's current generation (the source
stays held until its compute comes back and cleans up). :func:`claim`
does the same, and says what the consumer held before so that a
rollback puts exactly that back (:func:`release`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple, Protocol

from placement import errors as placement_errors
from placement.candidates import result as result_mod
from placement.objects import allocations, consumer_groups
from scheduler import errors

# {provider uuid: {resource class: amount}}
AllocationMap = dict[str, dict[str, int]]

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

    def get_allocations(self, consumer_uuid: Any) -> Any:
        """The consumer's allocations: ``.allocations`` {provider uuid:
        an entry with ``.resources``}, ``.consumer`` (None when it does
        not exist, else with ``.generation``)."""

    def provider_tree(self, uuid: Any) -> Any:
        """The providers (each with ``.uuid``) of ``uuid``'s tree."""


class Held(NamedTuple):
    """What a consumer held when a claim was made beside it (an
    evacuation's source), with its owner: put back on a rollback."""

    allocations: AllocationMap
    project_id: str | None
    user_id: str | None


class Outcome(enum.Enum):
    CLAIMED = "claimed"
    NO_ROOM = "no room"  # capacity or constraints changed under us
    GONE = "gone"  # a provider of the request no longer exists
    RACE = "lost race"  # still losing after the retries
    # The server group's rule forbids the host as the group stands in
    # the database (scheduler.group_policies).
    GROUP = "group changed"


# What makes a request unclaimable as it stands (see _not_claimed).
_NOT_CLAIMABLE = (placement_errors.InvalidInventory,
                  placement_errors.AllocationProviderNotFound,
                  placement_errors.NotFound)


def _not_claimed(exc: Exception) -> Outcome:
    """The Outcome of a claim refused with one of _NOT_CLAIMABLE:
    capacity or constraints changed, or a provider is gone."""
    if isinstance(exc, placement_errors.InvalidInventory):
        return Outcome.NO_ROOM
    return Outcome.GONE


# What a claim refused for its group learns: {member: root providers}.
GroupSeen = dict[str, frozenset[str]]


def claim(placement: AllocationWriter, consumer_uuid: str,
          allocation_request: result_mod.AllocationRequest,
          project_id: str | None, user_id: str | None,
          held: dict[str, Held] | None = None,
          group: consumer_groups.GroupRule | None = None,
          group_seen: GroupSeen | None = None) -> Outcome:
    """Allocate ``allocation_request`` (placement.candidates
    AllocationRequest) to ``consumer_uuid``; an Outcome.

    A consumer that holds allocations already (an evacuation) gets the
    request beside them, as Nova's scheduler claims it: what it holds,
    plus the request's providers it holds nothing on, written with its
    current generation. What it held is then recorded in
    ``held[consumer_uuid]``. A consumer changed by someone else between
    that read and the write raises errors.AllocationUpdateFailed, as
    Nova's report client does.

    ``group``: the consumer group rule the claim keeps (only writers on
    gantt's own store take one); when the group's members forbid the
    host, Outcome.GROUP, and where they are goes into ``group_seen``."""
    new = True
    extra = {} if group is None else {"group": group}
    for _ in range(1 + CONCURRENT_RETRIES):
        try:
            if new:
                placement.put_allocations(
                    consumer_uuid, allocation_request.allocations,
                    project_id=project_id, user_id=user_id,
                    consumer_generation=None, **extra)
                return Outcome.CLAIMED
            before, generation = read_held(placement, consumer_uuid)
            if generation is None:
                # Removed since the write that found it: new again.
                new = True
                continue
            _claim_beside(placement, consumer_uuid, allocation_request,
                          before, generation, project_id, user_id, extra)
            if held is not None:
                held[consumer_uuid] = Held(before, project_id, user_id)
            return Outcome.CLAIMED
        except consumer_groups.ConsumerGroupConflict as exc:
            if group_seen is not None:
                group_seen.update(exc.placed)
            return Outcome.GROUP
        except placement_errors.ConsumerGenerationConflict:
            if not new:
                raise errors.AllocationUpdateFailed(
                    consumer_uuid, "another process changed the consumer "
                    "after the scheduler read its allocations") from None
            new = False
        except placement_errors.ConcurrentUpdate:
            continue
        except _NOT_CLAIMABLE as exc:
            return _not_claimed(exc)
    return Outcome.RACE


def _claim_beside(placement: AllocationWriter, consumer_uuid: str,
                  allocation_request: result_mod.AllocationRequest,
                  before: AllocationMap, generation: int,
                  project_id: str | None, user_id: str | None,
                  extra: dict[str, Any]) -> None:
    """Write ``allocation_request`` beside what an existing consumer
    holds (see claim)."""
    if not before:
        # A consumer without allocations: Nova's claim of it fails the
        # same way (its write expects no consumer).
        raise errors.AllocationUpdateFailed(
            consumer_uuid, "the consumer exists but holds no allocations")
    both = {rp: dict(amounts) for rp, amounts in before.items()}
    for rp, amounts in allocation_request.allocations.items():
        # A provider it holds already (a shared one) keeps its amounts.
        both.setdefault(rp, dict(amounts))
    placement.put_allocations(consumer_uuid, both, project_id=project_id,
                              user_id=user_id,
                              consumer_generation=generation, **extra)


def read_held(placement: AllocationWriter, consumer_uuid: str
              ) -> tuple[AllocationMap, int | None]:
    """(allocations, generation) of a consumer; ({}, None) when it does
    not exist."""
    view = placement.get_allocations(consumer_uuid)
    allocated = {str(rp): dict(entry.resources)
                 for rp, entry in view.allocations.items()}
    consumer = view.consumer
    return allocated, (None if consumer is None else consumer.generation)


def claim_all(placement: AllocationWriter,
              writes: Sequence[tuple[str, result_mod.AllocationRequest]],
              project_id: str | None, user_id: str | None,
              groups: Sequence[consumer_groups.GroupRule | None] = ()
              ) -> Outcome:
    """Allocate each (consumer uuid, AllocationRequest) of ``writes`` to
    its new consumer in one transaction: all of them or none; an
    Outcome. ``groups``: the group rule of each write, if any."""
    rules = list(groups) or [None] * len(writes)
    return claim_together(placement, [
        OwnedClaim(consumer, wanted, project_id, user_id, rule)
        for (consumer, wanted), rule in zip(writes, rules, strict=True)])


class OwnedClaim(NamedTuple):
    """One new consumer's claim, with its owner in placement."""

    consumer_uuid: str
    allocation_request: result_mod.AllocationRequest
    project_id: str | None
    user_id: str | None
    # The consumer group rule it keeps (scheduler.group_policies).
    group: consumer_groups.GroupRule | None = None


def claim_together(placement: AllocationWriter,
                   owned: Sequence[OwnedClaim]) -> Outcome:
    """Allocate every claim of ``owned`` (new consumers, each with its
    own owner: several requests' claims) in one transaction: all of them
    or none; an Outcome (GROUP when a group's rule refused them)."""
    batch = [allocations.ConsumerAllocations(
        c.consumer_uuid, c.allocation_request.allocations,
        project_id=c.project_id, user_id=c.user_id, consumer_generation=None,
        group=c.group)
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
        except consumer_groups.ConsumerGroupConflict:
            return Outcome.GROUP
        except placement_errors.ConsumerGenerationConflict as exc:
            raise errors.SchedulerError(already_held(exc)) from None
        except placement_errors.ConcurrentUpdate:
            continue
        except _NOT_CLAIMABLE as exc:
            return _not_claimed(exc)
    return Outcome.RACE


def unclaim(placement: AllocationWriter, consumer_uuid: str) -> None:
    """Remove the consumer's allocations (all-or-nothing rollback)."""
    try:
        placement.delete_allocations(consumer_uuid)
    except placement_errors.AllocationsNotFound:
        pass


def release(placement: AllocationWriter, consumer_uuid: str,
            before: Held | None) -> None:
    """Undo a claim: put back what the consumer held ``before`` it (a
    Held recorded by :func:`claim`), or remove its allocations when it
    held nothing. Another writer's change in between is retried on
    fresh state."""
    if before is None:
        unclaim(placement, consumer_uuid)
        return
    for _ in range(1 + CONCURRENT_RETRIES):
        _, generation = read_held(placement, consumer_uuid)
        try:
            placement.put_allocations(
                consumer_uuid, before.allocations,
                project_id=before.project_id, user_id=before.user_id,
                consumer_generation=generation)
            return
        except (placement_errors.ConsumerGenerationConflict,
                placement_errors.ConcurrentUpdate):
            continue
    raise errors.AllocationUpdateFailed(
        consumer_uuid, "its allocations kept changing while the scheduler "
        "put back what it held before the claim")
