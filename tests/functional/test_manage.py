"""gantt-manage: the commands and their exit codes."""

import json
import pathlib
import subprocess
import sys

import pytest

from gantt.cmd import manage
from placement.db import migration

REPO = pathlib.Path(__file__).parents[2]
EXAMPLE = REPO / "etc/examples/cluster.yaml"


@pytest.fixture
def config(tmp_path, monkeypatch):
    # `make` exports OS_DEFAULT__STATE_PATH, which would beat the file and
    # point every test at the developer's own database.
    monkeypatch.delenv("OS_DEFAULT__STATE_PATH", raising=False)
    path = tmp_path / "gantt.conf"
    path.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'state'}\n")
    return ["--config-file", str(path)]


def test_db_sync_then_version(config, capsys):
    assert manage.main(config + ["db", "version"]) == 0
    assert "none (run gantt-manage db sync)" in capsys.readouterr().out
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
