"""PostgreSQL's own announcements of commits: LISTEN/NOTIFY.

Migration 0004 gives each change log table (provider_changes,
host_changes) a statement trigger that raises a notification on channel
``gantt_changes``. PostgreSQL delivers it when, and only if, the writing
transaction commits, to every session of the database that LISTENs, and
names the backend (pid) that wrote. A store on PostgreSQL keeps one such
session, in a thread of its own, once a reader asks for a watch
(Store.open_watches). A reader then skips the change-log read before a
decision while no other process committed, as with a Redis change feed
(placement.db.change_feed), without Redis and without a message of our
own: the notification travels with the commit.

Commits through this store's own connections are not news: they reached
its caches at commit through the store's listeners. The store tells the
listener which backends it writes through (wrote_through); a connection
that closes or is invalidated leaves that set, so that a pid PostgreSQL
gives to another backend later is news again. A pid not known counts as
another process's: at worst one read too many.

While the session is not listening (starting, or the database away)
every decision reads, as without it; a read older than max_age is done
whatever the notifications say, which covers a notification lost with a
connection dropped between a commit and its delivery.
"""

import logging
import threading
import time

import sqlalchemy as sa

from placement.db import announcements

LOG = logging.getLogger(__name__)

CHANNEL = "gantt_changes"
# How long the session waits for a notification before it looks whether
# it was told to stop (what closing the store may wait); and between two
# attempts to reach the database.
_POLL_S = 0.05
_RETRY_S = 1.0
# Where a pooled connection's record keeps its backend pid once known.
_PID_KEY = "gantt-backend-pid"


class CommitListener(announcements.Announcements):
    """One store's LISTEN session and the backends it writes through."""

    def __init__(self, engine, max_age, clock=time.monotonic, connect=None):
        super().__init__(max_age, clock)
        self._engine = engine
        self._connect = connect or (lambda: _listen_connection(engine))
        # Backend pids of this store's connections that wrote.
        self._own = set()
        self._stop = threading.Event()
        self._thread = None
        self._start_lock = threading.Lock()
        self._outage = False
        for name in ("close", "detach", "invalidate"):
            sa.event.listen(engine, name, self._forget)

    # -- the store's side -----------------------------------------------

    def watch(self):
        """A Watch for one reader; the session starts with the first."""
        with self._start_lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._listen, daemon=True,
                    name="gantt-pg-listen")
                self._thread.start()
        return super().watch()

    def wrote_through(self, conn):
        """The store writes on ``conn`` (a Connection of its engine):
        notifications of that backend are its own."""
        info = conn.connection.info
        pid = info.get(_PID_KEY)
        if pid is None:
            pid = info[_PID_KEY] = conn.connection.driver_connection \
                .info.backend_pid
        self._own.add(pid)

    def close(self):
        self._stop.set()
        with self._start_lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout=5)
        for name in ("close", "detach", "invalidate"):
            if sa.event.contains(self._engine, name, self._forget):
                sa.event.remove(self._engine, name, self._forget)

    def _forget(self, dbapi_conn, record, *rest):
        if record is not None:
            self._own.discard(record.info.get(_PID_KEY))

    # -- the thread -------------------------------------------------------

    def _listen(self):
        while not self._stop.is_set():
            conn = None
            try:
                conn = self._connect()
                conn.execute("LISTEN " + CHANNEL)
                if self._outage:
                    LOG.info("PostgreSQL notifications are back")
                self._outage = False
                self._joined()
                while not self._stop.is_set():
                    for note in conn.notifies(timeout=_POLL_S):
                        if note.pid not in self._own:
                            self._heard()
            except Exception as exc:
                if not self._outage:
                    LOG.warning("cannot LISTEN on PostgreSQL (%s: %s); "
                                "reading the change logs before every "
                                "decision until it can",
                                type(exc).__name__, exc)
                self._outage = True
            finally:
                self._lost()
                if conn is not None:
                    try:
                        conn.close()
                    except Exception:
                        pass
            self._stop.wait(_RETRY_S)


def _listen_connection(engine):
    """A psycopg connection of its own (outside the pool), in autocommit:
    notifications reach a session only between transactions."""
    cargs, cparams = engine.dialect.create_connect_args(engine.url)
    cparams.setdefault("connect_timeout", 5)
    conn = engine.dialect.loaded_dbapi.connect(*cargs, **cparams)
    conn.autocommit = True
    return conn


def open_listener(conf, engine):
    """A CommitListener for a PostgreSQL engine on psycopg with
    [placement_database] postgresql_listen set; None otherwise."""
    db = conf.placement_database
    if (engine.dialect.name != "postgresql"
            or engine.dialect.driver != "psycopg"
            or not db.postgresql_listen):
        return None
    return CommitListener(engine, db.change_feed_max_age)
