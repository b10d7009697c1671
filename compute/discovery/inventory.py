"""The providers a compute node reports for a HostDescription, as plain
data the provider tree is built from:

    {provider name: {"parent": name or None,
                     "inventories": {resource class: {total, reserved,
                                     min_unit, max_unit, step_size,
                                     allocation_ratio}},
                     "traits": [names]}}

- the root (the host name): VCPU (shared CPUs), PCPU (dedicated CPUs),
  MEMORY_MB (MemTotal, the reserve as ``reserved``), DISK_GB, and the
  host's traits;
- with ``numa_providers`` and NUMA nodes known: ``<host>_NUMA_<id>``
  children (trait HW_NUMA_ROOT) hold each node's VCPU, PCPU and
  MEMORY_MB instead of the root (the memory reserve comes off the
  lowest nodes first); DISK_GB stays on the root;
- ``<host>:<interface or PCI address>`` per SR-IOV PF with VFs enabled:
  SRIOV_NET_VF, traits HW_NIC_SRIOV and CUSTOM_PHYSNET_<PHYSNET>;
- ``<host>_pci_<address>`` per GPU offering an enabled mdev type (the
  first of ``enabled_mdev_types`` it offers): VGPU, the type's
  available instances plus those already created.

An inventory whose total is 0 is left out (placement refuses it)."""

from compute.discovery.config import DiscoveryConfig
from compute.discovery.traits import custom_trait


def _inventory(total, reserved=0, ratio=1.0):
    return {"total": total, "reserved": min(reserved, total),
            "min_unit": 1, "max_unit": total, "step_size": 1,
            "allocation_ratio": ratio}


def _add(inventories, rc, total, reserved=0, ratio=1.0):
    if total > 0:
        inventories[rc] = _inventory(total, reserved, ratio)


def _cpu_memory(inv, cpus, shared, dedicated, memory_mb, reserved_mb,
                config):
    _add(inv, "VCPU", len(cpus & shared),
         ratio=config.cpu_allocation_ratio)
    _add(inv, "PCPU", len(cpus & dedicated))
    _add(inv, "MEMORY_MB", memory_mb, reserved_mb,
         config.ram_allocation_ratio)


def pci_name(address):
    return address.replace(":", "_").replace(".", "_")


def provider_tree_data(host, config=None):
    config = config or DiscoveryConfig()
    root = host.hostname
    root_inv = {}
    out = {root: {"parent": None, "inventories": root_inv,
                  "traits": sorted(host.traits)}}
    shared, dedicated = host.cpus.shared, host.cpus.dedicated
    if config.numa_providers and host.numa_nodes:
        reserve = host.memory.reserved_mb
        for node in host.numa_nodes:
            taken = min(reserve, node.memory_mb)
            reserve -= taken
            inv = {}
            _cpu_memory(inv, node.cpus, shared, dedicated, node.memory_mb,
                        taken, config)
            out[f"{root}_NUMA_{node.id}"] = {
                "parent": root, "inventories": inv,
                "traits": ["HW_NUMA_ROOT"]}
    else:
        _cpu_memory(root_inv, host.cpus.online, shared, dedicated,
                    host.memory.total_mb, host.memory.reserved_mb, config)
    if host.disk is not None:
        _add(root_inv, "DISK_GB", host.disk.total_gb,
             host.disk.reserved_gb, config.disk_allocation_ratio)
    for pf in host.physical_functions:
        if pf.num_vfs <= 0:
            continue
        traits = ["HW_NIC_SRIOV"]
        if pf.physnet:
            traits.append(custom_trait(f"PHYSNET_{pf.physnet}"))
        out[f"{root}:{pf.interface or pf.address}"] = {
            "parent": root,
            "inventories": {"SRIOV_NET_VF": _inventory(pf.num_vfs)},
            "traits": sorted(traits)}
    for gpu in host.gpus:
        enabled = [t for t in config.enabled_mdev_types
                   if t in gpu.mdev_types]
        if not enabled:
            continue
        total = gpu.mdev_types[enabled[0]].capacity
        if total <= 0:
            continue
        out[f"{root}_pci_{pci_name(gpu.address)}"] = {
            "parent": root, "inventories": {"VGPU": _inventory(total)},
            "traits": []}
    return out
