"""The store's change notifications and change log (every engine)."""

import logging

import pytest
import sqlalchemy as sa

from placement import errors
from placement.db import store as store_mod
from placement.db import tables
from placement.objects import (
    aggregates,
    inventories,
    providers,
    resource_classes,
    traits,
)
from tests import databases
from tests.functional import objects_helpers as h

AGG = "44444444-4444-4444-8444-444444444444"
_pc = tables.provider_changes


@pytest.fixture
def recorder(store):
    rec = h.Recorder(store)
    yield rec
    rec.close()


def _log(store):
    """(seq, provider id, changed_at) rows of the change log, in order."""
    with store.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(
            sa.select(_pc.c.seq, _pc.c.resource_provider_id,
                      _pc.c.changed_at).order_by(_pc.c.seq))]


def _what(changes):
    """What a ChangeSet says changed: (providers, deleted, usage,
    catalog)."""
    return (changes.providers, changes.deleted, changes.usage,
            changes.catalog)


def _only(recorder):
    """What the one ChangeSet recorded since the last call says."""
    assert len(recorder.changes) == 1, recorder.changes
    return _what(recorder.changes.pop())


def _changes(providers_=(), deleted=(), catalog=False):
    return (set(providers_), set(deleted), {}, catalog)


# ChangeSet itself


def test_changeset_usage_and_truth():
    """Usage deltas add up and vanish at zero; an empty set is false;
    touched() is every provider mentioned."""
    changes = store_mod.ChangeSet()
    assert not changes
    changes.add_usage(1, 0, 3)
    changes.add_usage(1, 0, -3)
    assert changes.usage == {} and not changes
    changes.add_usage(2, 1, 5)
    changes.add_usage(2, 1, 1)
    assert changes.usage == {(2, 1): 6} and changes
    changes.providers.add(3)
    changes.deleted.add(4)
    assert changes.touched() == {2, 3, 4}
    assert store_mod.ChangeSet(catalog=True)
    assert store_mod.ChangeSet(catalog=True).touched() == set()


# notifications of each write


def test_provider_writes_notify(store, recorder):
    """Create, rename, re-parent and delete report the right ids."""
    root = providers.create(store, "root")
    assert _only(recorder) == _changes([root.id])
    child = providers.create(store, "child", parent_uuid=root.uuid)
    grand = providers.create(store, "grand", parent_uuid=child.uuid)
    recorder.changes.clear()
    providers.update(store, child.uuid, name="kid")
    assert _only(recorder) == _changes([child.id])
    providers.update(store, child.uuid, parent_uuid=None,
                     allow_reparenting=True)
    assert _only(recorder) == _changes([child.id, grand.id])
    providers.update(store, root.uuid, parent_uuid=grand.uuid)
    assert _only(recorder) == _changes([root.id])
    providers.update(store, root.uuid)
    providers.update(store, root.uuid, name="root")
    assert recorder.changes == []
    providers.delete(store, root.uuid)
    assert _only(recorder) == _changes(deleted=[root.id])


def test_inventory_writes_notify(store, recorder):
    """Every inventory write reports its provider."""
    rp = providers.create(store, "cn1")
    recorder.changes.clear()
    inventories.replace_all(store, rp.uuid, 0,
                            [inventories.Inventory("VCPU", 4)])
    inventories.add(store, rp.uuid, inventories.Inventory("DISK_GB", 4))
    inventories.update(store, rp.uuid, inventories.Inventory("VCPU", 8))
    inventories.delete(store, rp.uuid, "DISK_GB")
    inventories.delete_all(store, rp.uuid)
    assert [_what(c) for c in recorder.changes] == [
        _changes([rp.id])] * 5


def test_trait_writes_notify(store, recorder):
    """Trait sets report their provider when the set changes; catalog
    changes set the catalog flag only."""
    rp = providers.create(store, "cn1")
    recorder.changes.clear()
    assert traits.ensure(store, "CUSTOM_GOLD")
    assert _only(recorder) == _changes(catalog=True)
    traits.ensure(store, "CUSTOM_GOLD")
    assert recorder.changes == []
    traits.set_for_provider(store, rp.uuid, 0, ["CUSTOM_GOLD"])
    assert _only(recorder) == _changes([rp.id])
    traits.set_for_provider(store, rp.uuid, 1, ["CUSTOM_GOLD"])
    assert recorder.changes == []
    traits.delete_for_provider(store, rp.uuid)
    assert _only(recorder) == _changes([rp.id])
    traits.delete(store, "CUSTOM_GOLD")
    assert _only(recorder) == _changes(catalog=True)


def test_aggregate_writes_notify(store, recorder):
    """Aggregate sets report their provider when the set changes or the
    generation moves."""
    rp = providers.create(store, "cn1")
    recorder.changes.clear()
    aggregates.set_for_provider(store, rp.uuid, [AGG])
    assert _only(recorder) == _changes([rp.id])
    aggregates.set_for_provider(store, rp.uuid, [AGG])
    assert recorder.changes == []
    aggregates.set_for_provider(store, rp.uuid, [AGG], generation=0,
                                bump_generation=True)
    assert _only(recorder) == _changes([rp.id])
    aggregates.set_for_provider(store, rp.uuid, [])
    assert _only(recorder) == _changes([rp.id])


def test_resource_class_writes_notify(store, recorder):
    """Creating, renaming and deleting a custom class set the catalog
    flag; ensure() of an existing class notifies nothing."""
    resource_classes.create(store, "CUSTOM_A")
    assert _only(recorder) == _changes(catalog=True)
    resource_classes.ensure(store, "CUSTOM_A")
    assert recorder.changes == []
    resource_classes.rename(store, "CUSTOM_A", "CUSTOM_B")
    assert _only(recorder) == _changes(catalog=True)
    resource_classes.delete(store, "CUSTOM_B")
    assert _only(recorder) == _changes(catalog=True)


def test_allocation_usage_notified(store, recorder):
    """An allocation reports the usage delta of each provider and
    class."""
    rp = providers.create(store, "cn1")
    h.add_inventory(store, rp.uuid, VCPU=4, MEMORY_MB=1024)
    recorder.changes.clear()
    h.allocate(store, rp.uuid, VCPU=2, MEMORY_MB=512)
    assert len(recorder.changes) == 1
    changes = recorder.changes[0]
    assert changes.usage == {(rp.id, 0): 2, (rp.id, 1): 512}
    assert changes.touched() == {rp.id}


def test_failed_writes_notify_nothing(store, recorder):
    """A write that raises notifies nothing and logs no change."""
    rp = providers.create(store, "cn1")
    recorder.changes.clear()
    log = _log(store)
    failing = [
        (errors.DuplicateName, providers.create, ("cn1",), {}),
        (errors.InvalidParent, providers.update, (rp.uuid,),
         {"parent_uuid": rp.uuid}),
        (errors.ResourceProviderGenerationConflict,
         inventories.replace_all, (rp.uuid, 3, []), {}),
        (errors.TraitNotFound, traits.set_for_provider,
         (rp.uuid, 0, ["CUSTOM_NOPE"]), {}),
        (errors.ResourceProviderGenerationConflict,
         aggregates.set_for_provider, (rp.uuid, [AGG]),
         {"generation": 9, "bump_generation": True}),
        (errors.InvalidName, traits.ensure, ("NOPE",), {}),
        (errors.ResourceClassExists, resource_classes.create, ("VCPU",),
         {}),
    ]
    for exc_type, fn, args, kwargs in failing:
        with pytest.raises(exc_type):
            fn(store, *args, **kwargs)
    assert recorder.changes == []
    assert _log(store) == log


def test_listener_errors_are_contained(store, caplog):
    """A failing listener is logged; the write stands and the other
    listeners are still called. A removed listener hears nothing."""
    seen = []

    def broken(changes):
        raise RuntimeError("listener broke")

    store.add_listener(broken)
    store.add_listener(seen.append)
    with caplog.at_level(logging.ERROR, "placement.db.store"):
        rp = providers.create(store, "cn1")
    assert [_what(c) for c in seen] == [_changes([rp.id])]
    assert "listener broke" in caplog.text
    assert providers.get(store, rp.uuid) == rp
    store.remove_listener(seen.append)
    store.remove_listener(broken)
    providers.create(store, "cn2")
    assert len(seen) == 1


# the provider_changes log


def test_change_log_rows(store):
    """Each commit logs one row per touched provider, with the commit's
    time, in increasing sequence; catalog-only commits log nothing."""
    assert _log(store) == []
    a = providers.create(store, "a")
    b = providers.create(store, "b", parent_uuid=a.uuid)
    c = providers.create(store, "c", parent_uuid=b.uuid)
    assert [r[1] for r in _log(store)] == [a.id, b.id, c.id]
    start = len(_log(store))
    providers.update(store, b.uuid, parent_uuid=None,
                     allow_reparenting=True)
    rows = _log(store)[start:]
    assert sorted(r[1] for r in rows) == sorted([b.id, c.id])
    assert len({r[2] for r in rows}) == 1
    resource_classes.create(store, "CUSTOM_A")
    traits.ensure(store, "CUSTOM_A")
    assert len(_log(store)) == start + 2
    providers.delete(store, c.uuid)
    assert _log(store)[-1][1] == c.id
    seqs = [r[0] for r in _log(store)]
    assert seqs == sorted(set(seqs))


def test_changeset_seqs_match_log(store, recorder):
    """A ChangeSet carries the sequence numbers of the log rows its commit
    wrote; a catalog-only commit wrote none."""
    a = providers.create(store, "a")
    b = providers.create(store, "b", parent_uuid=a.uuid)
    providers.update(store, a.uuid, name="a2")
    providers.update(store, b.uuid, parent_uuid=None,
                     allow_reparenting=True)
    traits.ensure(store, "CUSTOM_X")
    seqs = [seq for changes in recorder.changes for seq in changes.seqs]
    assert seqs == [r[0] for r in _log(store)]
    assert [len(c.seqs) for c in recorder.changes] == [1, 1, 1, 1, 0]


def _usage_only(store):
    with store.engine.connect() as conn:
        return [bool(v) for v in conn.execute(
            sa.select(_pc.c.usage_only).order_by(_pc.c.seq)).scalars()]


def test_change_log_usage_rows(store):
    """Allocations log their providers, marked as usage-only changes;
    a commit that also changed the provider otherwise is not."""
    rp = providers.create(store, "cn1")
    h.add_inventory(store, rp.uuid, VCPU=4)
    assert set(_usage_only(store)) == {False}
    start = len(_log(store))
    h.allocate(store, rp.uuid, VCPU=1)
    assert [r[1] for r in _log(store)[start:]] == [rp.id]
    assert _usage_only(store)[start:] == [True]

    traits.ensure(store, "CUSTOM_A")

    def both(txn):
        h.allocate(txn, rp.uuid, VCPU=1)
        traits.set_for_provider(txn, rp.uuid, None, ["CUSTOM_A"])
    store.write(both)
    assert [r[1] for r in _log(store)[start + 1:]] == [rp.id]
    assert _usage_only(store)[start + 1:] == [False]


def test_prune_change_log(store):
    """Pruning drops rows older than the retention and records the
    sequence below which rows are gone."""
    rp = providers.create(store, "cn1")
    old = store_mod.utcnow() - store_mod.CHANGE_LOG_RETENTION * 2
    with store.engine.begin() as conn:
        conn.execute(_pc.update().values(changed_at=old))
    [(old_seq, _rp_id, _at)] = _log(store)
    providers.update(store, rp.uuid, name="cn2")
    kept = _log(store)[1:]
    assert len(kept) == 1
    assert store.write(store_mod.prune_change_log) == 1
    assert _log(store) == kept
    counters = tables.counters
    with store.engine.connect() as conn:
        below = conn.execute(sa.select(counters.c.value).where(
            counters.c.name == tables.CHANGES_PRUNED_COUNTER)).scalar()
    assert below == old_seq + 1
    assert store.write(store_mod.prune_change_log) == 0
    assert _log(store) == kept


# joined transactions


def test_joined_transaction_commits_once(store, recorder):
    """Writes joined in one transaction notify once, with everything."""

    def build(txn):
        a = providers.create(txn, "a")
        b = providers.create(txn, "b", parent_uuid=a.uuid)
        inventories.replace_all(txn, b.uuid, 0,
                                [inventories.Inventory("VCPU", 2)])
        traits.ensure(txn, "CUSTOM_X")
        traits.set_for_provider(txn, a.uuid, 0, ["CUSTOM_X"])
        return a, b

    a, b = store.write(build)
    assert _only(recorder) == _changes([a.id, b.id], catalog=True)
    assert traits.for_provider(store, a.uuid)[1] == ["CUSTOM_X"]
    assert h.generation(store, b.uuid) == 1


def test_joined_transaction_rolls_back(store):
    """A failure late in a joined transaction undoes its earlier
    writes."""
    providers.create(store, "taken")

    def build(txn):
        rp = providers.create(txn, "a")
        inventories.replace_all(txn, rp.uuid, 0,
                                [inventories.Inventory("VCPU", 2)])
        resource_classes.create(txn, "CUSTOM_NEW")
        traits.ensure(txn, "CUSTOM_NEW")
        providers.create(txn, "taken")

    h.raises_unchanged(store, errors.DuplicateName, store_mod.Store.write,
                       build)
    assert [rp.name for rp in providers.list_all(store)] == ["taken"]
    with pytest.raises(errors.ResourceClassNotFound):
        resource_classes.get(store, "CUSTOM_NEW")
    assert not traits.exists(store, "CUSTOM_NEW")
    # the rolled-back class id is handed out again, to a committed class
    assert resource_classes.create(store, "CUSTOM_OTHER").id == (
        tables.MIN_CUSTOM_RESOURCE_CLASS_ID)


def test_catalog_cached_in_rolled_back_transaction(store):
    """A class seen inside a transaction that rolled back is unknown
    afterwards, even though the engine cached it."""
    rp = providers.create(store, "cn1")

    def build(txn):
        resource_classes.create(txn, "CUSTOM_GHOST")
        inventories.replace_all(txn, rp.uuid, None,
                                [inventories.Inventory("CUSTOM_GHOST", 1)])
        raise errors.InvalidName("boom")

    h.raises_unchanged(store, errors.InvalidName, store_mod.Store.write,
                       build)
    exc = h.raises_unchanged(store, errors.ResourceClassNotFound,
                             inventories.replace_all, rp.uuid, None,
                             [inventories.Inventory("CUSTOM_GHOST", 1)])
    assert exc.name == "CUSTOM_GHOST"


def test_writer_needs_write_transaction(store):
    """A write joined to a read transaction is refused."""
    with pytest.raises(RuntimeError, match="write transaction"):
        store.read(providers.create, "cn1")
    assert providers.list_all(store) == []
    assert store.read(providers.list_all) == []


# another process's stale catalog


@pytest.fixture
def second_store(db_url):
    """Another store on the same database, as another process has."""
    other = store_mod.Store(databases.make_conf(db_url))
    yield other
    other.dispose()


def test_other_store_sees_deleted_class_as_unknown(store, second_store):
    """A class deleted elsewhere after this store cached it is reported
    unknown, not as a database error."""
    resource_classes.create(store, "CUSTOM_A")
    rp = providers.create(store, "cn1")
    h.add_inventory(second_store, rp.uuid, CUSTOM_A=1)
    inventories.delete_all(second_store, rp.uuid)
    resource_classes.delete(store, "CUSTOM_A")
    exc = h.raises_unchanged(second_store, errors.ResourceClassNotFound,
                             inventories.add, rp.uuid,
                             inventories.Inventory("CUSTOM_A", 1))
    assert exc.name == "CUSTOM_A"


def test_other_store_sees_deleted_trait_as_unknown(store, second_store):
    """A trait deleted elsewhere after this store cached it is reported
    unknown, not as a database error."""
    traits.ensure(store, "CUSTOM_T")
    rp = providers.create(store, "cn1")
    traits.set_for_provider(second_store, rp.uuid, None, ["CUSTOM_T"])
    traits.delete_for_provider(second_store, rp.uuid)
    traits.delete(store, "CUSTOM_T")
    exc = h.raises_unchanged(second_store, errors.TraitNotFound,
                             traits.set_for_provider, rp.uuid, None,
                             ["CUSTOM_T"])
    assert exc.names == ["CUSTOM_T"]


def test_other_store_notified_of_nothing(store, second_store):
    """Listeners are per store: another store's commits reach them only
    through the change log."""
    rec = h.Recorder(second_store)
    rp = providers.create(store, "cn1")
    assert rec.changes == []
    assert [r[1] for r in _log(second_store)] == [rp.id]
    rec.close()
