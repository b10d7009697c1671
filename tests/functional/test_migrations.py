"""Schema migrations on every engine: the migrated schema is exactly the
tables the code declares, sync is idempotent, the standard catalog is
seeded, each revision upgrades the one before."""

import multiprocessing
import uuid as uuidlib

import os_resource_classes as orc
import os_traits
import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from placement.db import migration, tables
from placement.db import store as store_mod
from placement.objects import providers, resource_classes, traits
from scheduler import host_records, host_state, host_tables
from tests import databases


def _schema_differences(engine):
    with engine.connect() as conn:
        context = MigrationContext.configure(conn,
                                             opts={"compare_type": True})
        return compare_metadata(context, tables.metadata)


def test_migrated_schema_matches_tables(store):
    assert _schema_differences(store.engine) == []


@pytest.fixture
def scratch_url(engine_name, tmp_path):
    """A new, empty database on each engine; dropped afterwards."""
    if engine_name == "sqlite":
        yield f"sqlite:///{tmp_path / 'upgrade.sqlite'}"
        return
    try:
        url = databases.create_scratch(engine_name)
    except Exception as exc:  # any connection failure
        databases.unavailable(engine_name, str(exc).splitlines()[0])
    yield url
    databases.drop_scratch(engine_name, url)


@pytest.fixture
def unsynced(scratch_url):
    """A store on the scratch database, which it leaves empty: each test
    syncs it to the revisions it upgrades from."""
    conf = databases.make_conf(
        scratch_url, {("placement_database", "sync_on_startup"): False})
    store = store_mod.Store(conf)
    yield store
    store.dispose()


def test_0002_upgrades_a_0001_database(unsynced):
    """The host records tables arrive next to placement's data, which
    stays, and the host state table works on the result."""
    store = unsynced
    migration.sync(store.engine, "0001")
    assert migration.current_revision(store.engine) == "0001"
    rp_uuid = _old_provider(store.engine, "cn1")
    with store.engine.begin() as conn:  # as 0001 seeded it
        conn.execute(tables.counters.delete().where(
            tables.counters.c.name
            == host_tables.HOST_CHANGES_PRUNED_COUNTER))
    migration.sync(store.engine, "0002")
    assert migration.current_revision(store.engine) == "0002"
    migration.sync(store.engine)
    assert providers.get(store, rp_uuid).name == "cn1"
    assert "host_changes_pruned_below" in {
        r.name for r in _rows(store, tables.counters)}
    host_records.upsert_compute_node(store, rp_uuid, "cn1", "cn1",
                                     vcpus=2)
    table = host_state.HostStateTable(store, store.conf)
    table.sync()
    table.close()
    assert table.vcpus_total[table.row_of(rp_uuid)] == 2


def _old_provider(engine, name):
    """A provider and its change row written as an older revision's code
    would (today's store writes columns an older schema lacks)."""
    rp, pc = tables.resource_providers, tables.provider_changes
    rp_uuid = str(uuidlib.uuid4())
    now = store_mod.utcnow()
    with engine.begin() as conn:
        rp_id = conn.execute(rp.insert().values(
            uuid=rp_uuid, name=name, generation=0,
            created_at=now)).inserted_primary_key[0]
        conn.execute(rp.update().where(rp.c.id == rp_id)
                     .values(root_provider_id=rp_id))
        conn.execute(pc.insert().values(resource_provider_id=rp_id,
                                        changed_at=now))
    return rp_uuid


def test_0003_marks_old_change_rows_as_whole_changes(unsynced):
    """Change rows from before 0003 read as full changes (a reader
    reloads their providers), and the store writes the new column."""
    store = unsynced
    migration.sync(store.engine, "0002")
    _old_provider(store.engine, "cn1")
    migration.sync(store.engine, "0003")
    assert migration.current_revision(store.engine) == "0003"
    migration.sync(store.engine)
    assert _schema_differences(store.engine) == []
    assert [bool(r.usage_only)
            for r in _rows(store, tables.provider_changes)] == [False]
    providers.create(store, "cn2")
    assert [bool(r.usage_only)
            for r in _rows(store, tables.provider_changes)] == [
        False, False]


def _announcing_tables(engine):
    """The tables that have 0004's trigger (PostgreSQL only)."""
    if engine.dialect.name != "postgresql":
        return set()
    with engine.connect() as conn:
        return set(conn.scalars(sa.text(
            "SELECT tgrelid::regclass::text FROM pg_trigger "
            "WHERE tgname LIKE '%_announce'")))


def test_0004_makes_postgresql_announce_change_log_writes(unsynced,
                                                          engine_name):
    store = unsynced
    migration.sync(store.engine, "0003")
    assert _announcing_tables(store.engine) == set()
    migration.sync(store.engine, "0004")
    assert migration.current_revision(store.engine) == "0004"
    expected = ({"provider_changes", "host_changes"}
                if engine_name == "postgresql" else set())
    assert _announcing_tables(store.engine) == expected
    # The trigger leaves the write itself alone (as this gantt
    # writes it: at its own revision).
    migration.sync(store.engine)
    assert _announcing_tables(store.engine) == expected
    providers.create(store, "cn1")
    assert len(_rows(store, tables.provider_changes)) == 1


def test_0006_marks_change_rows_with_their_write(unsynced):
    """Change rows from before 0006 carry no mark; each write's rows
    carry its own."""
    store = unsynced
    migration.sync(store.engine, "0005")
    _old_provider(store.engine, "cn1")
    migration.sync(store.engine, "0006")
    assert migration.current_revision(store.engine) == "0006"
    providers.create(store, "cn2")
    providers.create(store, "cn3")
    marks = [r.written_by
             for r in _rows(store, tables.provider_changes)]
    assert marks[0] is None
    assert None not in marks[1:] and len(set(marks[1:])) == 2


def _rows(store, table):
    with store.engine.connect() as conn:
        return conn.execute(sa.select(table)).all()


def test_revision_is_head_and_sync_is_idempotent(store):
    assert migration.current_revision(store.engine) == (
        migration.head_revision())
    before = _counts(store)
    migration.sync(store.engine)
    assert _counts(store) == before


def _counts(store):
    with store.engine.connect() as conn:
        return {name: conn.scalar(sa.select(sa.func.count()).select_from(t))
                for name, t in tables.metadata.tables.items()}


def test_standard_resource_classes_have_stable_ids(store):
    standard = [rc for rc in resource_classes.list_all(store) if rc.standard]
    assert [(rc.id, rc.name) for rc in standard] == list(
        enumerate(orc.STANDARDS))


def test_every_standard_trait_is_seeded(store):
    assert set(traits.list_names(store)) == set(os_traits.get_traits())


def test_missing_standard_rows_are_restored(store):
    with store.engine.begin() as conn:
        conn.execute(tables.traits.delete().where(
            tables.traits.c.name == "HW_CPU_X86_AVX2"))
    migration.sync(store.engine)
    assert traits.exists(store, "HW_CPU_X86_AVX2")


def _sync(url, out):
    from placement.db import store as store_mod
    store = store_mod.Store(databases.make_conf(url))
    migration.sync(store.engine)
    out.put(migration.current_revision(store.engine))


def test_concurrent_syncs_of_a_new_database(tmp_path):
    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_sync, args=(url, out)) for _ in range(3)]
    for p in procs:
        p.start()
    revisions = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert revisions == [migration.head_revision()] * 3
