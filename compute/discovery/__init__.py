"""Discovery of the local machine from ``/proc`` and ``/sys`` under a
root path (``/``, or a fake tree in tests), and the YAML host file that
stands in for it or adds to it. The result is a HostDescription (plain
dataclasses); ``provider_tree_data`` turns it into the providers,
inventories and traits the node reports. See docs/compute.md."""

from compute.discovery.config import DiscoveryConfig
from compute.discovery.cpus import CpuConfigError
from compute.discovery.cpuset import CpuSetError, format_cpu_set, parse_cpu_set
from compute.discovery.discover import (
    DiscoveryConfigError,
    describe_host,
    discover,
)
from compute.discovery.host_file import HostFileError, load_host_file
from compute.discovery.inventory import provider_tree_data
from compute.discovery.model import (
    Cpus,
    Disk,
    Gpu,
    HostDescription,
    HugePages,
    MdevType,
    Memory,
    NumaNode,
    PhysicalFunction,
    VirtualFunction,
)
from compute.discovery.traits import TraitError

__all__ = [
    "CpuConfigError", "CpuSetError", "Cpus", "Disk", "DiscoveryConfig",
    "DiscoveryConfigError", "Gpu", "HostDescription", "HostFileError",
    "HugePages", "MdevType", "Memory", "NumaNode", "PhysicalFunction",
    "TraitError", "VirtualFunction", "describe_host", "discover",
    "format_cpu_set", "load_host_file", "parse_cpu_set",
    "provider_tree_data",
]
