"""The top-level functions: discover the host under a root path, and
describe it from discovery and/or a host file."""

import dataclasses
import os
import socket

from compute.discovery import host_file as host_file_mod
from compute.discovery import traits as traits_mod
from compute.discovery.config import DiscoveryConfig
from compute.discovery.cpus import discover_cpus
from compute.discovery.disk import discover_disk
from compute.discovery.gpus import discover_gpus
from compute.discovery.hugepages import discover_hugepages
from compute.discovery.memory import discover_memory
from compute.discovery.model import HostDescription
from compute.discovery.numa import discover_numa
from compute.discovery.pci import discover_pfs


class DiscoveryConfigError(ValueError):
    """A configuration value discovery cannot use."""


def _config_traits(config):
    out = []
    for name in config.traits:
        try:
            out.append(traits_mod.check_trait(name))
        except traits_mod.TraitError as exc:
            raise DiscoveryConfigError(f"traits: {exc}") from None
    return out


def discover(root="/", config=None, statvfs=os.statvfs, hostname=None):
    """The HostDescription of the machine whose ``/proc`` and ``/sys``
    are under ``root``, with ``config`` (a DiscoveryConfig) applied."""
    config = config or DiscoveryConfig()
    try:
        cpus = discover_cpus(root, config.cpu_shared_set,
                             config.cpu_dedicated_set)
    except ValueError as exc:
        raise DiscoveryConfigError(str(exc)) from None
    disk = (discover_disk(config.disk_path, config.reserved_host_disk_mb,
                          statvfs)
            if config.disk_path else None)
    flags = traits_mod.cpu_flags(root)
    return HostDescription(
        hostname=hostname or socket.gethostname(),
        cpus=cpus,
        memory=discover_memory(root, config.reserved_host_memory_mb),
        numa_nodes=discover_numa(root),
        hugepages=discover_hugepages(root),
        physical_functions=discover_pfs(root, config.physnets),
        gpus=discover_gpus(root),
        disk=disk,
        traits=sorted(set(traits_mod.traits_from_flags(flags))
                      | set(_config_traits(config))))


def describe_host(root="/", config=None, host_file=None,
                  statvfs=os.statvfs, hostname=None):
    """The HostDescription the compute node reports: discovery under
    ``root``, changed by the YAML file at ``host_file`` if given; or only
    the file when it says ``discover: false`` (then nothing under root
    is read). Raises HostFileError (path: field: message) for a bad file
    and DiscoveryConfigError for a bad config."""
    config = config or DiscoveryConfig()
    data = (host_file_mod.load_host_file(host_file)
            if host_file is not None else {})
    if host_file_mod.discovers(data):
        host = discover(root, config, statvfs, hostname)
    else:
        host = host_file_mod.empty_host(
            hostname or socket.gethostname(),
            config.reserved_host_memory_mb)
        host.traits = sorted(set(_config_traits(config)))
    if not data:
        return host
    host = host_file_mod.apply(
        host, data, str(host_file), config.cpu_shared_set,
        config.cpu_dedicated_set)
    # Devices the file added take their physnet from config too.
    host.physical_functions = [
        pf if pf.physnet else dataclasses.replace(
            pf, physnet=config.physnets.get(pf.interface)
            or config.physnets.get(pf.address))
        for pf in host.physical_functions]
    return host
