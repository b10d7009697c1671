"""SQLite WAL checkpoints from a thread of their own.

In WAL mode SQLite copies the log back into the database file (a
checkpoint, with an fsync of both files) inside whichever commit pushes
the log past 1,000 pages: that commit, a claim in the middle of a
decision, then takes 15-20 ms instead of one. With
[placement_database] sqlite_checkpoint_every set, the store's
connections turn that off (``PRAGMA wal_autocheckpoint=0``) and this
thread checkpoints instead, after that many of the store's commits, or
a second after the last one, on a connection of its own. SQLite runs a
checkpoint without Python's global lock, so it uses the other core while
decisions go on.

Each checkpoint is a PASSIVE one, which copies the log while readers
and writers carry on. Once the log holds RESTART_FRAMES frames, a
RESTART one follows: it copies what commits added meanwhile and has the
next writer start the log over from its beginning; without it,
checkpoints running beside a busy writer leave the log growing for ever
(and every page lookup slower). RESTART holds new writers back while it
runs (4-7 ms under a scheduler's claims, with its fsync), so it runs
only that often, and waits at most RESTART_WAIT_S for readers to finish,
otherwise leaving the restart for the next time.

Several processes on one file each checkpoint after their own commits;
one that finds another's checkpoint running tries again later.
"""

import logging
import sqlite3
import threading

LOG = logging.getLogger(__name__)

# A checkpoint at most this long after the last commit it has not
# covered, however few commits there were.
IDLE_S = 1.0
# The longest a RESTART checkpoint waits for readers (writers wait as
# long behind it).
RESTART_WAIT_S = 0.01
# The log size (in pages) from which checkpoints also restart it: one
# block of SQLite's log index, 16 MB with 4 KB pages. At 5,000 hosts,
# restarting at every checkpoint (each 100 claims, 1,300 frames) held
# claims back 4-7 ms each time; from 5,000 frames, decisions/s rose 8-11%
# and p99 fell from 8.2-8.8 ms to 5.0-5.5 ms.
RESTART_FRAMES = 4096


class Checkpointer:
    """Background checkpoints of one SQLite file's write-ahead log."""

    def __init__(self, path, every, uri=False,
                 restart_frames=RESTART_FRAMES):
        self.path = path
        self.uri = uri
        self.every = every
        self.restart_frames = restart_frames
        self.checkpoints = 0  # completed, for tests and figures
        self._pending = 0  # commits not covered by a checkpoint yet
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = None
        self._conn = None  # the thread's own connection

    def committed(self):
        """A commit of the store (call after it)."""
        with self._lock:
            self._pending += 1
            if self._thread is None and not self._stop.is_set():
                # Started with the first commit: a store that only reads
                # needs no thread.
                self._thread = threading.Thread(
                    target=self._run, daemon=True,
                    name="gantt-sqlite-checkpoint")
                self._thread.start()
            if self._pending >= self.every:
                self._wake.set()

    def close(self):
        """Stop the thread, checkpointing what is left first."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._stop.set()
        self._wake.set()
        if thread is not None:
            thread.join(timeout=30)

    def _run(self):
        try:
            while True:
                self._wake.wait(IDLE_S)
                self._wake.clear()
                stopping = self._stop.is_set()
                with self._lock:
                    pending, self._pending = self._pending, 0
                if pending:
                    self.checkpoint()
                if stopping:
                    return
        finally:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def checkpoint(self):
        """Checkpoint now (from the thread); whether the log was copied
        whole (and, when it had grown to restart_frames, started
        over)."""
        try:
            if self._conn is None:
                self._conn = sqlite3.connect(
                    self.path, uri=self.uri, isolation_level=None,
                    timeout=RESTART_WAIT_S, check_same_thread=False)
            conn = self._conn
            busy, log, copied = conn.execute(
                "PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if log >= self.restart_frames:
                busy, log, copied = conn.execute(
                    "PRAGMA wal_checkpoint(RESTART)").fetchone()
        except sqlite3.Error as exc:
            # Another process's checkpoint, or a locked database: the
            # next commits bring another try.
            LOG.debug("SQLite checkpoint skipped: %s", exc)
            with self._lock:
                self._pending += 1
            return False
        self.checkpoints += 1
        return not busy and copied >= log


def open_checkpointer(conf, engine):
    """A Checkpointer for this store's engine, or None (not SQLite, in
    memory, or sqlite_checkpoint_every is 0: then SQLite checkpoints in
    commits, as placement.db.engine leaves it)."""
    every = conf.placement_database.sqlite_checkpoint_every
    if engine.dialect.name != "sqlite" or not every:
        return None
    url = engine.url
    if url.database in (None, "", ":memory:"):
        return None
    uri = str(url.query.get("uri", "")).lower() in ("true", "1")
    return Checkpointer(url.database, every, uri=uri)
