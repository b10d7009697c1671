"""Riding out a database that restarts or fails over.

A connection-level error (the server closed the connection, shut down,
is starting up or refused it; MySQL's "gone away" and "lost
connection") says nothing about the statements sent before it: the
store runs the whole transaction again on a new connection, waiting a
little longer each time, for as long as ``[placement_database]
max_retries`` and the intervals allow (oslo.db's names and meanings).
What is safe to run again is the store's business (placement.db.store):
any read, and a write that is known not to have committed.
"""

import logging
import time

import sqlalchemy as sa

LOG = logging.getLogger(__name__)

# PostgreSQL SQLSTATEs: class 08 (connection exception), and the server
# shutting down, crashing or starting up.
_PG_STATES = ("57P01", "57P02", "57P03")
# MySQL / MariaDB client and server error numbers of a connection that
# is gone or cannot be made: can't connect (2002, 2003), server gone
# away (2006), lost connection (2013, 2055), server shutting down
# (1053), connection killed (1927), idle connection closed (4031).
_MYSQL_CODES = (2002, 2003, 2006, 2013, 2055, 1053, 1927, 4031)


def is_connection_error(exc, backend, dbapi=None):
    """Whether ``exc`` is the connection to the database failing rather
    than a statement: an SQLAlchemy DBAPIError, or the driver's own
    error (module ``dbapi``), which a few SQLAlchemy paths let through
    unwrapped (setting an isolation level on a dead connection)."""
    if isinstance(exc, sa.exc.DBAPIError):
        if getattr(exc, "connection_invalidated", False):
            return True
        orig = getattr(exc, "orig", None)
    elif dbapi is not None and isinstance(exc, dbapi.Error):
        orig = exc
    else:
        return False
    if backend == "postgresql":
        state = getattr(orig, "sqlstate", None) or getattr(
            orig, "pgcode", None)
        if state is None:
            # No SQLSTATE: the client could not reach a server at all.
            return type(orig).__name__ == "OperationalError"
        return state.startswith("08") or state in _PG_STATES
    if backend == "mysql":
        args = getattr(orig, "args", None) or ()
        # PyMySQL's InterfaceError(0, ''): the connection was closed.
        return bool(args) and (args[0] in _MYSQL_CODES or (
            args[0] == 0 and type(orig).__name__ == "InterfaceError"))
    return False


_DRIVERS = {"psycopg": "postgresql", "psycopg2": "postgresql",
            "pymysql": "mysql", "MySQLdb": "mysql"}


def database_unreachable(exc):
    """Whether ``exc``, from whichever database, is a lost connection
    (for callers that know no backend: the API answers 503 then)."""
    orig = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
    backend = _DRIVERS.get(type(orig).__module__.split(".")[0])
    if backend is None:
        return False
    if isinstance(exc, sa.exc.DBAPIError):
        return is_connection_error(exc, backend)
    return is_connection_error(sa.exc.DBAPIError(None, None, orig),
                               backend)


class Backoff:
    """The waits between tries after connection errors: ``interval``,
    doubling (``increase``) up to ``max_interval``, at most ``tries``
    times (-1: without end)."""

    def __init__(self, tries, interval, increase=True, max_interval=10.0,
                 sleep=time.sleep, dbapi=None):
        self.dbapi = dbapi
        self.tries = tries
        self.interval = interval
        self.increase = increase
        self.max_interval = max_interval
        self._sleep = sleep

    @classmethod
    def from_conf(cls, conf, sleep=time.sleep, dbapi=None):
        db = conf.placement_database
        return cls(db.max_retries, db.retry_interval,
                   db.db_inc_retry_interval, db.db_max_retry_interval,
                   sleep=sleep, dbapi=dbapi)

    def lost(self, exc, backend):
        """Whether ``exc`` is a lost connection (is_connection_error)."""
        return is_connection_error(exc, backend, self.dbapi)

    def waits(self):
        """The seconds to wait before each new try, as long as tries are
        left."""
        interval, done = self.interval, 0
        while self.tries < 0 or done < self.tries:
            yield interval
            done += 1
            if self.increase:
                interval = min(interval * 2, self.max_interval)

    def run(self, attempt, backend, what):
        """``attempt()``, tried again after each connection error while
        waits are left; the last error is raised."""
        waits = self.waits()
        failed = 0
        while True:
            try:
                result = attempt()
            except Exception as exc:
                if not self.lost(exc, backend):
                    raise
                wait = next(waits, None)
                if wait is None:
                    LOG.error("Database still unreachable after %d "
                              "tries (%s); giving up", failed + 1, what)
                    raise
                failed += 1
                if failed == 1:
                    LOG.warning("Database connection lost (%s): %s; "
                                "trying again", what, first_line(exc))
                self._sleep(wait)
                continue
            if failed:
                LOG.info("Database reachable again after %d retries (%s)",
                         failed, what)
            return result


def first_line(exc):
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
