"""Consumer groups: consumers whose places follow a rule over root
providers, checked in the very transaction that writes a member's
allocations.

Two rules:

- ``spread``: at most ``max_per_root`` members under one root provider;
- ``together``: every member under one root provider.

A member is under a root while it holds an allocation on a provider of
that root's tree; a sharing provider's tree (MISC_SHARES_VIA_AGGREGATE)
places nobody. The writer adds what it knows that placement cannot
(``GroupRule.known``: members and the roots they are under in its own
view, such as an instance whose allocation a move handed to another
consumer), and names the root the write places its consumer under
(``GroupRule.root``).

Two writes that add members to one group cannot both pass on the same
reading: each compares-and-sets the group's generation after reading
the members, so the second is retried on fresh reads (store.ProviderRace)
and then either still fits or is refused with ConsumerGroupConflict,
which says where the members are. Removing a member's allocations only
relaxes a rule, so deletes need no generation.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Mapping

import os_traits
import sqlalchemy as sa

from placement import errors
from placement.db import store, tables

SPREAD = "spread"
TOGETHER = "together"
POLICIES = (SPREAD, TOGETHER)

_groups = tables.consumer_groups
_members = tables.consumer_group_members
_consumers = tables.consumers
_alloc = tables.allocations
_rp = tables.resource_providers
_root = _rp.alias("root")
_rpt = tables.resource_provider_traits
_traits = tables.traits

_GROUP = sa.select(_groups.c.id, _groups.c.generation).where(
    _groups.c.uuid == sa.bindparam("uuid"))

_SHARING = (sa.select(_rpt.c.resource_provider_id)
            .join(_traits, _traits.c.id == _rpt.c.trait_id)
            .where(_rpt.c.resource_provider_id == _root.c.id)
            .where(_traits.c.name == os_traits.MISC_SHARES_VIA_AGGREGATE)
            .exists())

# Every member with each root it is under (None: it holds nothing, or
# no longer exists), and whether that root shares.
_PLACED = (
    sa.select(_members.c.consumer_uuid, _consumers.c.id.label("consumer_id"),
              _root.c.uuid.label("root"), _SHARING.label("sharing"))
    .select_from(
        _members
        .outerjoin(_consumers, _consumers.c.uuid == _members.c.consumer_uuid)
        .outerjoin(_alloc, _alloc.c.consumer_id == _consumers.c.id)
        .outerjoin(_rp, _rp.c.id == _alloc.c.resource_provider_id)
        .outerjoin(_root, _root.c.id == _rp.c.root_provider_id))
    .where(_members.c.group_id == sa.bindparam("group_id"))
    .distinct())

_BUMP = (_groups.update()
         .where(_groups.c.id == sa.bindparam("group_id"))
         .where(_groups.c.generation == sa.bindparam("seen"))
         .values(generation=sa.bindparam("new"),
                 updated_at=sa.bindparam("now")))


@dataclasses.dataclass(frozen=True)
class GroupRule:
    """The group a write's consumer joins, and where the write puts it."""

    group_uuid: str
    policy: str  # SPREAD or TOGETHER
    # The root provider the write places its consumer under (the host).
    root: str
    max_per_root: int = 1
    # What the writer knows beyond placement: {member: roots it is
    # under}; a member may be any key (the writer's own names for
    # places it knows of only by root).
    known: Mapping[str, frozenset[str]] = dataclasses.field(
        default_factory=dict)


class ConsumerGroupConflict(errors.Conflict):
    """A write would break its group's rule as the group stands now."""

    def __init__(self, rule, consumer_uuid, placed):
        where = {root for roots in placed.values() for root in roots}
        if rule.policy == SPREAD:
            said = (f"root provider {rule.root} holds "
                    f"{sum(rule.root in r for r in placed.values())} "
                    f"member(s), at most {rule.max_per_root} allowed")
        else:
            said = ("the group's members are under "
                    f"{', '.join(sorted(where))}")
        super().__init__(
            f"consumer {consumer_uuid} cannot join group {rule.group_uuid} "
            f"under {rule.root}: {said}")
        self.rule = rule
        self.consumer_uuid = consumer_uuid
        # {member: roots}, the other members as the write found them.
        self.placed = placed


def enforce(txn, writes):
    """Check and record the group memberships of ``writes``
    (ConsumerAllocations with a ``group`` rule); called by the
    allocation write before it reads anything else, in its
    transaction. Groups go in uuid order: one lock order for every
    writer."""
    by_group = collections.defaultdict(list)
    for write in writes:
        if write.group is not None and write.allocations:
            by_group[write.group.group_uuid].append(write)
    for uuid in sorted(by_group):
        _enforce_group(txn, uuid, by_group[uuid])


def _enforce_group(txn, uuid, writes):
    for write in writes:
        rule = write.group
        if rule.policy not in POLICIES:
            raise errors.BadRequest(
                f"unknown consumer group policy {rule.policy!r}")
    row = txn.execute(_GROUP, {"uuid": uuid}).first()
    if row is None:
        # Two writers creating one group: the second's insert fails its
        # unique key and the store retries it on fresh reads.
        group_id = txn.execute(_groups.insert().values(
            uuid=uuid, generation=1,
            created_at=txn.now)).inserted_primary_key[0]
        placed, gone = {}, []
    else:
        group_id = row.id
        placed, gone = _placed(txn, group_id)
    members = {member: set(roots) for member, roots in placed.items()}
    for write in writes:
        for member, roots in write.group.known.items():
            members.setdefault(member, set()).update(roots)
    for write in writes:
        _check(write, members)
        members[write.consumer_uuid] = {write.group.root}
    if row is not None:
        moved = txn.execute(_BUMP, {
            "group_id": group_id, "seen": row.generation,
            "new": row.generation + 1, "now": txn.now}).rowcount
        if moved != 1:
            raise store.ProviderRace(uuid)
    if gone:
        txn.execute(_members.delete()
                    .where(_members.c.group_id == group_id)
                    .where(_members.c.consumer_uuid.in_(gone)))
    new = sorted({w.consumer_uuid for w in writes} - set(placed))
    if new:
        txn.execute(_members.insert(), [
            {"group_id": group_id, "consumer_uuid": member,
             "created_at": txn.now} for member in new])


def _placed(txn, group_id):
    """({member: roots it is under}, [members that no longer exist])."""
    placed, gone = {}, []
    for r in txn.execute(_PLACED, {"group_id": group_id}):
        if r.consumer_id is None:
            gone.append(r.consumer_uuid)
            continue
        roots = placed.setdefault(r.consumer_uuid, set())
        if r.root is not None and not r.sharing:
            roots.add(r.root)
    return placed, sorted(set(gone))


def _check(write, members):
    """Refuse ``write`` when its rule forbids its root, given
    ``members`` ({member: roots}, the write's own consumer left out)."""
    rule = write.group
    others = {member: frozenset(roots) for member, roots in members.items()
              if member != write.consumer_uuid and roots}
    if rule.policy == SPREAD:
        if sum(rule.root in roots for roots in others.values()) \
                >= rule.max_per_root:
            raise ConsumerGroupConflict(rule, write.consumer_uuid, others)
    elif any(roots - {rule.root} for roots in others.values()):
        raise ConsumerGroupConflict(rule, write.consumer_uuid, others)


@store.reader
def placed(txn, group_uuid):
    """{member: roots it is under} of the group (empty when it does not
    exist): what a writer may read before it picks a root."""
    row = txn.execute(_GROUP, {"uuid": str(group_uuid)}).first()
    if row is None:
        return {}
    found, _gone = _placed(txn, row.id)
    return {member: frozenset(roots) for member, roots in found.items()
            if roots}
