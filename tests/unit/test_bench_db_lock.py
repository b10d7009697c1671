"""benchmarks.db_lock: one benchmark run at a time on a database given
with --db, on each engine; a second run stops at once and wipes
nothing."""

import subprocess
import sys

import pytest
import sqlalchemy as sa

from benchmarks import db_lock
from placement.db import migration
from placement.db import store as store_mod
from placement.objects import providers
from tests import databases


def _other_database(engine_name, tmp_path):
    """The URL of another database of the same kind, and its cleanup."""
    if engine_name == "sqlite":
        return f"sqlite:///{tmp_path / 'other.sqlite'}", lambda: None
    url = databases.create_scratch(engine_name)
    return url, lambda: databases.drop_scratch(engine_name, url)


def test_a_second_run_is_refused_while_the_first_holds_the_database(
        db_url, engine_name, tmp_path):
    first = db_lock.take(db_url)
    try:
        with pytest.raises(db_lock.Busy, match="another benchmark run"):
            db_lock.take(db_url)
        # Another database of the server (or another file) is free.
        other, drop = _other_database(engine_name, tmp_path)
        try:
            db_lock.take(other).release()
        finally:
            drop()
    finally:
        first.release()
    # Released: the next run takes it, and a holder dropped releases it.
    again = db_lock.take(db_url)
    del again
    db_lock.take(db_url).release()


def test_a_url_without_its_driver_locks_the_same_database(db_url):
    # As gantt takes them (placement.db.engine.with_installed_driver):
    # mysql:// without MySQLdb installed, mariadb://, postgresql://.
    url = sa.make_url(db_url)
    plain = [url.set(drivername=url.get_backend_name())]
    if url.get_backend_name() == "mysql":
        plain.append(url.set(drivername="mariadb"))
    held = db_lock.take(db_url)
    try:
        for other in plain:
            text = other.render_as_string(hide_password=False)
            with pytest.raises(db_lock.Busy):
                db_lock.take(text)
    finally:
        held.release()


def test_a_benchmark_refused_exits_2_with_one_line_and_wipes_nothing(
        db_url):
    conf = databases.make_conf(
        db_url, {("placement_database", "sync_on_startup"): False})
    store = store_mod.Store.open(conf)
    try:
        databases.wipe(store.engine)
        migration.seed(store.engine)
        store.write(lambda txn: providers.create(txn, "kept"))
        held = db_lock.take(db_url)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "benchmarks.scheduler", "--db",
                 db_url, "--sizes", "10", "--decisions", "5",
                 "--decision-log-rounds", "0"],
                capture_output=True, text=True, timeout=120)
        finally:
            held.release()
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            "benchmarks.scheduler: another benchmark run is using"), lines
        assert done.stdout == ""
        kept = store.read(providers.list_all)
        assert [p.name for p in kept] == ["kept"]
    finally:
        databases.wipe(store.engine)
        store.dispose()
