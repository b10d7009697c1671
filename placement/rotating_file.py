"""An append-only file of lines that bounds itself: what the traffic
recording ([recording], rpc.recorder) and the decision log
([decision_log], scheduler.decision_log) write into.

- Lines go to a buffered file; a background thread writes the buffer
  out every ``flush_interval`` seconds (no fsync), and close() writes
  what is left.
- Every file starts with a header line (the writer's: what the file is),
  and so does a file a restarted writer appends to.
- Size: at ``max_bytes`` the file is rotated as logging's
  RotatingFileHandler does (PATH.1 the newest backup, ``backup_count`` of
  them kept; with none, the file starts again).
- Age (``max_age`` seconds, 0: none): the file is rotated as well once
  its first line is ``max_age / 2`` old, and an existing file is rotated
  before a new writer appends to it; removing old backups is the
  owner's (``on_rotate`` is called after each rotation), as only it
  knows which files of a directory are its own kind.
- A write that fails is logged once per run of failures (``messages``:
  the line for the failure and the line for the recovery, each with the
  path and, for the failure, the error) and dropped: the caller goes on.

The caller may hold :attr:`lock` to keep lines in an order of its own
(a clock read and the write, atomically); :meth:`write_locked` then
appends under it. A caller that writes a line at a time on a busy path
(the decision log, a line a decision) may :meth:`add` them instead:
queued, and written a batch at a time.
"""

import collections
import os
import threading
import time

# Big enough that a write is rarely a system call.
BUFFER_BYTES = 256 * 1024
# Lines add() queues before the thread that adds the last writes them.
QUEUED_LINES = 64


class RotatingFile:
    """Appends lines (bytes ending in a newline) to ``path``;
    thread-safe."""

    def __init__(self, path, header, log, messages, max_bytes=0,
                 backup_count=0, flush_interval=1.0, max_age=0.0,
                 on_rotate=None, wall=time.time, thread_name="gantt-flush"):
        self.path = os.fspath(path)
        self.max_bytes = max_bytes
        self.backup_count = backup_count
        self.max_age = max_age
        self.lock = threading.Lock()
        self._header = header + b"\n"
        self._log = log
        self._failing_line, self._again_line = messages
        self._on_rotate = on_rotate
        self._wall = wall
        self._file = None
        self._opened = False
        self._size = 0
        # Wall time of the file's first line after its header (None:
        # none yet); with max_age, what its age is counted from.
        self._born = None
        self._dirty = False
        self._failing = False
        # Lines add()ed, not written yet (appended and taken without the
        # lock: a deque's ends are safe from several threads).
        self._queued = collections.deque()
        self._closed = threading.Event()
        self._flusher = threading.Thread(
            target=self._flush_every, args=(flush_interval,),
            name=thread_name, daemon=True)
        self._flusher.start()

    def write(self, line):
        with self.lock:
            self.write_locked(line)

    def write_locked(self, line):
        """Append ``line`` (after the lines queued before it); the
        caller holds :attr:`lock`."""
        if self._queued:
            self._write_queued()
        self._write([line], len(line))

    def add(self, line, now=None):
        """Append ``line`` soon: queued (but the first), and written with
        the lines queued before it once QUEUED_LINES wait, at the next
        flush (every flush_interval) or at close. Lines keep the order
        they were added in, and with write()'s, and a line's age counts
        from when it was added (``now``: the caller's read of the same
        wall clock, if it has one). Cheaper than write() on a caller's
        busy path: a batch is written at once, its checks made once,
        while the file's code is in the processor's caches."""
        queued = self._queued
        if not self.max_age:
            now = None  # no age to count
        elif now is None:
            now = self._wall()
        queued.append((line, now))
        # The first line at once: the file (and its directory) is there
        # from the writer's first line on, as with write().
        if len(queued) >= QUEUED_LINES or not self._opened:
            with self.lock:
                self._write_queued()

    def _write_queued(self):
        # Under the lock. Lines added meanwhile wait for the next batch;
        # another thread may have written this one already.
        queued = self._queued
        batch = [queued.popleft() for _ in range(len(queued))]
        if not batch:
            return
        first, last = batch[0][1], batch[-1][1]
        lines = [line for line, _ in batch]
        size = sum(map(len, lines))
        born = first if self._born is None else self._born
        if (self.max_bytes and self._size + size > self.max_bytes) \
                or (last is not None and last - born > self.max_age / 2):
            for line, added in batch:  # a rotation falls among them
                self._write([line], len(line), added)
        else:
            self._write(lines, size, first)

    def _write(self, lines, size, now=None):
        try:
            self._append(lines, size, now)
        except OSError as exc:
            self._failed(exc)

    def _append(self, lines, size, now=None):
        # ``size``: of all ``lines``; ``now``: when the first was added
        # (None: now).
        if self._file is None:
            self._open(first=not self._opened)
        if self._full(size) or self._old(now):
            self._rotate()
        self._file.writelines(lines)
        self._size += size
        self._dirty = True
        if self._born is None:
            self._born = self._wall() if now is None else now
        if self._failing:
            self._log.info(self._again_line, self.path)
            self._failing = False

    def _full(self, adding):
        return bool(self.max_bytes) and \
            self._size + adding > self.max_bytes and \
            self._size > len(self._header)

    def _old(self, now=None):
        if not self.max_age or self._born is None:
            return False
        return (self._wall() if now is None else now) - self._born > \
            self.max_age / 2

    def _open(self, first=False):
        directory = os.path.dirname(self.path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if first and self.max_age and _has_lines(self.path):
            # Another writer's, of unknown age: it goes with the backups.
            self._shift()
        self._opened = True
        self._file = open(self.path, "ab", buffering=BUFFER_BYTES)
        # A header in every file, and after every restart that appends:
        # the reader knows a new writer started.
        self._file.write(self._header)
        self._size = self._file.tell()
        self._born = None

    def _rotate(self):
        self._file.close()
        self._file = None
        self._shift()
        self._open()

    def _shift(self):
        try:
            if self.backup_count == 0:
                os.remove(self.path)
            else:
                for n in range(self.backup_count - 1, 0, -1):
                    older = f"{self.path}.{n}"
                    if os.path.exists(older):
                        os.replace(older, f"{self.path}.{n + 1}")
                os.replace(self.path, f"{self.path}.1")
        except FileNotFoundError:
            pass  # removed meanwhile (by an age sweep): nothing to keep
        if self._on_rotate is not None:
            self._on_rotate()

    def _failed(self, exc):
        # Once per run of failures: a full disk must not flood the log.
        if not self._failing:
            self._log.error(self._failing_line, self.path, exc)
            self._failing = True
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None

    def flush(self):
        with self.lock:
            if self._queued:
                self._write_queued()
            if self._file is not None and self._dirty:
                try:
                    self._file.flush()
                except OSError as exc:
                    self._failed(exc)
                self._dirty = False

    def _flush_every(self, interval):
        while not self._closed.wait(interval):
            self.flush()

    def close(self):
        """Write out what is buffered and close the file."""
        self._closed.set()
        self.flush()
        with self.lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def _has_lines(path):
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return False
