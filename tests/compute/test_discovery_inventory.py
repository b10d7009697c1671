"""The providers a node reports for the fake 2-socket host."""

import pytest

from compute.discovery import DiscoveryConfig, discover, provider_tree_data
from tests.compute import fake_sysfs


def inv(total, reserved=0, ratio=1.0):
    return {"total": total, "reserved": reserved, "min_unit": 1,
            "max_unit": total, "step_size": 1, "allocation_ratio": ratio}


@pytest.fixture
def root(tmp_path):
    fake_sysfs.two_socket_host(tmp_path)
    return str(tmp_path)


CONFIG = {"cpu_shared_set": "0-3,16-19",
          "cpu_dedicated_set": "4-15,20-31",
          "reserved_host_memory_mb": 4096,
          "disk_path": "/srv", "reserved_host_disk_mb": 10 * 1024,
          "physnets": {"ens1f0": "physnet1", "ens6f0": "phys-net.2"},
          "enabled_mdev_types": ["nvidia-36", "nvidia-35"]}


def tree(root, **overrides):
    config = DiscoveryConfig(**{**CONFIG, **overrides})
    host = discover(root, config, hostname="node-1",
                    statvfs=fake_sysfs.FakeStatvfs(900, 700))
    return provider_tree_data(host, config)


def test_root_children_for_pfs_and_gpu(root):
    data = tree(root)
    assert sorted(data) == ["node-1", "node-1:ens1f0", "node-1:ens6f0",
                            "node-1_pci_0000_af_00_0"]
    top = data["node-1"]
    assert top["parent"] is None
    assert top["inventories"] == {
        "VCPU": inv(8, ratio=4.0), "PCPU": inv(24),
        "MEMORY_MB": inv(131064, 4096), "DISK_GB": inv(900, 10)}
    assert "HW_CPU_X86_AVX2" in top["traits"]
    assert data["node-1:ens1f0"] == {
        "parent": "node-1", "inventories": {"SRIOV_NET_VF": inv(8)},
        "traits": ["CUSTOM_PHYSNET_PHYSNET1", "HW_NIC_SRIOV"]}
    assert data["node-1:ens6f0"] == {
        "parent": "node-1", "inventories": {"SRIOV_NET_VF": inv(16)},
        "traits": ["CUSTOM_PHYSNET_PHYS_NET_2", "HW_NIC_SRIOV"]}
    # nvidia-36 is enabled first: 6 more instances and 2 created.
    assert data["node-1_pci_0000_af_00_0"] == {
        "parent": "node-1", "inventories": {"VGPU": inv(8)},
        "traits": []}


def test_numa_children(root):
    data = tree(root, numa_providers=True)
    assert data["node-1"]["inventories"] == {"DISK_GB": inv(900, 10)}
    assert data["node-1_NUMA_0"] == {
        "parent": "node-1",
        "inventories": {"VCPU": inv(4, ratio=4.0), "PCPU": inv(12),
                        "MEMORY_MB": inv(65536, 4096)},
        "traits": ["HW_NUMA_ROOT"]}
    assert data["node-1_NUMA_1"] == {
        "parent": "node-1",
        "inventories": {"VCPU": inv(4, ratio=4.0), "PCPU": inv(12),
                        "MEMORY_MB": inv(65536)},
        "traits": ["HW_NUMA_ROOT"]}


def test_nothing_enabled_gives_no_gpu_and_zero_totals_are_left_out(root):
    data = tree(root, enabled_mdev_types=[], cpu_shared_set=None,
                cpu_dedicated_set=None, disk_path=None)
    assert sorted(data) == ["node-1", "node-1:ens1f0", "node-1:ens6f0"]
    assert data["node-1"]["inventories"] == {
        "VCPU": inv(32, ratio=4.0), "MEMORY_MB": inv(131064, 4096)}


def test_pf_without_vfs_has_no_provider(tmp_path):
    host = fake_sysfs.FakeHost(tmp_path)
    host.cpus("0-1", 2, [])
    host.meminfo(4 * 1024 * 1024)
    host.sriov_pf("0000:01:00.0", "8086", "1572", 64, 0, "eno1", -1)
    data = provider_tree_data(discover(str(tmp_path), hostname="h"))
    assert sorted(data) == ["h"]
