"""The YAML host file: standing in for discovery or adding to it."""

import textwrap

import pytest

from compute import host_report
from compute.discovery import (
    DiscoveryConfig,
    HostFileError,
    HugePages,
    MdevType,
    describe_host,
    provider_tree_data,
)
from tests.compute import fake_sysfs


@pytest.fixture
def root(tmp_path):
    fake_sysfs.two_socket_host(tmp_path / "root")
    return str(tmp_path / "root")


def write(tmp_path, text, name="host.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


FULL = """\
    discover: false
    hostname: edge-7
    cpus:
      online: "0-7"
      shared_set: "0-1"
      dedicated_set: "2-7"
    memory:
      total_mb: 32768
      reserved_mb: 1024
    numa_nodes:
      - id: 0
        cpus: "0-7"
        memory_mb: 32768
        hugepages:
          - {size_kb: 2048, total: 256, free: 200}
    hugepages:
      - {size_kb: 2048, total: 256, free: 200}
    physical_functions:
      - address: "0000:01:00.0"
        interface: eno1
        vendor_id: "0x8086"
        product_id: "1572"
        vf_product_id: "0x154C"
        total_vfs: 16
        num_vfs: 4
        numa_node: 0
    gpus:
      - address: "0000:02:00.0"
        vendor_id: "10de"
        product_id: "1eb8"
        mdev_types:
          - {id: nvidia-222, name: "GRID T4-1B", available_instances: 16}
    disk:
      total_gb: 400
      reserved_gb: 20
    traits: [CUSTOM_EDGE]
"""


def test_file_without_discovery(tmp_path):
    path = write(tmp_path, FULL)
    # The root does not exist: nothing under it is read.
    host = describe_host(str(tmp_path / "nowhere"),
                         DiscoveryConfig(physnets={"eno1": "edge"},
                                         traits=["CUSTOM_CONF"]),
                         host_file=path)
    assert host.hostname == "edge-7"
    assert host.cpus.online == frozenset(range(8))
    assert host.cpus.shared == frozenset([0, 1])
    assert host.cpus.dedicated == frozenset(range(2, 8))
    assert (host.memory.total_mb, host.memory.reserved_mb) == (32768, 1024)
    (node,) = host.numa_nodes
    assert (node.id, node.cpus, node.memory_mb) == (
        0, frozenset(range(8)), 32768)
    assert node.hugepages == {2048: HugePages(2048, 256, 200)}
    assert host.hugepages == {2048: HugePages(2048, 256, 200)}
    (pf,) = host.physical_functions
    assert (pf.address, pf.interface, pf.vendor_id, pf.product_id,
            pf.total_vfs, pf.num_vfs, pf.numa_node) == (
        "0000:01:00.0", "eno1", "8086", "1572", 16, 4, 0)
    assert pf.physnet == "edge"             # from config, by interface
    assert (pf.vf_product_id, pf.vfs) == ("154c", [])
    (gpu,) = host.gpus
    assert gpu.mdev_types == {
        "nvidia-222": MdevType("nvidia-222", "GRID T4-1B", 16)}
    assert (host.disk.total_gb, host.disk.free_gb,
            host.disk.reserved_gb) == (400, 400, 20)
    assert host.traits == ["CUSTOM_CONF", "CUSTOM_EDGE"]
    data = provider_tree_data(host, DiscoveryConfig(
        enabled_mdev_types=["nvidia-222"]))
    assert sorted(data) == ["edge-7", "edge-7:eno1",
                            "edge-7_pci_0000_02_00_0"]
    assert data["edge-7"]["inventories"]["PCPU"]["total"] == 6


def test_file_adds_to_and_changes_discovery(root, tmp_path):
    path = write(tmp_path, """\
        cpus:
          dedicated_set: "8-15,24-31"
        memory:
          reserved_mb: 2048
        physical_functions:
          - address: "0000:3b:00.0"
            physnet: physnet9
            num_vfs: 32
          - address: "0000:5e:00.0"
            interface: ens2f0
            total_vfs: 8
            num_vfs: 8
        gpus:
          - address: "0000:af:00.0"
            mdev_types:
              - {id: nvidia-35, available_instances: 4}
        traits: [CUSTOM_FAST, HW_CPU_X86_AVX2]
        """)
    config = DiscoveryConfig(cpu_shared_set="0-7", physnets={
        "ens2f0": "physnet2"})
    host = describe_host(root, config, host_file=path)
    # Discovered, kept:
    assert host.cpus.online == frozenset(range(32))
    assert host.memory.total_mb == 131064
    assert [n.id for n in host.numa_nodes] == [0, 1]
    # Changed by the file (the config's shared set still applies):
    assert host.cpus.shared == frozenset(range(8))
    assert host.cpus.dedicated == frozenset(range(8, 16)) | frozenset(
        range(24, 32))
    assert host.memory.reserved_mb == 2048
    pf0, pf1, pf2 = host.physical_functions
    assert (pf0.address, pf0.interface, pf0.total_vfs, pf0.num_vfs,
            pf0.physnet) == ("0000:3b:00.0", "ens1f0", 64, 32, "physnet9")
    assert (pf1.address, pf1.interface, pf1.total_vfs, pf1.num_vfs,
            pf1.physnet) == ("0000:5e:00.0", "ens2f0", 8, 8, "physnet2")
    assert (pf2.address, pf2.num_vfs) == ("0000:d8:00.0", 16)
    (gpu,) = host.gpus
    assert gpu.vendor_id == "10de"
    assert gpu.mdev_types["nvidia-35"] == MdevType("nvidia-35", None, 4)
    assert gpu.mdev_types["nvidia-36"].available_instances == 6
    assert "CUSTOM_FAST" in host.traits
    assert "HW_CPU_X86_SSE42" in host.traits


def test_file_pf_vfs_in_pools(tmp_path):
    # A PF the file adds has no VF list: its num_vfs VFs are like it
    # says, and without vf_product_id no request could name them.
    host = describe_host(str(tmp_path / "nowhere"),
                         DiscoveryConfig(physnets={"eno1": "edge"}),
                         host_file=write(tmp_path, FULL))
    (pool,) = host_report.pci_device_pools(host)
    assert pool == {"vendor_id": "8086", "product_id": "154c",
                    "numa_node": 0, "dev_type": "type-VF",
                    "address": "0000:01:00.0", "remote_managed": "false",
                    "physical_network": "edge", "parent_ifname": "eno1",
                    "count": 4}
    bare = write(tmp_path, FULL.replace('        vf_product_id: "0x154C"\n',
                                        ""), "bare.yaml")
    host = describe_host(str(tmp_path / "nowhere"), host_file=bare)
    assert host.physical_functions[0].vf_product_id is None
    assert host_report.pci_device_pools(host) == []


def test_file_pf_fields_apply_to_its_discovered_vfs(root, tmp_path):
    path = write(tmp_path, """\
        physical_functions:
          - address: "0000:3b:00.0"
            vf_product_id: "1889"
            numa_node: 1
            num_vfs: 4
        """)
    pf0, pf1 = describe_host(root, host_file=path).physical_functions
    assert len(pf0.vfs) == 8                # as found; 4 counted
    assert {(vf.vendor_id, vf.product_id, vf.numa_node)
            for vf in pf0.vfs} == {("8086", "1889", 1)}
    assert pf1.vfs[0].product_id == "1018"  # not in the file: as found
    pools = host_report.pci_device_pools(describe_host(root,
                                                       host_file=path))
    assert [(p["product_id"], p["numa_node"], p["count"]) for p in pools] \
        == [("1889", 1, 4), ("1018", 1, 16)]


def test_no_file_is_discovery(root):
    host = describe_host(root, hostname="x")
    assert host.cpus.online == frozenset(range(32))


def test_empty_file_is_discovery(root, tmp_path):
    host = describe_host(root, host_file=write(tmp_path, ""))
    assert host.memory.total_mb == 131064


@pytest.mark.parametrize("text, field, message", [
    ("discover: false\nmemory: {total_mb: 1}\n", "(top)",
     "'cpus' is a required property"),
    ("discover: false\ncpus: {online: '0'}\nmemory: {}\n", "memory",
     "'total_mb' is a required property"),
    ("memory: {total_mb: -1}\n", "memory.total_mb", "less than"),
    ("colour: blue\n", "(top)", "'colour' was unexpected"),
    ("physical_functions: [{address: '3b:00.0'}]\n",
     "physical_functions[0].address", "does not match"),
    ("gpus: [{address: '0000:af:00.0', mdev_types: [{id: a}]}]\n",
     "gpus[0].mdev_types[0]", "'available_instances' is a required"),
    ("cpus: {shared_set: '0-3,x'}\n", "cpus.shared_set",
     "invalid CPU set"),
    ("cpus: {shared_set: '0-40'}\n", "cpus",
     "cpu_shared_set: CPUs 32-40 are not online"),
    ("numa_nodes: [{id: 0, cpus: '9-1', memory_mb: 1}]\n",
     "numa_nodes[0].cpus", "ends before it starts"),
    ("traits: [CUSTOM_OK, not_a_trait]\n", "traits[1]",
     "not a standard trait"),
    ("physical_functions: [{address: '0000:3b:00.0', num_vfs: 65}]\n",
     "physical_functions 0000:3b:00.0", "more than total_vfs 64"),
    ("- a list\n", "(top)", "is not of type 'object'"),
])
def test_errors_name_file_and_field(root, tmp_path, text, field, message):
    path = write(tmp_path, text)
    with pytest.raises(HostFileError) as caught:
        describe_host(root, host_file=path)
    error = caught.value
    assert (error.path, error.field) == (str(path), field)
    assert message in error.message
    assert str(error).startswith(f"{path}: {field}: ")


def test_unreadable_files(root, tmp_path):
    with pytest.raises(HostFileError, match="No such file"):
        describe_host(root, host_file=tmp_path / "missing.yaml")
    with pytest.raises(HostFileError, match="not valid YAML"):
        describe_host(root, host_file=write(tmp_path, "a: [1,\n"))
