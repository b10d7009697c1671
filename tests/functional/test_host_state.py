"""The host state table on every engine: host record writes become rows,
writes of this process and of others are followed without rebuilding,
service state, consumption, aggregates and zones."""

import dataclasses
import datetime
import uuid as uuidlib

import numpy as np
import pytest
import sqlalchemy as sa

from placement.db import store as store_mod
from scheduler import host_options, host_state, host_tables
from scheduler import host_records as hr
from tests.functional import objects_helpers as h

NOW = 1_900_000_000.0  # epoch seconds the tests' clock starts at


def node_uuid(name):
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, name))


def add_node(db, name, host=None, **report):
    uuid = node_uuid(name)
    hr.upsert_compute_node(db, uuid, host or name, name, **report)
    return uuid


class Clock:
    def __init__(self):
        self.now = NOW

    def __call__(self):
        return self.now


def at(seconds):
    """The naive UTC datetime of epoch ``seconds``."""
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(
        seconds=seconds)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def table(store, clock):
    t = host_state.HostStateTable(store, store.conf, clock=clock)
    t.sync()
    yield t
    t.close()


@pytest.fixture
def other(store):
    """A second store on the same database: another process's writes."""
    second = store_mod.Store(store.conf)
    yield second
    second.dispose()


FULL_REPORT = {
    "cell_uuid": "7f1c3b9e-9d53-4a38-8d3a-3c5e0b0c0a01",
    "hypervisor_type": "QEMU", "hypervisor_version": 8002000,
    "host_ip": "10.0.0.5",
    "cpu_info": '{"arch": "x86_64", "vendor": "Intel"}',  # as Nova sends it
    "supported_instances": [["x86_64", "qemu", "hvm"]],
    "numa_topology": {"cells": [{"id": 0, "cpuset": [0, 1]}]},
    "pci_device_pools": [{"count": 4, "vendor_id": "8086",
                          "product_id": "154d", "physical_network": "phys"}],
    "stats": {"num_instances": "3", "io_workload": "2", "num_proj_p": "3"},
    "metrics": [{"name": "cpu.percent", "value": 0.25, "source": "libvirt",
                 "timestamp": "2026-01-01T00:00:00"}],
    "vcpus": 16, "vcpus_used": 6, "memory_mb": 65536,
    "memory_mb_used": 8192, "local_gb": 500, "local_gb_used": 100,
    "disk_available_least": 350, "cpu_allocation_ratio": 8.0,
    "ram_allocation_ratio": 1.5, "disk_allocation_ratio": 1.0,
}


def test_a_report_becomes_a_row(store, table):
    uuid = add_node(store, "cn1", **FULL_REPORT)
    table.sync()
    row = table.row_of(uuid)
    assert row is not None and table.alive[row]
    assert (table.hosts[row], table.nodenames[row]) == ("cn1", "cn1")
    assert table.free_ram_mb[row] == 65536 - 8192
    assert table.free_disk_mb[row] == 350 * 1024  # disk_available_least
    assert table.total_usable_ram_mb[row] == 65536
    assert table.total_usable_disk_gb[row] == 500
    assert table.disk_mb_used[row] == 100 * 1024
    assert (table.vcpus_total[row], table.vcpus_used[row]) == (16, 6)
    assert (table.cpu_allocation_ratio[row], table.ram_allocation_ratio[row],
            table.disk_allocation_ratio[row]) == (8.0, 1.5, 1.0)
    assert (table.num_instances[row], table.num_io_ops[row]) == (3, 2)
    assert table.hypervisor_types.name(table.hypervisor_type[row]) == "QEMU"
    assert table.hypervisor_type_code("QEMU") == table.hypervisor_type[row]
    assert table.hypervisor_version[row] == 8002000
    assert table.cells.name(table.cell[row]) == FULL_REPORT["cell_uuid"]
    assert table.metric("cpu.percent")[row] == 0.25
    assert np.isnan(table.metric("nope")[row])
    node = table.node(row)
    assert node.cpu_info == {"arch": "x86_64", "vendor": "Intel"}
    assert node.supported_instances == [["x86_64", "qemu", "hvm"]]
    assert node.numa_topology == FULL_REPORT["numa_topology"]
    assert node.pci_device_pools[0]["count"] == 4
    assert node.stats["num_proj_p"] == "3"
    assert node.host_ip == "10.0.0.5"
    # No service record and no heartbeat yet: enabled and up.
    assert table.enabled[row] and table.service_up()[row]
    assert table.zone(row) == "nova"
    assert list(table.rows_for_uuids([uuid, node_uuid("x"), uuid])) == [
        row, -1, row]
    assert table.row_for_node("cn1", "cn1") == row
    assert table.full_loads == 1


def test_updates_keep_what_they_leave_out(store, table):
    uuid = add_node(store, "cn1", **FULL_REPORT)
    hr.upsert_compute_node(store, uuid, "cn1", "cn1", memory_mb_used=16384,
                           disk_available_least=None,
                           hypervisor_type="kvm")
    table.sync()
    row = table.row_of(uuid)
    assert table.free_ram_mb[row] == 65536 - 16384  # derived again
    assert table.free_disk_mb[row] == 400 * 1024  # free_disk_gb now
    assert table.vcpus_total[row] == 16
    assert table.hypervisor_types.name(table.hypervisor_type[row]) == "kvm"
    assert table.node(row).cpu_info["vendor"] == "Intel"
    # A node moving to another host (or renamed) keeps its row.
    hr.upsert_compute_node(store, uuid, "cn1-new", "cn1")
    table.sync()
    assert table.row_of(uuid) == row
    assert table.rows_of_host("cn1") == [] and table.rows_of_host(
        "cn1-new") == [row]


def test_own_writes_are_followed_without_a_rebuild(store, table):
    a = add_node(store, "a", memory_mb=1000)
    b = add_node(store, "b", memory_mb=2000)
    table.sync()
    assert table.full_loads == 1
    hr.upsert_compute_node(store, b, "b", "b", memory_mb=3000)
    assert table.dirty == {(hr.NODE, b)}
    table.sync()
    assert not table.dirty
    assert table.free_ram_mb[table.row_of(b)] == 3000
    assert table.free_ram_mb[table.row_of(a)] == 1000
    version = table.version
    table.sync()  # nothing changed since
    assert table.version == version
    assert table.full_loads == 1


def test_other_processes_writes_are_seen(store, other, table):
    kept = add_node(store, "kept")
    gone = add_node(store, "gone")
    table.sync()
    new = add_node(other, "new", vcpus=4)
    hr.delete_compute_node(other, gone)
    hr.set_service_state(other, "kept", enabled=False,
                         disabled_reason="maintenance")
    hr.update_aggregate(other, node_uuid("agg"), "agg",
                        {"availability_zone": "az1"}, ["kept", "new"])
    hr.update_instance_info(other, "new", [node_uuid("vm")])
    assert table.row_of(new) is None
    table.sync()
    assert table.full_loads == 1
    assert table.vcpus_total[table.row_of(new)] == 4
    assert table.row_of(gone) is None
    row = table.row_of(kept)
    assert not table.enabled[row]
    assert table.service(row).disabled_reason == "maintenance"
    assert table.zone(row) == table.zone(table.row_of(new)) == "az1"
    assert list(table.instances_on(table.row_of(new))) == [node_uuid("vm")]
    assert sorted(table.uuids[r] for r in table.live_rows()) == sorted(
        [kept, new])


def test_service_up_over_given_rows(store, table, clock):
    # The mask over some rows is the whole mask at those rows.
    names = ["cn1", "cn2", "cn3", "cn4"]
    uuids = [add_node(store, n) for n in names]
    hr.heartbeat(store, "cn1", at=at(NOW - 30))
    hr.heartbeat(store, "cn2", at=at(NOW - 300))
    hr.set_service_state(store, "cn3", forced_down=True)
    table.sync()
    rows = np.array([table.row_of(u) for u in reversed(uuids)])
    whole = table.service_up()
    assert list(table.service_up(rows=rows)) == list(whole[rows])
    assert list(table.service_up(rows=rows)) == [True, False, False, True]


def test_service_up_by_heartbeat_and_forced_down(store, table, clock):
    uuid = add_node(store, "cn1")
    table.sync()
    row = table.row_of(uuid)
    assert table.service_up()[row]  # no heartbeat yet
    hr.heartbeat(store, "cn1", at=at(NOW - 30))
    table.sync()
    assert table.service_up()[row]
    clock.now = NOW + 31  # 61 s since the heartbeat
    assert not table.service_up()[row]
    store.conf.set_override("service_down_time", 120)
    try:
        assert table.service_up()[row]
    finally:
        store.conf.clear_override("service_down_time")
    hr.heartbeat(store, "cn1",
                 at=at(NOW).replace(tzinfo=datetime.timezone.utc))
    table.sync()
    assert table.service_up()[row]
    hr.set_service_state(store, "cn1", forced_down=True)
    table.sync()
    assert not table.service_up()[row]
    assert table.enabled[row]  # forced down is not disabled
    hr.set_service_state(store, "cn1", forced_down=False, enabled=False,
                         disabled_reason="broken")
    table.sync()
    assert table.service_up()[row] and not table.enabled[row]
    hr.set_service_state(store, "cn1", enabled=True)
    table.sync()
    assert table.enabled[row] and table.service(row).disabled_reason is None


def test_consumption_stands_until_the_node_reports(store, table):
    uuid = add_node(store, "cn1", vcpus=8, memory_mb=4096, local_gb=100,
                    stats={"num_instances": "1", "io_workload": "0"})
    table.sync()
    row = table.row_of(uuid)
    # Two instances of one request, one after the other.
    for _ in range(2):
        table.consume(row, ram_mb=1024, disk_mb=10 * 1024, vcpus=2)
    assert table.free_ram_mb[row] == 4096 - 2048
    assert table.free_disk_mb[row] == (100 - 20) * 1024
    assert table.vcpus_used[row] == 4
    assert (table.num_instances[row], table.num_io_ops[row]) == (3, 2)
    # Reloading the row for another reason keeps the consumption.
    hr.record_build_failure(store, "cn1")
    table.sync()
    assert table.failed_builds[row] == 1
    assert table.free_ram_mb[row] == 2048
    # The node's next report replaces it.
    hr.upsert_compute_node(store, uuid, "cn1", "cn1", memory_mb_used=512)
    table.sync()
    assert table.free_ram_mb[row] == 4096 - 512
    assert (table.vcpus_used[row], table.num_instances[row]) == (0, 1)


def test_replaced_devices_stand_until_the_node_reports(store, table):
    pools = [{"count": 2, "vendor_id": "8086"}]
    uuid = add_node(store, "cn1", pci_device_pools=pools)
    table.sync()
    row = table.row_of(uuid)
    node = table.node(row)
    table.replace_node(row, dataclasses.replace(
        node, pci_device_pools=[{"count": 1, "vendor_id": "8086"}]))
    assert table.pci_devices[row] == 1
    # Reloaded for a build failure: the devices taken stay taken, the
    # new failure count is read.
    hr.record_build_failure(store, "cn1")
    table.sync()
    assert table.failed_builds[row] == 1
    assert table.node(row).pci_device_pools[0]["count"] == 1
    assert table.pci_devices[row] == 1
    # The node's next report replaces them.
    add_node(store, "cn1", pci_device_pools=pools)
    table.sync()
    assert table.node(row).pci_device_pools == pools
    assert table.pci_devices[row] == 2


def test_consume_many_rows_at_once(store, table):
    uuids = [add_node(store, n, memory_mb=1000) for n in ("a", "b")]
    table.sync()
    rows = table.rows_for_uuids(uuids)
    table.consume(np.array([rows[0], rows[1], rows[0]]), ram_mb=100)
    assert list(table.free_ram_mb[rows]) == [800, 900]
    assert list(table.num_instances[rows]) == [2, 1]


def test_aggregates_and_zones(store, table):
    for name in ("a", "b", "c"):
        add_node(store, name)
    east, west, tenants = (node_uuid(n) for n in ("east", "west", "tn"))
    hr.update_aggregate(store, east, "east", {"availability_zone": "east"},
                        ["a", "b"])
    hr.update_aggregate(store, west, "west", {"availability_zone": "west"},
                        ["b"])
    hr.update_aggregate(store, tenants, "tenants",
                        {"filter_tenant_id": "p1",
                         "max_io_ops_per_host": "4"}, ["a"])
    table.sync()
    a, b, c = (table.row_of(node_uuid(n)) for n in ("a", "b", "c"))
    assert [table.zone(r) for r in (a, b, c)] == ["east", "east,west",
                                                  "nova"]
    assert list(np.flatnonzero(table.in_zone("west"))) == [b]
    assert sorted(np.flatnonzero(table.in_zone("east"))) == sorted([a, b])
    assert list(np.flatnonzero(table.in_zone("nova"))) == [c]
    assert list(table.in_aggregates([tenants, node_uuid("none")])) == [
        r == a for r in range(table.size)]
    assert sorted(g.name for g in table.aggregates_of(a)) == ["east",
                                                             "tenants"]
    limits = table.aggregate_number("max_io_ops_per_host")
    assert limits[a] == 4 and np.isnan(limits[b]) and np.isnan(limits[c])
    # Metadata and members replaced; a deleted aggregate frees its zone.
    hr.update_aggregate(store, tenants, "tenants",
                        {"max_io_ops_per_host": "2"}, ["a", "c"])
    hr.delete_aggregate(store, west)
    table.sync()
    assert table.zone(b) == "east"
    assert list(table.aggregate_number("max_io_ops_per_host")[[a, c]]) == [
        2, 2]
    assert not hr.delete_aggregate(store, west)


def test_default_zone_comes_from_config(store, clock):
    host_options.register_opts(store.conf)
    store.conf.set_override("default_availability_zone", "zone0")
    try:
        t = host_state.HostStateTable(store, store.conf, clock=clock)
        uuid = add_node(store, "cn1")
        t.sync()
        assert t.zone(t.row_of(uuid)) == "zone0"
        t.close()
    finally:
        store.conf.clear_override("default_availability_zone")


def test_instances_on_hosts(store, table):
    a, b = add_node(store, "a"), add_node(store, "b")
    vm1, vm2, vm3 = (node_uuid(f"vm{i}") for i in (1, 2, 3))
    hr.update_instance_info(store, "a", [
        {"uuid": vm1, "flavor_id": "small", "project_id": "p1"}, vm2])
    table.sync()
    on_a = table.instances_on(table.row_of(a))
    assert sorted(on_a) == sorted([vm1, vm2])
    assert (on_a[vm1].flavor_id, on_a[vm1].project_id) == ("small", "p1")
    hr.update_instance_info(store, "b", [vm2])  # moved
    assert hr.delete_instance_info(store, "a", vm1)
    assert not hr.delete_instance_info(store, "a", vm1)
    table.sync()
    assert table.instances_on(table.row_of(a)) == {}
    assert list(table.instances_on(table.row_of(b))) == [vm2]
    assert hr.sync_instance_info(store, "b", [vm1, vm3])
    assert not hr.sync_instance_info(store, "b", [vm1, vm3])
    table.sync()
    assert sorted(table.instances_on(table.row_of(b))) == sorted([vm1, vm3])
    # The reverse index follows every change, reloads included.
    assert table.instance_host == {vm1: "b", vm3: "b"}
    rows = [table.row_of(a), table.row_of(b)]
    assert table.instance_counts([vm1, vm3, vm2, vm1], rows).tolist() == \
        [0, 2]
    table.note_instance("a", vm2)
    table.note_instance("b", vm3, present=False)
    assert table.instance_host == {vm1: "b", vm2: "a"}
    assert list(table.instances_on(table.row_of(a))) == [vm2]
    table.reload()
    assert table.instance_host == {vm1: "b", vm3: "b"}


def test_build_failures(store, table):
    uuid = add_node(store, "cn1")
    hr.record_build_failure(store, "cn1")
    hr.record_build_failure(store, "cn1", host="cn1")
    table.sync()
    row = table.row_of(uuid)
    assert table.failed_builds[row] == 2
    hr.reset_build_failures(store, "cn1")
    table.sync()
    assert table.failed_builds[row] == 0
    with pytest.raises(hr.HostNotFound):
        hr.record_build_failure(store, "cn1", host="elsewhere")
    # Nova's compute services report the count in their stats.
    hr.upsert_compute_node(store, uuid, "cn1", "cn1",
                           stats={"failed_builds": "5"})
    table.sync()
    assert table.failed_builds[row] == 5


def test_rows_are_reused_and_metrics_follow(store, table):
    a = add_node(store, "a", metrics=[{"name": "m1", "value": 1}])
    table.sync()
    row = table.row_of(a)
    hr.delete_compute_node(store, a)
    table.sync()
    assert not table.alive[row] and table.row_of(a) is None
    assert np.isnan(table.metric("m1")[row])
    assert not table.service_up()[row] and not table.in_zone("nova")[row]
    b = add_node(store, "b", metrics=[{"name": "m2", "value": "0.5"}])
    table.sync()
    assert table.row_of(b) == row
    assert np.isnan(table.metric("m1")[row])
    assert table.metric("m2")[row] == 0.5


def test_a_reader_behind_a_pruned_log_reloads(store, other, table):
    add_node(store, "a")
    table.sync()
    # Another process's write, pruned before this reader saw it.
    add_node(other, "b")
    hc = host_tables.host_changes
    old = store_mod.utcnow() - store_mod.CHANGE_LOG_RETENTION * 2
    with store.engine.begin() as conn:
        conn.execute(hc.update().values(changed_at=old))
    assert store.write(store_mod.prune_other_log,
                       store_mod._CHANGE_LOGS[host_tables.LOG]) == 2
    assert h.count_rows(store, hc) == 0
    table.sync()
    assert table.full_loads == 2
    assert table.row_of(node_uuid("b")) is not None


def test_writes_log_their_records(store):
    recorder = h.Recorder(store)
    try:
        uuid = add_node(store, "a")
        hr.heartbeat(store, "a")
        hr.update_aggregate(store, node_uuid("g"), "g", {}, ["a"])
        hr.sync_instance_info(store, "a", [])  # no change: no log
    finally:
        recorder.close()
    assert [c.entries(host_tables.LOG) for c in recorder.changes] == [
        {(hr.NODE, uuid)}, {(hr.SERVICE, "a")},
        {(hr.AGGREGATE, node_uuid("g"))}]
    with store.engine.connect() as conn:
        log = conn.execute(sa.select(
            host_tables.host_changes.c.seq, host_tables.host_changes.c.kind,
            host_tables.host_changes.c.ref).order_by(
                host_tables.host_changes.c.seq)).all()
    assert [tuple(r[1:]) for r in log] == [
        (hr.NODE, uuid), (hr.SERVICE, "a"), (hr.AGGREGATE, node_uuid("g"))]
    assert [r[0] for r in log] == [s for c in recorder.changes
                                   for s in c.seqs_of(host_tables.LOG)]


BAD_WRITES = [
    (hr.upsert_compute_node, ("not-a-uuid", "h", "n"), {}),
    (hr.upsert_compute_node, (node_uuid("x"), "", "n"), {}),
    (hr.upsert_compute_node, (node_uuid("x"), "h", "n"), {"vcpu": 1}),
    (hr.upsert_compute_node, (node_uuid("x"), "h", "n"), {"vcpus": "1"}),
    (hr.upsert_compute_node, (node_uuid("x"), "h", "n"),
     {"cpu_info": "{not json"}),
    (hr.upsert_compute_node, (node_uuid("x"), "h", "n"),
     {"supported_instances": [["x86_64", "qemu"]]}),
    (hr.upsert_compute_node, (node_uuid("x"), "h", "n"),
     {"metrics": [{"value": 1}]}),
    (hr.upsert_compute_node, (node_uuid("x"), "h", "n"),
     {"cpu_allocation_ratio": -1}),
    (hr.upsert_compute_node, (node_uuid("dup"), "a", "a"), {}),
    (hr.update_aggregate, (node_uuid("g"), "g", {"k": 1}), {}),
    (hr.update_aggregate, (node_uuid("g"), "", {}), {}),
    (hr.update_instance_info, ("a", ["nope"]), {}),
    (hr.heartbeat, ("x" * 256,), {}),
]


def test_refused_writes_change_nothing(store):
    add_node(store, "a")
    for fn, args, kwargs in BAD_WRITES:
        h.raises_unchanged(store, hr.HostRecordError, fn, *args, **kwargs)
    h.raises_unchanged(store, hr.HostNotFound, hr.reset_build_failures,
                       "nope")


def test_a_sync_that_fails_part_way_loads_everything_next(store, other,
                                                         table,
                                                         monkeypatch):
    # The other process's change is read, half applied, and then the
    # sync fails: the table must not go on with what it half holds.
    kept = add_node(store, "kept")
    table.sync()
    add_node(other, "new", vcpus=4)
    hr.set_service_state(other, "kept", enabled=False)
    calls = []
    original = table._set_node

    def fail_once(node):
        original(node)
        calls.append(node.uuid)
        if len(calls) == 1:
            raise RuntimeError("injected failure")

    monkeypatch.setattr(table, "_set_node", fail_once)
    with pytest.raises(RuntimeError, match="injected"):
        table.sync()
    assert not table.loaded
    table.sync()
    assert table.full_loads == 2
    assert not table.enabled[table.row_of(kept)]
    assert table.vcpus_total[table.row_of(node_uuid("new"))] == 4


def test_a_commit_that_cannot_be_taken_loads_everything_next(store, table,
                                                            monkeypatch):
    add_node(store, "kept")
    table.sync()

    def broken(seqs):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(table.cursor, "take_own", broken)
    add_node(store, "new", vcpus=2)  # its commit reaches the listener
    assert not table.loaded
    monkeypatch.undo()
    table.sync()
    assert table.vcpus_total[table.row_of(node_uuid("new"))] == 2
