"""Scheduler host records: compute nodes, services, instances, host
aggregates and their change log.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _mysql_options():
    """InnoDB, utf8mb4 and the binary, no-pad collation of 0001, so that
    host names compare exactly as on PostgreSQL and SQLite."""
    dialect = op.get_bind().dialect
    options = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4"}
    if dialect.name != "mysql":
        return options
    if getattr(dialect, "is_mariadb", False):
        options["mysql_collate"] = "utf8mb4_nopad_bin"
    elif (dialect.server_version_info or (0,)) >= (8,):
        options["mysql_collate"] = "utf8mb4_0900_bin"
    else:
        options["mysql_collate"] = "utf8mb4_bin"
    return options


def _json():
    return sa.Text().with_variant(mysql.MEDIUMTEXT(), "mysql")


def _stamps():
    return [sa.Column("created_at", sa.DateTime, nullable=False),
            sa.Column("updated_at", sa.DateTime, nullable=True)]


def _count(name):
    return sa.Column(name, sa.Integer, nullable=False)


def upgrade():
    options = _mysql_options()
    op.create_table(
        "compute_nodes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("nodename", sa.String(255), nullable=False),
        sa.Column("cell_uuid", sa.String(36), nullable=True),
        sa.Column("hypervisor_type", sa.String(255), nullable=True),
        sa.Column("hypervisor_version", sa.Integer, nullable=True),
        sa.Column("host_ip", sa.String(39), nullable=True),
        *[sa.Column(name, _json(), nullable=True)
          for name in ("cpu_info", "supported_instances", "numa_topology",
                       "pci_device_pools", "stats", "metrics")],
        *[_count(name) for name in (
            "vcpus", "vcpus_used", "memory_mb", "memory_mb_used",
            "free_ram_mb", "local_gb", "local_gb_used", "free_disk_gb")],
        sa.Column("disk_available_least", sa.Integer, nullable=True),
        *[sa.Column(name, sa.Double(), nullable=False)
          for name in ("cpu_allocation_ratio", "ram_allocation_ratio",
                       "disk_allocation_ratio")],
        _count("failed_builds"),
        _count("generation"),
        *_stamps(),
        sa.UniqueConstraint("host", "nodename",
                            name="uniq_compute_nodes0host0nodename"),
        **options)
    op.create_table(
        "compute_services",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False, unique=True),
        sa.Column("disabled", sa.Boolean, nullable=False),
        sa.Column("disabled_reason", sa.String(255), nullable=True),
        sa.Column("forced_down", sa.Boolean, nullable=False),
        sa.Column("last_seen_up", sa.DateTime, nullable=True),
        *_stamps(), **options)
    op.create_table(
        "host_instances",
        sa.Column("instance_uuid", sa.String(36), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("flavor_id", sa.String(255), nullable=True),
        sa.Column("project_id", sa.String(255), nullable=True),
        *_stamps(), **options)
    op.create_index("ix_host_instances_host", "host_instances", ["host"])
    op.create_table(
        "host_aggregates",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("metadata", _json(), nullable=False),
        *_stamps(), **options)
    op.create_table(
        "host_aggregate_hosts",
        sa.Column("aggregate_id", sa.Integer,
                  sa.ForeignKey("host_aggregates.id"), primary_key=True),
        sa.Column("host", sa.String(255), primary_key=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        **options)
    op.create_index("ix_host_aggregate_hosts_host", "host_aggregate_hosts",
                    ["host"])
    op.create_table(
        "host_changes",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer, "sqlite"),
                  primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("ref", sa.String(255), nullable=False),
        sa.Column("changed_at", sa.DateTime, nullable=False),
        sqlite_autoincrement=True, **options)
    op.create_index("ix_host_changes_changed_at", "host_changes",
                    ["changed_at"])
