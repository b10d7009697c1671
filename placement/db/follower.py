"""Following the store's change logs: the one protocol of every in-memory
cache of the database (docs/architecture.md, "Caches that follow the
database").

A cache (placement's provider index, the scheduler's host state table)
holds a copy of some records and follows the change log the store writes
for them (:class:`FollowedLog`: provider_changes, or a package's
registered ChangeLog). It is a :class:`Follower`, which does the
following the same way for each; the cache says only how to load its
records and how to apply a change:

- the first sync loads everything, and where the log stands then
  (placement.db.change_cursor: the highest number and the gaps below it);
- each later sync reads the log rows above the cursor (one indexed query
  when nothing changed), and refreshes what the new ones name, with what
  this process wrote and marked ``dirty``;
- each commit of the store's own process reaches it at commit through a
  store listener: applied at once when that is cheap (usage deltas), or
  marked dirty for the next sync, and counted as read either way;
- in doubt it loads everything: at once when the log was pruned past the
  cursor; at the next sync when applying a change failed part way (the
  copy may then match neither state, and the change counts as read). A
  lost connection during a sync is not a doubt: the store runs the whole
  read again, and the cursor moves only at its end.

A cache fed by an external source instead (Nova's databases for the host
state table) does not follow the store at all: ``follows_store`` is false,
and sync() asks the source.
"""

import logging
import threading
import time

import sqlalchemy as sa

from placement.db import change_cursor, fastsql, retry, tables
from placement.db import store as store_mod

LOG = logging.getLogger(__name__)


# Gaps up to this many are read by number; more, as a range.
MAX_LISTED_GAPS = 500


class FollowedLog:
    """Reading one change log of the store: ``table`` has ``seq`` and the
    ``entry`` columns that say what a row changed; the row of ``counter``
    in the counters table is the number below which rows were pruned;
    ``name`` is the ChangeLog's (None: provider_changes, whose numbers a
    ChangeSet keeps in ``seqs``)."""

    def __init__(self, table, entry, counter, name=None):
        self.table = table
        self.entry = tuple(entry)
        self.counter = counter
        self.name = name
        counters = tables.counters
        # Read before every decision: one statement on the raw cursor.
        # The pruned counter comes in the same answer, as a row whose seq
        # is -1 - counter (below 1: no change row has such a number).
        pruned = (sa.select((-1 - counters.c.value).label("seq"),
                            *(sa.null().label(c) for c in self.entry))
                  .where(counters.c.name == counter))
        rows = sa.select(table.c.seq, *(table.c[c] for c in self.entry))
        self._since = fastsql.Fast(
            rows.where(table.c.seq > sa.bindparam("low")).union_all(pruned))
        # The same with the gaps (numbers still missing below the
        # watermark) asked for by number: one number left missing by a
        # rolled-back write must not make every sync re-read all that
        # committed after it.
        self._since_or_gaps = fastsql.Fast(
            rows.where(sa.or_(
                table.c.seq > sa.bindparam("low"),
                table.c.seq.in_(sa.bindparam("gaps", expanding=True))))
            .union_all(pruned))

    @classmethod
    def registered(cls, name):
        """The FollowedLog of the ChangeLog registered as ``name``
        (placement.db.store.register_change_log): its entries are
        (kind, ref)."""
        log = next(log for log in store_mod.change_logs()
                   if log.name == name)
        return cls(log.table, ("kind", "ref"), log.counter, name=log.name)

    def written(self, changes):
        """The numbers of this log's rows a commit wrote (a ChangeSet)."""
        if self.name is None:
            return changes.seqs
        return changes.seqs_of(self.name)

    def since(self, txn, low, gaps=()):
        """(pruned_below, {seq: entry}) for the rows above ``low`` and
        those numbered in ``gaps`` (numbers below ``low`` still missing),
        each entry a tuple of the entry columns; rows below
        ``pruned_below`` are gone."""
        if not gaps:
            rows = self._since.rows(txn, {"low": low})
        elif len(gaps) > MAX_LISTED_GAPS:
            # Too many to list (a reader that started beside a bulk
            # write): the range from the lowest.
            rows = self._since.rows(txn, {"low": min(min(gaps) - 1, low)})
        else:
            rows = self._since_or_gaps.rows(
                txn, {"low": low, "gaps": sorted(gaps)})
        pruned_below = 0
        changed = {}
        for row in rows:
            seq = row[0]
            if seq < 1:
                pruned_below = -1 - seq
            else:
                changed[seq] = row[1:]
        return pruned_below, changed

    def position(self, txn, window=change_cursor.GAP_WINDOW):
        """(highest number, the numbers present among the last ``window``
        below it, the number below which rows were pruned): where a full
        load starts following the log (ChangeCursor.start's arguments)."""
        seq = self.table.c.seq
        top = txn.scalar(sa.select(sa.func.max(seq))) or 0
        present = {r.seq for r in txn.execute(
            sa.select(seq).where(seq > top - window))}
        counters = tables.counters
        pruned_below = txn.scalar(
            sa.select(counters.c.value)
            .where(counters.c.name == self.counter)) or 0
        return top, present, pruned_below


# placement's own log: each row names a provider, and whether only its
# usage changed (a claim or its removal).
PROVIDER_LOG = FollowedLog(tables.provider_changes,
                           ("resource_provider_id", "usage_only"),
                           tables.CHANGES_PRUNED_COUNTER)


class Follower:
    """Base of a cache that follows one change log of ``store``
    (:class:`FollowedLog`), or, given a ``source``, is fed by that
    instead (an object with refresh(cache) and close()).

    Thread-safe: every public method holds ``lock``, which readers of
    the cache hold too while they read it.

    A subclass sets its own attributes before calling this __init__
    (which clears the state through :meth:`_clear` and then listens to
    the store), and provides:

    - ``_clear()``: hold nothing (calling this one: not loaded, nothing
      dirty);
    - ``_load_all(txn)``: load every record (after ``_clear``);
    - ``_refresh(txn, entries)``: bring up to date the records named by
      these new log entries and by ``dirty``;
    - ``_apply_commit(changes)``: take in a commit of this process (a
      ChangeSet): apply what is cheap, add the rest to ``dirty``;
    - ``what`` and ``logger``: how its warnings read, and where they go.
    """

    what = "cache"
    logger = LOG

    def __init__(self, store, change_log, cursor_clock=time.monotonic,
                 source=None):
        self.store = store
        self.change_log = change_log
        self.source = source
        self.lock = threading.RLock()
        self.cursor = change_cursor.ChangeCursor(cursor_clock)
        self._clear()
        if source is None:
            store.add_listener(self._on_commit)

    @property
    def follows_store(self):
        """Whether the cache reads the store's change log (and so can
        join a caller's read transaction: sync_in); false when a source
        feeds it."""
        return self.source is None

    def close(self):
        if self.source is None:
            self.store.remove_listener(self._on_commit)
        else:
            self.source.close()

    def _clear(self):
        self.loaded = False
        # What this process wrote and did not apply at commit: read back
        # at the next sync.
        self.dirty = set()

    def needs_read(self):
        """Whether the next sync must read the store even when nobody
        else committed: not loaded yet, or own writes not applied at
        commit (``dirty``). Never for a cache a source feeds."""
        return self.source is None and (not self.loaded or bool(self.dirty))

    # -- syncing ------------------------------------------------------------

    def sync(self):
        """Bring the cache up to date: a full load the first time (or
        after a doubt), then only what changed."""
        with self.lock:
            if self.source is not None:
                self.source.refresh(self)
            else:
                self.store.read(self.sync_in, snapshot=True)

    def sync_in(self, txn):
        """sync() inside the caller's read transaction ``txn`` (a caller
        that follows more than one cache reads them all in one: see
        :func:`sync_all`). A failure part way (but a lost connection,
        which the store's retry of the whole read redoes) makes the next
        sync load everything, and propagates."""
        with self.lock:
            try:
                if not self.loaded:
                    self._full_load(txn)
                else:
                    self._catch_up(txn)
            except Exception as exc:
                if not retry.is_connection_error(exc, txn.backend):
                    self._reload_at_next_sync("a sync", exc)
                raise

    def reload(self):
        """Forget everything and load it all again."""
        with self.lock:
            self._clear()
            if self.source is not None:
                self.source.refresh(self)
            else:
                self.store.read(self._full_load, snapshot=True)

    def _full_load(self, txn):
        self._clear()
        self.cursor.start(*self.change_log.position(txn))
        self._load_all(txn)
        self.loaded = True

    def _catch_up(self, txn):
        cursor = self.cursor
        pruned_below, changed = self.change_log.since(
            txn, cursor.watermark, cursor.gaps)
        if cursor.lost(pruned_below):
            self._full_load(txn)
            return
        is_new = cursor.is_new
        entries = [entry for seq, entry in changed.items() if is_new(seq)]
        if entries or self.dirty:
            self._refresh(txn, entries)
        self.dirty.clear()
        cursor.advance(changed.keys())

    def _on_commit(self, changes):
        """A commit of this process's store. Once the cursor took it, it
        counts as read: a failure to apply it cannot be left for the log,
        so the cache loads everything at the next sync instead (not
        raised: the store would only log it again)."""
        seqs = self.change_log.written(changes)
        if not seqs:
            return
        with self.lock:
            if not self.loaded:
                return
            try:
                # Nothing to do when a sync read it from the log first.
                if self.cursor.take_own(seqs):
                    self._apply_commit(changes)
            except Exception as exc:
                self._reload_at_next_sync("applying a commit", exc)

    def _reload_at_next_sync(self, what, exc):
        """Applying a change failed part way: the copy may hold some of
        it, and the change counts as read. Forget it all."""
        self.logger.warning("%s: %s failed (%s: %s); it loads everything "
                            "again at the next sync", self.what, what,
                            type(exc).__name__, exc)
        self.loaded = False
        self.dirty.clear()

    # -- what a cache provides ----------------------------------------------

    def _load_all(self, txn):
        raise NotImplementedError

    def _refresh(self, txn, entries):
        raise NotImplementedError

    def _apply_commit(self, changes):
        raise NotImplementedError


def sync_all(store, caches, watches=()):
    """Bring ``caches`` (Followers) up to date together: those a source
    feeds each from its source; those that follow the store in one read
    transaction (one round trip), in the order given. That read is
    skipped when the store's ``watches`` (Store.open_watches) all say
    nobody else committed since the last one and no cache needs_read().
    Holds every cache's lock, in the order given, throughout. Returns
    whether the store was read."""
    followers = []
    for cache in caches:
        if cache.follows_store:
            followers.append(cache)
        else:
            cache.sync()

    def read(txn):
        for cache in followers:
            cache.sync_in(txn)
    # Plain acquire and release rather than an ExitStack: this runs
    # before every decision.
    held = []
    try:
        for cache in caches:
            cache.lock.acquire()
            held.append(cache.lock)
        # Every watch is asked: each counts what it saw as read.
        must = [watch.begin_read() for watch in watches]
        if (watches and not any(must)
                and not any(cache.needs_read() for cache in followers)):
            return False
        try:
            store.read(read, snapshot=True)
        except BaseException:
            for watch in watches:
                watch.read_failed()
            raise
        return True
    finally:
        for lock in reversed(held):
            lock.release()
