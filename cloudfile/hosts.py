"""Compute hosts and host aggregates of a cloud file.

A root provider with a ``compute`` entry is a compute node. Loading writes
its host records (scheduler.host_records) with the figures its compute
service would report, derived from the provider tree's inventories and
the file's allocations, so that a loaded cloud can be scheduled on at
once. Every aggregate named in the ``aggregates`` section also becomes a
host aggregate (name, metadata, member hosts), as Nova's host aggregates
are mirrored into placement.
"""

import dataclasses

from scheduler import host_reads, host_records

# Resource classes a compute node's reported figures add up.
_CPU = ("VCPU", "PCPU")


class HostLoadError(Exception):
    """A host record the database refused; names the file's field."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _write(field, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except host_records.HostRecordError as exc:
        raise HostLoadError(field, str(exc)) from exc


@dataclasses.dataclass
class HostSpec:
    field: str  # of the provider's compute entry
    uuid: str  # the root provider's uuid: the compute node uuid
    host: str
    nodename: str
    cell_uuid: str | None
    # hypervisor_type, hypervisor_version, host_ip, cpu_info,
    # supported_instances: as given.
    report: dict
    enabled: bool
    disabled_reason: str | None
    forced_down: bool


@dataclasses.dataclass
class AggregateSpec:
    field: str
    name: str
    uuid: str
    metadata: dict  # {key: string}


def version_to_int(value):
    """A hypervisor version as Nova stores it: '8.2.0' -> 8002000 (each
    part three decimal digits); integers pass through."""
    if isinstance(value, int):
        return value
    number = 0
    for part in value.split("."):
        number = number * 1000 + int(part)
    return number


def version_to_str(value):
    """8002000 -> '8.2.0'."""
    if not value:
        return ""
    parts = []
    while value:
        value, part = divmod(value, 1000)
        parts.append(str(part))
    return ".".join(reversed(parts))


def metadata_value(value):
    """Aggregate metadata values are strings in Nova; YAML may give
    numbers or booleans."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _figures(tree, allocated):
    """What the compute service of a provider tree would report: totals,
    used (reserved memory and disk included, as Nova counts them) and
    allocation ratios."""
    total, reserved, used, ratio = {}, {}, {}, {}
    for spec in tree:
        for inv in spec.inventories:
            rc = inv.resource_class
            total[rc] = total.get(rc, 0) + inv.total
            reserved[rc] = reserved.get(rc, 0) + inv.reserved
            used[rc] = used.get(rc, 0) + allocated.get(spec.uuid, {}).get(
                rc, 0)
            ratio.setdefault(rc, inv.allocation_ratio)
    out = {
        "vcpus": sum(total.get(rc, 0) for rc in _CPU),
        "vcpus_used": sum(used.get(rc, 0) for rc in _CPU),
        "memory_mb": total.get("MEMORY_MB", 0),
        "memory_mb_used": (reserved.get("MEMORY_MB", 0)
                           + used.get("MEMORY_MB", 0)),
        "local_gb": total.get("DISK_GB", 0),
        "local_gb_used": reserved.get("DISK_GB", 0) + used.get("DISK_GB", 0),
    }
    for rc, name in (("VCPU", "cpu_allocation_ratio"),
                     ("MEMORY_MB", "ram_allocation_ratio"),
                     ("DISK_GB", "disk_allocation_ratio")):
        if rc in ratio:
            out[name] = ratio[rc]
    return out


def load(txn, cloud, uuid_of):
    """Write the host records of ``cloud`` in ``txn``; ``uuid_of`` maps
    the file's provider names and uuids to uuids. Returns (compute hosts,
    host aggregates) written."""
    root_of, tree = _trees(cloud, uuid_of)
    allocated, on_node = _usage(cloud, uuid_of, root_of)
    for spec in cloud.hosts:
        _write_host(txn, spec, _figures(tree[spec.uuid], allocated),
                    on_node.get(spec.uuid, []))
    _write_aggregates(txn, cloud)
    return len(cloud.hosts), len(cloud.aggregates)


def _trees(cloud, uuid_of):
    """({provider uuid: its root's uuid}, {root uuid: the specs of its
    tree}); the file lists parents before their children."""
    root_of = {}
    tree = {}
    for spec in cloud.providers:
        parent = uuid_of.get(spec.parent, spec.parent)
        root = root_of.get(parent) if parent else spec.uuid
        root_of[spec.uuid] = root
        tree.setdefault(root, []).append(spec)
    return root_of, tree


def _usage(cloud, uuid_of, root_of):
    """({provider uuid: {resource class: amount}} that the file's
    allocations use, {compute node uuid: [instance]} of the instances on
    each node: consumers of type INSTANCE (or untyped) with an allocation
    in its tree. Migrations and other consumers hold resources but are no
    instances of the host."""
    nodes = {h.uuid for h in cloud.hosts}
    allocated = {}
    on_node = {}
    for alloc in cloud.allocations:
        used = _add_allocation(allocated, alloc, uuid_of)
        if alloc.consumer_type not in (None, "INSTANCE"):
            continue
        for root in {root_of.get(uuid) for uuid in used} & nodes:
            on_node.setdefault(root, []).append(
                {"uuid": alloc.consumer_uuid,
                 "project_id": alloc.project_id})
    return allocated, on_node


def _add_allocation(allocated, alloc, uuid_of):
    """Add one consumer's amounts to ``allocated``; the uuids of the
    providers it uses."""
    used = []
    for ref, amounts in alloc.resources.items():
        uuid = uuid_of.get(ref, ref)
        per_rc = allocated.setdefault(uuid, {})
        for rc, amount in amounts.items():
            per_rc[rc] = per_rc.get(rc, 0) + amount
        used.append(uuid)
    return used


def _write_host(txn, spec, figures, instances):
    """The records of one compute host: its node (the file's report and
    the tree's ``figures``), its service state and its instances."""
    _write(spec.field, host_records.upsert_compute_node, txn,
           spec.uuid, spec.host, spec.nodename,
           cell_uuid=spec.cell_uuid, **spec.report, **figures,
           stats={"num_instances": str(len(instances)),
                  "io_workload": "0"})
    _write(spec.field, host_records.set_service_state, txn, spec.host,
           enabled=spec.enabled, disabled_reason=spec.disabled_reason,
           forced_down=spec.forced_down)
    if instances:
        _write(spec.field, host_records.update_instance_info, txn,
               spec.host, instances)


def _write_aggregates(txn, cloud):
    """A host aggregate for every aggregate of the file, its members the
    compute hosts of the providers in it. A load adds to what an earlier
    one wrote: members and metadata of an aggregate already there stay
    (this file's values win)."""
    aggregates_of = {spec.uuid: spec.aggregates for spec in cloud.providers}
    before = host_reads.aggregates(txn, [a.uuid for a in cloud.aggregates])
    for agg in cloud.aggregates:
        members = {h.host for h in cloud.hosts
                   if agg.uuid in aggregates_of[h.uuid]}
        metadata = dict(agg.metadata)
        if agg.uuid in before:
            members |= before[agg.uuid].hosts
            metadata = {**before[agg.uuid].metadata, **metadata}
        _write(agg.field, host_records.update_aggregate, txn, agg.uuid,
               agg.name, metadata, sorted(members))
