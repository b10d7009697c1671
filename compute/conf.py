"""Options of the compute side, with Nova's names where Nova has the same
option (a nova-compute's nova.conf can be given as it is), and the
DiscoveryConfig they make."""

from oslo_config import cfg

from compute.discovery import DiscoveryConfig

COMPUTE_OPTS = [
    cfg.IntOpt(
        "report_interval",
        default=10,
        min=1,
        mutable=True,
        help="Seconds between two reports of the compute agent: the "
             "provider tree to placement (no write when nothing changed) "
             "and the host record, with its heartbeat, to the scheduler."),
    cfg.StrOpt(
        "cpu_shared_set",
        help="Host CPUs for shared guest CPUs (VCPU), as Nova takes it: "
             "'0-7,^2'. Unset, with cpu_dedicated_set unset too: every "
             "online CPU."),
    cfg.StrOpt(
        "cpu_dedicated_set",
        help="Host CPUs for dedicated guest CPUs (PCPU), e.g. '8-15'."),
    cfg.BoolOpt(
        "numa_providers",
        default=False,
        help="Report CPUs and memory on one child provider per NUMA node "
             "rather than on the compute node's root provider."),
    cfg.ListOpt(
        "sriov_physnets",
        default=[],
        item_type=cfg.types.String(),
        help="Physical network of each SR-IOV physical function, as "
             "INTERFACE=PHYSNET or PCI_ADDRESS=PHYSNET items, e.g. "
             "'ens1f0=physnet1,0000:3b:00.1=physnet2'."),
    cfg.StrOpt(
        "disk_path",
        help="The file system instances live on: its size is DISK_GB. "
             "Unset: no DISK_GB is reported."),
    cfg.ListOpt(
        "traits",
        default=[],
        help="Traits added to the compute node's root provider: "
             "os-traits names or CUSTOM_*."),
    cfg.StrOpt(
        "host_file",
        help="A YAML host file that stands in for discovery or adds to it "
             "(docs/compute.md)."),
]

DEVICES_OPTS = [
    cfg.ListOpt(
        "enabled_mdev_types",
        default=[],
        help="Mediated-device types reported as VGPU, as Nova's option: "
             "the first of them a GPU offers."),
]

DEFAULT_OPTS = [
    cfg.IntOpt(
        "reserved_host_memory_mb",
        default=512,
        min=0,
        help="Memory kept for the host: reported as MEMORY_MB's "
             "reserved."),
    cfg.IntOpt(
        "reserved_host_disk_mb",
        default=0,
        min=0,
        help="Disk kept for the host: reported as DISK_GB's reserved."),
]


class ComputeConfigError(cfg.Error):
    """A compute option that cannot be used; names the option."""


def register_opts(conf):
    conf.register_opts(COMPUTE_OPTS, group="compute")
    conf.register_opts(DEVICES_OPTS, group="devices")
    conf.register_opts(DEFAULT_OPTS)


def list_opts():
    return [("compute", COMPUTE_OPTS), ("devices", DEVICES_OPTS),
            ("DEFAULT", DEFAULT_OPTS)]


def _physnets(items):
    mapping = {}
    for item in items:
        where, sep, physnet = item.rpartition("=")
        if not sep or not where or not physnet:
            raise ComputeConfigError(
                f"[compute] sriov_physnets: {item!r} is not "
                "INTERFACE=PHYSNET or PCI_ADDRESS=PHYSNET")
        mapping[where] = physnet
    return mapping


def discovery_config(conf):
    """The DiscoveryConfig of ``conf`` (registered and parsed)."""
    register_opts(conf)
    compute = conf.compute
    return DiscoveryConfig(
        cpu_shared_set=compute.cpu_shared_set,
        cpu_dedicated_set=compute.cpu_dedicated_set,
        reserved_host_memory_mb=conf.reserved_host_memory_mb,
        disk_path=compute.disk_path,
        reserved_host_disk_mb=conf.reserved_host_disk_mb,
        physnets=_physnets(compute.sriov_physnets),
        enabled_mdev_types=list(conf.devices.enabled_mdev_types),
        traits=list(compute.traits),
        numa_providers=compute.numa_providers)
