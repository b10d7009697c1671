"""Helpers shared by the placement objects tests."""

import uuid as uuidlib

import pytest
import sqlalchemy as sa

from placement.db import tables
from placement.objects import allocations, inventories, providers


def new_uuid():
    return str(uuidlib.uuid4())


def snapshot(store):
    """Every row of every table, sorted: what a failed write must leave
    exactly as it was."""
    out = {}
    with store.engine.connect() as conn:
        for name, table in sorted(tables.metadata.tables.items()):
            rows = conn.execute(sa.select(table)).all()
            out[name] = sorted((tuple(r) for r in rows), key=repr)
    return out


class Recorder:
    """A store listener that keeps the ChangeSets it is given."""

    def __init__(self, store):
        self.changes = []
        self.store = store
        store.add_listener(self)

    def __call__(self, changes):
        self.changes.append(changes)

    def close(self):
        self.store.remove_listener(self)


def raises_unchanged(store, exc_type, fn, *args, **kwargs):
    """Call ``fn(store, ...)``, expect ``exc_type``, and check that the
    database and the listeners saw nothing. Returns the exception."""
    before = snapshot(store)
    recorder = Recorder(store)
    try:
        with pytest.raises(exc_type) as info:
            fn(store, *args, **kwargs)
    finally:
        recorder.close()
    assert recorder.changes == []
    assert snapshot(store) == before
    return info.value


def generation(store, uuid):
    return providers.get(store, uuid).generation


def add_inventory(store, rp_uuid, **totals):
    """Set the provider's inventory to ``{rc: total}``; the generation."""
    gen = generation(store, rp_uuid)
    invs = [inventories.Inventory(rc, total) for rc, total in totals.items()]
    return inventories.replace_all(store, rp_uuid, gen, invs)[0]


def allocate(store, rp_uuid, consumer_uuid=None, **resources):
    """Allocate ``{rc: amount}`` of the provider to a (new) consumer;
    returns the consumer uuid."""
    consumer_uuid = consumer_uuid or new_uuid()
    allocations.replace(store, [allocations.ConsumerAllocations(
        consumer_uuid, {rp_uuid: resources}, "project", "user")])
    return consumer_uuid


def count_rows(store, table, **where):
    query = sa.select(sa.func.count()).select_from(table)
    for column, value in where.items():
        query = query.where(table.c[column] == value)
    with store.engine.connect() as conn:
        return conn.execute(query).scalar()
