"""SQLAlchemy Core tables of the gantt database: placement's, and the
scheduler's host records (what Nova keeps about compute nodes and
placement does not: see the end of this file).

The migrations under alembic/versions create exactly these tables; a test
compares the migrated schema with this metadata.
"""

import json

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

metadata = sa.MetaData()

# MySQL: InnoDB, utf8mb4. The migration also sets a binary, no-pad
# collation, so that names compare as on PostgreSQL and SQLite.
_MYSQL = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}

# Standard resource classes keep their os-resource-classes index as id;
# custom classes start here so that new standard classes fit below.
MIN_CUSTOM_RESOURCE_CLASS_ID = 10000


def _timestamps():
    return (sa.Column("created_at", sa.DateTime, nullable=False),
            sa.Column("updated_at", sa.DateTime, nullable=True))


resource_classes = sa.Table(
    "resource_classes", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("name", sa.String(255), nullable=False, unique=True),
    *_timestamps(),
    **_MYSQL,
)

traits = sa.Table(
    "traits", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(255), nullable=False, unique=True),
    *_timestamps(),
    sqlite_autoincrement=True,
    **_MYSQL,
)

resource_providers = sa.Table(
    "resource_providers", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("generation", sa.Integer, nullable=False, default=0),
    sa.Column("root_provider_id", sa.Integer,
              sa.ForeignKey("resource_providers.id"), nullable=True,
              index=True),
    sa.Column("parent_provider_id", sa.Integer,
              sa.ForeignKey("resource_providers.id"), nullable=True,
              index=True),
    *_timestamps(),
    sqlite_autoincrement=True,
    **_MYSQL,
)

inventories = sa.Table(
    "inventories", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("resource_provider_id", sa.Integer,
              sa.ForeignKey("resource_providers.id"), nullable=False),
    sa.Column("resource_class_id", sa.Integer,
              sa.ForeignKey("resource_classes.id"), nullable=False,
              index=True),
    sa.Column("total", sa.Integer, nullable=False),
    sa.Column("reserved", sa.Integer, nullable=False),
    sa.Column("min_unit", sa.Integer, nullable=False),
    sa.Column("max_unit", sa.Integer, nullable=False),
    sa.Column("step_size", sa.Integer, nullable=False),
    sa.Column("allocation_ratio", sa.Double(), nullable=False),
    *_timestamps(),
    sa.UniqueConstraint("resource_provider_id", "resource_class_id",
                        name="uniq_inventories0provider0class"),
    **_MYSQL,
)

projects = sa.Table(
    "projects", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("external_id", sa.String(255), nullable=False, unique=True),
    *_timestamps(),
    **_MYSQL,
)

users = sa.Table(
    "users", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("external_id", sa.String(255), nullable=False, unique=True),
    *_timestamps(),
    **_MYSQL,
)

consumer_types = sa.Table(
    "consumer_types", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(255), nullable=False, unique=True),
    *_timestamps(),
    **_MYSQL,
)

consumers = sa.Table(
    "consumers", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"),
              nullable=False),
    sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"),
              nullable=False),
    sa.Column("consumer_type_id", sa.Integer,
              sa.ForeignKey("consumer_types.id"), nullable=True,
              index=True),
    sa.Column("generation", sa.Integer, nullable=False, default=0),
    *_timestamps(),
    sa.Index("consumers_project_id_user_id_idx", "project_id", "user_id"),
    **_MYSQL,
)

allocations = sa.Table(
    "allocations", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("resource_provider_id", sa.Integer,
              sa.ForeignKey("resource_providers.id"), nullable=False),
    sa.Column("consumer_id", sa.Integer, sa.ForeignKey("consumers.id"),
              nullable=False, index=True),
    sa.Column("resource_class_id", sa.Integer,
              sa.ForeignKey("resource_classes.id"), nullable=False,
              index=True),
    sa.Column("used", sa.Integer, nullable=False),
    *_timestamps(),
    # Covers the per-provider, per-class usage sums of capacity checks.
    sa.Index("allocations_provider_class_used_idx",
             "resource_provider_id", "resource_class_id", "used"),
    **_MYSQL,
)

placement_aggregates = sa.Table(
    "placement_aggregates", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    *_timestamps(),
    **_MYSQL,
)

resource_provider_aggregates = sa.Table(
    "resource_provider_aggregates", metadata,
    sa.Column("resource_provider_id", sa.Integer,
              sa.ForeignKey("resource_providers.id"), primary_key=True),
    sa.Column("aggregate_id", sa.Integer,
              sa.ForeignKey("placement_aggregates.id"), primary_key=True,
              index=True),
    *_timestamps(),
    **_MYSQL,
)

resource_provider_traits = sa.Table(
    "resource_provider_traits", metadata,
    sa.Column("resource_provider_id", sa.Integer,
              sa.ForeignKey("resource_providers.id"), primary_key=True),
    sa.Column("trait_id", sa.Integer, sa.ForeignKey("traits.id"),
              primary_key=True, index=True),
    *_timestamps(),
    **_MYSQL,
)

# One row per provider touched by a committed write. Other processes read
# the rows past the last sequence number they saw to refresh only what
# changed (see placement/candidates). Rows carry no foreign key so that
# the deletion of a provider can be recorded too.
provider_changes = sa.Table(
    "provider_changes", metadata,
    sa.Column("seq", sa.BigInteger().with_variant(sa.Integer, "sqlite"),
              primary_key=True),
    sa.Column("resource_provider_id", sa.Integer, nullable=False),
    sa.Column("changed_at", sa.DateTime, nullable=False, index=True),
    # Only the provider's usage changed (a claim or its removal): readers
    # refresh usage instead of reloading the provider.
    sa.Column("usage_only", sa.Boolean, nullable=False,
              server_default=sa.false()),
    sqlite_autoincrement=True,
    **_MYSQL,
)

# Named counters: the next custom resource class id (ids are never reused,
# so that caches in other processes cannot map an id to the wrong name) and
# the provider_changes sequence below which rows have been pruned.
counters = sa.Table(
    "placement_counters", metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("value", sa.BigInteger, nullable=False),
    **_MYSQL,
)

CUSTOM_RC_COUNTER = "last_custom_resource_class_id"
CHANGES_PRUNED_COUNTER = "provider_changes_pruned_below"


# -- scheduler host records ---------------------------------------------------
#
# What the scheduler knows about compute hosts beyond placement: the
# compute nodes as their compute services report them, the services'
# state, the instances on each host and Nova's host aggregates with their
# metadata. Written by scheduler.host_records, read into numpy columns by
# scheduler.host_state. No foreign keys to placement: a compute node may
# report before its resource provider exists.


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
    sqlite_autoincrement=True,
    **_MYSQL,
)

HOST_CHANGES_PRUNED_COUNTER = "host_changes_pruned_below"
