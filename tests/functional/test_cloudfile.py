"""Cloud files: loading the example on every engine, and refusing bad
files with the file and field named, leaving the database untouched."""

import json
import pathlib

import pytest
import yaml

from placement.cloudfile import loader, report
from placement.objects import aggregates, allocations, providers, usages

EXAMPLE = pathlib.Path(__file__).parents[2] / "etc/examples/cluster.yaml"


def test_example_cloud_loads(store):
    cloud = loader.read(str(EXAMPLE))
    summary = loader.load(store, cloud)
    assert (summary.providers, summary.consumers) == (10, 3)
    names = {rp.name: rp for rp in providers.list_all(store)}
    assert len(names) == 10
    numa = names["compute-1-numa0-pf0"]
    assert numa.root_provider_uuid == names["compute-1"].uuid
    assert numa.parent_provider_uuid == names["compute-1-numa0"].uuid
    _, used = usages.for_provider(store, names["shared-storage"].uuid)
    assert used == {"DISK_GB": 240}
    _, aggs = aggregates.for_provider(store, names["shared-storage"].uuid)
    assert aggs == ["4a8e9a52-0f1d-4d87-9a56-6f5d2a1c0b01"]
    view = allocations.for_consumer(
        store, loader.stable_uuid("consumer", "vm-db-1"))
    assert view.consumer.consumer_type == "INSTANCE"
    assert view.allocations[names["compute-2-numa1-pf0"].uuid].resources == {
        "SRIOV_NET_VF": 2}


def test_stable_uuids(sqlite_store):
    loader.load(sqlite_store, loader.read(str(EXAMPLE)))
    rp = providers.list_all(sqlite_store, name="compute-3")[0]
    assert rp.uuid == loader.stable_uuid("provider", "compute-3")


def _write(tmp_path, data, name="cloud.yaml"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return str(path)


BAD = [
    ({}, "(top)", "'providers' is a required property"),
    ({"providers": [{"name": "a", "inventories": {"VCPU": 0}}]},
     "providers[0].inventories.VCPU", ""),
    ({"providers": [{"name": "a",
                     "inventories": {"VCPU": {"total": 4, "reserved": 5}}}]},
     "providers[0].inventories.VCPU", "reserved value"),
    ({"providers": [{"name": "a", "inventories": {"VCPUS": 4}}]},
     "providers[0].inventories.VCPUS", "unknown resource class VCPUS"),
    ({"providers": [{"name": "a", "traits": ["HW_CPU_X86_AVX9"]}]},
     "providers[0].traits[0]", "unknown trait"),
    ({"providers": [{"name": "a"}, {"name": "a"}]},
     "providers[1].name", "also the name of providers[0]"),
    ({"providers": [{"name": "a", "parent": "b"},
                    {"name": "b", "parent": "a"}]},
     "parent", "loop"),
    ({"providers": [{"name": "a", "parent": "nowhere"}]},
     "providers[0].parent", "no provider named 'nowhere'"),
    ({"providers": [{"name": "a", "children": [{"name": "b",
                                                "parent": "a"}]}]},
     "providers[0].children[0].parent", "names its parent already"),
    ({"providers": [{"name": "a", "extra": 1}]}, "providers[0]",
     "Additional properties"),
    ({"providers": [{"name": "a", "inventories": {"VCPU": 4}}],
      "allocations": [{"consumer": "vm", "project_id": "p", "user_id": "u",
                       "resources": {"a": {"VCPU": 5}}}]},
     "allocations[0]", "would exceed the capacity"),
    ({"providers": [{"name": "a", "inventories": {
        "VCPU": {"total": 4, "step_size": 2}}}],
      "allocations": [{"consumer": "vm", "project_id": "p", "user_id": "u",
                       "resources": {"a": {"VCPU": 1}}}]},
     "allocations[0]", "violate inventory constraints"),
    ({"providers": [{"name": "a", "inventories": {"VCPU": 4}}],
      "allocations": [{"consumer": "vm", "project_id": "p", "user_id": "u",
                       "resources": {"zz": {"VCPU": 1}}}]},
     "allocations[0].resources", "no provider named 'zz'"),
    ({"providers": [{"name": "a", "inventories": {"VCPU": 4}}],
      "allocations": [
          {"consumer": "vm", "project_id": "p", "user_id": "u",
           "resources": {"a": {"VCPU": 1}}},
          {"consumer": "vm", "project_id": "p", "user_id": "u",
           "resources": {"a": {"VCPU": 1}}}]},
     "allocations[1].consumer", "also allocated in allocations[0]"),
    ({"providers": [{"name": "a",
                     "uuid": "ffffffff-ffff-ffff-ffff-fffffffffff"}]},
     "providers[0].uuid", "does not match"),
]


@pytest.mark.parametrize("data,field,message", BAD)
def test_bad_files_name_file_and_field(sqlite_store, tmp_path, data, field,
                                       message):
    path = _write(tmp_path, data)
    with pytest.raises(loader.CloudFileError) as caught:
        loader.load(sqlite_store, loader.read(path))
    error = caught.value
    assert error.path == path
    assert field in error.field
    assert message in error.message
    assert str(error).startswith(path + ": ")
    assert providers.list_all(sqlite_store) == []


def test_not_yaml(tmp_path):
    path = _write(tmp_path, "providers: [\n")
    with pytest.raises(loader.CloudFileError, match="not valid YAML"):
        loader.read(path)


def test_missing_file(tmp_path):
    with pytest.raises(loader.CloudFileError, match="No such file"):
        loader.read(str(tmp_path / "nope.yaml"))


def test_json_files_load(sqlite_store, tmp_path):
    path = _write(tmp_path, json.dumps({"providers": [
        {"name": "j", "inventories": {"DISK_GB": 10}}]}), "cloud.json")
    loader.load(sqlite_store, loader.read(path))
    assert [rp.name for rp in providers.list_all(sqlite_store)] == ["j"]


def test_second_load_of_the_same_file_is_refused(sqlite_store):
    cloud = loader.read(str(EXAMPLE))
    loader.load(sqlite_store, cloud)
    with pytest.raises(loader.CloudFileError,
                       match="providers\\[0\\]: Conflicting resource "
                             "provider"):
        loader.load(sqlite_store, cloud)
    assert len(providers.list_all(sqlite_store)) == 10


def test_parent_may_be_an_existing_provider(sqlite_store, tmp_path):
    root = providers.create(sqlite_store, "existing-root")
    path = _write(tmp_path, {"providers": [
        {"name": "child", "parent": root.uuid}]})
    loader.load(sqlite_store, loader.read(path))
    child = providers.list_all(sqlite_store, name="child")[0]
    assert child.root_provider_uuid == root.uuid


def test_report_totals_and_rows(sqlite_store):
    loader.load(sqlite_store, loader.read(str(EXAMPLE)))
    snap = report.snapshot(sqlite_store)
    totals = report.totals(snap)
    assert totals["DISK_GB"] == {"capacity": 90 + 1950 + 19900,
                                 "used": 340, "free": 90 + 1950 + 19900 - 340}
    assert totals["VCPU"]["used"] == 4 + 16
    text = report.render(snap)
    assert "  compute-1-numa0" in text
    assert "TOTALS" in text
    rows = report.rows(snap)
    assert [r["depth"] for r in rows if r["provider"] ==
            "compute-1-numa0-pf0"] == [2, 2]
    data = report.as_dict(snap)
    assert len(data["providers"]) == 10
