"""Discovery on a fake 2-socket host (tests/compute/fake_sysfs.py) and
on the real machine. Expected values are what the fake tree says."""

import os

import os_traits
import pytest

from compute.discovery import (
    DiscoveryConfig,
    DiscoveryConfigError,
    HugePages,
    MdevType,
    VirtualFunction,
    discover,
)
from compute.discovery import traits as traits_mod
from tests.compute import fake_sysfs

CPU_TRAITS = [
    "HW_CPU_X86_AESNI", "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2",
    "HW_CPU_X86_AVX512BW", "HW_CPU_X86_AVX512DQ", "HW_CPU_X86_AVX512F",
    "HW_CPU_X86_AVX512VL", "HW_CPU_X86_AVX512VNNI", "HW_CPU_X86_BMI",
    "HW_CPU_X86_BMI2", "HW_CPU_X86_CLMUL", "HW_CPU_X86_F16C",
    "HW_CPU_X86_FMA3", "HW_CPU_X86_INTEL_VMX", "HW_CPU_X86_MMX",
    "HW_CPU_X86_PDPE1GB", "HW_CPU_X86_SHA", "HW_CPU_X86_SSE",
    "HW_CPU_X86_SSE2", "HW_CPU_X86_SSE3", "HW_CPU_X86_SSE41",
    "HW_CPU_X86_SSE42", "HW_CPU_X86_SSSE3", "HW_CPU_X86_VMX",
]


@pytest.fixture
def root(tmp_path):
    fake_sysfs.two_socket_host(tmp_path)
    return str(tmp_path)


def test_cpus_memory_and_traits(root):
    host = discover(root, hostname="node-1")
    assert host.hostname == "node-1"
    assert host.cpus.online == frozenset(range(32))
    # Neither set configured: every online CPU is shared.
    assert host.cpus.shared == frozenset(range(32))
    assert host.cpus.dedicated == frozenset()
    assert host.memory.total_mb == 131064
    assert host.memory.reserved_mb == 512   # the default reserve
    assert host.memory.usable_mb == 131064 - 512
    assert host.traits == CPU_TRAITS
    assert host.disk is None                # no disk_path configured


def test_numa_nodes_and_huge_pages(root):
    host = discover(root)
    assert [n.id for n in host.numa_nodes] == [0, 1]
    node0, node1 = host.numa_nodes
    assert node0.cpus == frozenset(range(16))
    assert node1.cpus == frozenset(range(16, 32))
    assert node0.memory_mb == node1.memory_mb == 65536
    assert node0.hugepages == {
        2048: HugePages(2048, total=1024, free=1000),
        1048576: HugePages(1048576, total=4, free=4)}
    assert node1.hugepages == {
        2048: HugePages(2048, total=512, free=500),
        1048576: HugePages(1048576, total=4, free=2)}
    assert host.hugepages == {
        2048: HugePages(2048, total=1536, free=1500),
        1048576: HugePages(1048576, total=8, free=6)}


def test_sriov_physical_functions(root):
    config = DiscoveryConfig(physnets={"ens1f0": "physnet1",
                                       fake_sysfs.PF1: "physnet2"})
    host = discover(root, config)
    pf0, pf1 = host.physical_functions   # the VF and plain NIC are not
    assert (pf0.address, pf0.vendor_id, pf0.product_id) == (
        "0000:3b:00.0", "8086", "1572")
    assert (pf0.total_vfs, pf0.num_vfs) == (64, 8)
    assert (pf0.interface, pf0.numa_node) == ("ens1f0", 0)
    assert pf0.physnet == "physnet1"         # by interface name
    assert (pf1.address, pf1.vendor_id, pf1.product_id) == (
        "0000:d8:00.0", "15b3", "1017")
    assert (pf1.total_vfs, pf1.num_vfs) == (32, 16)
    assert (pf1.interface, pf1.numa_node) == ("ens6f0", 1)
    assert pf1.physnet == "physnet2"         # by PCI address


def test_physnet_not_configured(root):
    host = discover(root)
    assert [pf.physnet for pf in host.physical_functions] == [None, None]


def test_sriov_virtual_functions(root):
    pf0, pf1 = discover(root).physical_functions
    # virtfn0..7 of PF0 are 3b:02.0-3b:02.7, in VF order.
    assert pf0.vfs == [VirtualFunction(f"0000:3b:02.{f}", "8086", "154c", 0)
                       for f in range(8)]
    assert pf0.vfs[0].address == fake_sysfs.VF0
    assert pf0.vf_product_id == "154c"      # its sriov_vf_device
    assert len(pf1.vfs) == 16
    assert pf1.vfs[0] == VirtualFunction(fake_sysfs.PF1_VF0, "15b3", "1018",
                                         1)
    assert pf1.vfs[-1].address == "0000:d8:02.1"
    assert pf1.vf_product_id == "1018"      # no sriov_vf_device: a VF's


def test_only_enabled_vfs_are_read(root):
    # The count is lowered before the kernel drops the links.
    numvfs = os.path.join(root, "sys/bus/pci/devices", fake_sysfs.PF0,
                          "sriov_numvfs")
    with open(numvfs, "w") as f:
        f.write("3\n")
    pf0 = discover(root).physical_functions[0]
    assert [vf.address for vf in pf0.vfs] == [
        "0000:3b:02.0", "0000:3b:02.1", "0000:3b:02.2"]


def test_vf_without_ids_takes_the_pfs(tmp_path):
    host = fake_sysfs.FakeHost(tmp_path)
    pf = "0000:01:00.0"
    host.sriov_pf(pf, "8086", "1592", 128, 2, "eno1", 0, vf_device="1889")
    # A VF directory without vendor, device or numa_node files.
    host.sriov_vfs(pf, 0x08, 2, None, None, 0)
    for vf in ("0000:01:01.0", "0000:01:01.1"):
        os.remove(tmp_path / "sys/bus/pci/devices" / vf / "numa_node")
    (found,) = discover(str(tmp_path)).physical_functions
    assert found.vfs == [
        VirtualFunction("0000:01:01.0", "8086", "1889", 0),
        VirtualFunction("0000:01:01.1", "8086", "1889", 0)]


def test_pf_without_vf_links(tmp_path):
    fake_sysfs.FakeHost(tmp_path).sriov_pf("0000:01:00.0", "8086", "1572",
                                           64, 4, "eno1", -1)
    (found,) = discover(str(tmp_path)).physical_functions
    assert (found.num_vfs, found.vfs, found.vf_product_id) == (4, [], None)


def test_gpu_and_mdev_types(root):
    (gpu,) = discover(root).gpus
    assert (gpu.address, gpu.vendor_id, gpu.product_id, gpu.numa_node) == (
        "0000:af:00.0", "10de", "13f2", 1)
    assert gpu.mdev_types == {
        "nvidia-35": MdevType("nvidia-35", "GRID M60-0B", 16, "vfio-pci"),
        "nvidia-36": MdevType("nvidia-36", "GRID M60-0Q", 6, "vfio-pci",
                              created=2)}


def test_gpu_of_3d_class_without_mdev(tmp_path):
    host = fake_sysfs.FakeHost(tmp_path)
    host.cpus("0", 1, [])
    host.meminfo(1024 * 1024)
    host.gpu("0000:01:00.0", "10de", "20b0", -1, {}, pci_class="030200")
    (gpu,) = discover(str(tmp_path)).gpus
    assert gpu.numa_node is None and gpu.mdev_types == {}


def test_disk_from_statvfs(root):
    statvfs = fake_sysfs.FakeStatvfs(total_gb=900, free_gb=700)
    config = DiscoveryConfig(disk_path="/var/lib/instances",
                             reserved_host_disk_mb=2048 + 1)
    disk = discover(root, config, statvfs=statvfs).disk
    assert statvfs.paths == ["/var/lib/instances"]
    assert (disk.path, disk.total_gb, disk.free_gb) == (
        "/var/lib/instances", 900, 700)
    assert disk.reserved_gb == 3          # 2049 MB, rounded up


def test_cpu_sets_from_config(root):
    config = DiscoveryConfig(cpu_shared_set="0-3,16-19",
                             cpu_dedicated_set="4-15,20-31,^31")
    cpus = discover(root, config).cpus
    assert cpus.shared == frozenset([0, 1, 2, 3, 16, 17, 18, 19])
    assert cpus.dedicated == frozenset(range(4, 16)) | frozenset(
        range(20, 31))


def test_only_dedicated_set_leaves_no_shared(root):
    cpus = discover(root, DiscoveryConfig(cpu_dedicated_set="2-31")).cpus
    assert cpus.shared == frozenset()
    assert cpus.dedicated == frozenset(range(2, 32))


@pytest.mark.parametrize("shared, dedicated, message", [
    ("0-7", "4-31", "overlap on CPUs 4-7"),
    ("0-40", None, "cpu_shared_set: CPUs 32-40 are not online"),
    (None, "0-3,x", "cpu_dedicated_set: invalid CPU set '0-3,x'"),
])
def test_bad_cpu_sets(root, shared, dedicated, message):
    config = DiscoveryConfig(cpu_shared_set=shared,
                             cpu_dedicated_set=dedicated)
    with pytest.raises(DiscoveryConfigError, match=message):
        discover(root, config)


def test_config_traits_are_added_and_checked(root):
    config = DiscoveryConfig(traits=["CUSTOM_GOLD", "COMPUTE_NODE"])
    host = discover(root, config)
    assert host.traits == sorted(CPU_TRAITS + ["COMPUTE_NODE",
                                               "CUSTOM_GOLD"])
    for bad in ("HW_CPU_X86_NOPE", "custom_gold", "CUSTOM_a-b"):
        with pytest.raises(DiscoveryConfigError, match="traits: "):
            discover(root, DiscoveryConfig(traits=[bad]))


def test_cpuinfo_when_no_online_file(tmp_path):
    host = fake_sysfs.FakeHost(tmp_path)
    host.cpus("0-3", 4, ["sse", "svm"])
    os.remove(tmp_path / "sys/devices/system/cpu/online")
    host.meminfo(2 * 1024 * 1024)
    found = discover(str(tmp_path))
    assert found.cpus.online == frozenset(range(4))
    assert found.memory.total_mb == 2048
    assert found.traits == ["HW_CPU_X86_AMD_SVM", "HW_CPU_X86_SSE",
                            "HW_CPU_X86_SVM"]
    assert (found.numa_nodes, found.hugepages, found.physical_functions,
            found.gpus) == ([], {}, [], [])


def test_empty_root_gives_an_empty_host(tmp_path):
    found = discover(str(tmp_path))
    assert found.cpus.online == frozenset()
    assert found.memory.total_mb == 0


def test_every_mapped_flag_is_a_standard_trait():
    standard = set(os_traits.get_traits())
    mapped = {t for names in traits_mod.CPU_FLAG_TRAITS.values()
              for t in names}
    assert mapped <= standard


def test_real_machine():
    host = discover("/", DiscoveryConfig(reserved_host_memory_mb=0,
                                         disk_path="/"))
    assert len(host.cpus.online) >= 1
    assert host.memory.total_mb > 0
    assert host.disk.total_gb >= 0
    assert all(t in os_traits.get_traits() for t in host.traits)
