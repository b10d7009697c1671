"""Resource classes: the 21 standard classes of os-resource-classes
(immutable, ids fixed) and CUSTOM_* classes that operators create."""

import dataclasses
import datetime

import os_resource_classes as orc
import sqlalchemy as sa

from placement import errors
from placement.db import store, tables

CUSTOM_PREFIX = orc.CUSTOM_NAMESPACE
MAX_NAME_LENGTH = 255

_rc = tables.resource_classes


@dataclasses.dataclass(frozen=True)
class ResourceClass:
    id: int
    name: str
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    @property
    def standard(self):
        return self.id < tables.MIN_CUSTOM_RESOURCE_CLASS_ID

    @property
    def last_modified(self):
        return self.updated_at or self.created_at


def _from_row(row):
    return ResourceClass(row.id, row.name, row.created_at, row.updated_at)


@store.reader
def list_all(txn):
    """Every resource class, standard ones first."""
    return [_from_row(r) for r in txn.execute(
        sa.select(_rc).order_by(_rc.c.id))]


@store.reader
def get(txn, name):
    row = txn.execute(sa.select(_rc).where(_rc.c.name == name)).first()
    if row is None:
        raise errors.ResourceClassNotFound(name)
    return _from_row(row)


def _check_custom(name):
    if not isinstance(name, str) or not name.startswith(CUSTOM_PREFIX):
        raise errors.InvalidName(
            f"Resource class name {name!r} must start with "
            f"{CUSTOM_PREFIX}.")
    if len(name) > MAX_NAME_LENGTH:
        raise errors.InvalidName(
            f"Resource class name is longer than {MAX_NAME_LENGTH} "
            f"characters.")


def _next_id(txn):
    counters = tables.counters
    key = counters.c.name == tables.CUSTOM_RC_COUNTER
    txn.execute(counters.update().where(key)
                .values(value=counters.c.value + 1))
    return txn.scalar(sa.select(counters.c.value).where(key))


@store.writer
def create(txn, name):
    """A new CUSTOM_ class. ResourceClassExists when the name is taken."""
    if name in orc.STANDARDS:
        raise errors.ResourceClassExists(name)
    _check_custom(name)
    if txn.scalar(sa.select(_rc.c.id).where(_rc.c.name == name)) is not None:
        raise errors.ResourceClassExists(name)
    txn.execute(_rc.insert().values(id=_next_id(txn), name=name,
                                    created_at=txn.now))
    txn.changes.catalog = True
    return get(txn, name)


@store.writer
def ensure(txn, name):
    """Create the CUSTOM_ class unless it exists. Returns (class, created)."""
    try:
        return get(txn, name), False
    except errors.ResourceClassNotFound:
        return create(txn, name), True


@store.writer
def rename(txn, name, new_name):
    """Rename a custom class (the pre-1.7 PUT).

    The class gets a new id and its inventories and allocations move to
    it: ids are never reused or renamed, so that another process's cache of
    the old name fails cleanly instead of writing under the new one.
    """
    current = get(txn, name)
    if current.standard:
        raise errors.ResourceClassCannotUpdateStandard(name)
    if new_name in orc.STANDARDS:
        raise errors.ResourceClassExists(new_name)
    _check_custom(new_name)
    if new_name == name:
        return current
    if txn.scalar(sa.select(_rc.c.id)
                  .where(_rc.c.name == new_name)) is not None:
        raise errors.ResourceClassExists(new_name)
    new_id = _next_id(txn)
    txn.execute(_rc.insert().values(id=new_id, name=new_name,
                                    created_at=current.created_at,
                                    updated_at=txn.now))
    for table in (tables.inventories, tables.allocations):
        users = txn.execute(
            sa.select(table.c.resource_provider_id).distinct()
            .where(table.c.resource_class_id == current.id))
        txn.changes.providers.update(r.resource_provider_id for r in users)
        txn.execute(table.update()
                    .where(table.c.resource_class_id == current.id)
                    .values(resource_class_id=new_id))
    txn.execute(_rc.delete().where(_rc.c.id == current.id))
    txn.changes.catalog = True
    return get(txn, new_name)


@store.writer
def delete(txn, name):
    """Delete a custom class no inventory uses."""
    current = get(txn, name)
    if current.standard:
        raise errors.ResourceClassCannotDeleteStandard(name)
    inv = tables.inventories
    if txn.scalar(sa.select(inv.c.id)
                  .where(inv.c.resource_class_id == current.id)
                  .limit(1)) is not None:
        raise errors.ResourceClassInUse(name)
    txn.execute(_rc.delete().where(_rc.c.id == current.id))
    txn.changes.catalog = True
