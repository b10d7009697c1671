"""gantt-manage schedule on the example cloud: dry runs claim nothing,
--claim does, --explain says why, bad specs exit 2."""

import json
import pathlib

import pytest

from gantt.cmd import manage

REPO = pathlib.Path(__file__).parents[2]
EXAMPLE = REPO / "etc/examples/cluster.yaml"
SPEC = {"flavor": {"vcpus": 4, "memory_mb": 8192, "root_gb": 20},
        "project_id": "demo", "user_id": "alice"}


@pytest.fixture
def config(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OS_DEFAULT__STATE_PATH", raising=False)
    path = tmp_path / "gantt.conf"
    path.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'state'}\n")
    args = ["--config-file", str(path)]
    assert manage.main(args + ["cloud", "load", str(EXAMPLE)]) == 0
    capsys.readouterr()
    return args


def spec_file(tmp_path, data):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(data))
    return str(path)


def used_vcpus(config, capsys):
    assert manage.main(config + ["cloud", "show", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["totals"]["VCPU"]["used"]


def test_dry_run_then_claim(config, tmp_path, capsys):
    before = used_vcpus(config, capsys)
    spec = spec_file(tmp_path, SPEC)
    assert manage.main(config + ["schedule", spec, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [item] = out["instances"]
    assert item["instance_uuid"] is None
    assert item["selections"][0]["service_host"].startswith("compute-")
    assert used_vcpus(config, capsys) == before
    assert manage.main(config + ["schedule", spec, "--claim",
                                 "--format", "json"]) == 0
    [item] = json.loads(capsys.readouterr().out)["instances"]
    assert item["instance_uuid"]
    assert used_vcpus(config, capsys) == before + 4


def test_explain_lists_filters_and_weights(config, tmp_path, capsys):
    spec = spec_file(tmp_path, SPEC)
    assert manage.main(config + ["schedule", spec, "--explain"]) == 0
    out = capsys.readouterr().out
    assert "query: resources=DISK_GB:20,MEMORY_MB:8192,VCPU:4" in out
    assert "ComputeFilter: " in out
    assert "weight " in out


@pytest.mark.parametrize("data,code,message", [
    ({"flavor": {"vcpus": 0}}, 2, "flavor: 'memory_mb' is a required"),
    (dict(SPEC, flavor=dict(SPEC["flavor"], extra_specs={
        "resources:CUSTOM_NOPE": "1"})), 1,
     "no valid host: No such resource class CUSTOM_NOPE"),
    (dict(SPEC, flavor=dict(SPEC["flavor"], vcpus=4096)), 1,
     "no valid host"),
], ids=["invalid", "unknown-class", "too-big"])
def test_errors(config, tmp_path, capsys, data, code, message):
    spec = spec_file(tmp_path, data)
    assert manage.main(config + ["schedule", spec]) == code
    assert message in capsys.readouterr().err


def test_unreadable_spec_exits_2(config, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert manage.main(config + ["schedule", str(bad)]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert manage.main(config + ["schedule", str(tmp_path / "none")]) == 2
    assert "No such file" in capsys.readouterr().err
