"""Cloud files: loading the example on every engine, and refusing bad
files with the file and field named, leaving the database untouched."""

import json
import pathlib

import pytest
import yaml

from cloudfile import loader, report
from placement.objects import aggregates, allocations, providers, usages
from scheduler import host_reads, host_state

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
    ({"providers": [{"name": "a", "children": [{"name": "b",
                                                "compute": {}}]}]},
     "providers[0].children[0].compute", "only a root provider"),
    ({"providers": [{"name": "a", "compute": {"host": "h"}},
                    {"name": "b", "compute": {"host": "h",
                                              "nodename": "h"}}]},
     "providers[1].compute.nodename", "has a node 'h' in providers[0]"),
    ({"providers": [{"name": "a", "compute": {"hypervisor": "QEMU"}}]},
     "providers[0].compute", "Additional properties"),
    ({"providers": [{"name": "a", "compute": {
        "hypervisor_version": "8.2.x"}}]},
     "providers[0].compute.hypervisor_version", ""),
    ({"aggregates": {"az": {"metadata": {"availability_zone": [1]}}},
      "providers": [{"name": "a"}]},
     "aggregates.az", ""),
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


def test_example_cloud_is_schedulable(store):
    """Loading the example gives the scheduler its compute hosts at once:
    up, enabled, in their zones and cells, with the figures the tree's
    inventories and allocations imply."""
    loader.load(store, loader.read(str(EXAMPLE)))
    table = host_state.HostStateTable(store, store.conf)
    table.sync()
    table.close()
    rows = {table.hosts[r]: r for r in table.live_rows().tolist()}
    assert sorted(rows) == ["compute-1", "compute-2", "compute-3"]
    assert all(table.service_up()[list(rows.values())])
    assert all(table.enabled[list(rows.values())])
    c1, c2, c3 = rows["compute-1"], rows["compute-2"], rows["compute-3"]
    assert table.uuids[c1] == loader.stable_uuid("provider", "compute-1")
    assert [table.zone(r) for r in (c1, c2, c3)] == ["east", "east", "nova"]
    assert table.cell[c1] == table.cell[c3] != table.cell[c2]
    assert table.hypervisor_version[c3] == 7002000
    assert sorted(a.name for a in table.aggregates_of(c1)) == [
        "az-east", "rack-1"]
    # compute-3: flat, 16 of its 32 VCPUs and 64 GiB used by vm-batch-1.
    assert (table.vcpus_total[c3], table.vcpus_used[c3]) == (32, 16)
    assert table.free_ram_mb[c3] == 262144 - 4096 - 65536
    assert table.free_disk_mb[c3] == (2000 - 50 - 100) * 1024
    assert table.cpu_allocation_ratio[c3] == 16.0
    assert table.num_instances[c3] == 1
    vm = loader.stable_uuid("consumer", "vm-batch-1")
    assert table.instances_on(c3)[vm].project_id == "research"
    # compute-1: NUMA children add up; no local disk but its own.
    assert table.vcpus_total[c1] == 32
    assert table.free_ram_mb[c1] == 2 * 65536 - 1024 - 8192
    assert table.node(c1).supported_instances == [["x86_64", "qemu", "hvm"]]


def test_compute_entries_and_aggregate_metadata(sqlite_store, tmp_path):
    cell = "0f6e5b2a-5d0e-4f57-9f3b-0d0a1f5e2c11"
    path = _write(tmp_path, {
        "aggregates": {
            "big": {"metadata": {"max_instances_per_host": 2,
                                 "ssd": True, "availability_zone": "z1"}},
            "plain": "4a8e9a52-0f1d-4d87-9a56-6f5d2a1c0b09"},
        "providers": [
            {"name": "rp-a", "aggregates": ["big", "plain"],
             "compute": {"host": "host-a", "nodename": "node-a",
                         "cell": cell, "hypervisor_version": 6000000,
                         "host_ip": "192.0.2.1", "enabled": False,
                         "disabled_reason": "maintenance",
                         "forced_down": True,
                         "cpu_info": {"arch": "aarch64"}}},
            {"name": "rp-b", "compute": {}}]})
    summary = loader.load(sqlite_store, loader.read(path))
    assert (summary.hosts, summary.host_aggregates) == (2, 2)
    nodes = {n.host: n for n in host_reads.compute_nodes(sqlite_store)}
    a = nodes["host-a"]
    assert (a.nodename, a.cell_uuid, a.hypervisor_version, a.host_ip) == (
        "node-a", cell, 6000000, "192.0.2.1")
    assert a.cpu_info == {"arch": "aarch64"}
    assert a.uuid == loader.stable_uuid("provider", "rp-a")
    assert (nodes["rp-b"].nodename, nodes["rp-b"].vcpus) == ("rp-b", 0)
    service = host_reads.services(sqlite_store)["host-a"]
    assert (service.disabled, service.disabled_reason,
            service.forced_down) == (True, "maintenance", True)
    aggs = {g.name: g for g in host_reads.aggregates(sqlite_store).values()}
    assert aggs["big"].metadata == {"max_instances_per_host": "2",
                                    "ssd": "true", "availability_zone": "z1"}
    assert aggs["big"].uuid == loader.stable_uuid("aggregate", "big")
    assert aggs["big"].hosts == aggs["plain"].hosts == {"host-a"}


def test_show_lists_compute_hosts(sqlite_store):
    loader.load(sqlite_store, loader.read(str(EXAMPLE)))
    table = host_state.HostStateTable(sqlite_store, sqlite_store.conf)
    table.sync()
    hosts = report.host_rows(table)
    table.close()
    text = report.render(report.snapshot(sqlite_store), hosts)
    assert "COMPUTE HOSTS" in text
    section = text.split("COMPUTE HOSTS")[1].splitlines()
    line = next(t for t in section if t.startswith("compute-3"))
    assert line.split()[:6] == ["compute-3", "compute-3", "nova", "QEMU",
                                "7.2.0", "up"]
    data = report.as_dict(report.snapshot(sqlite_store), hosts)
    assert [h["availability_zone"] for h in data["hosts"]] == [
        "east", "east", "nova"]


def test_a_second_file_adds_to_host_aggregates(sqlite_store, tmp_path):
    first = _write(tmp_path, {
        "aggregates": {"az": {"metadata": {"availability_zone": "z"}}},
        "providers": [{"name": "a", "aggregates": ["az"], "compute": {}}]},
        "first.yaml")
    second = _write(tmp_path, {
        "aggregates": {"az": {"metadata": {"ssd": "yes"}}},
        "providers": [{"name": "b", "aggregates": ["az"], "compute": {}}]},
        "second.yaml")
    loader.load(sqlite_store, loader.read(first))
    loader.load(sqlite_store, loader.read(second))
    [agg] = host_reads.aggregates(sqlite_store).values()
    assert agg.hosts == {"a", "b"}
    assert agg.metadata == {"availability_zone": "z", "ssd": "yes"}
