"""The store: an engine plus transactions with the engine's retry rules.

Objects functions take ``db``, which is either a :class:`Store` (the call
runs in a transaction of its own) or a :class:`Txn` (the call joins the
caller's transaction, as ``gantt-manage cloud load`` does to load a whole
cloud atomically). See :func:`writer` and :func:`reader`.

After each commit the store tells its listeners what changed (a
:class:`ChangeSet`), and records the touched providers in the
``provider_changes`` table (and other packages' records in the change
logs they register: ChangeLog) for other processes.
"""

import contextlib
import dataclasses
import datetime
import functools
import logging
import random
import threading
import time

import sqlalchemy as sa

from placement import errors
from placement.db import catalog as catalog_mod
from placement.db import (
    change_feed,
    checkpointer,
    data_version,
    fastsql,
    lost_sessions,
    pg_listen,
    tables,
)
from placement.db import engine as engine_mod
from placement.db import pipeline as pipeline_mod
from placement.db import retry as retry_mod

LOG = logging.getLogger(__name__)

# provider_changes rows older than this are pruned; a reader that fell
# further behind reloads everything.
CHANGE_LOG_RETENTION = datetime.timedelta(hours=1)
PRUNE_EVERY_COMMITS = 2000


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


@dataclasses.dataclass
class ChangeSet:
    """What one committed transaction changed, by internal provider id."""

    # Providers created or whose name, tree, inventory, traits or
    # aggregates changed.
    providers: set = dataclasses.field(default_factory=set)
    deleted: set = dataclasses.field(default_factory=set)
    # (provider id, resource class id) -> change of the used amount.
    usage: dict = dataclasses.field(default_factory=dict)
    # Custom resource classes or traits were created or deleted.
    catalog: bool = False
    # Sequence numbers of the provider_changes rows this commit wrote.
    seqs: tuple = ()
    # The random number its change log rows carry (written_by): whose
    # they are when another write's rows took the same numbers.
    written_by: int | None = None
    # Records of other packages' change logs (ChangeLog): log name ->
    # (kind, ref) pairs written, and log name -> the rows' numbers.
    logged: dict = dataclasses.field(default_factory=dict)
    logged_seqs: dict = dataclasses.field(default_factory=dict)

    def log(self, name):
        """The set of (kind, ref) this write adds to change log
        ``name``."""
        return self.logged.setdefault(name, set())

    def entries(self, name):
        return self.logged.get(name, set())

    def seqs_of(self, name):
        return self.logged_seqs.get(name, ())

    def touched(self):
        return (self.providers | self.deleted
                | {rp_id for rp_id, _ in self.usage})

    def add_usage(self, rp_id, rc_id, delta):
        key = (rp_id, rc_id)
        total = self.usage.get(key, 0) + delta
        if total:
            self.usage[key] = total
        else:
            self.usage.pop(key, None)

    def __bool__(self):
        return bool(self.providers or self.deleted or self.usage
                    or self.catalog or any(self.logged.values()))


class ProviderRace(Exception):
    """A provider generation the engine itself read moved before the write
    finished. Retried when the operation allows it; otherwise it reaches
    the caller as a ResourceProviderGenerationConflict."""

    def __init__(self, uuid):
        super().__init__(uuid)
        self.uuid = uuid


class RetryTransaction(Exception):
    """Start the transaction again (a racing insert of the same key)."""


class Txn:
    """One database transaction of a store."""

    def __init__(self, store, conn, write, pipelined=False):
        self.store = store
        self.conn = conn
        self.write = write
        self.now = utcnow()
        self.changes = ChangeSet()
        self.pipeline = pipeline_mod.for_transaction(self, pipelined)

    @property
    def catalog(self):
        return self.store.catalog

    @property
    def backend(self):
        return self.store.backend

    def execute(self, statement, params=None):
        return self.conn.execute(statement, params)

    def scalar(self, statement, params=None):
        return self.conn.execute(statement, params).scalar()

    def _record_changes(self, committing=None):
        """Write the change log rows, settle the pipeline (the rows go
        with the writes queued before them, and COMMIT with them when
        nothing is left to check: ``committing`` is called first), and
        keep the rows' numbers: a write whose connection fails in COMMIT
        is told committed by them (or by the transaction's id, read by
        the pipeline)."""
        sent = []
        touched = self.changes.touched()
        # 63 bits: a BIGINT on every engine.
        mark = self.changes.written_by = random.getrandbits(63)
        if touched:
            whole = self.changes.providers | self.changes.deleted
            sent.append((None, _INSERT_CHANGES, _INSERT_CHANGES.queue(
                self, [{"resource_provider_id": rp_id,
                        "changed_at": self.now,
                        "usage_only": rp_id not in whole,
                        "written_by": mark}
                       for rp_id in sorted(touched)])))
        for name, entries in self.changes.logged.items():
            if entries:
                insert = _CHANGE_LOGS[name].insert
                sent.append((name, insert, insert.queue(self, [
                    {"kind": kind, "ref": ref, "changed_at": self.now,
                     "written_by": mark}
                    for kind, ref in sorted(entries)])))
        self.pipeline.settle(committing)
        for name, insert, pending in sent:
            seqs = tuple(insert.returned(pending))
            if name is None:
                self.changes.seqs = seqs
            else:
                self.changes.logged_seqs[name] = seqs


_INSERT_CHANGES = fastsql.FastInsert(
    tables.provider_changes,
    ["resource_provider_id", "changed_at", "usage_only", "written_by"],
    returning=tables.provider_changes.c.seq)


@dataclasses.dataclass(frozen=True)
class ChangeLog:
    """The change log of another package's records (the scheduler's host
    records), kept as provider_changes is placement's: ``table`` has
    seq, kind, ref and changed_at; rows below the ``counter`` were
    pruned. The package registers it (register_change_log) and names
    what a write touched in ``txn.changes.log(name)``."""

    name: str
    table: sa.Table
    counter: str

    @functools.cached_property
    def insert(self):
        return fastsql.FastInsert(
            self.table, ["kind", "ref", "changed_at", "written_by"],
            returning=self.table.c.seq)


# name -> ChangeLog, filled by the packages that have one.
_CHANGE_LOGS = {}


def register_change_log(log):
    """Make the store write ``log`` (a ChangeLog) at each commit that
    names records of it; returns its name."""
    _CHANGE_LOGS.setdefault(log.name, log)
    return log.name


def change_logs():
    """The ChangeLogs registered so far."""
    return list(_CHANGE_LOGS.values())


def _dbapi_code(exc):
    orig = getattr(exc, "orig", None)
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if code is None and orig is not None and getattr(orig, "args", None):
        code = orig.args[0]
    return code, str(orig).lower()


def is_transient(exc, backend):
    """Deadlock, serialization failure or lock timeout: try again (a
    lost connection is placement.db.retry's)."""
    code, text = _dbapi_code(exc)
    if backend == "postgresql":
        return code in ("40001", "40P01", "55P03")
    if backend == "mysql":
        # The error number is args[0]; PyMySQL also gives the server's
        # SQLSTATE where the server sends one (40001 for a deadlock and
        # for Galera's certification failure), and _dbapi_code prefers
        # it: look at both.
        return _mysql_errno(exc) in (1213, 1205) or code == "40001"
    return "locked" in text or "busy" in text


def _mysql_errno(exc):
    args = getattr(getattr(exc, "orig", None), "args", None) or ()
    return args[0] if args and isinstance(args[0], int) else None


def is_integrity_error(exc):
    return isinstance(exc, sa.exc.IntegrityError)


class Store:
    """A placement database: engine, catalog caches, listeners."""

    def __init__(self, conf, engine=None):
        self.conf = conf
        self.engine = engine or engine_mod.create_engine(conf)
        self.backend = engine_mod.backend_name(self.engine)
        self.catalog = catalog_mod.Catalog()
        self.conflict_retries = (
            conf.placement.allocation_conflict_retry_count)
        self.db_retries = conf.placement_database.db_retry_count
        # Connection-level failures (a restart, a failover): retried
        # with these waits (placement.db.retry).
        self.backoff = retry_mod.Backoff.from_conf(
            conf, dbapi=self.engine.dialect.loaded_dbapi)
        # external id -> internal id of rows that are never deleted
        # (projects, users, consumer types, aggregates). Filled only from
        # reads, so a rolled-back insert is never cached.
        self.id_cache = {}
        self._listeners = []
        self._commits = 0
        self._lock = threading.Lock()
        # Per thread: the connection pinned by pinned(), if any.
        self._pins = threading.local()
        # Redis announcements of commits, when configured.
        self.change_feed = change_feed.open_feed(conf)
        # PostgreSQL's notifications of commits (started by the first
        # open_watches), when on PostgreSQL.
        self.commit_listener = pg_listen.open_listener(conf, self.engine)
        # SQLite WAL checkpoints off the commit path, when configured.
        self.checkpointer = checkpointer.open_checkpointer(conf, self.engine)

    @classmethod
    def open(cls, conf, engine=None):
        """A store on the configured database, its schema brought up to
        date first when [placement_database] sync_on_startup is set."""
        from placement.db import migration
        store = cls(conf, engine=engine)
        if conf.placement_database.sync_on_startup:
            # Connecting at start waits for a database that is still
            # coming up, as oslo.db's max_retries does.
            store.backoff.run(lambda: migration.sync(store.engine),
                              store.backend, "schema check at start")
        return store

    def dispose(self):
        if self.change_feed is not None:
            self.change_feed.close()
            self.change_feed = None
        if self.commit_listener is not None:
            self.commit_listener.close()
        if self.checkpointer is not None:
            self.checkpointer.close()
        self.engine.dispose()

    def open_watches(self):
        """For one reader of the change logs (a cache of this process
        that follows the database): the watches that can tell it when no
        read is needed. Each has begin_read() (whether to read now) and
        read_failed(). The reader may skip the read only when every
        watch says so, and there is at least one: on SQLite the
        database's own data_version (placement.db.data_version); on
        PostgreSQL, its notifications of commits (placement.db.pg_listen);
        with a change feed configured, the feed (placement.db.change_feed).
        MySQL without a feed: none, read every time."""
        watches = []
        version = data_version.open_watch(self.engine,
                                          self.raw_connection)
        if version is not None:
            watches.append(version)
        if self.commit_listener is not None:
            watches.append(self.commit_listener.watch())
        if self.change_feed is not None:
            watches.append(self.change_feed.watch())
        return watches

    def clear_caches(self):
        self.catalog.clear()
        self.id_cache.clear()

    # listeners

    def add_listener(self, callback):
        """Call ``callback(changeset)`` after every commit of this store."""
        self._listeners.append(callback)

    def remove_listener(self, callback):
        self._listeners.remove(callback)

    def _notify(self, changes):
        for callback in list(self._listeners):
            try:
                callback(changes)
            except Exception:
                LOG.exception("change listener %r failed", callback)

    # connections

    @contextlib.contextmanager
    def pinned(self, conn):
        """Run this thread's transactions of the block on ``conn`` (an
        idle Connection of this store's engine, which the caller keeps
        and closes) instead of one from the pool each: a scheduler keeps
        one for its decisions, whose pool checkouts and returns cost as
        much as a statement on SQLite. A transaction that starts while
        the pinned connection is in one (a store call nested in a
        transaction) takes a pooled connection, as without the pin."""
        before = getattr(self._pins, "conn", None)
        self._pins.conn = conn
        try:
            yield
        finally:
            self._pins.conn = before

    def _idle_pin(self):
        conn = getattr(self._pins, "conn", None)
        if conn is None or conn.in_transaction() or conn.closed:
            return None
        return conn

    def _connect(self):
        """A Connection for one transaction: the idle pinned one (left
        open after), else one from the pool (returned after)."""
        pin = self._idle_pin()
        if pin is not None:
            return contextlib.nullcontext(pin)
        return self.engine.connect()

    @contextlib.contextmanager
    def raw_connection(self):
        """A DBAPI connection (the pool's proxy, with ``info``) for
        statements outside any transaction: the pinned connection's,
        else one from the pool. Invalidated when the block fails."""
        pin = self._idle_pin()
        if pin is None:
            with engine_mod.raw_connection(self.engine) as raw:
                yield raw
            return
        try:
            yield pin.connection
        except Exception:
            pin.invalidate()
            raise

    # transactions

    def read(self, fn, *args, snapshot=False, **kwargs):
        """Run ``fn(txn, ...)`` in a read transaction. With ``snapshot``
        every statement sees the same committed state (REPEATABLE READ on
        PostgreSQL and MySQL; any SQLite read transaction does). A lost
        connection runs it again on a new one ([placement_database]
        max_retries)."""
        return self.backoff.run(
            lambda: self._read_once(fn, args, kwargs, snapshot),
            self.backend, getattr(fn, "__name__", "read"))

    def _read_once(self, fn, args, kwargs, snapshot):
        isolation = snapshot and self.backend != "sqlite"
        # A pinned connection would keep the isolation level after.
        with (self.engine.connect() if isolation
              else self._connect()) as conn:
            if isolation:
                conn.execution_options(isolation_level="REPEATABLE READ")
            _mark_write(conn, False)
            with conn.begin():
                return fn(Txn(self, conn, write=False), *args, **kwargs)

    def write(self, fn, *args, retry_conflicts=False, pipelined=False,
              **kwargs):
        """Run ``fn(txn, ...)`` in a write transaction and commit.

        Deadlocks, lock timeouts and racing inserts are retried up to
        [placement_database] db_retry_count times. A ProviderRace is retried
        up to [placement] allocation_conflict_retry_count times when
        ``retry_conflicts`` is set, and reported as a generation conflict
        otherwise. A lost connection is retried as [placement_database]
        max_retries says when the transaction is known not to have
        committed: it failed before COMMIT, or the change log rows it
        wrote are not there (see _commit_outcome). Every retry starts
        from fresh reads. ``pipelined``: ``fn`` sends its statements
        through ``txn.pipeline`` (placement.db.pipeline).
        """
        races_left = self.conflict_retries if retry_conflicts else 1
        db_left = self.db_retries
        waits = None
        while True:
            attempt = _Attempt()
            try:
                txn, result = self._write_once(fn, args, kwargs, attempt,
                                               pipelined)
                break
            except ProviderRace as race:
                races_left -= 1
                if races_left <= 0:
                    raise errors.ResourceProviderGenerationConflict(
                        race.uuid) from None
                LOG.debug("provider %s changed under a write; retrying",
                          race.uuid)
                # A little jitter, so that racing writers fall out of step.
                time.sleep(random.uniform(0, 0.0005) * (
                    self.conflict_retries - races_left))
            except RetryTransaction:
                db_left -= 1
                if db_left < 0:
                    raise
            except Exception as exc:
                if not self.backoff.lost(exc, self.backend):
                    if not (isinstance(exc, sa.exc.DBAPIError)
                            and self._statement_retryable(exc, db_left)):
                        raise
                    db_left -= 1
                    time.sleep(0.001 * (self.db_retries - db_left))
                    continue
                if waits is None:
                    waits = self.backoff.waits()
                    LOG.warning("Database connection lost in a write (%s):"
                                " %s; trying again", _name(fn),
                                retry_mod.first_line(exc))
                committed = self._commit_outcome(attempt, waits)
                if committed:
                    txn, result = attempt.txn, attempt.result
                    break
                wait = next(waits, None)
                if wait is None:
                    raise
                time.sleep(wait)
                continue
        if waits is not None:
            LOG.info("Database reachable again; the write (%s) went "
                     "through", _name(fn))
        self._after_commit(txn.changes)
        return result

    def _statement_retryable(self, exc, db_left):
        """Whether a failed write is tried again: a deadlock, a lock
        timeout or a racing insert, while db_retry_count allows."""
        if db_left <= 0 or not (is_transient(exc, self.backend)
                                or is_integrity_error(exc)):
            return False
        if is_integrity_error(exc):
            # A racing insert, or a name another process deleted.
            self.clear_caches()
        return True

    def _commit_outcome(self, attempt, waits):
        """Whether a write whose connection failed committed: not when it
        failed before COMMIT; when it failed during COMMIT, what
        PostgreSQL says of its transaction id (a pipelined write, whose
        COMMIT went with its writes), or else whether the change log rows
        it wrote exist once its session has ended; read on a new
        connection, waiting for the database as long as ``waits`` allows.
        A write that logs no change cannot be told: it is reported,
        never run twice."""
        if not attempt.committing:
            self._end_session(attempt.session)
            return False
        pipeline = attempt.txn.pipeline
        changes = attempt.txn.changes
        if pipeline.xid is not None:
            read = (lost_sessions.xact_committed,
                    (pipeline.xid, pipeline.backend_pid))
        elif changes.seqs or any(changes.logged_seqs.values()):
            read = (_logged_once_ended, (changes, self.backend,
                                         attempt.session))
        else:
            raise errors.CommitOutcomeUnknown(attempt.name) from None
        while True:
            try:
                committed = self._read_once(*read, {}, False)
            except Exception as exc:
                if not self.backoff.lost(exc, self.backend):
                    raise
                committed = None
            if committed is lost_sessions.UNKNOWN:
                raise errors.CommitOutcomeUnknown(attempt.name) from None
            if committed is not None:
                return committed
            # The server is away, or has not yet ended the transaction
            # of the lost connection.
            wait = next(waits, None)
            if wait is None:
                raise errors.CommitOutcomeUnknown(attempt.name) from None
            time.sleep(wait)

    def _end_session(self, session):
        """End the session of a write that failed before its COMMIT, if
        the server still keeps it (a network partition: it may not learn
        for hours): it can no longer commit, and would hold the locks
        the write takes again. Best effort; a server that is away has
        ended it anyway."""
        if session is None:
            return
        try:
            self._read_once(lost_sessions.end, (self.backend, session), {},
                            False)
        except Exception as exc:
            LOG.debug("could not end the lost session %s: %s", session,
                      retry_mod.first_line(exc))

    def _write_once(self, fn, args, kwargs, attempt, pipelined):
        attempt.name = _name(fn)
        with self._connect() as conn:
            _mark_write(conn, True)
            attempt.session = lost_sessions.session_of(conn, self.backend)
            txn = None
            try:
                with conn.begin():
                    if self.commit_listener is not None:
                        self.commit_listener.wrote_through(conn)
                    txn = attempt.txn = Txn(self, conn, write=True,
                                            pipelined=pipelined)
                    try:
                        attempt.result = fn(txn, *args, **kwargs)
                        txn._record_changes(attempt.mark_committing)
                    except BaseException:
                        txn.pipeline.abandon()
                        raise
                    # What fails from here on failed in COMMIT.
                    attempt.committing = True
            finally:
                if txn is not None:
                    txn.pipeline.release()
        return txn, attempt.result

    def _after_commit(self, changes):
        if self.checkpointer is not None:
            self.checkpointer.committed()
        if changes.catalog:
            self.catalog.clear()
        if changes:
            if self.change_feed is not None:
                self.change_feed.publish()
            self._notify(changes)
            with self._lock:
                self._commits += 1
                prune = self._commits % PRUNE_EVERY_COMMITS == 0
            if prune:
                self.write(prune_change_log)
                for log in change_logs():
                    self.write(prune_other_log, log)


class _Attempt:
    """One try of a write: how far it got, for when its connection
    fails."""

    def __init__(self):
        self.name = None
        self.txn = None
        self.result = None
        self.committing = False
        self.session = None  # the server's id of its connection's session

    def mark_committing(self):
        """What fails from here on failed in COMMIT."""
        self.committing = True


def _name(fn):
    return getattr(fn, "__name__", "write")


def _logged_once_ended(txn, changes, backend, session):
    """_logged, once the lost connection's session has ended (None until
    then): a COMMIT the server was still making would not show its rows
    yet."""
    if session is not None and not lost_sessions.ended(txn, backend,
                                                       session):
        return None
    return _logged(txn, changes)


def _logged(txn, changes):
    """Whether the change log rows of ``changes`` exist: its transaction
    committed (rows are pruned only after an hour). The numbers alone
    are not enough: a Galera node's numbers of a transaction that never
    replicated are handed out again by the others (its auto-increment
    offset changes with the cluster), so the rows must carry the
    write's own mark too."""
    logs = [(tables.provider_changes, changes.seqs)] + [
        (_CHANGE_LOGS[name].table, seqs)
        for name, seqs in changes.logged_seqs.items()]
    for log, seqs in logs:
        if seqs:
            return bool(txn.scalar(sa.select(sa.func.count()).where(
                log.c.seq.in_(list(seqs)),
                log.c.written_by == changes.written_by)))
    return False


def _mark_write(conn, write):
    """Make the next transaction on ``conn`` a write one (BEGIN IMMEDIATE
    on SQLite) or not; only when it changes (a pinned connection keeps
    the mark between transactions, a pooled one starts without)."""
    if bool(conn.get_execution_options().get(engine_mod.WRITE_OPTION)) \
            != write:
        conn.execution_options(**{engine_mod.WRITE_OPTION: write})


def _prune(txn, log, counter, retention):
    """Delete ``log`` rows older than ``retention`` and remember, in the
    ``counter``, the sequence number below which rows are gone."""
    cutoff = txn.now - retention
    below = txn.scalar(sa.select(sa.func.max(log.c.seq))
                       .where(log.c.changed_at < cutoff))
    if below is None:
        return 0
    deleted = txn.execute(log.delete().where(log.c.seq <= below)).rowcount
    counters = tables.counters
    txn.execute(counters.update()
                .where(counters.c.name == counter)
                .where(counters.c.value < below + 1)
                .values(value=below + 1))
    return deleted


def prune_change_log(txn, retention=CHANGE_LOG_RETENTION):
    """Prune provider_changes; the number of rows deleted."""
    return _prune(txn, tables.provider_changes,
                  tables.CHANGES_PRUNED_COUNTER, retention)


def prune_other_log(txn, log, retention=CHANGE_LOG_RETENTION):
    """Prune a registered ChangeLog; the number of rows deleted."""
    return _prune(txn, log.table, log.counter, retention)


def writer(fn=None, *, retry_conflicts=False, pipelined=False):
    """Make ``fn(txn, ...)`` callable as ``fn(db, ...)``: with a Store it
    runs in a write transaction of its own; with a Txn it joins it.
    ``pipelined``: in a transaction of its own, ``fn`` may send its
    statements through ``txn.pipeline`` (placement.db.pipeline)."""
    if fn is None:
        return functools.partial(writer, retry_conflicts=retry_conflicts,
                                 pipelined=pipelined)

    @functools.wraps(fn)
    def call(db, *args, **kwargs):
        if isinstance(db, Txn):
            if not db.write:
                raise RuntimeError(f"{fn.__name__} needs a write transaction")
            return fn(db, *args, **kwargs)
        return db.write(fn, *args, retry_conflicts=retry_conflicts,
                        pipelined=pipelined, **kwargs)
    return call


def reader(fn):
    """Make ``fn(txn, ...)`` callable as ``fn(db, ...)`` for reads."""
    @functools.wraps(fn)
    def call(db, *args, **kwargs):
        if isinstance(db, Txn):
            return fn(db, *args, **kwargs)
        return db.read(fn, *args, **kwargs)
    return call
