"""Nova's database rows as the host state table's records.

A compute_nodes row becomes a host_reads.ComputeNode the way Nova's
ComputeNode object and HostState read it: JSON columns decoded (the PCI
pools out of their PciDevicePoolList envelope), allocation ratios that
are NULL or 0.0 replaced by the configured ratio or else the initial
one, ``failed_builds`` from the stats. A services row becomes a
host_reads.Service judged up or down from ``last_seen_up``, or
``created_at`` for a service that never reported, as Nova's database
service group driver judges it.
"""

import json
import logging

from scheduler import host_reads

LOG = logging.getLogger(__name__)

_DATA = "nova_object.data"


def _json(text, kind, what, ref):
    """A JSON column's value, or None when empty or not of ``kind``."""
    if text is None or text == "":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        LOG.warning("Compute node %s: %s is not JSON; ignored", ref, what)
        return None
    if not isinstance(value, kind):
        LOG.warning("Compute node %s: %s is not a JSON %s; ignored", ref,
                    what, kind.__name__)
        return None
    return value


def pci_pools(text, ref=None):
    """The pools of a pci_stats column: the PciDevicePoolList primitive
    Nova writes, or the older plain list (or single dict) of pools."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        LOG.warning("Compute node %s: pci_stats is not JSON; ignored", ref)
        return None
    if isinstance(value, dict) and _DATA in value:
        value = value[_DATA].get("objects") or []
    elif isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return None
    pools = []
    for pool in value:
        if isinstance(pool, dict) and _DATA in pool:
            pool = pool[_DATA]
        if isinstance(pool, dict):
            pools.append(dict(pool))
    return pools


def _ratio(value, conf, kind):
    if value not in (None, 0.0):
        return float(value)
    configured = getattr(conf, f"{kind}_allocation_ratio")
    return float(configured or getattr(conf, f"initial_{kind}_"
                                             "allocation_ratio"))


def _int(value, default=0):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def compute_node(row, cell_uuid, generation, conf):
    """The record of a compute_nodes row (a mapping of its columns)."""
    ref = row["uuid"]
    stats = _json(row["stats"], dict, "stats", ref) or {}
    free_disk_gb = row["free_disk_gb"]
    return host_reads.ComputeNode(
        id=row["id"],
        uuid=row["uuid"],
        host=row["host"],
        nodename=row["hypervisor_hostname"],
        cell_uuid=cell_uuid,
        hypervisor_type=row["hypervisor_type"],
        hypervisor_version=row["hypervisor_version"],
        # PostgreSQL's inet column reads back as an address object.
        host_ip=None if row["host_ip"] is None else str(row["host_ip"]),
        cpu_info=_json(row["cpu_info"], dict, "cpu_info", ref),
        supported_instances=_json(row["supported_instances"], list,
                                  "supported_instances", ref),
        numa_topology=_json(row["numa_topology"], dict, "numa_topology",
                            ref),
        pci_device_pools=pci_pools(row["pci_stats"], ref),
        stats=stats,
        metrics=_json(row["metrics"], list, "metrics", ref),
        vcpus=_int(row["vcpus"]),
        vcpus_used=_int(row["vcpus_used"]),
        memory_mb=_int(row["memory_mb"]),
        memory_mb_used=_int(row["memory_mb_used"]),
        free_ram_mb=_int(row["free_ram_mb"]),
        local_gb=_int(row["local_gb"]),
        local_gb_used=_int(row["local_gb_used"]),
        free_disk_gb=_int(free_disk_gb),
        disk_available_least=row["disk_available_least"],
        cpu_allocation_ratio=_ratio(row["cpu_allocation_ratio"], conf,
                                    "cpu"),
        ram_allocation_ratio=_ratio(row["ram_allocation_ratio"], conf,
                                    "ram"),
        disk_allocation_ratio=_ratio(row["disk_allocation_ratio"], conf,
                                     "disk"),
        failed_builds=_int(stats.get("failed_builds")),
        generation=generation,
        created_at=row["created_at"],
        updated_at=row["updated_at"])


def schedulable(row):
    """Whether Nova's scheduler would consider the node: it has a uuid
    and a host, and has reported its usage once (Nova skips a node whose
    free_disk_gb is still NULL)."""
    return bool(row["uuid"] and row["host"]
                and row["free_disk_gb"] is not None)


def service(row, cutoff):
    """The record of a nova-compute services row. ``cutoff`` (naive UTC)
    is the oldest heartbeat that surely stays recent enough until the
    next look: a service that reported since then is up until that look
    (``last_seen_up`` None, as for a service that needs no heartbeat);
    an older one keeps its heartbeat, judged at each decision's time."""
    heartbeat = row["last_seen_up"] or row["created_at"]
    return host_reads.Service(
        host=row["host"],
        disabled=bool(row["disabled"]),
        disabled_reason=row["disabled_reason"],
        forced_down=bool(row["forced_down"]),
        last_seen_up=(None if heartbeat is None or heartbeat >= cutoff
                      else heartbeat),
        version=row["version"] or None)
