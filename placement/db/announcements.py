"""Announcements of other processes' commits, whoever brings them (a
Redis change feed: placement.db.change_feed; PostgreSQL's NOTIFY:
placement.db.pg_listen), and each reader's watch on them.

A reader of the change logs may skip its read when the bringer is
connected (``subscribed``), nothing was announced since its last read,
and that read is younger than ``max_age``. Joining or losing the
connection counts as an announcement: anything in between was missed.
"""

import threading
import time
import weakref


class Announcements:
    """The state both bringers share: whether they are connected, and
    which readers' watches an announcement concerns."""

    def __init__(self, max_age, clock=time.monotonic):
        self.max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._subscribed = False
        self._changed = True
        self._watches = weakref.WeakSet()  # of each reader's Watch

    def watch(self):
        """A Watch for one reader (each reader needs its own: one
        reader's read does not bring another's cache up to date)."""
        watch = Watch(self)
        with self._lock:
            self._watches.add(watch)
        return watch

    @property
    def announced(self):
        """Whether another process announced a commit (or the bringer
        (re)joined) since a reader last read."""
        with self._lock:
            return self._changed

    @property
    def subscribed(self):
        with self._lock:
            return self._subscribed

    def _joined(self):
        """Connected (again): what happened before is unknown, read."""
        with self._lock:
            self._subscribed = True
            self._mark_changed()

    def _heard(self):
        """Another process committed."""
        with self._lock:
            self._mark_changed()

    def _lost(self):
        with self._lock:
            self._subscribed = False
            self._mark_changed()

    def _mark_changed(self):
        # The caller holds the lock.
        self._changed = True
        for watch in self._watches:
            watch.changed = True


class Watch:
    """One reader's end of an Announcements: whether it must read now."""

    def __init__(self, source):
        self.source = source
        self.changed = True  # guarded by the source's lock
        self._last_read = None

    def begin_read(self):
        """Whether the reader must read the database now; if so the
        announcements so far count as read (one arriving during the read
        makes the next call say yes again)."""
        source = self.source
        now = source._clock()
        with source._lock:
            fresh = (self._last_read is not None
                     and now - self._last_read < source.max_age)
            if source._subscribed and not self.changed and fresh:
                return False
            self.changed = False
            source._changed = False
            self._last_read = now
            return True

    def read_failed(self):
        """The read begin_read asked for did not happen."""
        with self.source._lock:
            self.changed = True
