"""The host report a compute node sends the scheduler (update_host_info)
for what placement does not hold: accepted by the scheduler's own check,
and its NUMA topology and PCI device pools read by the scheduler's NUMA
fitting and PCI filter as the fake host's sysfs describes it."""

import pytest

from compute import host_report
from compute.discovery import DiscoveryConfig, discover
from filters import numa_fit, pci_fit
from filters import pci_passthrough as pp
from scheduler import host_devices, host_records
from tests.compute import fake_sysfs
from tests.scheduler.cloud import Cloud

CONFIG = DiscoveryConfig(cpu_shared_set="0-7,16-23",
                         cpu_dedicated_set="8-15,24-31",
                         physnets={"ens1f0": "physnet1"})


def _host(tmp_path):
    fake_sysfs.two_socket_host(tmp_path)
    return discover(str(tmp_path), CONFIG, hostname="cn-1",
                    statvfs=fake_sysfs.FakeStatvfs(500, 400))


def test_report_is_accepted_by_the_scheduler(tmp_path, sqlite_store):
    report = host_report.host_report(_host(tmp_path), CONFIG)
    # The scheduler's own check of update_host_info's report refuses an
    # unknown field or a value of the wrong kind.
    host_records.upsert_compute_node(
        sqlite_store, "0b5b7a33-8f5e-4a41-9d5b-0c1c7f2d3e4a", "cn-1",
        "cn-1", **report)
    assert report["vcpus"] == 16  # the shared set: 0-7 and 16-23
    assert report["memory_mb"] == fake_sysfs.TOTAL_KB // 1024
    assert report["hypervisor_type"] == "gantt"
    assert len(report["pci_device_pools"]) == 2


# The pools of the fake host: PF0's 8 VFs on physnet1 (by config), PF1's
# 16 without a physnet.
POOLS = [
    {"vendor_id": "8086", "product_id": "154c", "numa_node": 0,
     "dev_type": "type-VF", "address": fake_sysfs.PF0,
     "remote_managed": "false", "physical_network": "physnet1",
     "parent_ifname": "ens1f0", "count": 8},
    {"vendor_id": "15b3", "product_id": "1018", "numa_node": 1,
     "dev_type": "type-VF", "address": fake_sysfs.PF1,
     "remote_managed": "false", "parent_ifname": "ens6f0", "count": 16},
]


def test_pci_device_pools(tmp_path):
    report = host_report.host_report(_host(tmp_path), CONFIG)
    assert report["pci_device_pools"] == POOLS
    # Per NUMA node, as the scheduler's NUMA fitting counts devices.
    assert numa_fit.pci_per_cell(report["pci_device_pools"]) == {0: 8,
                                                                 1: 16}


def test_pools_split_by_vf_ids_and_count_num_vfs(tmp_path):
    host = _host(tmp_path)
    pf0 = host.physical_functions[0]
    # One VF on another node, and a host file's larger count: the rest
    # are taken to be like the PF says.
    pf0.vfs[0].numa_node = 1
    pf0.num_vfs = 10
    pools = host_report.pci_device_pools(host)
    assert [(p["address"], p["numa_node"], p["product_id"], p["count"])
            for p in pools] == [(fake_sysfs.PF0, 1, "154c", 1),
                                (fake_sysfs.PF0, 0, "154c", 9),
                                (fake_sysfs.PF1, 1, "1018", 16)]


def test_vfs_of_unknown_ids_or_none_enabled_give_no_pool(tmp_path):
    host = _host(tmp_path)
    pf0, pf1 = host.physical_functions
    pf0.num_vfs = 0
    pf1.vfs, pf1.vf_product_id = [], None
    report = host_report.host_report(host, CONFIG)
    # Sent empty, not left out: the record must lose the old pools.
    assert report["pci_device_pools"] == []


PCI_CASES = {
    # A PCI alias for the X710 VFs, with the port's physical network.
    "alias-physnet": ((8, {"vendor_id": "8086", "product_id": "154C",
                           "physical_network": "physnet1"}), ["cn-1"]),
    "too-many": ((9, {"vendor_id": "8086", "product_id": "154c"}), []),
    "other-physnet": ((1, {"vendor_id": "8086", "product_id": "154c",
                           "physical_network": "physnet2"}), []),
    "pf-not-offered": ((1, {"vendor_id": "8086", "product_id": "1572"}),
                       []),
    "vf-without-physnet": ((16, {"vendor_id": "15b3",
                                 "product_id": "1018"}), ["cn-1"]),
    "vf-type": ((24, {"dev_type": "type-VF"}), ["cn-1"]),
    # What Nova asks for a Neutron SR-IOV port (vnic_type direct).
    "neutron-port": ((1, {"physical_network": "physnet1",
                          "remote_managed": "False"}), ["cn-1"]),
    "remote-managed-port": ((1, {"physical_network": "physnet1",
                                 "remote_managed": "True"}), []),
}


@pytest.fixture
def cloud(sqlite_store):
    c = Cloud(sqlite_store)
    yield c
    c.close()


@pytest.mark.parametrize("asked, expected", PCI_CASES.values(),
                         ids=PCI_CASES.keys())
def test_scheduler_pci_filter_matches_the_pools(tmp_path, cloud, asked,
                                                expected):
    # The node records what the agent would send; "bare" has no pools.
    cloud.node("cn-1", **host_report.host_report(_host(tmp_path), CONFIG))
    cloud.node("bare")
    count, spec = asked
    request = cloud.request({"pci_requests": [{"count": count,
                                               "spec": [spec]}]})
    rows = cloud.rows()
    mask = pp.PciPassthroughFilter(cloud.conf).mask(request, rows)
    assert cloud.names(rows, mask) == expected


def test_scheduler_takes_devices_from_the_pools(tmp_path, cloud):
    cloud.node("cn-1", **host_report.host_report(_host(tmp_path), CONFIG))
    request = cloud.request({"pci_requests": [{"count": 3, "spec": [
        {"vendor_id": "8086", "product_id": "154c",
         "physical_network": "physnet1"}]}]})
    node = cloud.table.node(cloud.rows("cn-1")[0])
    left = host_devices.pci_after(node.pci_device_pools,
                                  pci_fit.needs_of(request))
    assert [p["count"] for p in left] == [5, 16]


def test_numa_topology_as_the_scheduler_reads_it(tmp_path):
    report = host_report.host_report(_host(tmp_path), CONFIG)
    cells = numa_fit.host_cells(report["numa_topology"])
    assert [c.id for c in cells] == [0, 1]
    node_mb = fake_sysfs.NODE_KB // 1024
    # Node 0: CPUs 0-15, the first half shared, the second dedicated;
    # 1024 pages of 2 MiB (1000 free) and 4 of 1 GiB (all free).
    first = report["numa_topology"]["cells"][0]
    assert first["cpuset"] == list(range(0, 8))
    assert first["pcpuset"] == list(range(8, 16))
    assert first["memory"] == node_mb
    pages = {p["size_kb"]: p for p in first["mempages"]}
    assert pages[2048]["total"] == 1024 and pages[2048]["used"] == 24
    assert pages[1048576]["total"] == 4 and pages[1048576]["used"] == 0
    small_kb = node_mb * 1024 - 1024 * 2048 - 4 * 1048576
    assert pages[4]["total"] == small_kb // 4
    second = report["numa_topology"]["cells"][1]
    assert second["cpuset"] == list(range(16, 24))
    assert second["pcpuset"] == list(range(24, 32))
    assert {p["size_kb"]: p["used"] for p in second["mempages"]} == {
        4: 0, 2048: 12, 1048576: 2}


def test_no_numa_nodes_no_topology(tmp_path):
    fake = fake_sysfs.FakeHost(tmp_path)
    fake.cpus("0-3", 4, ["sse2"])
    fake.meminfo(8 * 1024 * 1024)
    host = discover(str(tmp_path), DiscoveryConfig(), hostname="small")
    report = host_report.host_report(host)
    assert "numa_topology" not in report
    assert report["vcpus"] == 4 and report["local_gb"] == 0
