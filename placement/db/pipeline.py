"""A write transaction's statements sent together: psycopg's pipeline mode.

Outside pipeline mode psycopg sends a statement and waits for its
result, so a claim on PostgreSQL pays a round trip per statement: eight
with BEGIN and COMMIT; pipelined, two. On a machine whose cores the
database shares with its clients each round trip also costs two
wake-ups. In pipeline mode psycopg sends statements without waiting for
their results, and a sync brings every result back at once
([placement_database] postgresql_pipeline turns the mode off).

The statements of a phase are held until the phase ends, then sent back
to back and synced: psycopg writes each statement to the socket as it
is executed, so sending them as the caller builds them would wake the
database's backend once per statement.

psycopg also syncs after the BEGIN it sends itself, a round trip of its
own. When the transaction has sent nothing before its first phase, the
pipeline sends BEGIN with that phase instead: the connection is put in
autocommit mode for the transaction (psycopg then leaves BEGIN to the
caller and still sends COMMIT or ROLLBACK when asked), and the store
gives it back as it came (:meth:`Pipeline.release`).

A writer that opts in (``store.writer(pipelined=True)``) gets a
:class:`Pipeline` as ``txn.pipeline`` and uses it in two phases:

- ``with txn.pipeline.reads():`` around reads it sends with
  ``Fast.queue`` and reads back after the block (one round trip, with
  BEGIN and the transaction's id);
- ``txn.pipeline.send_writes()`` before writes whose results matter only
  before COMMIT. The store settles the pipeline after the change-log
  rows are sent, with COMMIT in the same round trip.

COMMIT can go with the writes only if nothing read back could still
refuse them, so a compare-and-set sent with ``guard`` is a statement the
server itself fails when it misses its row (``fastsql.or_fail``): the
transaction aborts, COMMIT is skipped, and the sync raises the guard's
exception (``on_miss``). A check that can only be
made client-side (``check_later`` with ``may_refuse``) keeps COMMIT on
its own, after the checks. A connection lost during the last sync
leaves the outcome to the transaction's id (txid_status, read by the
store on a new connection).

Only statements run through ``fastsql`` may be held: SQLAlchemy runs a
statement at once. A fastsql statement run at once while statements are
held sends them first, so the order of statements is kept. Elsewhere
(SQLite, MySQL, or a writer that did not opt in) the same calls run each
statement at once and each check right away, so one code path serves
every engine.
"""

import contextlib

from placement.db import fastsql


class Pipeline:
    """Pipeline mode for the phases of one write transaction on
    ``conn`` (a SQLAlchemy Connection on psycopg)."""

    # Whether statements sent in a phase travel together (callers may
    # then read more at once than they would one round trip at a time).
    sends_together = True

    def __init__(self, txn):
        self._txn = txn
        # While a phase runs: the statements held, (cursor, (sql, args),
        # on_miss).
        self.holding = False
        self._held = []
        # (check, whether it may still refuse the write once its results
        # are in: COMMIT cannot go with the writes while one may).
        self._checks = []
        self._began = False  # BEGIN went with the first phase
        self._xid = None  # the cursor reading the transaction's id
        # The transaction's id (txid_current) and its backend's pid,
        # once the first phase is back: what tells whether a COMMIT whose
        # answer was lost committed.
        self.xid = None
        self.backend_pid = None

    @contextlib.contextmanager
    def reads(self):
        """Send the block's statements together; their results are in
        when the block ends."""
        self._hold()
        try:
            yield
        except BaseException:
            self._drop()
            raise
        self._send()

    def send_writes(self):
        """Send the statements from here to settle() together."""
        if not self.holding:
            self._hold()

    def hold(self, cursor, run, on_miss=None):
        """Keep ``cursor.execute(*run)`` for the phase's end; ``on_miss``:
        what the statement's failing guard raises (fastsql.or_fail)."""
        self._held.append((cursor, run, on_miss))

    def flush(self):
        """Send what is held now (a statement must run at once), and
        hold what follows."""
        self._send()
        self._hold()

    def check_later(self, check, may_refuse=True):
        """Run ``check()`` once the results of the statements sent so
        far are in. ``may_refuse``: it raises when a guarded write missed
        its row (not so when the check only closes what was sent)."""
        if not self.holding:
            check()
        else:
            self._checks.append((check, may_refuse))

    def guard(self, fast, params, on_miss):
        """Send ``fast``, a compare-and-set of one row; when it misses,
        the write fails with ``on_miss()``. Here the server refuses the
        miss itself (``fast.or_fail``), so COMMIT may go with it."""
        sent = fast.or_fail.queue(self._txn, params, on_miss=on_miss)
        self.check_later(sent.close, may_refuse=False)

    def settle(self, committing=None):
        """Bring back every result, then run the checks, in order.

        ``committing``: the caller commits next. When no check may still
        refuse the write, COMMIT goes with what is held, one round trip
        for both, and ``committing()`` is called first (from then on a
        lost connection leaves the outcome to be read back: ``xid``)."""
        if self.holding:
            commit = committing is not None and not any(
                may_refuse for _check, may_refuse in self._checks)
            if commit:
                committing()
            self._send(commit=commit)
        checks, self._checks = self._checks, []
        for check, _may_refuse in checks:
            check()

    def abandon(self):
        """Forget what is held and the checks after a failure; the
        transaction rolls back."""
        self._checks = []
        if self.holding:
            self._drop()

    def release(self):
        """Once the transaction is over: the connection begins its
        transactions itself again; one that cannot (it broke) is never
        used again."""
        if not self._began:
            return
        self._began = False
        conn = self._txn.conn
        try:
            conn.connection.driver_connection.autocommit = False
        except conn.dialect.loaded_dbapi.Error:
            conn.invalidate()

    def _hold(self):
        self.holding = True
        self._held = []

    def _drop(self):
        held, self._held = self._held, []
        self.holding = False
        for cursor, _run, _on_miss in held:
            cursor.close()

    def _send(self, commit=False):
        """Send BEGIN if due, the transaction's id read on its first
        phase, the statements held and COMMIT when ``commit``, in one
        pipeline, and sync."""
        from psycopg import pq  # an optional dependency (gantt[postgres])

        held, self._held = self._held, []
        self.holding = False
        driver = self._txn.conn.connection.driver_connection
        begin = None
        if (not self._began and not driver.autocommit
                and driver.pgconn.transaction_status
                == pq.TransactionStatus.IDLE):
            driver.autocommit = True
            self._began = True
            begin = _begin_command(driver)
        try:
            with driver.pipeline():
                if begin is not None:
                    driver.execute(begin, prepare=False)
                if self._xid is None:
                    self._xid = driver.execute("SELECT txid_current()")
                for cursor, run, _on_miss in held:
                    cursor.execute(*run)
                if commit:
                    driver.execute("COMMIT", prepare=False)
        except self._txn.conn.dialect.loaded_dbapi.Error as exc:
            missed = _missed(held, exc)
            if missed is not None:
                raise missed from exc
            raise fastsql.driver_error(self._txn, exc, "(pipeline sync)",
                                       None) from exc
        finally:
            self._read_xid()

    def _read_xid(self):
        if self.xid is None and self._xid is not None \
                and self._xid.pgresult is not None:
            self.xid = self._xid.fetchone()[0]
            self.backend_pid = self._xid.connection.info.backend_pid
            self._xid.close()


def _missed(held, exc):
    """The exception of the guard that failed the sync, if one did: the
    first statement held whose result did not come back."""
    if getattr(exc, "sqlstate", None) != fastsql.MISSED:
        return None
    for cursor, _run, on_miss in held:
        if cursor.pgresult is None:
            return on_miss() if on_miss is not None else None
    return None


class Unpipelined(Pipeline):
    """The same calls with every statement run at once."""

    sends_together = False

    @contextlib.contextmanager
    def reads(self):
        yield

    def send_writes(self):
        pass

    def guard(self, fast, params, on_miss):
        sent = fast.queue(self._txn, params)
        changed = sent.rowcount
        sent.close()
        if changed != 1:
            raise on_miss()

    def settle(self, committing=None):
        pass

    def abandon(self):
        pass

    def release(self):
        pass


def _begin_command(driver):
    """The BEGIN psycopg would send for ``driver``'s settings."""
    words = ["BEGIN"]
    if driver.isolation_level is not None:
        words.append("ISOLATION LEVEL "
                     + driver.isolation_level.name.replace("_", " "))
    if driver.read_only is not None:
        words.append("READ ONLY" if driver.read_only else "READ WRITE")
    if driver.deferrable is not None:
        words.append("DEFERRABLE" if driver.deferrable
                     else "NOT DEFERRABLE")
    return " ".join(words)


def for_transaction(txn, wanted):
    """The Pipeline of ``txn``: a real one when ``wanted``, its driver
    is psycopg and [placement_database] postgresql_pipeline is on; else
    one that runs everything at once."""
    if (wanted and txn.conn.dialect.driver == "psycopg"
            and txn.store.conf.placement_database.postgresql_pipeline):
        return Pipeline(txn)
    return Unpipelined(txn)
