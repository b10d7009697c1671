"""A write transaction's statements sent together: psycopg's pipeline mode.

Outside pipeline mode psycopg sends a statement and waits for its
result, so a claim on PostgreSQL pays a round trip per statement: eight
with BEGIN and COMMIT. On a machine whose cores the database shares with
its clients each round trip also costs two wake-ups. In pipeline mode
psycopg sends statements without waiting for their results, and a sync
brings every result back at once ([placement_database]
postgresql_pipeline turns the mode off).

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
  ``Fast.queue`` and reads back after the block (one round trip);
- ``txn.pipeline.send_writes()`` before writes whose results matter only
  before COMMIT; a write guarded by a compare-and-set hands its check to
  ``check_later``. The store settles the pipeline after the change-log
  rows are sent: one round trip for all of it, then the checks, then
  COMMIT.

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
        # While a phase runs: the statements held, (cursor, (sql, args)).
        self.holding = False
        self._held = []
        self._checks = []
        self._began = False  # BEGIN went with the first phase

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

    def hold(self, cursor, run):
        """Keep ``cursor.execute(*run)`` for the phase's end."""
        self._held.append((cursor, run))

    def flush(self):
        """Send what is held now (a statement must run at once), and
        hold what follows."""
        self._send()
        self._hold()

    def check_later(self, check):
        """Run ``check()`` once the results of the statements sent so
        far are in (it raises when a guarded write missed its row)."""
        if not self.holding:
            check()
        else:
            self._checks.append(check)

    def settle(self):
        """Bring back every result, then run the checks, in order."""
        if self.holding:
            self._send()
        checks, self._checks = self._checks, []
        for check in checks:
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
        for cursor, _run in held:
            cursor.close()

    def _send(self):
        """Send BEGIN if due and the statements held, in one pipeline,
        and sync."""
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
                for cursor, run in held:
                    cursor.execute(*run)
        except self._txn.conn.dialect.loaded_dbapi.Error as exc:
            raise fastsql.driver_error(self._txn, exc, "(pipeline sync)",
                                       None) from exc


class Unpipelined(Pipeline):
    """The same calls with every statement run at once."""

    sends_together = False

    @contextlib.contextmanager
    def reads(self):
        yield

    def send_writes(self):
        pass

    def settle(self):
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
