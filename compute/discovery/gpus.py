"""GPUs: PCI devices of display class (``class`` 0x03xxxx) under
``/sys/bus/pci/devices``, with the mediated-device types the kernel
exposes in ``mdev_supported_types/<type>/`` (``name``,
``available_instances``, ``device_api``, and the mdevs already created
under ``devices/``)."""

from compute.discovery import sysfs
from compute.discovery.model import Gpu, MdevType
from compute.discovery.pci import DEVICES, hex_id, numa_node


def discover_gpus(root):
    out = []
    for address in sysfs.listdir(root, DEVICES):
        here = f"{DEVICES}/{address}"
        pci_class = hex_id(root, f"{here}/class")
        if not pci_class or not pci_class.rjust(6, "0").startswith("03"):
            continue
        types = {}
        for type_id in sysfs.listdir(root, f"{here}/mdev_supported_types"):
            where = f"{here}/mdev_supported_types/{type_id}"
            types[type_id] = MdevType(
                id=type_id,
                name=sysfs.read(root, f"{where}/name"),
                available_instances=sysfs.read_int(
                    root, f"{where}/available_instances") or 0,
                device_api=sysfs.read(root, f"{where}/device_api"),
                created=len(sysfs.listdir(root, f"{where}/devices")))
        out.append(Gpu(address=address,
                       vendor_id=hex_id(root, f"{here}/vendor"),
                       product_id=hex_id(root, f"{here}/device"),
                       numa_node=numa_node(root, address),
                       mdev_types=types))
    return out
