"""Store.pinned: a thread's transactions on one kept connection (a
scheduler's decisions), and a scheduler that checks out no connection
per decision."""

import random
import time
import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from placement import direct
from placement.db import engine as engine_mod
from placement.objects import providers
from scheduler import manager
from tests.scheduler import cloud as cloud_mod

FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}


def _count_checkouts(engine):
    seen = []
    event.listen(engine.pool, "checkout", lambda *a: seen.append(1))
    return seen


@pytest.fixture
def conn(store):
    """A connection of the store's engine for a test to pin."""
    with store.engine.connect() as kept:
        yield kept


def test_pinned_transactions_run_on_the_given_connection(store, conn):
    began = []
    event.listen(store.engine, "begin", began.append)
    with store.pinned(conn):
        rp = store.write(lambda txn: providers.create(txn, "pinned"))
        read_on = store.read(lambda txn: txn.conn)
    assert read_on is conn
    assert began == [conn, conn]
    # Committed: another connection sees it.
    with store.engine.connect() as other:
        assert other.execute(sa.text(
            "SELECT name FROM resource_providers WHERE uuid = :u"),
            {"u": rp.uuid}).scalar() == "pinned"
    # Outside the block: a pooled connection again.
    assert store.read(lambda txn: txn.conn) is not conn
    assert not conn.closed  # the caller's to close


def test_a_read_after_a_pinned_write_is_not_a_write(store, conn):
    with store.pinned(conn):
        store.write(lambda txn: providers.create(txn, "w"))
        write_flag = store.read(
            lambda txn: txn.conn.get_execution_options().get(
                engine_mod.WRITE_OPTION))
    assert not write_flag


def test_a_transaction_nested_in_a_pinned_one_takes_another(store, conn):
    with store.pinned(conn):
        def outer(txn):
            providers.create(txn, "outer")
            inner = store.read(lambda t: t.conn)
            return txn.conn, inner
        outer_conn, inner_conn = store.write(outer)
    assert outer_conn is conn
    assert inner_conn is not conn


def test_scheduler_decisions_check_out_no_connection(store):
    cloud = cloud_mod.Cloud(store)
    placement = direct.PlacementDirect(store)
    for i in range(4):
        cloud_mod.add_host(cloud, placement, f"n{i}")
    s = manager.Scheduler(store.conf, store=store, rng=random.Random(1))
    s.select_destinations(None, {"flavor": FLAVOR}, [str(uuid.uuid4())])
    if store.commit_listener is not None:
        # PostgreSQL: its LISTEN session has joined and been read for.
        deadline = time.monotonic() + 10
        while not store.commit_listener.subscribed:
            assert time.monotonic() < deadline, "no LISTEN session"
            time.sleep(0.01)
        s.sync()
    checkouts = _count_checkouts(store.engine)
    skipped = s.stats["syncs_skipped"]
    for _ in range(10):
        s.select_destinations(None, {"flavor": FLAVOR},
                              [str(uuid.uuid4())])
    # PostgreSQL and MySQL read their snapshot on a pooled connection
    # (its isolation level would stay on the kept one): one per decision
    # that reads: MySQL before every decision, PostgreSQL after another
    # process's commit only (none here).
    reads = 10 - (s.stats["syncs_skipped"] - skipped)
    assert len(checkouts) == (0 if store.backend == "sqlite" else reads)
    assert reads == {"sqlite": 0, "postgresql": 0,
                     "mysql": 10}[store.backend]
    assert store.engine.pool.checkedout() == 1
    s.close()
    assert store.engine.pool.checkedout() == 0
