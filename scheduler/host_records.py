"""Writes to the scheduler's host records: one typed call for each thing
compute services and Nova's API tell the scheduler (the RPC endpoint
calls these).

Each call runs in a transaction of its own, or joins the caller's when
given a Txn (as ``gantt-manage cloud load`` does). It logs the records it
touched in ``host_changes``; after the commit the store tells its
listeners, the host state table among them, and other processes find the
log rows before their next use of the table.
"""

import datetime
import json
import uuid as uuidlib

import sqlalchemy as sa

from placement.db import fastsql, store
from scheduler import host_reads, host_tables

_cn = host_tables.compute_nodes
_svc = host_tables.compute_services
_inst = host_tables.host_instances
_agg = host_tables.host_aggregates
_agg_hosts = host_tables.host_aggregate_hosts

# Kinds of change-log entries, and what their ref names.
NODE = "node"  # compute node uuid
SERVICE = "service"  # host
INSTANCES = "instances"  # host
AGGREGATE = "aggregate"  # aggregate uuid

# What a compute node report may carry, with the value a new node gets
# for what its first report leaves out. free_ram_mb and free_disk_gb
# default to total minus used.
REPORT_DEFAULTS = {
    "cell_uuid": None,
    "hypervisor_type": None,
    "hypervisor_version": None,
    "host_ip": None,
    "cpu_info": None,
    "supported_instances": None,
    "numa_topology": None,
    "pci_device_pools": None,
    "stats": None,
    "metrics": None,
    "vcpus": 0,
    "vcpus_used": 0,
    "memory_mb": 0,
    "memory_mb_used": 0,
    "free_ram_mb": None,
    "local_gb": 0,
    "local_gb_used": 0,
    "free_disk_gb": None,
    "disk_available_least": None,
    # Nova's initial_*_allocation_ratio defaults.
    "cpu_allocation_ratio": 4.0,
    "ram_allocation_ratio": 1.0,
    "disk_allocation_ratio": 1.0,
}

_INTS = ("vcpus", "vcpus_used", "memory_mb", "memory_mb_used",
         "free_ram_mb", "local_gb", "local_gb_used", "free_disk_gb",
         "disk_available_least", "hypervisor_version")
_RATIOS = ("cpu_allocation_ratio", "ram_allocation_ratio",
           "disk_allocation_ratio")
# Integers a report may give as null (unknown).
_NULLABLE_INTS = ("disk_available_least", "hypervisor_version")
# (free, total, used): a node's free figure, unless reported, is total
# minus used.
_FREE = (("free_ram_mb", "memory_mb", "memory_mb_used"),
         ("free_disk_gb", "local_gb", "local_gb_used"))
_DERIVED = tuple(free for free, _total, _used in _FREE)
_NAME_MAX = 255
_KEEP = object()


class HostRecordError(ValueError):
    """An argument a host record cannot hold; nothing was written."""


class HostNotFound(LookupError):
    """No compute node matches; nothing was written."""


# -- argument checks ------------------------------------------------------


def _uuid(value, what="uuid"):
    try:
        return str(uuidlib.UUID(str(value)))
    except ValueError:
        raise HostRecordError(f"{what}: {value!r} is not a uuid") from None


def _name(value, what):
    if not isinstance(value, str) or not value or len(value) > _NAME_MAX:
        raise HostRecordError(
            f"{what}: expected a string of 1 to {_NAME_MAX} characters, "
            f"got {value!r}")
    return value


def _optional_name(value, what):
    return None if value is None else _name(value, what)


def _document(value, what, kind):
    """A JSON field: given as the structure, or as Nova sends some of
    them, as JSON text."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise HostRecordError(f"{what}: not valid JSON") from None
    if not isinstance(value, kind):
        raise HostRecordError(f"{what}: expected a JSON "
                              f"{'object' if kind is dict else 'array'}")
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise HostRecordError(f"{what}: {exc}") from None
    return value


def _check_report(values):
    """The fields of a compute node report, checked and made canonical;
    HostRecordError names the first bad one. A null free_ram_mb or
    free_disk_gb is left out: the node derives it from total and used."""
    out = {}
    for name, value in values.items():
        if name not in REPORT_DEFAULTS:
            raise HostRecordError(f"unknown compute node field {name!r}")
        if value is None and name in _DERIVED:
            continue
        out[name] = _check_field(name, value)
    return out


def check_report(values):
    """A compute node report as update_host_info takes it, checked and
    made canonical (the sender checks it before it sends, the scheduler
    again as it records it); HostRecordError names the first bad field."""
    if not isinstance(values, dict):
        raise HostRecordError(
            "report: expected an object of compute node fields")
    return _check_report(values)


def _check_field(name, value):
    """One field of REPORT_DEFAULTS, by its kind: integers, allocation
    ratios, the cell uuid, short strings, JSON objects, JSON arrays."""
    if name in _INTS:
        return _report_int(name, value)
    if name in _RATIOS:
        return _ratio(name, value)
    if name == "cell_uuid":
        return None if value is None else _uuid(value, name)
    if name in ("hypervisor_type", "host_ip"):
        return _optional_name(value, name)
    if name in ("cpu_info", "numa_topology", "stats"):
        return _document(value, name, dict)
    value = _document(value, name, list)
    _check_items(name, value)
    return value


def _report_int(name, value):
    """An integer field; only some may be null (unknown)."""
    if value is None:
        if name not in _NULLABLE_INTS:
            raise HostRecordError(f"{name}: may not be null")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise HostRecordError(f"{name}: expected an integer, "
                              f"got {value!r}")
    return value


def _ratio(name, value):
    """An allocation ratio: a number >= 0, stored as a float."""
    if isinstance(value, bool) or not isinstance(
            value, int | float) or value < 0:
        raise HostRecordError(f"{name}: expected a number >= 0, "
                              f"got {value!r}")
    return float(value)


def _is_instance_type(item):
    return isinstance(item, list | tuple) and len(item) == 3


def _is_metric(item):
    return isinstance(item, dict) and "name" in item and "value" in item


def _is_pci_pool(item):
    return isinstance(item, dict) and isinstance(item.get("count"), int)


# The JSON array fields of a report: what each item must be, and what
# the error says it expected.
_ITEM_CHECKS = {
    "supported_instances": (
        _is_instance_type, "expected [architecture, hypervisor type, "
                           "vm mode]"),
    "metrics": (_is_metric, "expected an object with name and value"),
    "pci_device_pools": (_is_pci_pool,
                         "expected an object with an integer count"),
}


def _check_items(name, value):
    """The items of the JSON array field ``name``: the scheduler reads
    them as such (host state, filters) and must not fail there."""
    if value is None:
        return
    valid, expected = _ITEM_CHECKS[name]
    for i, item in enumerate(value):
        if not valid(item):
            raise HostRecordError(f"{name}[{i}]: {expected}")


def _naive_utc(at):
    if at.tzinfo is not None:
        at = at.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return at


# -- compute nodes --------------------------------------------------------


# Every compute node report runs these (and loading a cloud, once per
# host): on the raw cursor.
_NODES_MATCHING = fastsql.Fast(sa.select(_cn).where(sa.or_(
    _cn.c.uuid == sa.bindparam("uuid"),
    sa.and_(_cn.c.host == sa.bindparam("host"),
            _cn.c.nodename == sa.bindparam("nodename")))))
_NODE_COLUMNS = [*REPORT_DEFAULTS, "host", "nodename", "failed_builds"]
_INSERT_NODE = fastsql.Fast(_cn.insert(), columns=[
    "uuid", "generation", "created_at", "updated_at", *_NODE_COLUMNS])
# Updates by the set of columns written (failed_builds is written only
# when the report's stats carry it).
_UPDATE_NODE = {
    with_failed: fastsql.Fast(_cn.update().where(
        _cn.c.id == sa.bindparam("row_id")).values(
            generation=_cn.c.generation + 1,
            updated_at=sa.bindparam("now"),
            **{c: sa.bindparam(f"new_{c}") for c in _NODE_COLUMNS
               if with_failed or c != "failed_builds"}))
    for with_failed in (False, True)}


@store.writer
def upsert_compute_node(txn, uuid, host, nodename, **report):
    """Create or update the compute node ``uuid`` (its root resource
    provider's uuid) on ``host`` as ``nodename``. ``report`` holds the
    fields of REPORT_DEFAULTS the compute service sent; an update keeps the
    fields it leaves out. A ``failed_builds`` entry in ``stats`` sets the
    failed builds counter, as Nova's compute services report it."""
    uuid = _uuid(uuid)
    host = _name(host, "host")
    nodename = _name(nodename, "nodename")
    values = _check_report(report)
    row = _node_row(txn, uuid, host, nodename)
    merged = _merged_report(row, values)
    merged["host"] = host
    merged["nodename"] = nodename
    failed_builds = _failed_builds(values)
    if failed_builds is not None:
        merged["failed_builds"] = failed_builds
    if row is not None:
        update = _UPDATE_NODE["failed_builds" in merged]
        update.rowcount(txn, {"row_id": row.id, "now": txn.now, **{
            f"new_{c}": v for c, v in merged.items()}})
    else:
        _INSERT_NODE.rowcount(txn, {
            "uuid": uuid, "generation": 0, "created_at": txn.now,
            "updated_at": txn.now, "failed_builds": 0, **merged})
    txn.changes.log(host_tables.LOG).add((NODE, uuid))


def _node_row(txn, uuid, host, nodename):
    """The row of compute node ``uuid``, or None when it is new;
    HostRecordError when ``host`` already has ``nodename`` under another
    uuid (one node, one provider)."""
    found = _NODES_MATCHING.rows(
        txn, {"uuid": uuid, "host": host, "nodename": nodename})
    for row in found:
        if row.uuid != uuid:
            raise HostRecordError(
                f"host {host!r} node {nodename!r} is compute node "
                f"{row.uuid} already")
    return found[0] if found else None


def _merged_report(row, values):
    """The node's REPORT_DEFAULTS fields after the report: its row's (a
    new node's: the defaults) overlaid with the checked ``values``. A
    free figure the report leaves out is total minus used, on a new node
    or when the report changes either."""
    current = row._asdict() if row is not None else REPORT_DEFAULTS
    merged = {**{k: current[k] for k in REPORT_DEFAULTS}, **values}
    for free, total, used in _FREE:
        if free not in values and (
                row is None or {total, used} & values.keys()):
            merged[free] = merged[total] - merged[used]
    return merged


def _failed_builds(values):
    """The failed builds count in the report's stats (strings, as Nova
    sends them), or None when they carry none."""
    stats = values.get("stats") or {}
    if "failed_builds" not in stats:
        return None
    try:
        return int(stats["failed_builds"])
    except (TypeError, ValueError):
        raise HostRecordError("stats.failed_builds: not an integer "
                              f"({stats['failed_builds']!r})") from None


@store.writer
def delete_compute_node(txn, uuid):
    """Forget the compute node ``uuid``; whether there was one."""
    uuid = _uuid(uuid)
    if not txn.execute(_cn.delete().where(_cn.c.uuid == uuid)).rowcount:
        return False
    txn.changes.log(host_tables.LOG).add((NODE, uuid))
    return True


def _nodes_named(txn, nodename, host):
    query = sa.select(_cn.c.id, _cn.c.uuid, _cn.c.failed_builds).where(
        _cn.c.nodename == nodename)
    if host is not None:
        query = query.where(_cn.c.host == host)
    rows = txn.execute(query).all()
    if not rows:
        on = f" on host {host!r}" if host is not None else ""
        raise HostNotFound(f"no compute node named {nodename!r}{on}")
    return rows


@store.writer
def record_build_failure(txn, nodename, host=None):
    """One more failed build on the node(s) named ``nodename`` (on
    ``host``, when node names are not unique across hosts)."""
    for row in _nodes_named(txn, nodename, host):
        txn.execute(_cn.update().where(_cn.c.id == row.id).values(
            failed_builds=_cn.c.failed_builds + 1))
        txn.changes.log(host_tables.LOG).add((NODE, row.uuid))


@store.writer
def reset_build_failures(txn, nodename, host=None):
    """A successful build: the node's failed builds count starts again
    from zero."""
    for row in _nodes_named(txn, nodename, host):
        if row.failed_builds:
            txn.execute(_cn.update().where(_cn.c.id == row.id).values(
                failed_builds=0))
            txn.changes.log(host_tables.LOG).add((NODE, row.uuid))


# -- services -------------------------------------------------------------


_SERVICE_ID = fastsql.Fast(sa.select(_svc.c.id).where(
    _svc.c.host == sa.bindparam("host")))
# Inserts and updates by the columns written (a few combinations).
_SERVICE_WRITES = {}


def _service_write(kind, columns):
    key = (kind, columns)
    fast = _SERVICE_WRITES.get(key)
    if fast is None:
        if kind == "insert":
            fast = fastsql.Fast(_svc.insert(), columns=list(columns))
        else:
            fast = fastsql.Fast(_svc.update().where(
                _svc.c.id == sa.bindparam("row_id")).values(
                    **{c: sa.bindparam(f"new_{c}") for c in columns}))
        fast = _SERVICE_WRITES.setdefault(key, fast)
    return fast


def _write_service(txn, host, values):
    host = _name(host, "host")
    row = _SERVICE_ID.first(txn, {"host": host})
    if row is None:
        params = {"host": host, "disabled": False, "forced_down": False,
                  "created_at": txn.now, **values}
        _service_write("insert", tuple(sorted(params))).rowcount(
            txn, params)
    else:
        params = {"updated_at": txn.now, **values}
        _service_write("update", tuple(sorted(params))).rowcount(
            txn, {"row_id": row.id,
                  **{f"new_{c}": v for c, v in params.items()}})
    txn.changes.log(host_tables.LOG).add((SERVICE, host))


@store.writer
def set_service_state(txn, host, enabled=None, disabled_reason=_KEEP,
                      forced_down=None):
    """Enable or disable the compute service of ``host``, or force it
    down; what is not given stays. Enabling clears the disabled reason
    unless one is given."""
    values = {}
    if enabled is not None:
        values["disabled"] = not enabled
        if enabled and disabled_reason is _KEEP:
            values["disabled_reason"] = None
    if disabled_reason is not _KEEP:
        values["disabled_reason"] = _optional_name(disabled_reason,
                                                   "disabled_reason")
    if forced_down is not None:
        values["forced_down"] = bool(forced_down)
    _write_service(txn, host, values)


@store.writer
def heartbeat(txn, host, at=None):
    """The compute service of ``host`` reported at ``at`` (default: now)."""
    _write_service(txn, host, {"last_seen_up": _naive_utc(at) if at
                               else txn.now})


# -- instances ------------------------------------------------------------


def _instance(item):
    """(uuid, flavor_id, project_id) of an instance given as a uuid, a
    mapping or an object with those attributes."""
    if isinstance(item, str):
        return _uuid(item, "instance uuid"), None, None
    get = item.get if isinstance(item, dict) else (
        lambda name: getattr(item, name, None))
    return (_uuid(get("uuid"), "instance uuid"),
            _optional_name(get("flavor_id"), "flavor_id"),
            _optional_name(get("project_id"), "project_id"))


def _instances_of(txn, uuids):
    out = {}
    uuids = sorted(uuids)
    for start in range(0, len(uuids), 500):
        chunk = uuids[start:start + 500]
        for row in txn.execute(sa.select(_inst).where(
                _inst.c.instance_uuid.in_(chunk))):
            out[row.instance_uuid] = row
    return out


@store.writer
def update_instance_info(txn, host, instances):
    """These instances (uuids, mappings or objects with uuid, flavor_id,
    project_id) are on ``host`` now; others of the host stay."""
    host = _name(host, "host")
    wanted = {u: (f, p) for u, f, p in map(_instance, instances)}
    have = _instances_of(txn, wanted)
    for uuid, (flavor_id, project_id) in wanted.items():
        row = have.get(uuid)
        if row is None:
            txn.execute(_inst.insert().values(
                instance_uuid=uuid, host=host, flavor_id=flavor_id,
                project_id=project_id, created_at=txn.now))
        elif (row.host, row.flavor_id, row.project_id) != (
                host, flavor_id, project_id):
            txn.execute(_inst.update()
                        .where(_inst.c.instance_uuid == uuid)
                        .values(host=host, flavor_id=flavor_id,
                                project_id=project_id, updated_at=txn.now))
            txn.changes.log(host_tables.LOG).add((INSTANCES, row.host))
        else:
            continue
        txn.changes.log(host_tables.LOG).add((INSTANCES, host))


@store.writer
def delete_instance_info(txn, host, instance_uuid):
    """The instance has left ``host``; whether it was recorded there."""
    host = _name(host, "host")
    deleted = txn.execute(_inst.delete().where(
        _inst.c.instance_uuid == _uuid(instance_uuid, "instance uuid"),
        _inst.c.host == host)).rowcount
    if deleted:
        txn.changes.log(host_tables.LOG).add((INSTANCES, host))
    return bool(deleted)


@store.writer
def sync_instance_info(txn, host, instance_uuids):
    """``instance_uuids`` are all the instances on ``host``: forget the
    others, add the missing ones (moving them from another host). Whether
    anything changed."""
    host = _name(host, "host")
    wanted = {_uuid(u, "instance uuid") for u in instance_uuids}
    recorded = {r.instance_uuid for r in txn.execute(
        sa.select(_inst.c.instance_uuid).where(_inst.c.host == host))}
    gone = sorted(recorded - wanted)
    for start in range(0, len(gone), 500):
        txn.execute(_inst.delete().where(
            _inst.c.instance_uuid.in_(gone[start:start + 500])))
    missing = wanted - recorded
    elsewhere = _instances_of(txn, missing)
    for uuid in sorted(missing):
        row = elsewhere.get(uuid)
        if row is None:
            txn.execute(_inst.insert().values(
                instance_uuid=uuid, host=host, created_at=txn.now))
        else:
            txn.execute(_inst.update().where(_inst.c.instance_uuid == uuid)
                        .values(host=host, updated_at=txn.now))
            txn.changes.log(host_tables.LOG).add((INSTANCES, row.host))
    changed = bool(gone or missing)
    if changed:
        txn.changes.log(host_tables.LOG).add((INSTANCES, host))
    return changed


# -- aggregates -----------------------------------------------------------


def _metadata(metadata):
    if not isinstance(metadata, dict):
        raise HostRecordError("metadata: expected a mapping")
    for key, value in metadata.items():
        _name(key, "metadata key")
        if not isinstance(value, str) or len(value) > _NAME_MAX:
            raise HostRecordError(
                f"metadata.{key}: expected a string of up to {_NAME_MAX} "
                f"characters, got {value!r}")
    return dict(metadata)


def check_aggregate(uuid, name, metadata=None, hosts=()):
    """(uuid, name, metadata, hosts) of a host aggregate, checked and
    made canonical; HostRecordError for a value a record cannot hold."""
    return (_uuid(uuid), _name(name, "name"), _metadata(metadata or {}),
            frozenset(_name(h, "hosts[]") for h in hosts))


def check_instances(items):
    """host_reads.Instance records of instances given as uuids,
    mappings or objects with uuid, flavor_id and project_id."""
    return [host_reads.Instance(uuid, None, flavor_id, project_id)
            for uuid, flavor_id, project_id in map(_instance, items)]


def check_uuid(value, what="uuid"):
    return _uuid(value, what)


def check_name(value, what):
    return _name(value, what)


@store.writer
def update_aggregate(txn, uuid, name, metadata=None, hosts=()):
    """Create or replace the host aggregate ``uuid``: its name, metadata
    (strings: availability_zone, filter_tenant_id, ...) and member
    hosts."""
    uuid, name, metadata, hosts = check_aggregate(uuid, name, metadata,
                                                  hosts)
    agg_id = txn.scalar(sa.select(_agg.c.id).where(_agg.c.uuid == uuid))
    if agg_id is None:
        agg_id = txn.execute(_agg.insert().values(
            uuid=uuid, name=name, metadata=metadata, created_at=txn.now)
        ).inserted_primary_key[0]
        members = set()
    else:
        txn.execute(_agg.update().where(_agg.c.id == agg_id).values(
            name=name, metadata=metadata, updated_at=txn.now))
        members = {r.host for r in txn.execute(
            sa.select(_agg_hosts.c.host)
            .where(_agg_hosts.c.aggregate_id == agg_id))}
    gone = sorted(members - hosts)
    if gone:
        txn.execute(_agg_hosts.delete().where(
            _agg_hosts.c.aggregate_id == agg_id,
            _agg_hosts.c.host.in_(gone)))
    new = sorted(hosts - members)
    if new:
        txn.execute(_agg_hosts.insert(), [
            {"aggregate_id": agg_id, "host": h, "created_at": txn.now}
            for h in new])
    txn.changes.log(host_tables.LOG).add((AGGREGATE, uuid))


@store.writer
def delete_aggregate(txn, uuid):
    """Forget the host aggregate ``uuid``; whether there was one."""
    uuid = _uuid(uuid)
    agg_id = txn.scalar(sa.select(_agg.c.id).where(_agg.c.uuid == uuid))
    if agg_id is None:
        return False
    txn.execute(_agg_hosts.delete().where(
        _agg_hosts.c.aggregate_id == agg_id))
    txn.execute(_agg.delete().where(_agg.c.id == agg_id))
    txn.changes.log(host_tables.LOG).add((AGGREGATE, uuid))
    return True
