"""A real MySQL/MariaDB deadlock is one the store retries.

PyMySQL gives the server's SQLSTATE (40001) beside the error number
(1213); the store once read only the SQLSTATE and compared it with the
numbers, so every deadlock, and every Galera certification failure (the
same error), ended as a 500 instead of being tried again
(benchmarks.ha_claims found it on a three-node Galera cluster).
"""

import threading

import pytest
import sqlalchemy as sa

from placement.db import store as store_mod
from tests import databases


@pytest.fixture
def mysql_url():
    try:
        url = databases.create_scratch("mysql")
    except Exception as exc:  # noqa: BLE001 - any connection failure
        databases.unavailable("mysql", str(exc).splitlines()[0])
    yield url
    databases.drop_scratch("mysql", url)


def _deadlock(url):
    """The exception of the loser of a real deadlock: two transactions
    that lock two rows in opposite orders."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (id INT PRIMARY KEY, v INT) "
                             "ENGINE=InnoDB")
        conn.exec_driver_sql("INSERT INTO t VALUES (1, 0), (2, 0)")
    both_hold_one = threading.Barrier(2)
    failures = []

    def lock(first, second):
        try:
            with engine.begin() as conn:
                conn.exec_driver_sql(f"UPDATE t SET v = 1 WHERE id = {first}")
                both_hold_one.wait(10)
                conn.exec_driver_sql(
                    f"UPDATE t SET v = 1 WHERE id = {second}")
        except sa.exc.DBAPIError as exc:
            failures.append(exc)

    threads = [threading.Thread(target=lock, args=order)
               for order in ((1, 2), (2, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    engine.dispose()
    assert len(failures) == 1, failures
    return failures[0]


def test_a_real_deadlock_is_transient(mysql_url):
    exc = _deadlock(mysql_url)
    assert exc.orig.args[0] == 1213
    assert store_mod.is_transient(exc, "mysql")
