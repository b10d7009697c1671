"""The Redis change feed (placement.db.change_feed) against a real Redis:
a scheduler skips the read before a decision while the feed is quiet,
reads what another process announced, never waits on its own commits,
and falls back to reading every time when Redis cannot be reached."""

import os
import random
import socket
import time
import uuid

import pytest

from placement import direct
from placement.db import store as store_mod
from scheduler import manager
from tests import databases
from tests.scheduler import cloud as cloud_mod

REDIS_URL = os.environ.get("GANTT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}


def require_redis():
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=2).close()
    except OSError as exc:
        databases.unavailable("redis", str(exc))


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.01)


@pytest.fixture
def stores(tmp_path):
    """Two stores on one SQLite file, each with its own end of a feed on
    a channel of its own: a scheduler's and another process's."""
    require_redis()
    channel = "gantt-test-" + uuid.uuid4().hex[:12]
    url = f"sqlite:///{tmp_path}/placement.sqlite"
    made = []

    def open_store(feed_url=REDIS_URL, max_age=60.0):
        store = store_mod.Store.open(databases.make_conf(url, {
            ("placement_database", "change_feed_url"): feed_url,
            ("placement_database", "change_feed_channel"): channel,
            ("placement_database", "change_feed_max_age"): max_age}))
        made.append(store)
        return store

    yield open_store
    for store in made:
        store.dispose()


def scheduler_on(store):
    return manager.Scheduler(store.conf, store=store, rng=random.Random(3))


def add_host(store, name):
    return cloud_mod.add_host(cloud_mod.Cloud(store),
                              direct.PlacementDirect(store), name)


def skips_when_quiet(scheduler, feed, attempts=5):
    """Whether a sync right after a read skips its own read while the
    feed is quiet. A few tries: the other store's announcements leave
    from a thread of their own and may arrive after the read that saw
    their commits, and on SQLite a reader reads at least once a second
    (placement.db.data_version), which a stalled machine can overrun."""
    for _ in range(attempts):
        scheduler.sync()
        if feed.announced:
            continue
        skipped = scheduler.stats["syncs_skipped"]
        scheduler.sync()
        if scheduler.stats["syncs_skipped"] == skipped + 1:
            return True
        time.sleep(0.2)
    return False


def test_quiet_feed_skips_the_read_announced_commit_is_read(stores):
    ours, theirs = stores(), stores()
    add_host(theirs, "n0")
    wait_for(lambda: ours.change_feed.subscribed)
    s = scheduler_on(ours)
    assert skips_when_quiet(s, ours.change_feed)
    skipped = s.stats["syncs_skipped"]
    uuid_n1 = add_host(theirs, "n1")
    wait_for(lambda: ours.change_feed.announced)
    s.sync()
    assert s.stats["syncs_skipped"] == skipped
    assert s.table.row_of(uuid_n1) is not None
    assert cloud_mod.forced_nodename(s, "n1") == "n1"
    s.close()


def test_own_claims_need_no_read(stores):
    ours, theirs = stores(), stores()
    add_host(theirs, "n0")  # 8 vCPUs
    wait_for(lambda: ours.change_feed.subscribed)
    s = scheduler_on(ours)
    s.sync()
    for _ in range(8):
        s.select_destinations(None, {"flavor": FLAVOR}, [str(uuid.uuid4())])
    # Our claims come back on the channel too, and are not taken for
    # another process's: the decisions after the first skip the read.
    assert s.stats["syncs_skipped"] >= 7
    assert theirs.change_feed.announced
    # The index saw every claim at its commit: the ninth is refused
    # without a claim being tried and lost.
    with pytest.raises(manager.NoValidHost):
        s.select_destinations(None, {"flavor": FLAVOR}, [str(uuid.uuid4())])
    assert s.stats["claims_lost"] == 0
    s.close()


def test_max_age_reads_even_when_quiet(stores):
    ours = stores(max_age=0.0)
    add_host(ours, "n0")
    wait_for(lambda: ours.change_feed.subscribed)
    s = scheduler_on(ours)
    for _ in range(3):
        s.sync()
    assert s.stats["syncs_skipped"] == 0
    s.close()


def test_unreachable_redis_reads_every_time(stores):
    # Nothing listens on port 1: publishing fails quietly, every sync
    # reads the database, and the other process's writes are seen.
    ours = stores(feed_url="redis://127.0.0.1:1/0")
    theirs = stores(feed_url="redis://127.0.0.1:1/0")
    s = scheduler_on(ours)
    s.sync()
    uuid_n0 = add_host(theirs, "n0")
    s.sync()
    assert not ours.change_feed.subscribed
    assert s.stats["syncs_skipped"] == 0
    assert s.table.row_of(uuid_n0) is not None
    s.close()


def test_each_reader_of_a_store_reads_what_was_announced(stores):
    # Two readers on one store, one feed: one reader's read does not
    # bring the other's caches up to date, so each is told to read.
    ours, theirs = stores(), stores()
    wait_for(lambda: ours.change_feed.subscribed)
    first, second = ours.change_feed.watch(), ours.change_feed.watch()
    assert first.begin_read() and second.begin_read()
    assert not first.begin_read() and not second.begin_read()
    add_host(theirs, "n0")
    wait_for(lambda: ours.change_feed.announced)
    assert first.begin_read()
    assert not first.begin_read()
    assert second.begin_read()
    assert not second.begin_read()
    # A read that failed is asked for again.
    add_host(theirs, "n1")
    wait_for(lambda: ours.change_feed.announced)
    assert first.begin_read()
    first.read_failed()
    assert first.begin_read()
    assert not first.begin_read()
