"""What discovery takes from configuration (the agent fills it from its
config file; tests build it directly)."""

from dataclasses import dataclass, field


@dataclass
class DiscoveryConfig:
    """
    - ``cpu_shared_set`` / ``cpu_dedicated_set``: Nova-style CPU set
      strings (``[compute] cpu_shared_set``/``cpu_dedicated_set``); None:
      not set. With neither set, every online CPU is shared (VCPU).
    - ``reserved_host_memory_mb``: subtracted from MemTotal (Nova's
      default is 512).
    - ``disk_path``: the file system instances live on (statvfs);
      None: no DISK_GB. ``reserved_host_disk_mb``: reserved on it.
    - ``physnets``: interface name or PCI address of an SR-IOV PF ->
      physical network name.
    - ``enabled_mdev_types``: mediated-device types reported as VGPU,
      first match per GPU (Nova's ``[devices] enabled_mdev_types``).
    - ``traits``: extra traits on the root provider (standard os-traits
      names or CUSTOM_*).
    - ``numa_providers``: report CPUs and memory on one child provider
      per NUMA node instead of on the root.
    - allocation ratios for the root inventories.
    """

    cpu_shared_set: str | None = None
    cpu_dedicated_set: str | None = None
    reserved_host_memory_mb: int = 512
    disk_path: str | None = None
    reserved_host_disk_mb: int = 0
    physnets: dict = field(default_factory=dict)
    enabled_mdev_types: list = field(default_factory=list)
    traits: list = field(default_factory=list)
    numa_providers: bool = False
    cpu_allocation_ratio: float = 4.0
    ram_allocation_ratio: float = 1.0
    disk_allocation_ratio: float = 1.0
