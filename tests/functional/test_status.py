"""gantt-status upgrade check, run as an operator runs it: each check's
Success, Warning and Failure, and oslo.upgradecheck's exit statuses (0,
1, 2; 255 when a check cannot run)."""

import json
import pathlib
import subprocess
import sys

import pytest
import sqlalchemy as sa

from gantt.cmd import status
from placement.db import migration, schema_state
from tests import databases
from tests.scheduler import nova_cloud

EXE = pathlib.Path(sys.executable).parent / "gantt-status"
SUCCESS, WARNING, FAILURE = 0, 1, 2
OWN_RECORDS = ("[scheduler] host_state_source = gantt: gantt's own "
               "records, in its database")


def _write(tmp_path, url, extra=""):
    path = tmp_path / "gantt.conf"
    path.write_text(f"[placement_database]\nconnection = {url}\n"
                    f"sync_on_startup = false\n{extra}")
    return path


def _check(config, *extra):
    """(exit status, {check: (result, details)}, stderr) of
    gantt-status upgrade check --json."""
    result = subprocess.run(
        [str(EXE), "--config-file", str(config), "upgrade", "check",
         "--json", *extra], capture_output=True, text=True, timeout=120)
    checks = {}
    if result.stdout:
        out = json.loads(result.stdout)
        assert out["name"] == "gantt upgrade check"
        checks = {c["check"]: (c["result"], c["details"])
                  for c in out["checks"]}
    return result.returncode, checks, result.stderr


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'gantt.sqlite'}"


def _synced(url, revision="head"):
    engine = sa.create_engine(url)
    migration.sync(engine, revision)
    engine.dispose()


def test_a_synced_database_passes(sqlite_url, tmp_path):
    _synced(sqlite_url)
    config = _write(tmp_path, sqlite_url)
    head = migration.head_revision()
    assert _check(config) == (SUCCESS, {
        "Database schema": (
            SUCCESS, f"the database {sqlite_url} is at revision {head}"),
        "Config options": (SUCCESS, "no removed options set"),
        "Nova host state source": (SUCCESS, OWN_RECORDS),
    }, "")


def test_the_table_says_the_same(sqlite_url, tmp_path):
    """Without --json: oslo.upgradecheck's table."""
    config = _write(tmp_path, sqlite_url)
    result = subprocess.run(
        [str(EXE), "--config-file", str(config), "upgrade", "check"],
        capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stderr) == (FAILURE, "")
    lines = [line.strip("| ") for line in result.stdout.splitlines()]
    assert lines[1] == "gantt upgrade check"
    at = lines.index("Check: Database schema")
    assert lines[at + 1] == "Result: Failure"
    end = next(i for i in range(at, len(lines)) if lines[i].startswith("+"))
    # Wrapped at 60 characters, long paths cut anywhere.
    expected = (f"Details: the database {sqlite_url} has no gantt schema; "
                f"run gantt-manage --config-file {config} db sync")
    assert "".join(lines[at + 2:end]).replace(" ", "") == (
        expected.replace(" ", ""))


def test_no_schema_fails(sqlite_url, tmp_path):
    config = _write(tmp_path, sqlite_url)
    code, checks, err = _check(config)
    assert (code, err) == (FAILURE, "")
    assert checks["Database schema"] == (FAILURE, (
        f"the database {sqlite_url} has no gantt schema; run gantt-manage "
        f"--config-file {config} db sync"))


def test_a_schema_behind_fails(sqlite_url, tmp_path):
    _synced(sqlite_url, "0003")
    config = _write(tmp_path, sqlite_url)
    head = migration.head_revision()
    code, checks, err = _check(config)
    assert (code, err) == (FAILURE, "")
    assert checks["Database schema"] == (FAILURE, (
        f"the database {sqlite_url} has gantt's schema at revision 0003, "
        f"behind this gantt's {head}; run gantt-manage --config-file "
        f"{config} db sync"))


def test_a_schema_ahead_warns(sqlite_url, tmp_path):
    _synced(sqlite_url)
    engine = sa.create_engine(sqlite_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = "
                             "'9999'"))
    engine.dispose()
    code, checks, err = _check(_write(tmp_path, sqlite_url))
    assert (code, err) == (WARNING, "")
    assert checks["Database schema"] == (WARNING, (
        f"the database {sqlite_url} is at revision 9999, which this gantt "
        f"does not know (its latest is {migration.head_revision()}): a "
        f"newer gantt synced it"))


def test_an_unreachable_database_fails(tmp_path):
    url = f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.sqlite'}"
    code, checks, err = _check(_write(tmp_path, url))
    assert (code, err) == (FAILURE, "")
    assert checks["Database schema"] == (
        FAILURE, "cannot use the database: unable to open database file")


def test_unknown_options_warn(sqlite_url, tmp_path):
    _synced(sqlite_url)
    config = _write(tmp_path, sqlite_url,
                    "[scheduler]\nhost_state_sourc = nova\n")
    code, checks, err = _check(config)
    assert (code, err) == (WARNING, "")
    assert checks["Config options"] == (WARNING, (
        f"no removed options set; {config}: [scheduler] host_state_sourc: "
        f"unknown option (did you mean host_state_source?)"))


def test_removed_options_warn(sqlite_url, tmp_path, monkeypatch, capsys):
    """gantt has removed no option yet: the table of removals, as it will
    be used."""
    _synced(sqlite_url)
    config = _write(tmp_path, sqlite_url,
                    "[scheduler]\nold_knob = 3\nmisspelt = 1\n")
    monkeypatch.setitem(status.REMOVED_OPTIONS, ("scheduler", "old_knob"),
                        "in gantt 2.0: set [scheduler] new_knob instead")
    code = status.main(["--config-file", str(config), "upgrade", "check",
                        "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == WARNING
    assert out["checks"][1] == {"check": "Config options", "result": WARNING,
                                "details": (
        f"{config}: [scheduler] old_knob: removed in gantt 2.0: set "
        f"[scheduler] new_knob instead; {config}: [scheduler] misspelt: "
        f"unknown option")}


def test_a_check_that_cannot_run_is_255(sqlite_url, tmp_path, monkeypatch,
                                        capsys):
    def broken(self):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(status.UpgradeChecks, "_upgrade_checks",
                        (("Broken", broken),))
    code = status.main(["--config-file", str(_write(tmp_path, sqlite_url)),
                        "upgrade", "check"])
    captured = capsys.readouterr()
    assert (code, captured.out) == (255, "")
    assert captured.err == ("gantt-status: a check could not run: "
                            "RuntimeError: boom (--debug prints the "
                            "traceback)\n")


def test_bad_arguments_and_config_exit_2(sqlite_url, tmp_path):
    config = _write(tmp_path, sqlite_url)
    result = subprocess.run(
        [str(EXE), "--config-file", str(config), "upgrade", "chek"],
        capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "gantt-status: upgrade chek: unknown action (the one action "
               "is 'check')\n")
    config.write_text(config.read_text()
                      + "[placement]\nallocation_conflict_retry_count = x\n")
    code, checks, err = _check(config)
    assert (code, checks) == (2, {})
    assert err.startswith(f"gantt-status: {config}: [placement] "
                          f"allocation_conflict_retry_count: invalid value")
    assert err.count("\n") == 1


# -- the Nova host state source --------------------------------------------

@pytest.fixture
def nova(tmp_path):
    dbs = nova_cloud.NovaDatabases("sqlite", tmp_path)
    dbs.reset()
    yield dbs
    dbs.close()


def _nova_config(tmp_path, sqlite_url, api_url):
    _synced(sqlite_url)
    api = f"[api_database]\nconnection = {api_url}\n" if api_url else ""
    return _write(tmp_path, sqlite_url,
                  f"[scheduler]\nhost_state_source = nova\n{api}")


def test_readable_nova_databases_pass(sqlite_url, tmp_path, nova):
    code, checks, err = _check(
        _nova_config(tmp_path, sqlite_url, nova.urls["api"]))
    assert (code, err) == (SUCCESS, "")
    assert checks["Nova host state source"] == (SUCCESS, (
        "Nova's API database and the databases of 2 enabled cell(s) are "
        "readable: cell1, cell2"))


def test_an_unreadable_cell_fails(sqlite_url, tmp_path, nova):
    gone = tmp_path / "no" / "cell2.sqlite"
    nova.execute("api", sa.text(
        "UPDATE cell_mappings SET database_connection = :url WHERE name = "
        "'cell2'"), {"url": f"sqlite:///{gone}"})
    code, checks, err = _check(
        _nova_config(tmp_path, sqlite_url, nova.urls["api"]))
    assert (code, err) == (FAILURE, "")
    assert checks["Nova host state source"] == (FAILURE, (
        "cannot read Nova's cell databases: cell cell2: (sqlite3."
        "OperationalError) unable to open database file"))


def test_an_unreadable_api_database_fails(sqlite_url, tmp_path):
    empty = f"sqlite:///{tmp_path / 'empty-api.sqlite'}"
    code, checks, err = _check(_nova_config(tmp_path, sqlite_url, empty))
    assert (code, err) == (FAILURE, "")
    result, details = checks["Nova host state source"]
    assert result == FAILURE
    assert details.startswith(
        "cannot read Nova's API database ([api_database] connection): "
        "(sqlite3.OperationalError) no such table: cell_mappings")


def test_no_api_database_fails(sqlite_url, tmp_path):
    code, checks, err = _check(_nova_config(tmp_path, sqlite_url, None))
    assert (code, err) == (FAILURE, "")
    assert checks["Nova host state source"] == (FAILURE, (
        "[scheduler] host_state_source = nova needs [api_database] "
        "connection, the URL of Nova's API database"))


# -- on a server database -----------------------------------------------------

@pytest.mark.parametrize("engine_name", ["postgresql"])
def test_on_postgresql(engine_name, tmp_path):
    with databases.empty_scratch(engine_name, tmp_path) as url:
        config = _write(tmp_path, url)
        shown = schema_state.database_name(sa.create_engine(url))
        code, checks, err = _check(config)
        assert (code, err) == (FAILURE, "")
        assert checks["Database schema"] == (FAILURE, (
            f"the database {shown} has no gantt schema; run gantt-manage "
            f"--config-file {config} db sync"))
        _synced(url)
        code, checks, err = _check(config)
        assert (code, err) == (SUCCESS, "")
        assert checks["Database schema"] == (SUCCESS, (
            f"the database {shown} is at revision "
            f"{migration.head_revision()}"))
