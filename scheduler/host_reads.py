"""Reading the scheduler's host records: plain records, in bulk.

The host state table loads everything with these once, then only the
records the change log names. Every function takes a transaction (or a
store, through placement.db.store.reader) and ``None`` for "all".
"""

import dataclasses
import datetime

import sqlalchemy as sa

from placement.db import store
from scheduler import host_tables

_cn = host_tables.compute_nodes
_svc = host_tables.compute_services
_inst = host_tables.host_instances
_agg = host_tables.host_aggregates
_agg_hosts = host_tables.host_aggregate_hosts

# Keys per IN (...) list: well below every engine's parameter limit.
CHUNK = 500


@dataclasses.dataclass(frozen=True)
class ComputeNode:
    """A compute node as last reported (columns of compute_nodes)."""

    id: int
    uuid: str
    host: str
    nodename: str
    cell_uuid: str | None
    hypervisor_type: str | None
    hypervisor_version: int | None
    host_ip: str | None
    cpu_info: dict | None
    supported_instances: list | None
    numa_topology: dict | None
    pci_device_pools: list | None
    stats: dict | None
    metrics: list | None
    vcpus: int
    vcpus_used: int
    memory_mb: int
    memory_mb_used: int
    free_ram_mb: int
    local_gb: int
    local_gb_used: int
    free_disk_gb: int
    disk_available_least: int | None
    cpu_allocation_ratio: float
    ram_allocation_ratio: float
    disk_allocation_ratio: float
    failed_builds: int
    generation: int
    created_at: datetime.datetime
    updated_at: datetime.datetime | None


@dataclasses.dataclass(frozen=True)
class Service:
    host: str
    disabled: bool = False
    disabled_reason: str | None = None
    forced_down: bool = False
    # Naive UTC; None: no heartbeat yet.
    last_seen_up: datetime.datetime | None = None
    # Nova's service version (nova-compute's report); None: unknown, as
    # for gantt's own records.
    version: int | None = None


@dataclasses.dataclass(frozen=True)
class Instance:
    uuid: str
    host: str
    flavor_id: str | None = None
    project_id: str | None = None


@dataclasses.dataclass(frozen=True)
class Aggregate:
    uuid: str
    name: str
    metadata: dict
    hosts: frozenset


def _chunks(keys):
    keys = sorted(set(keys))
    for start in range(0, len(keys), CHUNK):
        yield keys[start:start + CHUNK]


def _select(txn, query, column, keys):
    """Rows of ``query``, all of them or those whose ``column`` is in
    ``keys``."""
    if keys is None:
        return list(txn.execute(query))
    out = []
    for chunk in _chunks(keys):
        out.extend(txn.execute(query.where(column.in_(chunk))))
    return out


@store.reader
def compute_nodes(txn, uuids=None):
    """ComputeNode records (all, or those of ``uuids`` that exist)."""
    return [ComputeNode(**row._mapping)
            for row in _select(txn, sa.select(_cn), _cn.c.uuid, uuids)]


@store.reader
def services(txn, hosts=None):
    """{host: Service} (hosts without a row are left out)."""
    query = sa.select(_svc.c.host, _svc.c.disabled, _svc.c.disabled_reason,
                      _svc.c.forced_down, _svc.c.last_seen_up)
    return {row.host: Service(row.host, bool(row.disabled),
                              row.disabled_reason, bool(row.forced_down),
                              row.last_seen_up)
            for row in _select(txn, query, _svc.c.host, hosts)}


@store.reader
def instances(txn, hosts=None):
    """{host: {instance uuid: Instance}}."""
    query = sa.select(_inst.c.instance_uuid, _inst.c.host,
                      _inst.c.flavor_id, _inst.c.project_id)
    out = {}
    for row in _select(txn, query, _inst.c.host, hosts):
        out.setdefault(row.host, {})[row.instance_uuid] = Instance(
            row.instance_uuid, row.host, row.flavor_id, row.project_id)
    return out


@store.reader
def aggregates(txn, uuids=None):
    """{aggregate uuid: Aggregate} (with their member hosts)."""
    found = _select(txn, sa.select(_agg.c.id, _agg.c.uuid, _agg.c.name,
                                   _agg.c.metadata),
                    _agg.c.uuid, uuids)
    if not found:
        return {}
    members = {}
    ids = None if uuids is None else [r.id for r in found]
    for row in _select(txn, sa.select(_agg_hosts.c.aggregate_id,
                                      _agg_hosts.c.host),
                       _agg_hosts.c.aggregate_id, ids):
        members.setdefault(row.aggregate_id, set()).add(row.host)
    return {r.uuid: Aggregate(r.uuid, r.name, dict(r.metadata or {}),
                              frozenset(members.get(r.id, ())))
            for r in found}
