"""The host report a compute node sends the scheduler (update_host_info)
for what placement does not hold: accepted by the scheduler's own check,
and its NUMA topology read by the scheduler's NUMA fitting as the fake
host's sysfs describes it."""

from compute import host_report
from compute.discovery import DiscoveryConfig, discover
from filters import numa_fit
from scheduler import host_records
from tests.compute import fake_sysfs

CONFIG = DiscoveryConfig(cpu_shared_set="0-7,16-23",
                         cpu_dedicated_set="8-15,24-31")


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
