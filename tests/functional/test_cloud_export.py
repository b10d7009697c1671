"""gantt-manage cloud export: the cloud in the database as a cloud file
that cloud load and gantt-simulate --cloud read back."""

import json
import pathlib

import pytest
import yaml

from cloudfile import exporter, loader
from gantt.cmd import manage
from placement.db import store as store_mod
from scheduler import host_reads, host_records
from tests import databases

REPO = pathlib.Path(__file__).parents[2]
EXAMPLE = REPO / "etc/examples/cluster.yaml"


def _config(tmp_path, name):
    path = tmp_path / f"{name}.conf"
    path.write_text(f"[DEFAULT]\nstate_path = {tmp_path / name}\n")
    return ["--config-file", str(path)]


@pytest.fixture(autouse=True)
def _own_state_path(monkeypatch):
    # `make` exports OS_DEFAULT__STATE_PATH, which would beat the file.
    monkeypatch.delenv("OS_DEFAULT__STATE_PATH", raising=False)


def _show(config, capsys):
    assert manage.main(config + ["cloud", "show", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_export_then_load_gives_the_same_cloud(tmp_path, capsys):
    a, b = _config(tmp_path, "a"), _config(tmp_path, "b")
    out, again = tmp_path / "out.yaml", tmp_path / "again.yaml"
    assert manage.main(a + ["cloud", "load", str(EXAMPLE)]) == 0
    assert manage.main(a + ["cloud", "export", str(out)]) == 0
    assert f"exported to {out}: 10 providers, 3 consumers" in (
        capsys.readouterr().out)
    assert manage.main(b + ["cloud", "load", str(out)]) == 0
    capsys.readouterr()
    assert _show(b, capsys) == _show(a, capsys)
    # A fixed point: exporting the loaded export writes the same file.
    assert manage.main(b + ["cloud", "export", str(again)]) == 0
    assert again.read_text() == out.read_text()


def test_host_records_travel_with_the_cloud(tmp_path, capsys):
    a = _config(tmp_path, "a")
    assert manage.main(a + ["cloud", "load", str(EXAMPLE)]) == 0
    conf = databases.make_conf(
        f"sqlite:///{tmp_path / 'a' / 'placement.sqlite'}")
    store = store_mod.Store.open(conf)
    try:
        store.write(host_records.set_service_state, "compute-3",
                    enabled=False, disabled_reason="maintenance")
        before = host_reads.aggregates(store)
        data = exporter.document(store)
    finally:
        store.dispose()
    cloud = loader.parse(data, "<export>")
    by_host = {h.host: h for h in cloud.hosts}
    assert (by_host["compute-3"].enabled,
            by_host["compute-3"].disabled_reason) == (False, "maintenance")
    assert by_host["compute-1"].report["hypervisor_type"] == "QEMU"
    exported = {a.uuid: (a.name, a.metadata) for a in cloud.aggregates}
    assert exported == {u: (a.name, a.metadata) for u, a in before.items()}


def test_json_and_standard_output(tmp_path, capsys):
    a = _config(tmp_path, "a")
    assert manage.main(a + ["cloud", "load", str(EXAMPLE)]) == 0
    out = tmp_path / "out.json"
    assert manage.main(a + ["cloud", "export", str(out)]) == 0
    capsys.readouterr()
    assert manage.main(a + ["cloud", "export", "-"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    assert json.loads(out.read_text()) == printed
    assert loader.parse(printed).hosts


def test_an_empty_database_exports_an_empty_cloud(tmp_path, capsys):
    a = _config(tmp_path, "a")
    assert manage.main(a + ["db", "sync"]) == 0
    out = tmp_path / "out.yaml"
    assert manage.main(a + ["cloud", "export", str(out)]) == 0
    assert yaml.safe_load(out.read_text()) == {"providers": [],
                                               "allocations": []}


def test_without_host_records_compute_trees_become_hosts(tmp_path):
    # Placement alone (or host state read from Nova's databases): no
    # host records; a tree with CPU or memory is a compute node's.
    a = _config(tmp_path, "a")
    bare = tmp_path / "bare.yaml"
    bare.write_text(
        "providers:\n"
        "  - name: node-1\n"
        "    inventories: {DISK_GB: 100}\n"
        "    children:\n"
        "      - {name: node-1-numa0, inventories: {VCPU: 8}}\n"
        "  - {name: storage, inventories: {DISK_GB: 1000}}\n")
    out = tmp_path / "out.yaml"
    assert manage.main(a + ["cloud", "load", str(bare)]) == 0
    assert manage.main(a + ["cloud", "export", str(out)]) == 0
    cloud = loader.read(str(out))
    assert [(h.host, h.nodename) for h in cloud.hosts] == [
        ("node-1", "node-1")]
