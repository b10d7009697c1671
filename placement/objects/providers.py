"""Resource providers: create, rename, re-parent, delete, look up.

Also the generation helpers every write to a provider goes through.
"""

import dataclasses
import datetime
import re
import uuid as uuidlib

import sqlalchemy as sa

from placement import errors
from placement.db import fastsql, store, tables

MAX_NAME_LENGTH = 200
KEEP = object()  # update(): leave the parent as it is

_rp = tables.resource_providers


@dataclasses.dataclass(frozen=True)
class ResourceProvider:
    id: int
    uuid: str
    name: str
    generation: int
    parent_provider_uuid: str | None
    root_provider_uuid: str
    parent_id: int | None
    root_id: int
    created_at: datetime.datetime
    updated_at: datetime.datetime | None

    @property
    def last_modified(self):
        return self.updated_at or self.created_at


_CANONICAL_UUID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def canonical_uuid(value):
    """'A1B2...' or a UUID object -> 'a1b2c3d4-...' (dashed, lower case)."""
    if type(value) is str and _CANONICAL_UUID.fullmatch(value):
        return value  # the common case, without parsing it
    try:
        return str(uuidlib.UUID(str(value)))
    except (ValueError, TypeError, AttributeError):
        raise errors.BadRequest(f"Malformed UUID: {value!r}") from None


def _build_select():
    root = _rp.alias("root")
    parent = _rp.alias("parent")
    return sa.select(
        _rp.c.id, _rp.c.uuid, _rp.c.name, _rp.c.generation,
        _rp.c.parent_provider_id, _rp.c.root_provider_id,
        parent.c.uuid.label("parent_uuid"), root.c.uuid.label("root_uuid"),
        _rp.c.created_at, _rp.c.updated_at,
    ).select_from(
        _rp.join(root, _rp.c.root_provider_id == root.c.id)
        .outerjoin(parent, _rp.c.parent_provider_id == parent.c.id))


# Built once: making the aliases anew for every read cost more than the
# read itself.
_SELECT = _build_select()


def _select():
    return _SELECT


def _from_row(row):
    return ResourceProvider(
        id=row.id, uuid=row.uuid, name=row.name, generation=row.generation,
        parent_provider_uuid=row.parent_uuid,
        root_provider_uuid=row.root_uuid, parent_id=row.parent_provider_id,
        root_id=row.root_provider_id, created_at=row.created_at,
        updated_at=row.updated_at)


# The most common read of all (every write on a provider starts with it):
# on the raw cursor.
_BY_UUID = fastsql.Fast(_SELECT.where(_rp.c.uuid == sa.bindparam("uuid")))


@store.reader
def get(txn, uuid):
    """The provider with ``uuid``; ResourceProviderNotFound otherwise."""
    row = _BY_UUID.first(txn, {"uuid": str(uuid)})
    if row is None:
        raise errors.ResourceProviderNotFound(uuid)
    return _from_row(row)


@store.reader
def get_many(txn, uuids):
    """{uuid: provider} for those of ``uuids`` that exist."""
    uuids = sorted({str(u) for u in uuids})
    if not uuids:
        return {}
    rows = txn.execute(_select().where(_rp.c.uuid.in_(uuids)))
    return {row.uuid: _from_row(row) for row in rows}


@store.reader
def get_by_ids(txn, ids):
    """{internal id: provider} for those of ``ids`` that exist."""
    ids = sorted(set(ids))
    if not ids:
        return {}
    rows = txn.execute(_select().where(_rp.c.id.in_(ids)))
    return {row.id: _from_row(row) for row in rows}


@store.reader
def list_all(txn, uuid=None, name=None, in_tree=None):
    """Providers matching every given filter, oldest first. ``in_tree``
    keeps the providers of the tree holding that provider (none when it
    does not exist)."""
    query = _select().order_by(_rp.c.id)
    if uuid is not None:
        query = query.where(_rp.c.uuid == str(uuid))
    if name is not None:
        query = query.where(_rp.c.name == name)
    if in_tree is not None:
        root_id = txn.scalar(sa.select(_rp.c.root_provider_id)
                             .where(_rp.c.uuid == str(in_tree)))
        if root_id is None:
            return []
        query = query.where(_rp.c.root_provider_id == root_id)
    return [_from_row(row) for row in txn.execute(query)]


@store.reader
def tree(txn, uuid):
    """Every provider of the tree that holds ``uuid``, oldest first."""
    return list_all(txn, in_tree=get(txn, uuid).uuid)


# create()'s statements, on the raw cursor (loading a cloud makes
# thousands). The database compares the names, as its unique key does
# (MySQL ignores trailing spaces).
_TAKEN = fastsql.Fast(sa.select(
    _rp.c.uuid, (_rp.c.name == sa.bindparam("name")).label("same_name"),
).where(sa.or_(_rp.c.uuid == sa.bindparam("uuid"),
               _rp.c.name == sa.bindparam("name"))))
_INSERT = fastsql.Fast(_rp.insert(), columns=[
    "uuid", "name", "generation", "parent_provider_id", "root_provider_id",
    "created_at"], returning=_rp.c.id)
_SET_ROOT = fastsql.Fast(_rp.update().where(
    _rp.c.id == sa.bindparam("rp_id")).values(
        root_provider_id=sa.bindparam("rp_id")))


@store.writer
def create(txn, name, uuid=None, parent_uuid=None):
    """A new provider. DuplicateName when the uuid or name is taken;
    InvalidParent when the parent is missing or is the provider itself."""
    uuid = canonical_uuid(uuid) if uuid is not None else str(uuidlib.uuid4())
    _check_name(name)
    taken = {}
    for row in _TAKEN.rows(txn, {"uuid": uuid, "name": name}):
        if row.uuid == uuid:
            taken["uuid"] = uuid
        if row.same_name:
            taken["name"] = name
    if taken:
        raise errors.DuplicateName(**taken)
    parent_id = root_id = None
    if parent_uuid is not None:
        parent_uuid = canonical_uuid(parent_uuid)
        if parent_uuid == uuid:
            raise errors.InvalidParent(
                "parent provider UUID cannot be same as UUID. Please set "
                "parent provider UUID to None if there is no parent.")
        parent = txn.execute(
            sa.select(_rp.c.id, _rp.c.root_provider_id)
            .where(_rp.c.uuid == parent_uuid)).first()
        if parent is None:
            raise errors.InvalidParent(
                "parent provider UUID does not exist.")
        parent_id, root_id = parent.id, parent.root_provider_id
    rp_id = _INSERT.insert(txn, {
        "uuid": uuid, "name": name, "generation": 0,
        "parent_provider_id": parent_id, "root_provider_id": root_id,
        "created_at": txn.now})
    if root_id is None:
        _SET_ROOT.rowcount(txn, {"rp_id": rp_id})
    txn.changes.providers.add(rp_id)
    return get(txn, uuid)


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise errors.InvalidName("A resource provider needs a name.")
    if len(name) > MAX_NAME_LENGTH:
        raise errors.InvalidName(
            f"Resource provider name is longer than {MAX_NAME_LENGTH} "
            f"characters.")
    if "\x00" in name:
        raise errors.InvalidName("A resource provider name cannot contain "
                                 "a NUL character.")


@store.writer
def update(txn, uuid, name=None, parent_uuid=KEEP, allow_reparenting=False):
    """Rename and/or re-parent a provider; the generation is unchanged.

    Giving a parent to a root is always allowed. Moving a provider to
    another parent, or making it a root, needs ``allow_reparenting``
    (microversion 1.37). A parent inside the provider's own subtree would
    make a loop and is refused.
    """
    current = get(txn, uuid)
    values = {}
    if name is not None and name != current.name:
        _check_name(name)
        clash = txn.scalar(sa.select(_rp.c.id).where(_rp.c.name == name)
                           .where(_rp.c.id != current.id))
        if clash is not None:
            raise errors.DuplicateName(name=name)
        values["name"] = name
    subtree = []
    if parent_uuid is not KEEP:
        new_parent_id, new_root_id, subtree = _reparent(
            txn, current, parent_uuid, allow_reparenting)
        if new_parent_id != current.parent_id:
            values["parent_provider_id"] = new_parent_id
            values["root_provider_id"] = new_root_id
    if not values:
        return current
    values["updated_at"] = txn.now
    txn.execute(_rp.update().where(_rp.c.id == current.id).values(**values))
    if "root_provider_id" in values:
        others = [rp_id for rp_id in subtree if rp_id != current.id]
        if others:
            txn.execute(_rp.update().where(_rp.c.id.in_(others))
                        .values(root_provider_id=values["root_provider_id"],
                                updated_at=txn.now))
        txn.changes.providers.update(subtree)
    txn.changes.providers.add(current.id)
    return get(txn, uuid)


def _reparent(txn, current, parent_uuid, allow_reparenting):
    """(new parent id, new root id, ids of current's subtree)."""
    if parent_uuid is None:
        if current.parent_id is None:
            return None, current.id, []
        if not allow_reparenting:
            raise errors.InvalidParent(
                "un-parenting a provider is not currently allowed.")
        return None, current.id, _subtree_ids(txn, current)
    parent_uuid = canonical_uuid(parent_uuid)
    parent = txn.execute(sa.select(_rp.c.id, _rp.c.root_provider_id)
                         .where(_rp.c.uuid == parent_uuid)).first()
    if parent is None:
        raise errors.InvalidParent("parent provider UUID does not exist.")
    if (current.parent_id is not None and current.parent_id != parent.id
            and not allow_reparenting):
        raise errors.InvalidParent(
            "re-parenting a provider is not currently allowed.")
    subtree = _subtree_ids(txn, current)
    if parent.id in subtree:
        raise errors.InvalidParent(
            "creating loop in the provider tree is not allowed.")
    return parent.id, parent.root_provider_id, subtree


def _subtree_ids(txn, provider):
    """Ids of ``provider`` and every provider below it."""
    rows = txn.execute(sa.select(_rp.c.id, _rp.c.parent_provider_id)
                       .where(_rp.c.root_provider_id == provider.root_id))
    children = {}
    for row in rows:
        children.setdefault(row.parent_provider_id, []).append(row.id)
    found, todo = [], [provider.id]
    while todo:
        rp_id = todo.pop()
        found.append(rp_id)
        todo.extend(children.get(rp_id, ()))
    return found


@store.writer
def delete(txn, uuid):
    """Delete a provider with its inventories, traits and aggregate links.

    CannotDeleteParent while it has children; ResourceProviderInUse while
    it has allocations.
    """
    current = get(txn, uuid)
    child = txn.scalar(sa.select(_rp.c.id)
                       .where(_rp.c.parent_provider_id == current.id)
                       .limit(1))
    if child is not None:
        raise errors.CannotDeleteParent(current.uuid)
    alloc = tables.allocations
    used = txn.scalar(sa.select(alloc.c.id)
                      .where(alloc.c.resource_provider_id == current.id)
                      .limit(1))
    if used is not None:
        raise errors.ResourceProviderInUse(current.uuid)
    for table in (tables.inventories, tables.resource_provider_traits,
                  tables.resource_provider_aggregates):
        txn.execute(table.delete().where(
            table.c.resource_provider_id == current.id))
    # A root references itself; clear that before the row can go.
    txn.execute(_rp.update().where(_rp.c.id == current.id)
                .values(root_provider_id=None))
    txn.execute(_rp.delete().where(_rp.c.id == current.id))
    txn.changes.deleted.add(current.id)


# Generations

_BUMP_GENERATION = fastsql.Fast(
    _rp.update()
    .where(_rp.c.id == sa.bindparam("rp_id"))
    .where(_rp.c.generation == sa.bindparam("seen"))
    .values(generation=sa.bindparam("new"), updated_at=sa.bindparam("now")))


def lock_generations(txn, uuids):
    """{uuid: generation} of the providers ``uuids``, read with their rows
    locked (SELECT ... FOR UPDATE, in id order so that two lockers cannot
    deadlock each other) until the transaction ends.

    A write that checks caller generations up front and writes later
    needs this: between a plain read and the write, a claim on PostgreSQL
    or MySQL could commit and bump the generation unseen. With the rows
    locked, such a claim waits, then finds the generation moved and is
    retried. SQLite ignores FOR UPDATE: its writers are serialised.
    """
    uuids = sorted({str(u) for u in uuids})
    if not uuids:
        return {}
    rows = txn.execute(
        sa.select(_rp.c.uuid, _rp.c.generation)
        .where(_rp.c.uuid.in_(uuids)).order_by(_rp.c.id).with_for_update())
    return {row.uuid: row.generation for row in rows}


def check_generation(provider, given):
    """ResourceProviderGenerationConflict unless ``given`` is current."""
    if given != provider.generation:
        raise errors.ResourceProviderGenerationConflict(
            provider.uuid, provider.generation, given)


def bump_generation(txn, provider_id, uuid, seen, engine_read=False):
    """Compare-and-set the generation from ``seen`` to ``seen + 1``.

    When the row moved since it was read, the write is refused: with
    ``engine_read`` (the engine read ``seen`` itself, as allocation writes
    do) the store may retry the whole transaction; otherwise the caller's
    generation is stale and the conflict is reported.
    """
    _check_bump(_send_bump(txn, provider_id, seen), uuid, engine_read)
    return seen + 1


def bump_generation_later(txn, provider_id, uuid, seen):
    """bump_generation of a generation the engine read itself, sent
    through ``txn.pipeline`` (its guard): a missed row is a
    ProviderRace."""
    txn.pipeline.guard(_BUMP_GENERATION, _bump_params(txn, provider_id, seen),
                       lambda: store.ProviderRace(uuid))


def _send_bump(txn, provider_id, seen):
    return _BUMP_GENERATION.queue(txn, _bump_params(txn, provider_id, seen))


def _bump_params(txn, provider_id, seen):
    return {"rp_id": provider_id, "seen": seen, "new": seen + 1,
            "now": txn.now}


def _check_bump(sent, uuid, engine_read):
    moved = sent.rowcount
    sent.close()
    if moved != 1:
        if engine_read:
            raise store.ProviderRace(uuid)
        raise errors.ResourceProviderGenerationConflict(uuid)
