"""gantt-manage: the commands and their exit codes."""

import importlib
import json
import pathlib
import subprocess
import sys

import pytest

from gantt.cmd import manage
from placement import command_errors
from placement.db import migration
from scheduler import decisions_command
from scheduler import errors as scheduler_errors

REPO = pathlib.Path(__file__).parents[2]
EXAMPLE = REPO / "etc/examples/cluster.yaml"


@pytest.fixture
def config(tmp_path, monkeypatch):
    # An OS_DEFAULT__STATE_PATH in the environment would beat the file and
    # point every test at the developer's own database.
    monkeypatch.delenv("OS_DEFAULT__STATE_PATH", raising=False)
    path = tmp_path / "gantt.conf"
    path.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'state'}\n")
    return ["--config-file", str(path)]


def test_db_sync_then_version(config, capsys):
    assert manage.main(config + ["db", "version"]) == 1
    assert "no gantt schema in sqlite:" in capsys.readouterr().err
    assert manage.main(config + ["db", "sync"]) == 0
    head = migration.head_revision()
    assert f"database at revision {head}" in capsys.readouterr().out
    assert manage.main(config + ["db", "version"]) == 0
    assert f"current: {head}" in capsys.readouterr().out


def test_cloud_load_and_show(config, capsys):
    assert manage.main(config + ["cloud", "load", str(EXAMPLE)]) == 0
    assert "10 providers, 16 inventories, 3 consumers" in (
        capsys.readouterr().out)
    assert manage.main(config + ["cloud", "show"]) == 0
    out = capsys.readouterr().out
    assert "10 providers in 4 trees, 2 aggregates" in out
    assert "shared-storage" in out
    assert manage.main(config + ["cloud", "show", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["totals"]["PCPU"] == {"capacity": 32, "used": 8, "free": 24}


def test_bad_cloud_file_exits_2_naming_the_field(config, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("providers:\n  - name: a\n    inventories: {VCPU: -1}\n")
    assert manage.main(config + ["cloud", "load", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: providers[0].inventories.VCPU" in err


def test_unknown_command_exits_2(config, capsys):
    with pytest.raises(SystemExit) as caught:
        manage.main(config + ["nope"])
    assert caught.value.code == 2


def test_console_script_runs(config):
    """The installed entry point, as an operator runs it."""
    exe = pathlib.Path(sys.executable).parent / "gantt-manage"
    result = subprocess.run([str(exe)] + config + ["db", "sync"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "database at revision" in result.stdout


# What only other commands need: a command that imports them starts a
# second slower (gantt.cmd.manage.COMMANDS).
_OTHERS = ("sqlalchemy", "alembic", "oslo_messaging", "cloudfile.loader",
           "placement.adopt.verify", "compute.reshape_command",
           "scheduler.manager")
_IMPORTED = """
import sys
from gantt.cmd import manage
try:
    code = manage.main(sys.argv[1:])
except SystemExit as exc:  # --help
    code = exc.code
print(sorted(name for name in {others!r} if name in sys.modules))
sys.exit(code)
"""


@pytest.mark.parametrize("argv, status", [
    (["--help"], 0),
    (["decisions", "list", "--dir", "{tmp}"], 0),
    (["decisions", "show", "not-a-uuid", "--dir", "{tmp}"], 2),
    (["scheduler", "ping", "--help"], 0),
])
def test_a_command_imports_only_what_it_runs(config, tmp_path, argv,
                                             status):
    """The help, decisions and ping do not load the database layer or
    the other commands' modules; a usage error of theirs is still one
    line and status 2."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    result = subprocess.run(
        [sys.executable, "-c", _IMPORTED.format(others=_OTHERS), *config,
         *argv], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == status, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
    if status == 2:
        assert result.stderr.count("\n") == 1
        assert "is not an instance uuid" in result.stderr


def test_every_error_named_is_a_class_of_its_module():
    """What manage names as usage errors and failures, read as
    command_errors.loaded() reads them once every module is imported."""
    for names in (manage.USAGE_ERRORS, manage.FAILURES):
        for name in names:
            importlib.import_module(name.split(":")[0])
        classes = command_errors.loaded(names)
        assert len(classes) >= len(names)
        assert all(issubclass(c, Exception) for c in classes)
    usage = command_errors.loaded(manage.USAGE_ERRORS)
    assert decisions_command.DecisionsUsageError in usage
    assert scheduler_errors.SchedulerError in command_errors.loaded(
        manage.FAILURES)


def test_loaded_leaves_out_modules_never_imported():
    assert command_errors.loaded(
        ["gantt_module_never_imported:Error",
         "scheduler.decisions_command:DecisionsUsageError"]) == (
        decisions_command.DecisionsUsageError,)


def test_every_command_fills_in_its_parser(config):
    """Each command's --help, its parser filled in: exit 0, its actions
    or arguments listed."""
    for name in manage.COMMANDS:
        result = subprocess.run(
            [sys.executable, "-m", "gantt.cmd.manage", *config, name,
             "--help"], capture_output=True, text=True, timeout=120,
            cwd=REPO)
        assert result.returncode == 0, (name, result.stderr)
        assert f"usage: gantt-manage {name} [-h]" in result.stdout
        # Filled in: more than the help option alone.
        assert result.stdout.count("\n  ") > 2, (name, result.stdout)


def _schedule(config, tmp_path, spec, *extra):
    """gantt-manage schedule as an operator runs it: a subprocess."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    exe = pathlib.Path(sys.executable).parent / "gantt-manage"
    return subprocess.run([str(exe)] + config + ["schedule", str(path),
                                                 *extra],
                          capture_output=True, text=True, timeout=120)


def test_explain_says_why_no_host_is_valid(config, tmp_path):
    """--explain on a NoValidHost: the query, the candidates, the class
    no provider has room for, each filter; then the one error line."""
    assert manage.main(config + ["db", "sync"]) == 0
    assert manage.main(config + ["cloud", "load", str(EXAMPLE)]) == 0
    huge = {"flavor": {"name": "huge", "vcpus": 1, "memory_mb": 1048576,
                       "root_gb": 10}}
    done = _schedule(config, tmp_path, huge, "--explain")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "gantt-manage: no valid host for instance 1 of 1: 0 candidate "
        "hosts"]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("query: resources=DISK_GB:10,"
                               "MEMORY_MB:1048576,VCPU:1")
    assert lines[1:4] == ["placement candidates: 0",
                          "no provider has room for MEMORY_MB:1048576",
                          "instance 1: 0 candidate hosts"]
    # Without --explain: the one line only.
    done = _schedule(config, tmp_path, huge)
    assert (done.returncode, done.stdout) == (1, "")
    # Candidates, none of them a host the request allows.
    gone = {"flavor": {"name": "s", "vcpus": 1, "memory_mb": 512,
                       "root_gb": 1},
            "ignore_hosts": ["compute-1", "compute-2", "compute-3"]}
    done = _schedule(config, tmp_path, gone, "--explain", "--format",
                     "json")
    assert done.returncode == 1
    explain = json.loads(done.stdout)["explain"]
    assert explain["candidates"] > 0
    assert explain["instances"][0]["candidate_hosts"] == 0


def test_explain_says_what_the_zone_and_the_forced_host_did(config,
                                                            tmp_path):
    assert manage.main(config + ["cloud", "load", str(EXAMPLE)]) == 0
    spec = {"flavor": {"name": "s", "vcpus": 1, "memory_mb": 512,
                       "root_gb": 1},
            "availability_zone": "east", "force_hosts": ["compute-1"]}
    done = _schedule(config, tmp_path, spec, "--explain")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2:6] == [
        "placement candidates: 4 on 1 host",
        "availability zone east: placement was asked only for hosts in "
        "aggregate az-east",
        "narrowed by forced host compute-1: 1 -> 1 host; forced hosts skip "
        "the filters",
        "instance 1: 1 candidate host"]
    # A forced host the zone left out: why, then the one line.
    spec["force_hosts"] = ["compute-3"]
    done = _schedule(config, tmp_path, spec, "--explain")
    assert done.returncode == 1
    assert ("narrowed by forced host compute-3: 1 -> 0 hosts; forced hosts "
            "skip the filters") in done.stdout.splitlines()
    assert done.stderr.splitlines() == [
        "gantt-manage: no valid host: forced host compute-3 not among the 1 "
        "candidate host placement returned"]


def test_the_example_spec_schedules_on_the_example_cloud(config, capsys):
    """etc/examples/spec.json, as the operator guide shows it: two
    servers of an anti-affinity group on two hosts."""
    assert manage.main(config + ["db", "sync"]) == 0
    assert manage.main(config + ["cloud", "load", str(EXAMPLE)]) == 0
    capsys.readouterr()
    spec = REPO / "etc/examples/spec.json"
    assert manage.main(config + ["schedule", str(spec), "--format",
                                 "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    hosts = [i["selections"][0]["service_host"] for i in out["instances"]]
    assert len(hosts) == 2 and len(set(hosts)) == 2
