"""A fake ``/proc`` and ``/sys`` written by code under a temporary root,
for discovery tests. Only the files discovery reads are written, in the
kernel's formats (see compute/discovery/*.py for the list)."""

import os


class FakeHost:
    """Build a fake tree under ``root``: call the methods, then pass
    ``root`` to discovery."""

    def __init__(self, root):
        self.root = str(root)

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def cpus(self, online, count, flags, model="Fake CPU @ 2.10GHz"):
        """``online``: the kernel's cpulist text; ``count`` processors in
        /proc/cpuinfo, each with ``flags``."""
        self.write("sys/devices/system/cpu/online", online + "\n")
        blocks = [f"processor\t: {i}\nvendor_id\t: GenuineIntel\n"
                  f"model name\t: {model}\nflags\t\t: {' '.join(flags)}\n"
                  for i in range(count)]
        self.write("proc/cpuinfo", "\n".join(blocks) + "\n")

    def meminfo(self, total_kb, free_kb=None):
        free = total_kb // 2 if free_kb is None else free_kb
        self.write("proc/meminfo",
                   f"MemTotal:       {total_kb} kB\n"
                   f"MemFree:        {free} kB\n"
                   f"MemAvailable:   {free} kB\n"
                   "HugePages_Total:       0\n"
                   "Hugepagesize:       2048 kB\n")

    def _hugepages(self, directory, pages):
        for size_kb, (total, free) in pages.items():
            here = f"{directory}/hugepages-{size_kb}kB"
            self.write(f"{here}/nr_hugepages", f"{total}\n")
            self.write(f"{here}/free_hugepages", f"{free}\n")
            self.write(f"{here}/surplus_hugepages", "0\n")

    def hugepages(self, pages):
        """{size_kb: (total, free)} host-wide."""
        self._hugepages("sys/kernel/mm/hugepages", pages)

    def numa_node(self, node, cpulist, total_kb, hugepages=None):
        here = f"sys/devices/system/node/node{node}"
        self.write(f"{here}/cpulist", cpulist + "\n")
        self.write(f"{here}/meminfo",
                   f"Node {node} MemTotal:       {total_kb} kB\n"
                   f"Node {node} MemFree:        {total_kb // 2} kB\n"
                   f"Node {node} MemUsed:        {total_kb // 2} kB\n")
        self._hugepages(f"{here}/hugepages", hugepages or {})
        # Not nodes: discovery must skip them.
        self.write("sys/devices/system/node/online", "0-1\n")
        self.write("sys/devices/system/node/possible", "0-1\n")

    def pci_device(self, address, vendor, device, pci_class, numa_node=-1):
        """``vendor``/``device`` None: that file is left out."""
        here = f"sys/bus/pci/devices/{address}"
        for name, value in (("vendor", vendor), ("device", device)):
            if value is not None:
                self.write(f"{here}/{name}", f"0x{value}\n")
        self.write(f"{here}/class", f"0x{pci_class}\n")
        self.write(f"{here}/numa_node", f"{numa_node}\n")
        return here

    def sriov_pf(self, address, vendor, device, total_vfs, num_vfs,
                 interface, numa_node, vf_device=None):
        """``vf_device``: the VFs' device id in ``sriov_vf_device``, as
        newer kernels give it; None: no such file."""
        here = self.pci_device(address, vendor, device, "020000",
                               numa_node)
        self.write(f"{here}/sriov_totalvfs", f"{total_vfs}\n")
        self.write(f"{here}/sriov_numvfs", f"{num_vfs}\n")
        self.write(f"{here}/net/{interface}/address", "52:54:00:00:00:01\n")
        if vf_device is not None:
            self.write(f"{here}/sriov_vf_device", f"{vf_device}\n")

    def sriov_vf(self, address, vendor, device, pf_address, numa_node,
                 index=None):
        """A VF: ``physfn`` links back to its PF and, with ``index``, the
        PF's ``virtfn<index>`` links to it (both relative, as in sysfs)."""
        here = self.pci_device(address, vendor, device, "020000",
                               numa_node)
        os.symlink(f"../{pf_address}",
                   os.path.join(self.root, here, "physfn"))
        if index is not None:
            os.symlink(f"../{address}", os.path.join(
                self.root, "sys/bus/pci/devices", pf_address,
                f"virtfn{index}"))

    def sriov_vfs(self, pf_address, first, count, vendor, device,
                  numa_node):
        """``count`` VFs of the PF, ``virtfn0`` on, at the PCI functions
        of the PF's bus from ``first`` (device << 3 | function); their
        addresses."""
        bus = pf_address.rsplit(":", 1)[0]
        addresses = [f"{bus}:{fn >> 3:02x}.{fn & 7}"
                     for fn in range(first, first + count)]
        for index, address in enumerate(addresses):
            self.sriov_vf(address, vendor, device, pf_address, numa_node,
                          index)
        return addresses

    def gpu(self, address, vendor, device, numa_node, mdev_types,
            pci_class="030000"):
        """``mdev_types``: {type id: (name, available_instances[,
        created])}: ``created`` mdevs are listed under devices/."""
        here = self.pci_device(address, vendor, device, pci_class,
                               numa_node)
        for type_id, (name, available, *created) in mdev_types.items():
            where = f"{here}/mdev_supported_types/{type_id}"
            self.write(f"{where}/name", f"{name}\n")
            self.write(f"{where}/available_instances", f"{available}\n")
            self.write(f"{where}/device_api", "vfio-pci\n")
            os.makedirs(os.path.join(self.root, where, "devices"),
                        exist_ok=True)
            for n in range(created[0] if created else 0):
                uuid = f"4b20d080-1b54-4048-85b3-a6a62d165c{n:02d}"
                os.symlink(f"../../../{uuid}",
                           os.path.join(self.root, where, "devices", uuid))


# The 2-socket host of the tests: what its fake tree says.
FLAGS = ["fpu", "vme", "de", "pse", "msr", "pae", "mmx", "sse", "sse2",
         "ht", "pni", "pclmulqdq", "vmx", "ssse3", "fma", "sse4_1",
         "sse4_2", "aes", "avx", "f16c", "pdpe1gb", "lm", "bmi1", "avx2",
         "bmi2", "avx512f", "avx512dq", "avx512bw", "avx512vl",
         "sha_ni", "avx512_vnni"]
NODE_KB = 64 * 1024 * 1024            # 64 GiB per node
TOTAL_KB = 2 * NODE_KB - 8 * 1024     # MemTotal is a bit under the nodes
PF0 = "0000:3b:00.0"   # Intel X710 port, node 0, 8 of 64 VFs
PF1 = "0000:d8:00.0"   # Mellanox CX-5 port, node 1, 16 of 32 VFs
PF0_VF = "154c"        # the VFs' device ids
PF1_VF = "1018"
VF0 = "0000:3b:02.0"   # PF0's first VF (3b:02.0-3b:02.7)
PF1_VF0 = "0000:d8:00.2"   # PF1's first VF (d8:00.2-d8:02.1)
GPU = "0000:af:00.0"   # NVIDIA Tesla M60, node 1
NIC = "0000:00:1f.6"   # an ordinary NIC: neither PF nor GPU


def two_socket_host(root):
    """2 NUMA nodes of 16 CPUs, 2M and 1G huge pages, two SR-IOV PFs on
    different nodes with their enabled VFs (only PF0 has
    ``sriov_vf_device``, as on a newer kernel), one GPU with two mdev
    types (two vGPUs of the second already created)."""
    host = FakeHost(root)
    host.cpus("0-31", 32, FLAGS)
    host.meminfo(TOTAL_KB)
    host.hugepages({2048: (1536, 1500), 1048576: (8, 6)})
    host.numa_node(0, "0-15", NODE_KB, {2048: (1024, 1000),
                                        1048576: (4, 4)})
    host.numa_node(1, "16-31", NODE_KB, {2048: (512, 500),
                                         1048576: (4, 2)})
    host.sriov_pf(PF0, "8086", "1572", 64, 8, "ens1f0", 0,
                  vf_device=PF0_VF)
    host.sriov_vfs(PF0, 0x10, 8, "8086", PF0_VF, 0)
    host.sriov_pf(PF1, "15b3", "1017", 32, 16, "ens6f0", 1)
    host.sriov_vfs(PF1, 0x02, 16, "15b3", PF1_VF, 1)
    host.gpu(GPU, "10de", "13f2", 1,
             {"nvidia-35": ("GRID M60-0B", 16),
              "nvidia-36": ("GRID M60-0Q", 6, 2)})
    host.pci_device(NIC, "8086", "15bb", "020000", -1)
    return host


class FakeStatvfs:
    """What ``os.statvfs`` returns, for a disk of ``total_gb``."""

    def __init__(self, total_gb, free_gb, frsize=4096):
        self.f_frsize = frsize
        self.f_blocks = total_gb * 1024 ** 3 // frsize
        self.f_bavail = free_gb * 1024 ** 3 // frsize
        self.paths = []

    def __call__(self, path):
        self.paths.append(path)
        return self
