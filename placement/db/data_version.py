"""Whether anyone else committed to an SQLite database: its own change
counter, ``PRAGMA data_version``, read on a pooled connection.

SQLite moves a connection's data_version whenever another connection
(of this process or any other) commits to the database, and never for
the connection's own commits. A reader that remembers the value it saw
on each connection knows, when it finds the same value again there, that
every commit since its last look came through that very connection: this
process's own writes, which reached the reader at commit through the
store's listeners. Then it need not read the change logs. A value not
seen before on that connection, a new connection, or a last read older
than MAX_AGE_S means read.

The store's contract makes this exact: every write goes through
Store.write, which tells the listeners (placement.db.store). The age
bound is housekeeping, not safety: it keeps the reader's change cursor
close to the log, whose old rows are pruned.
"""

import functools
import itertools
import threading
import time

from placement.db import engine as engine_mod

# Longest a reader goes without reading the change logs.
MAX_AGE_S = 1.0

_readers = itertools.count(1)


class DataVersionWatch:
    """One reader's view of one SQLite database's data_version (each
    reader keeps its own: two schedulers on one store each need their
    own read after another process's commit)."""

    def __init__(self, engine, max_age=MAX_AGE_S, clock=time.monotonic,
                 connection=None):
        self.engine = engine
        # Gives the DBAPI connection to ask (a context manager, as
        # Store.raw_connection); default: one from the engine's pool.
        self._connection = connection or functools.partial(
            engine_mod.raw_connection, engine)
        self.max_age = max_age
        self._clock = clock
        # Where this reader keeps, on each pooled connection's record,
        # the value it saw there last (the record goes with the DBAPI
        # connection: a new connection starts with nothing seen).
        self._key = ("gantt-data-version", next(_readers))
        self._last_read = None
        self._failed = False
        self._lock = threading.Lock()

    def begin_read(self):
        """Whether the reader must read the database now; if so, what it
        saw so far counts as read."""
        with self._connection() as conn:
            version = conn.driver_connection.execute(
                "PRAGMA data_version").fetchone()[0]
            seen = conn.info.get(self._key)
            conn.info[self._key] = version
        now = self._clock()
        with self._lock:
            fresh = (self._last_read is not None
                     and now - self._last_read < self.max_age)
            if seen == version and fresh and not self._failed:
                return False
            self._failed = False
            self._last_read = now
            return True

    def read_failed(self):
        """The read begin_read asked for did not happen."""
        with self._lock:
            self._failed = True


def open_watch(engine, connection=None):
    """A DataVersionWatch for an SQLite engine (asking on the DBAPI
    connections ``connection`` gives, when given); None for other
    engines."""
    if engine.dialect.name != "sqlite":
        return None
    return DataVersionWatch(engine, connection=connection)
