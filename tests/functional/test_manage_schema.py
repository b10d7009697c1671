"""gantt-manage on a database without gantt's schema, or with an older
one: db version says so with exit status 1, and every command that
reads or writes the store stops with one line naming the sync to run,
before touching it. Run as an operator runs them: subprocesses."""

import pathlib
import subprocess
import sys

import pytest
import sqlalchemy as sa

from placement.db import migration, schema_state
from tests import databases

EXE = pathlib.Path(sys.executable).parent / "gantt-manage"
REPO = pathlib.Path(__file__).parents[2]
SPEC = REPO / "etc/examples/spec.json"


def _config(tmp_path, url):
    path = tmp_path / "gantt.conf"
    path.write_text(f"[placement_database]\nconnection = {url}\n"
                    f"sync_on_startup = false\n")
    return path


def _run(config, *args):
    result = subprocess.run([str(EXE), "--config-file", str(config), *args],
                            capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout, result.stderr


def _shown(url):
    return schema_state.database_name(sa.create_engine(url))


@pytest.fixture
def sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'gantt.sqlite'}"
    return url, _config(tmp_path, url)


def test_db_version_without_a_schema(sqlite):
    url, config = sqlite
    assert _run(config, "db", "version") == (
        1, "", f"gantt-manage: no gantt schema in {url}; run gantt-manage "
               f"--config-file {config} db sync\n")


def test_db_version_behind_then_current(sqlite):
    url, config = sqlite
    head = migration.head_revision()
    engine = sa.create_engine(url)
    migration.sync(engine, "0003")
    assert _run(config, "db", "version") == (
        1, f"current: 0003\nlatest:  {head}\n",
        f"gantt-manage: the schema is behind (revision 0003 of {head}); "
        f"run gantt-manage --config-file {config} db sync\n")
    code, out, err = _run(config, "db", "sync")
    assert (code, out, err) == (0, f"database at revision {head}\n", "")
    assert _run(config, "db", "version") == (
        0, f"current: {head}\nlatest:  {head}\n", "")
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = "
                             "'9999'"))
    engine.dispose()
    assert _run(config, "db", "version") == (
        0, f"current: 9999 (newer than this gantt's)\nlatest:  {head}\n",
        "")


def test_db_version_refuses_a_bad_value_before_the_schema(sqlite):
    """Issue 39: db version accepted [scheduler] workers = two and exited
    0 with the schema behind. The value is refused first (exit 2), and
    nothing is read or written."""
    url, config = sqlite
    engine = sa.create_engine(url)
    migration.sync(engine, "0003")
    engine.dispose()
    before = pathlib.Path(url.removeprefix("sqlite:///")).read_bytes()
    config.write_text(config.read_text() + "[scheduler]\nworkers = two\n")
    assert _run(config, "db", "version") == (
        2, "", f"gantt-manage: {config}: [scheduler] workers: invalid "
               f"value: invalid literal for int() with base 10: 'two'\n")
    assert pathlib.Path(url.removeprefix("sqlite:///")).read_bytes() == \
        before


# Each command that opens the store, with the arguments it needs.
COMMANDS = {
    "cloud show": ["cloud", "show"],
    "cloud export": ["cloud", "export", "-"],
    "cloud load": ["cloud", "load", str(REPO / "etc/examples/cluster.yaml")],
    "allocations audit": ["allocations", "audit"],
    "schedule": ["schedule", str(SPEC)],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_commands_refuse_a_database_without_the_schema(sqlite, command):
    url, config = sqlite
    assert _run(config, *COMMANDS[command]) == (
        1, "", f"gantt-manage: the database {url} has no gantt schema; run "
               f"gantt-manage --config-file {config} db sync\n")


def test_commands_refuse_a_schema_behind(sqlite):
    url, config = sqlite
    engine = sa.create_engine(url)
    migration.sync(engine, "0002")
    engine.dispose()
    head = migration.head_revision()
    assert _run(config, "cloud", "show") == (
        1, "", f"gantt-manage: the database {url} has gantt's schema at "
               f"revision 0002, behind this gantt's {head}; run "
               f"gantt-manage --config-file {config} db sync\n")


def test_sync_on_startup_still_creates_the_schema(tmp_path):
    url = f"sqlite:///{tmp_path / 'gantt.sqlite'}"
    config = tmp_path / "gantt.conf"
    config.write_text(f"[placement_database]\nconnection = {url}\n")
    code, out, err = _run(config, "cloud", "show")
    assert (code, err) == (0, "")
    assert "0 providers" in out


@pytest.mark.parametrize("engine_name", ["postgresql", "mysql"])
def test_server_database_without_the_schema(engine_name, tmp_path):
    """The case of issue 39: on PostgreSQL cloud show and placement
    export said 'failed: ProgrammingError ... relation
    "resource_providers" does not exist'."""
    with databases.empty_scratch(engine_name, tmp_path) as url:
        config = _config(tmp_path, url)
        expected = (f"gantt-manage: the database {_shown(url)} has no "
                    f"gantt schema; run gantt-manage --config-file "
                    f"{config} db sync\n")
        assert _run(config, "cloud", "show") == (1, "", expected)
        assert _run(config, "placement", "export", "--to",
                    "sqlite:///" + str(tmp_path / "p.sqlite")) == (
            1, "", expected)
        assert _run(config, "db", "version")[0] == 1
