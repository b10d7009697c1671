"""One benchmark run at a time on a database given with ``--db``.

The benchmarks that take ``--db`` wipe that database and build their
cloud in it. A second run on the same database meanwhile would wipe the
first one's cloud under it, and both would report figures of neither.
:func:`hold` takes a lock for the run that another run sees at once:

- PostgreSQL: a session advisory lock (PostgreSQL keeps those per
  database, so runs on other databases of the server go on);
- MySQL/MariaDB: GET_LOCK, named after the database (MySQL keeps those
  per server);
- SQLite: flock on the database file (SQLite's own locks are fcntl
  locks, which flock does not touch).

Other URLs, and in-memory SQLite, are not locked. The lock is held
until :meth:`Held.release`, until the holder is dropped (the end of the
benchmark's main) or until the process ends, whichever comes first.
"""

import fcntl
import os
import zlib

import sqlalchemy as sa

from placement.db import engine as engine_mod

# pg_try_advisory_lock's key: a constant of gantt's benchmarks.
PG_KEY = zlib.crc32(b"gantt benchmark database")
# MySQL's lock names are at most 64 characters.
MYSQL_NAME_MAX = 64


class Busy(Exception):
    """Another run holds the database."""


class Held:
    """A lock taken by :func:`take`."""

    def __init__(self, release=None):
        self._release = release

    def release(self):
        release, self._release = self._release, None
        if release is not None:
            release()

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass  # at the interpreter's exit: the OS ends the session


def take(url):
    """The lock of the database at ``url`` (a SQLAlchemy URL); raises
    Busy when another run holds it."""
    # A URL without a driver takes the one gantt installs, as the
    # benchmark's own engine does.
    parsed = engine_mod.with_installed_driver(sa.make_url(url))
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _file(parsed.database)
    if backend in ("postgresql", "mysql", "mariadb"):
        return _server(parsed, backend == "postgresql")
    return Held()


def hold(parser, url, prog):
    """:func:`take` for a benchmark's main: on Busy, one line and exit
    status 2 through ``parser`` (argparse)."""
    try:
        return take(url)
    except Busy as exc:
        parser.exit(2, f"{prog}: {exc}\n")


def _file(path):
    if not path or path == ":memory:":
        return Held()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise Busy(f"another benchmark run is using {path}; wait for it "
                   "to end or give another --db") from None
    return Held(lambda: os.close(fd))


def _server(parsed, postgresql):
    engine = sa.create_engine(parsed, poolclass=sa.pool.NullPool)
    # Autocommit: an open transaction held for the whole run would keep
    # VACUUM from the rows the run deletes.
    conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")

    def release():
        # The session's end releases the lock on either server.
        conn.close()
        engine.dispose()
    try:
        if postgresql:
            got = conn.execute(sa.text("SELECT pg_try_advisory_lock(:key)"),
                               {"key": PG_KEY}).scalar()
        else:
            name = f"gantt-benchmark:{parsed.database}"[:MYSQL_NAME_MAX]
            got = conn.execute(sa.text("SELECT GET_LOCK(:name, 0)"),
                               {"name": name}).scalar()
    except BaseException:
        release()
        raise
    if not got:
        release()
        raise Busy(f"another benchmark run is using database "
                   f"{parsed.database!r} on {parsed.host}; wait for it to "
                   "end or give another --db")
    return Held(release)
