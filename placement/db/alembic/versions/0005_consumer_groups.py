"""Consumer groups: sets of consumers placed by a rule over root
providers, checked in the allocation write that adds a member.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def _options():
    """InnoDB, utf8mb4 and the binary, no-pad collation of 0001, so that
    uuids compare exactly as on PostgreSQL and SQLite."""
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


def _stamps():
    return [sa.Column("created_at", sa.DateTime, nullable=False),
            sa.Column("updated_at", sa.DateTime, nullable=True)]


def upgrade():
    options = _options()
    op.create_table(
        "consumer_groups",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("generation", sa.Integer, nullable=False),
        *_stamps(),
        **options)
    op.create_table(
        "consumer_group_members",
        sa.Column("group_id", sa.Integer,
                  sa.ForeignKey("consumer_groups.id"), primary_key=True),
        sa.Column("consumer_uuid", sa.String(36), primary_key=True),
        *_stamps(),
        **options)

