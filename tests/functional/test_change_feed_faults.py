"""The change feed when Redis fails, injected with fakeredis (which can
refuse every command, drop or slow a message, deterministically), beside
the real-Redis tests of test_change_feed.py.

Whatever Redis does, a scheduler never decides on a view the feed
failed to invalidate for longer than change_feed_max_age: a lost
announcement is read at the latest max_age later, an unreachable Redis
means reading before every decision, and a slow Redis never makes a
commit wait. The stores are on PostgreSQL, where the feed is the only
thing that lets a scheduler skip its read (SQLite's data_version would
see the other process's commit anyway).
"""

import random
import threading
import time
import uuid

import fakeredis
import pytest

from placement import direct
from placement.db import change_feed, migration
from placement.db import store as store_mod
from scheduler import manager
from tests import databases
from tests.scheduler import cloud as cloud_mod

MAX_AGE = 5.0


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class Lossy(fakeredis.FakeRedis):
    """A client whose publishes vanish while ``lose`` is set, and take
    ``delay`` seconds."""

    lose = False
    delay = 0.0

    def publish(self, channel, message):
        time.sleep(self.delay)
        if self.lose:
            return 0
        return super().publish(channel, message)


def _lost(store, write):
    """Run ``write()`` with every announcement of ``store`` lost; its
    publishing thread has given up on them when this returns."""
    store.client.lose = True
    try:
        out = write()
        # The publisher looks for commits every 0.2 s.
        time.sleep(3 * change_feed._POLL_S)
    finally:
        store.client.lose = False
    return out


@pytest.fixture(scope="module")
def pg_url():
    with databases.migrated_scratch("postgresql") as url:
        yield url


@pytest.fixture
def feeds(pg_url):
    """Stores on one PostgreSQL database, each with a feed on one fake
    Redis server; the feeds' clock is ``feeds.clock``."""
    server = fakeredis.FakeServer()
    channel = "gantt-test-" + uuid.uuid4().hex[:12]
    clock = Clock()
    made = []

    def open_store():
        # The feed alone: PostgreSQL's own notifications would bring
        # what the feed loses (tests/functional/test_pg_listen.py).
        store = store_mod.Store(databases.make_conf(pg_url, {
            ("placement_database", "sync_on_startup"): False,
            ("placement_database", "postgresql_listen"): False}))
        client = Lossy(server=server)
        store.change_feed = change_feed.ChangeFeed(
            "redis://fake", channel, MAX_AGE, clock=clock, client=client)
        store.client = client
        made.append(store)
        return store

    open_store.server = server
    open_store.clock = clock
    open_store.made = made
    first = open_store()
    databases.wipe(first.engine)
    migration.seed(first.engine)
    yield open_store
    for store in made:
        store.dispose()
    databases.wipe(first.engine)


def _wait(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def _host(store, name):
    return cloud_mod.add_host(cloud_mod.Cloud(store),
                              direct.PlacementDirect(store), name)


def _scheduler(store):
    """A scheduler on ``store`` whose view is up to date and whose feed
    has nothing unread (a sync just skipped its read)."""
    s = manager.Scheduler(store.conf, store=store, rng=random.Random(3))
    skipped = s.stats["syncs_skipped"]
    _wait(lambda: s.sync() or s.stats["syncs_skipped"] > skipped)
    return s


def _quiet(store):
    """The feed is subscribed and has nothing unread for this store."""
    _wait(lambda: store.change_feed.subscribed)


def test_a_lost_announcement_is_read_within_max_age(feeds):
    ours, theirs = feeds(), feeds()
    _host(theirs, "n0")
    _quiet(ours)
    s = _scheduler(ours)
    skipped = s.stats["syncs_skipped"]
    n1 = _lost(theirs, lambda: _host(theirs, "n1"))
    # Within max_age the lost announcement may leave the view stale...
    feeds.clock.now += MAX_AGE - 0.5
    s.sync()
    assert s.stats["syncs_skipped"] == skipped + 1
    assert s.table.row_of(n1) is None
    # ...and no longer: past max_age the scheduler reads.
    feeds.clock.now += 1.0
    s.sync()
    assert s.table.row_of(n1) is not None
    s.close()


def test_unreachable_redis_means_a_read_before_every_decision(feeds,
                                                              caplog):
    ours, theirs = feeds(), feeds()
    _host(theirs, "n0")
    _quiet(ours)
    s = _scheduler(ours)
    s.sync()
    skipped = s.stats["syncs_skipped"]
    feeds.server.connected = False
    _wait(lambda: not ours.change_feed.subscribed)
    # One warning for the outage, however long it lasts.
    time.sleep(2.5)
    # No announcement can come: every sync reads, and sees at once what
    # the other process wrote (its publish fails, its commit does not).
    n1 = _host(theirs, "n1")
    s.sync()
    assert s.table.row_of(n1) is not None
    for _ in range(3):
        s.sync()
    assert s.stats["syncs_skipped"] == skipped
    # Redis back (a restart): subscribed again, one read, then quiet.
    # One warning a feed (each store has its own), not one a retry.
    assert caplog.text.count("change feed: lost") == len(feeds.made)
    feeds.server.connected = True
    _wait(lambda: ours.change_feed.subscribed, timeout=15)
    n2 = _host(theirs, "n2")
    _wait(lambda: ours.change_feed.announced)
    s.sync()
    assert s.table.row_of(n2) is not None
    # The commit's last announcements arrive, then the reads stop.
    _wait(lambda: s.sync() or s.stats["syncs_skipped"] > skipped)
    s.close()


def test_a_slow_redis_never_makes_a_commit_wait(feeds):
    ours, theirs = feeds(), feeds()
    _quiet(ours)
    s = _scheduler(ours)
    # A publish takes longer than five commits can on a loaded machine:
    # a commit that waited for one would take at least that long.
    theirs.client.delay = 3.0
    began = time.monotonic()
    made = [_host(theirs, f"n{i}") for i in range(5)]
    # Five commits while one publish takes 3 s: none waited for it.
    assert time.monotonic() - began < theirs.client.delay
    # The announcements come late and together; the read then sees all.
    _wait(lambda: ours.change_feed.announced, timeout=15)
    s.sync()
    assert all(s.table.row_of(u) is not None for u in made)
    s.close()


def test_announcements_during_a_read_are_read_next_time(feeds):
    ours, theirs = feeds(), feeds()
    _quiet(ours)
    watch = ours.change_feed.watch()
    assert watch.begin_read()
    # An announcement that arrives while the reader reads...
    _host(theirs, "n0")
    _wait(lambda: ours.change_feed.announced)
    # ...makes the next decision read again.
    assert watch.begin_read()
    assert not watch.begin_read()


def test_many_stale_windows_never_exceed_max_age(feeds):
    """Commits with every other announcement lost, decisions at random
    moments: each decision's view misses no commit older than max_age."""
    ours, theirs = feeds(), feeds()
    _host(theirs, "n0")
    _quiet(ours)
    s = _scheduler(ours)
    rng = random.Random(11)
    committed = []  # (feed clock at commit, uuid)
    for i in range(12):
        if i % 2:
            made = _lost(theirs, lambda i=i: _host(theirs, f"m{i}"))
        else:
            made = _host(theirs, f"m{i}")
        committed.append((feeds.clock.now, made))
        feeds.clock.now += rng.uniform(0.5, 3.0)
        s.sync()
        for at, uuid_ in committed:
            if feeds.clock.now - at > MAX_AGE:
                assert s.table.row_of(uuid_) is not None
    s.close()


def test_threads_stop_with_the_store(feeds):
    store = feeds()
    _quiet(store)
    threads = {t.name for t in threading.enumerate()}
    assert "gantt-change-feed-listen" in threads
    store.change_feed.close()
    store.change_feed = None
