"""SR-IOV physical functions: the devices under ``/sys/bus/pci/devices``
with ``sriov_totalvfs`` (what the card can make) and ``sriov_numvfs``
(enabled now), their ``vendor``/``device`` ids, ``numa_node`` and
network interface (the entry under ``net/``). The physical network comes
from config, by interface name or PCI address."""

from compute.discovery import sysfs
from compute.discovery.model import PhysicalFunction

DEVICES = "sys/bus/pci/devices"


def hex_id(root, rel):
    """"8086" from a file holding "0x8086"; None if absent."""
    text = sysfs.read(root, rel)
    if not text:
        return None
    return text.lower().removeprefix("0x")


def numa_node(root, device):
    node = sysfs.read_int(root, f"{DEVICES}/{device}/numa_node")
    return node if node is not None and node >= 0 else None


def discover_pfs(root, physnets=None):
    physnets = physnets or {}
    out = []
    for address in sysfs.listdir(root, DEVICES):
        here = f"{DEVICES}/{address}"
        total = sysfs.read_int(root, f"{here}/sriov_totalvfs")
        if total is None:
            continue
        interfaces = sysfs.listdir(root, f"{here}/net")
        interface = interfaces[0] if interfaces else None
        out.append(PhysicalFunction(
            address=address,
            vendor_id=hex_id(root, f"{here}/vendor"),
            product_id=hex_id(root, f"{here}/device"),
            total_vfs=total,
            num_vfs=sysfs.read_int(root, f"{here}/sriov_numvfs") or 0,
            interface=interface,
            numa_node=numa_node(root, address),
            physnet=physnets.get(interface) or physnets.get(address)))
    return out
