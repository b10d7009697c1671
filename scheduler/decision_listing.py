"""The records ``gantt-manage decisions list`` and ``show`` show, found
without decoding the whole log.

A process's log at its default bounds ([decision_log] max_bytes 64 MB,
backup_count 8) holds about 470,000 records, and a host runs a process
a worker: decoding them all to list a few took minutes of CPU and
gigabytes of memory. Here a record is decoded only when it may be
shown:

- its time is read from the start of its line (the writer puts
  ``time`` first; a line that does not start so is decoded);
- with ``since``, files last written before then are not read (a
  record is written after its time is taken, so a file's
  modification time is never before its last record's);
- ``needles`` (bytes) must all be in the line before it is decoded to
  be checked with ``keep``, and the file is searched for the first (a
  loop over every line in Python costs more than the rest); with
  ``raw``, ``keep`` checks the record as its line holds it (orjson's
  loads, a quarter of decode's cost: the columns are not worked out);
- what is selected is kept as (time, file, offset): the newest
  ``limit`` of them, or all, are decoded once more to be shown.

Files are all opened before any is read, and stay open until the
records are loaded, so that a rotation meanwhile (which renames them)
moves nothing under the reader; a file met under two names is read
once.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

import orjson

from scheduler import decision_log

_TIME = b'{"time":'
# Leeway for a file's modification time against ``since``: a log on a
# file system whose clock is not the writers' (NFS).
MTIME_SLACK_S = 300.0


class Selection(contextlib.AbstractContextManager):
    """Records of a directory's decision log, oldest first, each read
    when iterated; a context manager (the files it holds open).
    ``files``: (open file, its header) by file number; ``entries``:
    (time, file number, offset) of each record, in the order to be
    shown."""

    def __init__(self, files: list[tuple[IO[bytes], dict[str, Any]]]
                 ) -> None:
        self._files = files
        self.entries: list[tuple[float, int, int]] = []

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for _, number, offset in self.entries:
            f, header = self._files[number]
            f.seek(offset)
            found = _decoded(f.readline())
            if found is None:
                continue  # damaged after its time: passed over
            found["scheduler"] = header.get("scheduler")
            found["pid"] = header.get("pid")
            yield found

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        for f, _ in self._files:
            f.close()
        self._files = []


def select(directory: str, since: float | None = None,
           needles: Sequence[bytes] = (),
           keep: Callable[[dict[str, Any]], bool] | None = None,
           limit: int = 0, raw: bool = False) -> Selection:
    """The records of ``directory``'s decision log made at ``since`` or
    later, whose lines hold every one of ``needles`` and that ``keep``
    keeps (a test on the decoded record, or with ``raw`` on the record
    as written); the newest ``limit`` (0: all), oldest first. Raises
    decision_log.LogReadError when there is no log directory."""
    decision_log.check_directory(directory)
    # Every file opened before any is read: a writer that rotates
    # meanwhile (renaming each to the next backup's name) then moves no
    # records out of reach, and a file met under two names is read once.
    files: list[tuple[IO[bytes], dict[str, Any]]] = [
        (f, {}) for f in _open(decision_log.files(directory), since)]
    selection = Selection(files)
    try:
        entries = selection.entries
        for number, (f, header) in enumerate(files):
            before = len(entries)
            _scan(f, number, header, entries, since, needles, keep,
                  _loaded if raw else _decoded)
            if len(entries) == before:
                f.close()  # nothing of it to load: keep no descriptor
        entries.sort()
        if limit and len(entries) > limit:
            del entries[:len(entries) - limit]
    except BaseException:
        selection.close()
        raise
    return selection


def _open(paths: list[str], since: float | None) -> list[IO[bytes]]:
    """``paths`` opened (kept open until the Selection is closed), but
    those last written before ``since``, those gone, and a file already
    opened under another name."""
    opened: list[IO[bytes]] = []
    seen = set()
    try:
        for path in paths:
            try:
                f = open(path, "rb")
            except FileNotFoundError:
                continue  # rotated or removed while the list was read
            stat = os.fstat(f.fileno())
            if (stat.st_dev, stat.st_ino) in seen or (
                    since is not None
                    and stat.st_mtime < since - MTIME_SLACK_S):
                f.close()
                continue
            seen.add((stat.st_dev, stat.st_ino))
            opened.append(f)
    except BaseException:
        for f in opened:
            f.close()
        raise
    return opened


def _scan(f: IO[bytes], number: int, header: dict[str, Any],
          entries: list[tuple[float, int, int]], since: float | None,
          needles: Sequence[bytes],
          keep: Callable[[dict[str, Any]], bool] | None,
          read: Callable[[bytes], dict[str, Any] | None]) -> None:
    # ``read``: a line's record as ``keep`` tests it.
    if needles:
        _scan_for(f, number, header, entries, since, needles, keep, read)
        return
    offset = 0
    for line in f:
        at, offset = offset, offset + len(line)
        if line.startswith(decision_log.HEADER_START):
            _read_header(line, header)
            continue
        if line.endswith(b"\n"):  # else cut short (a crash meanwhile)
            _select_line(line, at, number, entries, since, keep, read)


def _scan_for(f: IO[bytes], number: int, header: dict[str, Any],
              entries: list[tuple[float, int, int]], since: float | None,
              needles: Sequence[bytes],
              keep: Callable[[dict[str, Any]], bool] | None,
              read: Callable[[bytes], dict[str, Any] | None]) -> None:
    """_scan's lines that hold every one of ``needles``, found by
    searching the whole file for the first (memchr's speed, where
    Python's loop over every line takes a second a 300 MB)."""
    if os.fstat(f.fileno()).st_size == 0:
        return
    with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        # The records are shown with the file's last header (a writer
        # restarted on the file appends one), as _scan's loop does.
        start = data.rfind(b"\n" + decision_log.HEADER_START) + 1
        if start or data[:len(decision_log.HEADER_START)] == \
                decision_log.HEADER_START:
            end = data.find(b"\n", start)
            _read_header(data[start:] if end < 0 else data[start:end],
                         header)
        first, others = needles[0], needles[1:]
        at = 0
        while (hit := data.find(first, at)) >= 0:
            start = data.rfind(b"\n", 0, hit) + 1
            end = data.find(b"\n", hit)
            if end < 0:
                return  # the last line, cut short
            at = end + 1
            line = data[start:at]
            if line.startswith(decision_log.HEADER_START) or not all(
                    n in line for n in others):
                continue
            _select_line(line, start, number, entries, since, keep, read)


def _read_header(line: bytes, header: dict[str, Any]) -> None:
    with contextlib.suppress(orjson.JSONDecodeError):
        header.clear()
        header.update(orjson.loads(line))


def _select_line(line: bytes, at: int, number: int,
                 entries: list[tuple[float, int, int]], since: float | None,
                 keep: Callable[[dict[str, Any]], bool] | None,
                 read: Callable[[bytes], dict[str, Any] | None]) -> None:
    """The record of ``line`` (at offset ``at``) to ``entries`` when it
    was made at ``since`` or later and ``keep`` keeps it."""
    found = None
    when = _time(line)
    if when is None:
        found = read(line)
        if found is None:
            return
        when = found.get("time") or 0.0
    if since is not None and when < since:
        return
    if keep is not None:
        if found is None:
            found = read(line)
        if found is None or not keep(found):
            return
    entries.append((when, number, at))


def _decoded(line: bytes) -> dict[str, Any] | None:
    """The record of ``line``, or None when it is not one."""
    try:
        return decision_log.decode(line)
    except orjson.JSONDecodeError:
        return None


def _loaded(line: bytes) -> dict[str, Any] | None:
    """The record of ``line`` as written, or None when it is not
    one."""
    try:
        found = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return found if isinstance(found, dict) else None


def _time(line: bytes) -> float | None:
    """The time at the start of a record's line, or None when it is
    not there (or not a number)."""
    if not line.startswith(_TIME):
        return None
    end = line.find(b",", len(_TIME))
    try:
        return float(line[len(_TIME):end])
    except ValueError:
        return None


def of_instance(directory: str, instance: str) -> list[dict[str, Any]]:
    """The records of the decisions about ``instance`` (a uuid as
    str(UUID) gives it), oldest first."""
    with select(directory, needles=[whole(instance)], raw=True,
                keep=lambda r: instance in (r.get("instances") or ())
                ) as found:
        return list(found)


def whole(text: str) -> bytes:
    """``text`` as a whole JSON string in a record's line, quotes
    included: a longer name that holds it (host1 in host12) does not
    match."""
    return orjson.dumps(text)
