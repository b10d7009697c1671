"""PostgreSQL's notifications of commits (placement.db.pg_listen and
schema revision 0004) against a real PostgreSQL: a scheduler skips the
change-log read while nobody else committed, reads what another store
committed, never reads for its own claims, and reads before every
decision while its LISTEN session is lost, until it is back."""

import random
import time
import uuid

import psycopg
import pytest
import sqlalchemy as sa

from placement import direct
from placement.db import migration, pg_listen, tables
from placement.db import store as store_mod
from scheduler import manager
from tests import databases
from tests.scheduler import cloud as cloud_mod

FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}


@pytest.fixture(scope="module")
def pg_url():
    with databases.migrated_scratch("postgresql") as url:
        yield url


@pytest.fixture
def stores(pg_url):
    """Stores on one PostgreSQL database: a scheduler's and other
    processes'."""
    made = []

    def open_store(max_age=60.0, listen=True):
        store = store_mod.Store(databases.make_conf(pg_url, {
            ("placement_database", "sync_on_startup"): False,
            ("placement_database", "change_feed_max_age"): max_age,
            ("placement_database", "postgresql_listen"): listen}))
        made.append(store)
        return store

    first = open_store()
    databases.wipe(first.engine)
    migration.seed(first.engine)
    yield open_store
    for store in made:
        store.dispose()
    databases.wipe(first.engine)


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.01)


def add_host(store, name):
    return cloud_mod.add_host(cloud_mod.Cloud(store),
                              direct.PlacementDirect(store), name)


def quiet_scheduler(store):
    """A scheduler on ``store``, listening, whose view is up to date and
    which has nothing unread (a sync just skipped its read)."""
    s = manager.Scheduler(store.conf, store=store, rng=random.Random(3))
    wait_for(lambda: store.commit_listener.subscribed)
    skipped = s.stats["syncs_skipped"]
    wait_for(lambda: s.sync() or s.stats["syncs_skipped"] > skipped)
    return s


def listen_sessions(url):
    """Backend pids of the sessions LISTENing on the database."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return set(conn.scalars(sa.text(
                "SELECT pid FROM pg_stat_activity WHERE datname = "
                "current_database() AND query LIKE 'LISTEN %'")))
    finally:
        engine.dispose()


def test_a_quiet_database_skips_the_read_another_commit_is_read(stores):
    ours, theirs = stores(), stores()
    add_host(theirs, "n0")
    s = quiet_scheduler(ours)
    skipped = s.stats["syncs_skipped"]
    s.sync()
    assert s.stats["syncs_skipped"] == skipped + 1
    uuid_n1 = add_host(theirs, "n1")
    wait_for(lambda: ours.commit_listener.announced)
    s.sync()
    assert s.stats["syncs_skipped"] == skipped + 1
    assert s.table.row_of(uuid_n1) is not None
    assert cloud_mod.forced_nodename(s, "n1") == "n1"
    s.close()


def test_own_claims_need_no_read(stores):
    ours, theirs = stores(), stores()
    add_host(theirs, "n0")  # 8 vCPUs
    s = quiet_scheduler(ours)
    skipped = s.stats["syncs_skipped"]
    for _ in range(8):
        s.select_destinations(None, {"flavor": FLAVOR}, [str(uuid.uuid4())])
    # Each claim notifies every session, ours included; the pid tells
    # ours apart, so no decision after a claim reads.
    assert s.stats["syncs_skipped"] == skipped + 8
    with pytest.raises(manager.NoValidHost):
        s.select_destinations(None, {"flavor": FLAVOR}, [str(uuid.uuid4())])
    assert s.stats["claims_lost"] == 0
    s.close()


def test_another_stores_claims_are_read_before_the_next_decision(stores):
    ours, theirs = stores(), stores()
    add_host(theirs, "n0")  # 8 vCPUs
    s = quiet_scheduler(ours)
    other = manager.Scheduler(theirs.conf, store=theirs,
                              rng=random.Random(4))
    for _ in range(6):
        other.select_destinations(None, {"flavor": FLAVOR},
                                  [str(uuid.uuid4())])
    wait_for(lambda: ours.commit_listener.announced)
    for _ in range(2):
        s.select_destinations(None, {"flavor": FLAVOR}, [str(uuid.uuid4())])
    # The view held the other store's six claims: the ninth instance
    # is refused without a claim tried and lost.
    with pytest.raises(manager.NoValidHost):
        s.select_destinations(None, {"flavor": FLAVOR}, [str(uuid.uuid4())])
    assert s.stats["claims_lost"] == 0
    other.close()
    s.close()


def test_one_notification_per_commit_none_for_a_rollback(stores, pg_url):
    ours = stores()
    listen = psycopg.connect(sa.make_url(pg_url).set(
        drivername="postgresql").render_as_string(hide_password=False),
        autocommit=True)
    try:
        listen.execute("LISTEN " + pg_listen.CHANNEL)
        rows = [{"resource_provider_id": 1, "changed_at": store_mod.utcnow(),
                 "usage_only": True}]
        with ours.engine.connect() as conn:
            with conn.begin() as txn:
                for _ in range(3):
                    conn.execute(tables.provider_changes.insert(), rows)
                txn.rollback()
            with conn.begin():
                for _ in range(3):
                    conn.execute(tables.provider_changes.insert(), rows)
                writer = conn.connection.driver_connection.info.backend_pid
        notes = list(listen.notifies(timeout=0.5))
    finally:
        listen.close()
    assert [(n.channel, n.payload, n.pid) for n in notes] == [
        (pg_listen.CHANNEL, "", writer)]


def test_max_age_reads_even_when_quiet(stores):
    ours = stores(max_age=0.0)
    add_host(ours, "n0")
    s = manager.Scheduler(ours.conf, store=ours, rng=random.Random(3))
    wait_for(lambda: ours.commit_listener.subscribed)
    for _ in range(3):
        s.sync()
    assert s.stats["syncs_skipped"] == 0
    s.close()


def test_a_lost_session_means_a_read_before_every_decision(stores, pg_url):
    ours, theirs = stores(), stores()
    add_host(theirs, "n0")
    s = quiet_scheduler(ours)
    [session] = listen_sessions(pg_url)
    engine = sa.create_engine(pg_url)
    with engine.connect() as conn:
        conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"),
                     {"pid": session})
    engine.dispose()
    wait_for(lambda: not ours.commit_listener.subscribed, 5)
    # The session is tried again a second later; until then every sync
    # reads, and sees what the others wrote meanwhile.
    skipped = s.stats["syncs_skipped"]
    uuid_n1 = add_host(theirs, "n1")
    s.sync()
    assert s.table.row_of(uuid_n1) is not None
    if not ours.commit_listener.subscribed:
        s.sync()
        assert s.stats["syncs_skipped"] == skipped
    wait_for(lambda: ours.commit_listener.subscribed, 10)
    [again] = listen_sessions(pg_url)
    assert again != session
    # Back: one read for what may have been missed, then quiet again.
    wait_for(lambda: s.sync() or s.stats["syncs_skipped"] > skipped)
    uuid_n2 = add_host(theirs, "n2")
    wait_for(lambda: ours.commit_listener.announced)
    s.sync()
    assert s.table.row_of(uuid_n2) is not None
    s.close()


def test_a_closed_connection_is_no_longer_ours(stores):
    ours = stores()
    listener = ours.commit_listener
    with ours.engine.connect() as conn:
        with conn.begin():
            listener.wrote_through(conn)
            pid = conn.connection.driver_connection.info.backend_pid
        assert pid in listener._own
        # PostgreSQL may give a closed backend's pid to another one.
        conn.invalidate()
    assert pid not in listener._own


def test_the_session_ends_with_the_store(stores, pg_url):
    ours = stores()
    s = quiet_scheduler(ours)
    assert len(listen_sessions(pg_url)) == 1
    thread = ours.commit_listener._thread
    s.close()
    ours.dispose()
    assert not thread.is_alive()
    wait_for(lambda: not listen_sessions(pg_url), 5)


def test_no_session_until_a_reader_asks_nor_when_off(stores, pg_url):
    ours = stores()
    add_host(ours, "n0")
    assert ours.commit_listener is not None
    assert not listen_sessions(pg_url)
    off = stores(listen=False)
    assert off.commit_listener is None
    assert off.open_watches() == []


def test_other_engines_have_no_listener(tmp_path):
    store = store_mod.Store(databases.make_conf(
        f"sqlite:///{tmp_path}/placement.sqlite"))
    try:
        assert store.commit_listener is None
    finally:
        store.dispose()
