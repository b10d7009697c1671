"""Compute node reports (scheduler.host_records.upsert_compute_node):
each field's check and its message, the values stored, the free figures
derived from total and used, the failed builds counter, and which error
a report wrong in several ways gets. Nothing is written on an error."""

import uuid as uuidlib

import pytest

from scheduler import host_reads
from scheduler import host_records as hr

NODE = str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, "node1"))


def node(store, uuid=NODE):
    [record] = host_reads.compute_nodes(store, [uuid])
    return record


def refused(store, message, uuid=NODE, host="node1", nodename="node1",
            **report):
    """upsert_compute_node refuses the report with exactly ``message``
    and writes nothing."""
    before = host_reads.compute_nodes(store)
    with pytest.raises(hr.HostRecordError) as caught:
        hr.upsert_compute_node(store, uuid, host, nodename, **report)
    assert str(caught.value) == message
    assert host_reads.compute_nodes(store) == before


BAD_FIELDS = [
    ({"colour": "red"}, "unknown compute node field 'colour'"),
    ({"vcpus": "4"}, "vcpus: expected an integer, got '4'"),
    ({"vcpus": True}, "vcpus: expected an integer, got True"),
    ({"memory_mb": 1.5}, "memory_mb: expected an integer, got 1.5"),
    ({"free_ram_mb": "x"}, "free_ram_mb: expected an integer, got 'x'"),
    ({"vcpus_used": None}, "vcpus_used: may not be null"),
    ({"local_gb": None}, "local_gb: may not be null"),
    ({"cpu_allocation_ratio": -1},
     "cpu_allocation_ratio: expected a number >= 0, got -1"),
    ({"ram_allocation_ratio": "2"},
     "ram_allocation_ratio: expected a number >= 0, got '2'"),
    ({"disk_allocation_ratio": False},
     "disk_allocation_ratio: expected a number >= 0, got False"),
    ({"cpu_allocation_ratio": None},
     "cpu_allocation_ratio: expected a number >= 0, got None"),
    ({"cell_uuid": "cell1"}, "cell_uuid: 'cell1' is not a uuid"),
    ({"hypervisor_type": ""}, "hypervisor_type: expected a string of 1 "
     "to 255 characters, got ''"),
    ({"host_ip": 10}, "host_ip: expected a string of 1 to 255 "
     "characters, got 10"),
    ({"cpu_info": "{"}, "cpu_info: not valid JSON"),
    ({"stats": []}, "stats: expected a JSON object"),
    ({"numa_topology": {"x": {1, 2}}},
     "numa_topology: Object of type set is not JSON serializable"),
    ({"metrics": {}}, "metrics: expected a JSON array"),
    ({"supported_instances": [["x86_64", "qemu"]]},
     "supported_instances[0]: expected [architecture, hypervisor type, "
     "vm mode]"),
    ({"metrics": [{"name": "cpu.percent", "value": 1}, {"name": "x"}]},
     "metrics[1]: expected an object with name and value"),
    ({"pci_device_pools": '[{"count": "2"}]'},
     "pci_device_pools[0]: expected an object with an integer count"),
    # The fields are checked in the report's order.
    ({"vcpus": "4", "colour": "red"}, "vcpus: expected an integer, "
     "got '4'"),
    ({"stats": {"failed_builds": "many"}},
     "stats.failed_builds: not an integer ('many')"),
]


@pytest.mark.parametrize(
    "report, message", BAD_FIELDS,
    ids=[f"{i}-{next(iter(report))}" for i, (report, _m) in
         enumerate(BAD_FIELDS)])
def test_bad_field(sqlite_store, report, message):
    refused(sqlite_store, message, **report)


def test_fields_stored_canonical(sqlite_store):
    hr.upsert_compute_node(
        sqlite_store, NODE, "node1", "node1",
        cell_uuid=NODE.upper(), cpu_allocation_ratio=2,
        cpu_info='{"arch": "x86_64"}', metrics='[]',
        supported_instances=[("x86_64", "qemu", "hvm")],
        hypervisor_version=None, disk_available_least=None,
        free_ram_mb=None, free_disk_gb=None,
        vcpus=8, memory_mb=4096, memory_mb_used=512, local_gb=100)
    record = node(sqlite_store)
    assert record.cell_uuid == NODE
    assert record.cpu_allocation_ratio == 2.0
    assert record.cpu_info == {"arch": "x86_64"}
    assert record.metrics == []
    assert (record.hypervisor_version, record.disk_available_least) == (
        None, None)
    # Null free figures are derived, as left out ones are.
    assert (record.free_ram_mb, record.free_disk_gb) == (4096 - 512, 100)


def test_new_node_gets_the_defaults(sqlite_store):
    hr.upsert_compute_node(sqlite_store, NODE, "node1", "node1")
    record = node(sqlite_store)
    assert (record.vcpus, record.memory_mb, record.free_ram_mb,
            record.free_disk_gb, record.failed_builds) == (0, 0, 0, 0, 0)
    assert (record.cpu_allocation_ratio, record.ram_allocation_ratio,
            record.disk_allocation_ratio) == (4.0, 1.0, 1.0)


def test_update_keeps_what_it_leaves_out(sqlite_store):
    hr.upsert_compute_node(sqlite_store, NODE, "node1", "node1", vcpus=8,
                           memory_mb=4096, free_ram_mb=1000, local_gb=100,
                           free_disk_gb=10, hypervisor_type="QEMU")
    hr.upsert_compute_node(sqlite_store, NODE, "node1", "node1",
                           vcpus_used=2)
    record = node(sqlite_store)
    assert (record.vcpus, record.vcpus_used, record.hypervisor_type) == (
        8, 2, "QEMU")
    # Neither total nor used of memory or disk changed: the reported
    # free figures stay.
    assert (record.free_ram_mb, record.free_disk_gb) == (1000, 10)
    assert record.generation == 1


@pytest.mark.parametrize("field, ram, disk", [
    ("memory_mb", 2048 - 0, 10),
    ("memory_mb_used", 4096 - 2048, 10),
    ("local_gb", 1000, 2048 - 0),
    ("local_gb_used", 1000, 100 - 2048),
])
def test_update_derives_the_free_figure_it_changes(sqlite_store, field,
                                                   ram, disk):
    """A report that changes memory (disk) total or used derives free
    memory (disk) again; the other free figure stays as reported."""
    hr.upsert_compute_node(sqlite_store, NODE, "node1", "node1",
                           memory_mb=4096, free_ram_mb=1000, local_gb=100,
                           free_disk_gb=10)
    hr.upsert_compute_node(sqlite_store, NODE, "node1", "node1",
                           **{field: 2048})
    record = node(sqlite_store)
    assert (record.free_ram_mb, record.free_disk_gb) == (ram, disk)


def test_failed_builds_from_stats(sqlite_store):
    hr.upsert_compute_node(sqlite_store, NODE, "node1", "node1",
                           stats={"failed_builds": "3"})
    assert node(sqlite_store).failed_builds == 3
    # A report without the entry keeps the counter.
    hr.upsert_compute_node(sqlite_store, NODE, "node1", "node1",
                           stats={"io_workload": "1"})
    assert node(sqlite_store).failed_builds == 3
    hr.upsert_compute_node(sqlite_store, NODE, "node1", "node1",
                           stats={"failed_builds": 0})
    assert node(sqlite_store).failed_builds == 0


def test_node_name_taken_by_another_uuid(sqlite_store):
    hr.upsert_compute_node(sqlite_store, NODE, "node1", "node1")
    other = str(uuidlib.uuid4())
    refused(sqlite_store, f"host 'node1' node 'node1' is compute node "
            f"{NODE} already", uuid=other)
    # Checked before the failed builds entry of the stats.
    refused(sqlite_store, f"host 'node1' node 'node1' is compute node "
            f"{NODE} already", uuid=other,
            stats={"failed_builds": "many"})
    # Checked after the report's fields.
    refused(sqlite_store, "vcpus: expected an integer, got '4'",
            uuid=other, vcpus="4")


def test_arguments_checked_before_the_report(sqlite_store):
    refused(sqlite_store, "uuid: 'node1' is not a uuid", uuid="node1",
            vcpus="4")
    refused(sqlite_store, "host: expected a string of 1 to 255 "
            "characters, got ''", host="", vcpus="4")
    refused(sqlite_store, "nodename: expected a string of 1 to 255 "
            "characters, got None", nodename=None, vcpus="4")
