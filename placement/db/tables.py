"""SQLAlchemy Core tables of placement, on the gantt database's
``metadata``. Other packages add their own tables to the same metadata
(the scheduler's host records: scheduler.host_tables) and, for their
change logs, register with the store (placement.db.store.ChangeLog).

The migrations under alembic/versions create every table of the
metadata, in one history; a test compares the migrated schema with it.
"""

import sqlalchemy as sa

metadata = sa.MetaData()

# MySQL: InnoDB, utf8mb4. The migration also sets a binary, no-pad
# collation, so that names compare as on PostgreSQL and SQLite.
MYSQL = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}
_MYSQL = MYSQL

# Standard resource classes keep their os-resource-classes index as id;
# custom classes start here so that new standard classes fit below.
MIN_CUSTOM_RESOURCE_CLASS_ID = 10000


def _timestamps():
    return (sa.Column("created_at", sa.DateTime, nullable=False),
            sa.Column("updated_at", sa.DateTime, nullable=True))


# created_at and updated_at, as every table of the metadata has them.
timestamps = _timestamps


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
    # A random number of the write attempt that made the row: tells its
    # rows from another write's that took the same seq (a Galera node's
    # rolled-back numbers are handed out again; placement.db.store).
    sa.Column("written_by", sa.BigInteger, nullable=True),
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

# Consumer groups: sets of consumers whose placement follows a rule over
# root providers (at most N members per root, or every member under one
# root), enforced in the allocation write that adds a member
# (placement.objects.consumer_groups). The generation moves with every
# member added, so that two writes adding members compare-and-set it.
consumer_groups = sa.Table(
    "consumer_groups", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("generation", sa.Integer, nullable=False),
    *_timestamps(),
    **_MYSQL,
)

# Members by consumer uuid, not id: a consumer whose allocations are all
# removed is deleted, and its membership then simply stops counting.
consumer_group_members = sa.Table(
    "consumer_group_members", metadata,
    sa.Column("group_id", sa.Integer, sa.ForeignKey("consumer_groups.id"),
              primary_key=True),
    sa.Column("consumer_uuid", sa.String(36), primary_key=True),
    *_timestamps(),
    **_MYSQL,
)
