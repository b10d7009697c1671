"""SQLite WAL checkpoints run in the store's own thread
(placement.db.checkpointer), not inside a commit: the store's
connections have SQLite's automatic checkpoints off, and the thread
copies the log into the database file after [placement_database]
sqlite_checkpoint_every commits, or a second after the last one."""

import shutil
import sqlite3
import time

import pytest
import sqlalchemy as sa

from placement.db import store as store_mod
from placement.objects import providers
from tests import databases


def open_store(path, every):
    return store_mod.Store.open(databases.make_conf(
        f"sqlite:///{path}",
        {("placement_database", "sqlite_checkpoint_every"): every}))


def autocheckpoint(store):
    return store.read(lambda txn: txn.scalar(
        sa.text("PRAGMA wal_autocheckpoint")))


def providers_in_main_file(path, tmp_path):
    """Providers in the database file alone, without its write-ahead
    log: what checkpoints have copied there."""
    copy = tmp_path / "main-only.sqlite"
    shutil.copy(path, copy)
    conn = sqlite3.connect(copy)
    try:
        return conn.execute(
            "SELECT count(*) FROM resource_providers").fetchone()[0]
    except sqlite3.OperationalError:  # not even the schema is there yet
        return 0
    finally:
        conn.close()


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_checkpoints_after_every_n_commits_off_the_commit_path(tmp_path):
    path = tmp_path / "placement.sqlite"
    store = open_store(path, every=5)
    try:
        assert autocheckpoint(store) == 0
        for i in range(4):
            providers.create(store, f"rp{i}")
        # Four commits: not yet (and never inside a commit).
        assert store.checkpointer.checkpoints == 0
        assert providers_in_main_file(path, tmp_path) == 0
        providers.create(store, "rp4")
        wait_for(lambda: store.checkpointer.checkpoints >= 1)
        assert providers_in_main_file(path, tmp_path) == 5
    finally:
        store.dispose()


def test_a_few_commits_are_checkpointed_a_moment_later(tmp_path):
    path = tmp_path / "placement.sqlite"
    store = open_store(path, every=1000)
    try:
        providers.create(store, "rp0")
        providers.create(store, "rp1")
        wait_for(lambda: store.checkpointer.checkpoints >= 1, timeout=5)
        assert providers_in_main_file(path, tmp_path) == 2
    finally:
        store.dispose()


def test_zero_leaves_checkpoints_to_sqlite(tmp_path):
    store = open_store(tmp_path / "placement.sqlite", every=0)
    try:
        assert store.checkpointer is None
        assert autocheckpoint(store) == 1000  # SQLite's default
    finally:
        store.dispose()


def test_memory_databases_have_no_log_to_checkpoint():
    store = store_mod.Store.open(databases.make_conf("sqlite://"))
    try:
        assert store.checkpointer is None
        providers.create(store, "rp0")
    finally:
        store.dispose()


@pytest.mark.parametrize("restart_frames,restarts", [(1000, True),
                                                     (10**9, False)])
def test_the_log_starts_over_under_a_steady_writer(tmp_path, restart_frames,
                                                   restarts):
    # Checkpoints that run beside a busy writer must still let the log
    # start over once it reaches restart_frames; else it grows with
    # every commit (and every page lookup slows), as passive checkpoints
    # alone let it.
    path = tmp_path / "placement.sqlite"
    store = open_store(path, every=10)
    store.checkpointer.restart_frames = restart_frames
    try:
        # Leave the schema's log out of the count: empty the file first.
        outside = sqlite3.connect(path, isolation_level=None)
        outside.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        outside.close()
        for i in range(1000):
            providers.create(store, f"rp{i}")
        assert store.checkpointer.checkpoints >= 10
        # The log file keeps its largest size: each commit wrote about 9
        # frames (9,000 in all, the size passive checkpoints alone leave);
        # restarted, the file holds well under half of that.
        frames = (path.with_name(path.name + "-wal").stat().st_size
                  // (4096 + 24))
        assert 0 < frames
        assert (frames < 4500) == restarts, frames
    finally:
        store.dispose()
