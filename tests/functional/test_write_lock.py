"""placement.db.write_lock: a write waits for SQLite's write lock in
short naps of its own instead of SQLite's 1, 2, 5, 10 ms sleeps, and
gives up after the busy timeout as SQLite would; reads keep SQLite's
handler."""

import sqlite3
import threading

import pytest

from placement.db import write_lock


@pytest.fixture
def path(tmp_path):
    path = tmp_path / "lock.sqlite"
    setup = sqlite3.connect(path, isolation_level=None)
    setup.execute("PRAGMA journal_mode=WAL")
    setup.execute("CREATE TABLE t (x INTEGER)")
    setup.close()
    return path


def _connect(path, timeout_s=5):
    return sqlite3.connect(path, isolation_level=None, timeout=timeout_s,
                           check_same_thread=False)


def _busy_timeout(conn):
    return conn.execute("PRAGMA busy_timeout").fetchone()[0]


def test_naps_short_until_the_holder_commits(path):
    holder, writer = _connect(path), _connect(path)
    holder.execute("BEGIN IMMEDIATE")
    naps = []

    def sleep(seconds):
        naps.append(seconds)
        if len(naps) == 6:
            holder.execute("COMMIT")

    write_lock.begin(writer, {}, True, 5, sleep=sleep)
    writer.execute("INSERT INTO t VALUES (1)")
    writer.execute("COMMIT")
    assert naps == [0.00005, 0.0001, 0.0002, 0.0004, 0.0008, 0.001]
    assert writer.execute("SELECT x FROM t").fetchall() == [(1,)]


def test_gives_up_after_the_busy_timeout(path):
    holder, writer = _connect(path), _connect(path)
    holder.execute("BEGIN IMMEDIATE")
    clock = [100.0]
    naps = []

    def sleep(seconds):
        naps.append(seconds)
        clock[0] += seconds

    with pytest.raises(sqlite3.OperationalError, match="locked"):
        write_lock.begin(writer, {}, True, 0.01, sleep=sleep,
                         clock=lambda: clock[0])
    assert sum(naps) == pytest.approx(0.01)
    assert max(naps) <= write_lock.LONGEST_NAP_S
    assert not writer.in_transaction
    holder.execute("ROLLBACK")


def test_other_errors_are_not_waited_for(path):
    writer = _connect(path)
    writer.execute("BEGIN")
    naps = []
    with pytest.raises(sqlite3.OperationalError, match="within"):
        write_lock.begin(writer, {}, True, 5, sleep=naps.append)
    assert naps == []


def test_reads_get_sqlites_handler_back(path):
    conn, info = _connect(path, timeout_s=7), {}
    assert _busy_timeout(conn) == 7000
    write_lock.begin(conn, info, True, 7)
    conn.execute("COMMIT")
    assert _busy_timeout(conn) == 0  # left off for the next write
    write_lock.begin(conn, info, True, 7)
    conn.execute("COMMIT")
    write_lock.begin(conn, info, False, 7)
    assert _busy_timeout(conn) == 7000
    conn.execute("SELECT * FROM t").fetchall()
    conn.execute("COMMIT")


def test_concurrent_writers_all_commit(path):
    def work(errors):
        conn, info = _connect(path), {}
        try:
            for _ in range(200):
                write_lock.begin(conn, info, True, 5)
                conn.execute("INSERT INTO t VALUES (1)")
                conn.execute("COMMIT")
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            conn.close()

    errors = []
    threads = [threading.Thread(target=work, args=(errors,))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    check = _connect(path)
    assert check.execute("SELECT count(*) FROM t").fetchone()[0] == 600
