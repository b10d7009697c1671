"""The scheduler's host records: what Nova keeps about compute hosts and
placement does not (compute nodes as their services report them, the
services' state, the instances on each host, Nova's host aggregates with
their metadata), and their change log. Tables of the gantt database's
metadata (placement.db.tables), created by the same alembic history;
written by scheduler.host_records, read by scheduler.host_reads into
scheduler.host_state's columns. No foreign keys to placement: a compute
node may report before its resource provider exists.
"""

import json

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from placement.db import store, tables

metadata = tables.metadata
_MYSQL = tables.MYSQL
_timestamps = tables.timestamps


class _JsonText(sa.types.TypeDecorator):
    """A JSON document stored as text: portable, and never queried
    inside. Serialised with sorted keys, so equal documents are equal
    text."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        return json.dumps(value, sort_keys=True, separators=(",", ":"))

    def process_result_value(self, value, dialect):
        return None if value is None else json.loads(value)


class _JsonMediumText(_JsonText):
    impl = mysql.MEDIUMTEXT
    cache_ok = True


def _json_column(name, nullable=True):
    # MEDIUMTEXT on MySQL, where TEXT stops at 64 KiB.
    return sa.Column(name, _JsonText().with_variant(_JsonMediumText(),
                                                    "mysql"),
                     nullable=nullable)


def _count(name):
    return sa.Column(name, sa.Integer, nullable=False, default=0)


# One row per compute node (Nova's ComputeNode); uuid is the uuid of the
# node's root resource provider. Resource figures are as last reported.
compute_nodes = sa.Table(
    "compute_nodes", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("host", sa.String(255), nullable=False),
    # Nova's hypervisor_hostname.
    sa.Column("nodename", sa.String(255), nullable=False),
    sa.Column("cell_uuid", sa.String(36), nullable=True),
    sa.Column("hypervisor_type", sa.String(255), nullable=True),
    # As Nova encodes it: 8.2.0 -> 8002000.
    sa.Column("hypervisor_version", sa.Integer, nullable=True),
    sa.Column("host_ip", sa.String(39), nullable=True),
    _json_column("cpu_info"),
    # [[arch, hypervisor type, vm mode], ...]
    _json_column("supported_instances"),
    _json_column("numa_topology"),
    # [{"count": n, "vendor_id": ..., "product_id": ..., tags...}, ...]
    _json_column("pci_device_pools"),
    # {"num_instances": "3", "io_workload": "1", ...} as Nova reports it.
    _json_column("stats"),
    # [{"name", "value", "source", "timestamp"}, ...]
    _json_column("metrics"),
    _count("vcpus"),
    _count("vcpus_used"),
    _count("memory_mb"),
    _count("memory_mb_used"),
    _count("free_ram_mb"),
    _count("local_gb"),
    _count("local_gb_used"),
    _count("free_disk_gb"),
    sa.Column("disk_available_least", sa.Integer, nullable=True),
    sa.Column("cpu_allocation_ratio", sa.Double(), nullable=False),
    sa.Column("ram_allocation_ratio", sa.Double(), nullable=False),
    sa.Column("disk_allocation_ratio", sa.Double(), nullable=False),
    _count("failed_builds"),
    # Bumped by every report: consumption the scheduler applied in memory
    # stands until the node reports again.
    sa.Column("generation", sa.Integer, nullable=False, default=0),
    *_timestamps(),
    sa.UniqueConstraint("host", "nodename",
                        name="uniq_compute_nodes0host0nodename"),
    **_MYSQL,
)

# One row per compute service (host): Nova's Service, as far as scheduling
# needs it. A host without a row is enabled and up.
compute_services = sa.Table(
    "compute_services", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("host", sa.String(255), nullable=False, unique=True),
    sa.Column("disabled", sa.Boolean, nullable=False, default=False),
    sa.Column("disabled_reason", sa.String(255), nullable=True),
    sa.Column("forced_down", sa.Boolean, nullable=False, default=False),
    # Last heartbeat; NULL: none yet (counts as up).
    sa.Column("last_seen_up", sa.DateTime, nullable=True),
    *_timestamps(),
    **_MYSQL,
)

# Which instance is on which host (Nova's scheduler instance info).
host_instances = sa.Table(
    "host_instances", metadata,
    sa.Column("instance_uuid", sa.String(36), primary_key=True),
    sa.Column("host", sa.String(255), nullable=False, index=True),
    sa.Column("flavor_id", sa.String(255), nullable=True),
    sa.Column("project_id", sa.String(255), nullable=True),
    *_timestamps(),
    **_MYSQL,
)

# Nova's host aggregates: a name, metadata (availability_zone,
# filter_tenant_id, *_weight_multiplier, ...) and member hosts. Their
# uuids are the placement aggregate uuids Nova mirrors them to.
host_aggregates = sa.Table(
    "host_aggregates", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("name", sa.String(255), nullable=False),
    _json_column("metadata", nullable=False),
    *_timestamps(),
    **_MYSQL,
)

host_aggregate_hosts = sa.Table(
    "host_aggregate_hosts", metadata,
    sa.Column("aggregate_id", sa.Integer,
              sa.ForeignKey("host_aggregates.id"), primary_key=True),
    sa.Column("host", sa.String(255), primary_key=True, index=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    **_MYSQL,
)

# The host records' change log, as provider_changes is placement's: one
# row per record a committed write touched, so that other processes
# reload only that. kind: "node" (ref: compute node uuid), "service" or
# "instances" (ref: host), "aggregate" (ref: aggregate uuid).
host_changes = sa.Table(
    "host_changes", metadata,
    sa.Column("seq", sa.BigInteger().with_variant(sa.Integer, "sqlite"),
              primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("ref", sa.String(255), nullable=False),
    sa.Column("changed_at", sa.DateTime, nullable=False, index=True),
    # The attempt of the write that made the row (placement.db.store).
    sa.Column("written_by", sa.BigInteger, nullable=True),
    sqlite_autoincrement=True,
    **_MYSQL,
)

HOST_CHANGES_PRUNED_COUNTER = "host_changes_pruned_below"

# Registered with the store: a write names the records it touched in
# txn.changes.log(LOG), and the store logs them when it commits.
LOG = store.register_change_log(
    store.ChangeLog("hosts", host_changes, HOST_CHANGES_PRUNED_COUNTER))
