"""Write the cloud in a database as a cloud file: what ``gantt-manage
cloud export FILE`` does, so that ``gantt-manage cloud load`` and
``gantt-simulate run --cloud`` read it back.

Everything is read in one transaction (a snapshot on PostgreSQL and
MySQL): providers and their trees, inventories, traits, placement
aggregates, allocations with their consumers, and the scheduler's host
records (compute nodes, service state, host aggregates with their
metadata).

What a cloud file cannot say is left out: the figures a compute node
reports beyond its placement inventory (a load derives them from the
inventories and allocations), NUMA topology, PCI pools, metrics, and the
instance records of hosts (a load makes them from the allocations).
A host aggregate's members become members of the placement aggregate
of the same uuid, as Nova mirrors them. A database with no host records
at all (placement alone, or host state read from Nova's databases) has
its compute trees (roots with CPU or memory in their tree) exported as
hosts named after their root provider, as gantt-simulate
--from-placement reads them.
"""

import dataclasses
import json
import os
import tempfile

import sqlalchemy as sa
import yaml

from placement.db import tables
from placement.objects import (
    aggregates,
    consumers,
    inventories,
    providers,
    traits,
)
from scheduler import host_reads

# Classes that make a provider tree a compute node's.
_COMPUTE_CLASSES = {"VCPU", "PCPU", "MEMORY_MB"}
_INVENTORY_DEFAULTS = {"reserved": 0, "min_unit": 1,
                       "max_unit": inventories.MAX_INT, "step_size": 1,
                       "allocation_ratio": 1.0}


def document(db):
    """The cloud in ``db`` (a Store) as a cloud file document."""
    return db.read(_read, snapshot=True)


def write(path, data):
    """Write ``data`` to ``path``: JSON if the name ends in .json, else
    YAML; ``-`` is standard output. The file is replaced whole."""
    if path == "-":
        print(_dumps(data, json_=False), end="")
        return
    text = _dumps(data, json_=path.lower().endswith(".json"))
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".cloud-export-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _dumps(data, json_):
    if json_:
        return json.dumps(data, indent=1) + "\n"
    # Leaf mappings and lists on one line: a provider reads as in the
    # hand-written examples.
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None,
                          width=100)


# -- reading ------------------------------------------------------------------


def _read(txn):
    listed = providers.list_all(txn)
    host_aggs = host_reads.aggregates(txn)
    names = _aggregate_names(host_aggs)
    nodes = {n.uuid: n for n in host_reads.compute_nodes(txn)}
    services = host_reads.services(txn)
    in_aggs = aggregates.by_provider(txn)
    _add_host_members(in_aggs, host_aggs, nodes, listed)
    invs = inventories.by_provider(txn)
    if not nodes:
        nodes = _nodes_of_compute_trees(listed, invs)
    provider_traits = traits.by_provider(txn)
    out = {}
    if names:
        out["aggregates"] = {
            names[a.uuid]: _aggregate_entry(a)
            for a in sorted(host_aggs.values(), key=lambda a: names[a.uuid])}
    custom_rcs = _custom_names(txn, tables.resource_classes)
    custom_traits = _custom_names(txn, tables.traits)
    if custom_rcs:
        out["resource_classes"] = custom_rcs
    if custom_traits:
        out["traits"] = custom_traits
    out["providers"] = [
        _provider_entry(rp, invs.get(rp.uuid, {}),
                        provider_traits.get(rp.uuid, []),
                        [names.get(u, u) for u in in_aggs.get(rp.uuid, [])],
                        nodes.get(rp.uuid), services)
        for rp in _parents_first(listed)]
    out["allocations"] = _allocations(txn)
    return out


def _nodes_of_compute_trees(listed, invs):
    """{root uuid: a bare node record} for the roots of trees with CPU or
    memory inventory: each a host named after its root."""
    roots = {rp.root_provider_uuid for rp in listed
             if _COMPUTE_CLASSES & invs.get(rp.uuid, {}).keys()}
    return {rp.uuid: _BareNode(rp.name, rp.name) for rp in listed
            if rp.uuid in roots}


@dataclasses.dataclass(frozen=True)
class _BareNode:
    """What a compute entry needs of a node placement alone tells of."""

    host: str
    nodename: str
    cell_uuid: None = None
    hypervisor_type: None = None
    hypervisor_version: None = None
    host_ip: None = None
    cpu_info: None = None
    supported_instances: None = None


def _aggregate_names(host_aggs):
    """{uuid: a name unique in the file} for the host aggregates."""
    out, taken = {}, set()
    for agg in sorted(host_aggs.values(), key=lambda a: (a.name, a.uuid)):
        name = agg.name if agg.name not in taken else \
            f"{agg.name}-{agg.uuid[:8]}"
        out[agg.uuid] = name
        taken.add(name)
    return out


def _aggregate_entry(agg):
    entry = {"uuid": agg.uuid}
    if agg.metadata:
        entry["metadata"] = dict(sorted(agg.metadata.items()))
    return entry


def _add_host_members(in_aggs, host_aggs, nodes, listed):
    """Put each host aggregate's member hosts' compute node providers in
    the placement aggregate of the same uuid (``in_aggs``, changed)."""
    roots = {rp.uuid for rp in listed if rp.parent_provider_uuid is None}
    for agg in host_aggs.values():
        for node in nodes.values():
            if node.host in agg.hosts and node.uuid in roots:
                found = in_aggs.setdefault(node.uuid, [])
                if agg.uuid not in found:
                    found.append(agg.uuid)
    for uuid in in_aggs:
        in_aggs[uuid] = sorted(in_aggs[uuid])


def _custom_names(txn, table):
    return list(txn.execute(sa.select(table.c.name)
                            .where(table.c.name.like("CUSTOM\\_%",
                                                     escape="\\"))
                            .order_by(table.c.name)).scalars())


def _parents_first(listed):
    """Providers depth first from the roots, oldest first."""
    children = {}
    for rp in listed:
        children.setdefault(rp.parent_provider_uuid, []).append(rp)
    ordered = []
    stack = list(reversed(children.get(None, [])))
    while stack:
        rp = stack.pop()
        ordered.append(rp)
        stack.extend(reversed(children.get(rp.uuid, [])))
    return ordered


def _provider_entry(rp, invs, trait_names, agg_refs, node, services):
    entry = {"name": rp.name, "uuid": rp.uuid}
    if rp.parent_provider_uuid:
        entry["parent"] = rp.parent_provider_uuid
    if invs:
        entry["inventories"] = {rc: _inventory_entry(inv)
                                for rc, inv in sorted(invs.items())}
    if trait_names:
        entry["traits"] = sorted(trait_names)
    if agg_refs:
        entry["aggregates"] = agg_refs
    if node is not None and not rp.parent_provider_uuid:
        entry["compute"] = _compute_entry(node, services.get(node.host))
    return entry


def _inventory_entry(inv):
    fields = {k: getattr(inv, k) for k in _INVENTORY_DEFAULTS
              if getattr(inv, k) != _INVENTORY_DEFAULTS[k]}
    if not fields:
        return inv.total
    return {"total": inv.total, **fields}


def _compute_entry(node, service):
    """The compute section of a node: what the loader writes back into
    its host records."""
    entry = {"host": node.host, "nodename": node.nodename}
    if node.cell_uuid:
        entry["cell"] = node.cell_uuid
    if node.hypervisor_type:
        entry["hypervisor_type"] = node.hypervisor_type
    if node.hypervisor_version:
        entry["hypervisor_version"] = node.hypervisor_version
    if node.host_ip:
        entry["host_ip"] = node.host_ip
    if isinstance(node.cpu_info, dict) and node.cpu_info:
        entry["cpu_info"] = node.cpu_info
    if _triples(node.supported_instances):
        entry["supported_instances"] = [
            list(t) for t in node.supported_instances]
    if service is not None:
        entry["enabled"] = not service.disabled
        if service.disabled_reason:
            entry["disabled_reason"] = service.disabled_reason
        if service.forced_down:
            entry["forced_down"] = True
    return entry


def _triples(value):
    return bool(value) and all(
        isinstance(t, list | tuple) and len(t) == 3
        and all(isinstance(s, str) for s in t) for t in value)


def _allocations(txn):
    """Every consumer's allocations, one entry a consumer."""
    a, c, rp = tables.allocations, tables.consumers, tables.resource_providers
    p, u, t = tables.projects, tables.users, tables.consumer_types
    rc = tables.resource_classes
    rows = txn.execute(
        sa.select(c.c.uuid.label("consumer"),
                  p.c.external_id.label("project"),
                  u.c.external_id.label("user"), t.c.name.label("kind"),
                  rp.c.uuid.label("provider"), rc.c.name.label("rc"),
                  a.c.used)
        .select_from(a.join(c, c.c.id == a.c.consumer_id)
                     .join(p, p.c.id == c.c.project_id)
                     .join(u, u.c.id == c.c.user_id)
                     .outerjoin(t, t.c.id == c.c.consumer_type_id)
                     .join(rp, rp.c.id == a.c.resource_provider_id)
                     .join(rc, rc.c.id == a.c.resource_class_id))
        .order_by(c.c.id, rp.c.uuid, rc.c.name))
    out = {}
    for row in rows:
        entry = out.get(row.consumer)
        if entry is None:
            entry = out[row.consumer] = {
                "consumer": row.consumer, "project_id": row.project,
                "user_id": row.user}
            # Placement's word for no type: the loader's default.
            if row.kind and row.kind != consumers.UNKNOWN_CONSUMER_TYPE:
                entry["consumer_type"] = row.kind
            entry["resources"] = {}
        entry["resources"].setdefault(row.provider, {})[row.rc] = row.used
    return list(out.values())
