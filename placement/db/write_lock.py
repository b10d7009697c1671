"""Taking SQLite's write lock without SQLite's long sleeps.

When another connection holds the write lock, SQLite's own busy handler
sleeps 1 ms, then 2, 5, 10, 15 ms and more before it tries again. A
claim holds the lock for a few tenths of a millisecond, so two scheduler
processes on one database lost most of their time asleep behind a lock
that had long been free: with two workers, a third of the BEGIN
IMMEDIATEs waited, p90 1.1 ms and p99 8 ms.

:func:`begin` turns SQLite's handler off on a connection before its
write transactions, and tries BEGIN IMMEDIATE again itself after naps
that start at a twentieth of a millisecond and double up to a
millisecond, for as long as the busy timeout allows; then it raises
SQLite's error, as the handler would. Inside a write transaction no
statement waits for a lock (the writer holds it; WAL readers never block
it). The handler comes back before the connection's next read
transaction, so that reads, migrations and everything else wait as
before; a connection that only ever writes (a scheduler's claims) pays
for neither PRAGMA again.
"""

import sqlite3
import time

FIRST_NAP_S = 0.00005
LONGEST_NAP_S = 0.001
# Key of the connection info: SQLite's busy handler is off.
_HANDLER_OFF = "gantt_busy_handler_off"


def _busy(exc):
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xff == sqlite3.SQLITE_BUSY
    return "locked" in str(exc)


def begin(dbapi_conn, info, write, timeout_s, sleep=time.sleep,
          clock=time.monotonic):
    """BEGIN IMMEDIATE (``write``) or BEGIN on ``dbapi_conn`` (a sqlite3
    connection whose busy timeout is ``timeout_s`` seconds). ``info``:
    a dict that lives as long as the connection (the pool's), where the
    handler's state is kept."""
    if not write:
        if info.get(_HANDLER_OFF):
            dbapi_conn.execute(
                f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
            info[_HANDLER_OFF] = False
        dbapi_conn.execute("BEGIN")
        return
    if not info.get(_HANDLER_OFF):
        dbapi_conn.execute("PRAGMA busy_timeout=0")
        info[_HANDLER_OFF] = True
    deadline = None
    nap = FIRST_NAP_S
    while True:
        try:
            dbapi_conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
            now = clock()
            if deadline is None:
                deadline = now + timeout_s
            elif now >= deadline:
                raise
            sleep(min(nap, max(deadline - now, 0.0)))
            nap = min(nap * 2, LONGEST_NAP_S)
