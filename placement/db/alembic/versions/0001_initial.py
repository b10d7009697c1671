"""Initial placement schema.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

MYSQL = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}


def _mysql_collation():
    """Case-sensitive and without padding, as names compare on PostgreSQL
    and SQLite ("a" and "a " are two names)."""
    dialect = op.get_bind().dialect
    if getattr(dialect, "is_mariadb", False):
        return "utf8mb4_nopad_bin"
    if (dialect.server_version_info or (0,)) >= (8,):
        return "utf8mb4_0900_bin"
    return "utf8mb4_bin"


def _stamps():
    return [sa.Column("created_at", sa.DateTime, nullable=False),
            sa.Column("updated_at", sa.DateTime, nullable=True)]


def _id():
    return sa.Column("id", sa.Integer, primary_key=True)


def _fk(name, target, **kw):
    return sa.Column(name, sa.Integer, sa.ForeignKey(target + ".id"), **kw)


def upgrade():
    if op.get_bind().dialect.name == "mysql":
        MYSQL["mysql_collate"] = _mysql_collation()
    op.create_table(
        "resource_classes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        *_stamps(), **MYSQL)
    op.create_table(
        "traits", _id(),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        *_stamps(), sqlite_autoincrement=True, **MYSQL)
    op.create_table(
        "resource_providers", _id(),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("generation", sa.Integer, nullable=False),
        _fk("root_provider_id", "resource_providers", nullable=True),
        _fk("parent_provider_id", "resource_providers", nullable=True),
        *_stamps(), sqlite_autoincrement=True, **MYSQL)
    op.create_index("ix_resource_providers_root_provider_id",
                    "resource_providers", ["root_provider_id"])
    op.create_index("ix_resource_providers_parent_provider_id",
                    "resource_providers", ["parent_provider_id"])
    op.create_table(
        "inventories", _id(),
        _fk("resource_provider_id", "resource_providers", nullable=False),
        _fk("resource_class_id", "resource_classes", nullable=False),
        sa.Column("total", sa.Integer, nullable=False),
        sa.Column("reserved", sa.Integer, nullable=False),
        sa.Column("min_unit", sa.Integer, nullable=False),
        sa.Column("max_unit", sa.Integer, nullable=False),
        sa.Column("step_size", sa.Integer, nullable=False),
        sa.Column("allocation_ratio", sa.Double(),
                  nullable=False),
        *_stamps(),
        sa.UniqueConstraint("resource_provider_id", "resource_class_id",
                            name="uniq_inventories0provider0class"),
        **MYSQL)
    op.create_index("ix_inventories_resource_class_id", "inventories",
                    ["resource_class_id"])
    for name in ("projects", "users"):
        op.create_table(
            name, _id(),
            sa.Column("external_id", sa.String(255), nullable=False,
                      unique=True),
            *_stamps(), **MYSQL)
    op.create_table(
        "consumer_types", _id(),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        *_stamps(), **MYSQL)
    op.create_table(
        "consumers", _id(),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        _fk("project_id", "projects", nullable=False),
        _fk("user_id", "users", nullable=False),
        _fk("consumer_type_id", "consumer_types", nullable=True),
        sa.Column("generation", sa.Integer, nullable=False),
        *_stamps(), **MYSQL)
    op.create_index("ix_consumers_consumer_type_id", "consumers",
                    ["consumer_type_id"])
    op.create_index("consumers_project_id_user_id_idx", "consumers",
                    ["project_id", "user_id"])
    op.create_table(
        "allocations", _id(),
        _fk("resource_provider_id", "resource_providers", nullable=False),
        _fk("consumer_id", "consumers", nullable=False),
        _fk("resource_class_id", "resource_classes", nullable=False),
        sa.Column("used", sa.Integer, nullable=False),
        *_stamps(), **MYSQL)
    op.create_index("ix_allocations_consumer_id", "allocations",
                    ["consumer_id"])
    op.create_index("ix_allocations_resource_class_id", "allocations",
                    ["resource_class_id"])
    op.create_index("allocations_provider_class_used_idx", "allocations",
                    ["resource_provider_id", "resource_class_id", "used"])
    op.create_table(
        "placement_aggregates", _id(),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        *_stamps(), **MYSQL)
    op.create_table(
        "resource_provider_aggregates",
        sa.Column("resource_provider_id", sa.Integer,
                  sa.ForeignKey("resource_providers.id"), primary_key=True),
        sa.Column("aggregate_id", sa.Integer,
                  sa.ForeignKey("placement_aggregates.id"),
                  primary_key=True),
        *_stamps(), **MYSQL)
    op.create_index("ix_resource_provider_aggregates_aggregate_id",
                    "resource_provider_aggregates", ["aggregate_id"])
    op.create_table(
        "resource_provider_traits",
        sa.Column("resource_provider_id", sa.Integer,
                  sa.ForeignKey("resource_providers.id"), primary_key=True),
        sa.Column("trait_id", sa.Integer, sa.ForeignKey("traits.id"),
                  primary_key=True),
        *_stamps(), **MYSQL)
    op.create_index("ix_resource_provider_traits_trait_id",
                    "resource_provider_traits", ["trait_id"])
    op.create_table(
        "provider_changes",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer, "sqlite"),
                  primary_key=True),
        sa.Column("resource_provider_id", sa.Integer, nullable=False),
        sa.Column("changed_at", sa.DateTime, nullable=False),
        sqlite_autoincrement=True, **MYSQL)
    op.create_index("ix_provider_changes_changed_at", "provider_changes",
                    ["changed_at"])
    op.create_table(
        "placement_counters",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
        **MYSQL)
