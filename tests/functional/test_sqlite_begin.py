"""SQLite transactions begin on the driver itself (placement.db.engine);
a lock that cannot be had still surfaces as SQLAlchemy's
OperationalError, which Store retries and then raises."""

import sqlite3

import pytest
import sqlalchemy as sa

from placement.db import store as store_mod
from tests import databases


def test_a_held_write_lock_is_retried_then_raised(tmp_path):
    path = tmp_path / "placement.sqlite"
    store = store_mod.Store.open(databases.make_conf(
        f"sqlite:///{path}", {("placement_database", "busy_timeout"): 1,
                              ("placement_database", "db_retry_count"): 1}))
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        ran = []
        with pytest.raises(sa.exc.OperationalError, match="locked"):
            store.write(lambda txn: ran.append(True))
        assert ran == []  # the transaction never began
        # Reads go on meanwhile (WAL), in a transaction of their own.
        assert store.read(lambda txn: txn.scalar(sa.text("SELECT 1"))) == 1
        holder.execute("COMMIT")
        assert store.write(lambda txn: "done") == "done"
    finally:
        holder.close()
        store.dispose()


def test_writes_wait_in_naps_of_their_own(tmp_path):
    # placement.db.write_lock: SQLite's busy handler is off for write
    # transactions and back for reads.
    store = store_mod.Store.open(databases.make_conf(
        f"sqlite:///{tmp_path / 'placement.sqlite'}",
        {("placement_database", "busy_timeout"): 9}))
    pragma = sa.text("PRAGMA busy_timeout")
    try:
        assert store.write(lambda txn: txn.scalar(pragma)) == 0
        assert store.read(lambda txn: txn.scalar(pragma)) == 9000
    finally:
        store.dispose()
