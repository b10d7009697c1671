"""SR-IOV physical functions: the devices under ``/sys/bus/pci/devices``
with ``sriov_totalvfs`` (what the card can make) and ``sriov_numvfs``
(enabled now), their ``vendor``/``device`` ids, ``numa_node`` and
network interface (the entry under ``net/``). The physical network comes
from config, by interface name or PCI address.

Each PF's enabled VFs are its ``virtfn<N>`` links (to ``../<address>``),
N below ``sriov_numvfs``; a VF directory has its own ``vendor``,
``device`` and ``numa_node``. Where it lacks them, the VF takes the
PF's vendor, the PF's ``sriov_vf_device`` (newer kernels) and the PF's
node."""

from compute.discovery import sysfs
from compute.discovery.model import PhysicalFunction, VirtualFunction

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


def discover_vfs(root, pf):
    """The enabled VFs of ``pf`` (a PhysicalFunction without them yet).
    Only N < num_vfs is read: the kernel removes the links of VFs it
    disables, but a reader may see the count change first."""
    out = []
    for index in range(pf.num_vfs):
        address = sysfs.link_name(root,
                                  f"{DEVICES}/{pf.address}/virtfn{index}")
        if address is None:
            continue
        here = f"{DEVICES}/{address}"
        node = numa_node(root, address)
        out.append(VirtualFunction(
            address=address,
            vendor_id=hex_id(root, f"{here}/vendor") or pf.vendor_id,
            product_id=hex_id(root, f"{here}/device") or pf.vf_product_id,
            numa_node=pf.numa_node if node is None else node))
    return out


def _pf(root, address, total, physnets):
    here = f"{DEVICES}/{address}"
    interfaces = sysfs.listdir(root, f"{here}/net")
    interface = interfaces[0] if interfaces else None
    pf = PhysicalFunction(
        address=address,
        vendor_id=hex_id(root, f"{here}/vendor"),
        product_id=hex_id(root, f"{here}/device"),
        total_vfs=total,
        num_vfs=sysfs.read_int(root, f"{here}/sriov_numvfs") or 0,
        interface=interface,
        numa_node=numa_node(root, address),
        physnet=physnets.get(interface) or physnets.get(address),
        vf_product_id=hex_id(root, f"{here}/sriov_vf_device"))
    pf.vfs = discover_vfs(root, pf)
    if pf.vf_product_id is None and pf.vfs:
        # Older kernels: the VFs say it themselves.
        pf.vf_product_id = pf.vfs[0].product_id
    return pf


def discover_pfs(root, physnets=None):
    physnets = physnets or {}
    out = []
    for address in sysfs.listdir(root, DEVICES):
        total = sysfs.read_int(root, f"{DEVICES}/{address}/sriov_totalvfs")
        if total is not None:
            out.append(_pf(root, address, total, physnets))
    return out
