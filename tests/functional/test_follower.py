"""The change-following protocol every in-memory cache of the database
uses (placement.db.follower), on a toy cache of provider names: load,
catch up from the log, own commits, full reload in doubt, a cache fed by
a source instead, and several caches synced in one read (every engine).
"""

import logging

import pytest
import sqlalchemy as sa

from placement.db import fastsql, follower, tables
from placement.db import store as store_mod
from placement.objects import providers
from scheduler import host_records as hr
from scheduler import host_tables
from tests.functional import alloc_helpers as h

_rp = tables.resource_providers
_NAMES_BY_IDS = fastsql.Fast(sa.select(_rp.c.id, _rp.c.name).where(
    _rp.c.id.in_(sa.bindparam("ids", expanding=True))))


class Names(follower.Follower):
    """Provider id -> name, following provider_changes. Records what the
    protocol asks of it in ``calls``; ``fail`` (a set of hook names)
    makes those hooks raise once."""

    what = "names"

    def __init__(self, store, source=None):
        self.calls = []
        self.fail = set()
        super().__init__(store, follower.PROVIDER_LOG, source=source)

    def _clear(self):
        super()._clear()
        self.names = {}

    def _maybe_fail(self, hook):
        if hook in self.fail:
            self.fail.discard(hook)
            raise RuntimeError("injected failure")

    def _load_all(self, txn):
        self.calls.append("all")
        self._maybe_fail("_load_all")
        self.names = dict(txn.execute(sa.select(_rp.c.id, _rp.c.name)).all())

    def _refresh(self, txn, entries):
        self.calls.append(("refresh", sorted(entries), sorted(self.dirty)))
        ids = sorted({rp_id for rp_id, _usage in entries} | self.dirty)
        found = dict(_NAMES_BY_IDS.rows_in(txn, "ids", ids, chunk=1))
        self._maybe_fail("_refresh")
        for rp_id in ids:
            if rp_id in found:
                self.names[rp_id] = found[rp_id]
            else:
                self.names.pop(rp_id, None)

    def _apply_commit(self, changes):
        self.calls.append(("commit", sorted(changes.touched())))
        self._maybe_fail("_apply_commit")
        self.dirty.update(changes.providers | changes.deleted)

    def take(self):
        calls, self.calls = self.calls, []
        return calls


@pytest.fixture
def other(store):
    """A second store on the same database: another process's writes."""
    second = store_mod.Store(store.conf)
    yield second
    second.dispose()


@pytest.fixture
def names(store):
    made = Names(store)
    yield made
    made.close()


def _id(store, uuid):
    return providers.get(store, uuid).id


def _by_name(store, names):
    return {_id(store, u): n for n, u in names.items()}


def test_loads_then_reads_only_what_changed(store, other, names):
    a = h.provider(store, "a")
    names.sync()
    assert names.loaded and names.take() == ["all"]
    assert names.names == _by_name(store, {"a": a})
    names.sync()  # nothing changed: nothing to refresh
    assert names.take() == []
    b = h.provider(other, "b")
    providers.update(other, a, name="a2")
    names.sync()
    [(call, entries, dirty)] = names.take()
    assert call == "refresh" and dirty == []
    assert sorted(rp_id for rp_id, _usage in entries) == sorted(
        [_id(store, a), _id(store, b)])
    assert names.names == _by_name(store, {"a2": a, "b": b})


def test_own_commits_apply_at_commit_and_count_as_read(store, names):
    names.sync()
    names.take()
    a = h.provider(store, "a", VCPU=4)
    # Two commits (the provider, its inventory), each taken at once.
    assert names.take() == [("commit", [_id(store, a)])] * 2
    assert names.dirty == {_id(store, a)}
    assert names.needs_read()
    names.sync()
    # The log rows are this process's own: only ``dirty`` is read back.
    assert names.take() == [("refresh", [], [_id(store, a)])]
    assert not names.dirty and not names.needs_read()
    assert names.names == _by_name(store, {"a": a})


def test_usage_only_entries_say_so(store, other, names):
    a = h.provider(store, "a", VCPU=4)
    names.sync()
    names.take()
    h.write(other, h.new_uuid(), {a: {"VCPU": 1}})
    names.sync()
    [(_call, entries, _dirty)] = names.take()
    assert [(rp_id, bool(usage)) for rp_id, usage in entries] == [
        (_id(store, a), True)]


def test_a_sync_that_read_a_commit_first_skips_it_at_commit(store):
    # The listener runs after COMMIT: a sync in between reads the rows.
    seen = []

    def sync_first(changes):
        names.sync()
        seen.append(names.take())
    store.add_listener(sync_first)  # called before the cache's own
    names = Names(store)
    try:
        names.sync()
        names.take()
        a = h.provider(store, "a")
    finally:
        store.remove_listener(sync_first)
        names.close()
    [(call, entries, _dirty)] = seen[0]
    assert call == "refresh" and [e[0] for e in entries] == [_id(store, a)]
    assert names.take() == []  # the commit itself: nothing left to do


def test_a_log_pruned_past_the_cursor_loads_everything(store, other, names):
    h.provider(store, "a")
    names.sync()
    b = h.provider(other, "b")
    old = store_mod.utcnow() - store_mod.CHANGE_LOG_RETENTION * 2
    changes = tables.provider_changes
    with store.engine.begin() as conn:
        conn.execute(changes.update().values(changed_at=old))
    store.write(store_mod.prune_change_log)
    names.take()
    names.sync()
    assert names.take() == ["all"]
    assert _id(store, b) in names.names
    names.sync()  # the cursor starts above the pruned rows
    assert names.take() == []


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records
            if r.name == follower.LOG.name and r.levelno == logging.WARNING]


@pytest.mark.parametrize("hook", ["_refresh", "_load_all"])
def test_a_sync_that_fails_part_way_loads_everything_next(
        store, other, names, caplog, hook):
    names.sync()
    a = h.provider(other, "a")
    if hook == "_load_all":
        names.loaded = False
    names.fail.add(hook)
    names.take()
    with caplog.at_level(logging.WARNING):
        with pytest.raises(RuntimeError, match="injected"):
            names.sync()
    [warning] = _warnings(caplog)
    assert warning.startswith("names: a sync failed (RuntimeError: "
                              "injected failure)")
    assert not names.loaded
    names.take()
    names.sync()
    assert names.take() == ["all"]
    assert names.names == _by_name(store, {"a": a})


def test_a_lost_connection_is_redone_by_the_store_not_reloaded(
        store, other, names):
    names.sync()
    a = h.provider(other, "a")
    lost = sa.exc.DBAPIError("SELECT", {}, Exception("gone"),
                             connection_invalidated=True)

    def refresh_lost(txn, entries):
        raise lost

    def sync_losing(txn):
        names._refresh = refresh_lost
        try:
            with pytest.raises(sa.exc.DBAPIError):
                names.sync_in(txn)
        finally:
            del names._refresh
    store.read(sync_losing)
    # Nothing half applied counts: still loaded, and the cursor did not
    # move, so the next sync reads the same rows again.
    assert names.loaded
    names.take()
    names.sync()
    [(call, entries, _dirty)] = names.take()
    assert call == "refresh" and [e[0] for e in entries] == [_id(store, a)]


@pytest.mark.parametrize("broken", ["_apply_commit", "take_own"])
def test_an_own_commit_that_fails_loads_everything_next(
        store, names, monkeypatch, caplog, broken):
    names.sync()
    if broken == "take_own":
        def take_own(seqs):
            raise RuntimeError("injected failure")
        monkeypatch.setattr(names.cursor, "take_own", take_own)
    else:
        names.fail.add("_apply_commit")
    with caplog.at_level(logging.WARNING):
        a = h.provider(store, "a")  # not raised to the writer
    [warning] = _warnings(caplog)
    assert "applying a commit failed" in warning
    assert not names.loaded and not names.dirty
    monkeypatch.undo()
    names.take()
    names.sync()
    assert names.take() == ["all"]
    assert names.names == _by_name(store, {"a": a})


def test_nothing_is_taken_before_the_first_load(store, names):
    h.provider(store, "a")
    assert names.take() == [] and not names.dirty


def test_reload_forgets_and_loads_again(store, names):
    a = h.provider(store, "a")
    names.sync()
    names.names[-1] = "stale"
    names.take()
    names.reload()
    assert names.take() == ["all"]
    assert names.names == _by_name(store, {"a": a})


class Source:
    def __init__(self):
        self.refreshed = 0
        self.closed = False

    def refresh(self, cache):
        self.refreshed += 1
        cache.loaded = True

    def close(self):
        self.closed = True


def test_a_cache_fed_by_a_source_ignores_the_store(store):
    source = Source()
    cache = Names(store, source=source)
    assert not cache.follows_store
    cache.sync()
    assert source.refreshed == 1 and cache.loaded
    h.provider(store, "a")  # no listener: the commit does not reach it
    assert cache.take() == [] and not cache.needs_read()
    cache.reload()
    assert source.refreshed == 2 and cache.take() == []
    cache.close()
    assert source.closed


class Watch:
    """A store watch that says ``must`` (whether to read)."""

    def __init__(self, must):
        self.must = must
        self.failed = 0

    def begin_read(self):
        return self.must

    def read_failed(self):
        self.failed += 1


def test_sync_all_reads_the_followers_in_one_transaction(store, other):
    first, second = Names(store), Names(store)
    source = Source()
    fed = Names(store, source=source)
    order = []
    for cache in (first, second):
        original = cache.sync_in

        def sync_in(txn, cache=cache, original=original):
            order.append((cache, txn))
            return original(txn)
        cache.sync_in = sync_in
    try:
        assert follower.sync_all(store, [second, fed, first], [Watch(True)])
        assert [c for c, _txn in order] == [second, first]
        assert order[0][1] is order[1][1]  # one read transaction
        assert source.refreshed == 1
        order.clear()
        quiet = Watch(False)
        assert not follower.sync_all(store, [first, second], [quiet])
        assert order == []
        # An own write not applied at commit is read back all the same.
        h.provider(store, "a")
        assert first.dirty
        assert follower.sync_all(store, [first, second], [quiet])
        assert not first.dirty and not second.dirty
        # Without any watch, every sync reads.
        order.clear()
        assert follower.sync_all(store, [first], [])
        assert len(order) == 1
    finally:
        for cache in (first, second, fed):
            cache.close()


def test_sync_all_tells_the_watches_a_read_failed(store, other):
    cache = Names(store)
    try:
        cache.sync()
        h.provider(other, "a")
        cache.fail.add("_refresh")
        watch = Watch(True)
        with pytest.raises(RuntimeError, match="injected"):
            follower.sync_all(store, [cache], [watch])
        assert watch.failed == 1
    finally:
        cache.close()


def test_followed_logs_read_entries_and_the_pruned_counter(store):
    a = h.provider(store, "a")
    node = h.new_uuid()
    hr.upsert_compute_node(store, node, "host1", "node1")
    hosts = follower.FollowedLog.registered(host_tables.LOG)
    assert hosts.table is host_tables.host_changes
    with store.engine.begin() as conn:
        for counter, value in ((tables.CHANGES_PRUNED_COUNTER, 1),
                               (hosts.counter, 1)):
            conn.execute(tables.counters.update()
                         .where(tables.counters.c.name == counter)
                         .values(value=value))

    def read(txn, log):
        return log.since(txn, 0), log.position(txn)
    (pruned, changed), (top, present, pruned_too) = store.read(
        read, follower.PROVIDER_LOG)
    assert pruned == pruned_too == 1
    assert [e[0] for e in changed.values()] == [_id(store, a)]
    assert top == max(changed) and present == set(changed)
    # Nothing above the top: the counter's row alone.
    assert store.read(lambda txn: follower.PROVIDER_LOG.since(
        txn, top)) == (1, {})
    (pruned, changed), (top, present, _) = store.read(read, hosts)
    assert pruned == 1
    assert list(changed.values()) == [(hr.NODE, node)]
    assert top == max(changed) and present == set(changed)


def test_rows_in_reads_a_list_in_chunks(store):
    uuids = [h.provider(store, f"p{i}") for i in range(5)]
    ids = [_id(store, u) for u in uuids]
    for chunk in (1, 2, 500):
        found = store.read(lambda txn, chunk=chunk: _NAMES_BY_IDS.rows_in(
            txn, "ids", ids, chunk=chunk))
        assert sorted(r.name for r in found) == [f"p{i}" for i in range(5)]
    assert store.read(lambda txn: _NAMES_BY_IDS.rows_in(txn, "ids", [])) \
        == []


def test_a_gap_is_read_by_number_not_as_a_range(store, other, monkeypatch):
    """A number missing below the watermark (a write in flight, or one
    rolled back) is asked for by itself: the rows committed after it are
    not read again at every sync while it stays missing."""
    cache = Names(store)
    try:
        cache.sync()
        for name in ("a", "b", "c"):
            h.provider(other, name)
        cache.sync()
        cache.take()
        seqs = sorted(store.read(
            lambda txn: follower.PROVIDER_LOG.since(txn, 0)[1]))
        gap = seqs[0]
        # As if the first of the three were still in flight (and
        # nothing else were: earlier tests' numbers may be gaps too).
        cache.cursor.gaps = {gap: cache.cursor._clock()}
        asked = []
        real_since = follower.PROVIDER_LOG.since

        def since(txn, low, gaps=()):
            found = real_since(txn, low, gaps)
            asked.append(sorted(found[1]))
            return found
        monkeypatch.setattr(follower.PROVIDER_LOG, "since", since)
        h.provider(other, "d")
        cache.sync()
        newest = max(asked[-1])
        # The gap and the new row; not the two committed in between.
        assert asked == [[gap, newest]]
        assert gap not in cache.cursor.gaps
        # Over MAX_LISTED_GAPS the range from the lowest is read instead.
        monkeypatch.setattr(follower, "MAX_LISTED_GAPS", 0)
        found = store.read(lambda txn: real_since(txn, newest, {gap}))[1]
        assert sorted(found) == [s for s in seqs + [newest] if s >= gap]
    finally:
        cache.close()
