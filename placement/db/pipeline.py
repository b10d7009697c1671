"""A write transaction's statements sent together: psycopg's pipeline mode.

Outside pipeline mode psycopg sends a statement and waits for its
result, so a claim on PostgreSQL pays a round trip per statement: eight
with BEGIN and COMMIT. On a machine whose cores the database shares with
its clients each round trip also costs two wake-ups. In pipeline mode
psycopg sends statements without waiting for their results, and a sync
brings every result back at once; it still writes each statement to the
socket as it is executed, which on saturated cores costs wake-ups of its
own ([placement_database] postgresql_pipeline turns the mode off).

psycopg syncs after the BEGIN it sends itself, a round trip of its own.
When the transaction has sent nothing before its first phase, the
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

Only statements run through ``fastsql`` may be sent inside a phase:
SQLAlchemy reads a result as soon as it executes, before pipeline mode
has it. Elsewhere (SQLite, MySQL, or a writer that did not opt in) the
same calls run each statement at once and each check right away, so one
code path serves every engine.
"""

import contextlib
import sys

from placement.db import fastsql


class Pipeline:
    """Pipeline mode for the phases of one write transaction on
    ``conn`` (a SQLAlchemy Connection on psycopg)."""

    # Whether statements sent in a phase travel together (callers may
    # then read more at once than they would one round trip at a time).
    sends_together = True

    def __init__(self, txn):
        self._txn = txn
        self._open = None  # psycopg's Pipeline while a phase runs
        self._checks = []
        self._began = False  # BEGIN went with the first phase

    @contextlib.contextmanager
    def reads(self):
        """Send the block's statements together; their results are in
        when the block ends."""
        self._enter()
        try:
            yield
        except BaseException:
            self._abandon()
            raise
        self._close()

    def send_writes(self):
        """Send the statements from here to settle() together."""
        if self._open is None:
            self._enter()

    def check_later(self, check):
        """Run ``check()`` once the results of the statements sent so
        far are in (it raises when a guarded write missed its row)."""
        if self._open is None:
            check()
        else:
            self._checks.append(check)

    def settle(self):
        """Bring back every result, then run the checks, in order."""
        if self._open is not None:
            self._close()
        checks, self._checks = self._checks, []
        for check in checks:
            check()

    def abandon(self):
        """Leave pipeline mode after a failure; the transaction rolls
        back."""
        self._checks = []
        if self._open is not None:
            self._abandon()

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

    def _enter(self):
        from psycopg import pq  # an optional dependency (gantt[postgres])

        driver = self._txn.conn.connection.driver_connection
        begin = None
        if (not self._began and not driver.autocommit
                and driver.pgconn.transaction_status
                == pq.TransactionStatus.IDLE):
            driver.autocommit = True
            self._began = True
            begin = _begin_command(driver)
        self._open = driver.pipeline()
        self._open.__enter__()
        if begin is not None:
            driver.execute(begin, prepare=False)

    def _close(self):
        opened, self._open = self._open, None
        try:
            opened.__exit__(None, None, None)
        except self._txn.conn.dialect.loaded_dbapi.Error as exc:
            raise fastsql.driver_error(self._txn, exc, "(pipeline sync)",
                                       None) from exc

    def _abandon(self):
        opened, self._open = self._open, None
        # psycopg logs, rather than raises, what the sync finds now.
        opened.__exit__(*sys.exc_info())


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
