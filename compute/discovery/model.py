"""The host description: plain data, filled by discovery (``discover``)
and/or a host file, read by ``inventory.provider_tree_data``."""

from dataclasses import dataclass, field


@dataclass
class Cpus:
    """``online``: the CPU ids the kernel has online; ``shared`` and
    ``dedicated``: the sets from config (VCPU and PCPU)."""

    online: frozenset
    shared: frozenset
    dedicated: frozenset = frozenset()


@dataclass
class Memory:
    """MemTotal in MB and the configured reserve."""

    total_mb: int
    reserved_mb: int = 0

    @property
    def usable_mb(self):
        return max(self.total_mb - self.reserved_mb, 0)


@dataclass
class HugePages:
    """Huge pages of one size (in kB): how many, how many free."""

    size_kb: int
    total: int
    free: int


@dataclass
class NumaNode:
    id: int
    cpus: frozenset
    memory_mb: int
    hugepages: dict = field(default_factory=dict)  # size_kb -> HugePages


@dataclass
class VirtualFunction:
    """An enabled SR-IOV virtual function (a PF's ``virtfn<N>``)."""

    address: str            # PCI address, 0000:3b:02.0
    vendor_id: str | None   # "8086" (no 0x)
    product_id: str | None  # "154c": what a PCI alias names
    numa_node: int | None = None


@dataclass
class PhysicalFunction:
    """An SR-IOV physical function (a NIC port that can make VFs)."""

    address: str            # PCI address, 0000:3b:00.0
    vendor_id: str          # "8086" (no 0x)
    product_id: str
    total_vfs: int          # sriov_totalvfs: what the card can make
    num_vfs: int            # sriov_numvfs: what is enabled now
    interface: str | None = None   # net/<name>
    numa_node: int | None = None
    physnet: str | None = None     # from config
    # The VFs' device id (sriov_vf_device, else the first VF's): what
    # VFs not listed in ``vfs`` are taken to be.
    vf_product_id: str | None = None
    vfs: list = field(default_factory=list)    # [VirtualFunction]


@dataclass
class MdevType:
    """A mediated-device type a GPU offers (mdev_supported_types/<id>)."""

    id: str                 # nvidia-35
    name: str | None        # "GRID M60-0B"
    available_instances: int    # how many more can be created
    device_api: str | None = None
    created: int = 0            # mdevs of this type that exist (devices/)

    @property
    def capacity(self):
        return self.available_instances + self.created


@dataclass
class Gpu:
    address: str
    vendor_id: str
    product_id: str
    numa_node: int | None = None
    mdev_types: dict = field(default_factory=dict)  # id -> MdevType


@dataclass
class Disk:
    """The local disk instances use (statvfs of a configured path)."""

    path: str
    total_gb: int
    free_gb: int
    reserved_gb: int = 0


@dataclass
class HostDescription:
    hostname: str
    cpus: Cpus
    memory: Memory
    numa_nodes: list = field(default_factory=list)     # [NumaNode]
    hugepages: dict = field(default_factory=dict)      # size_kb -> HugePages
    physical_functions: list = field(default_factory=list)
    gpus: list = field(default_factory=list)
    disk: Disk | None = None
    traits: list = field(default_factory=list)         # sorted names
