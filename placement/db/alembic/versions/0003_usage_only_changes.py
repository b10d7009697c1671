"""Mark the provider change rows that record usage alone.

A claim changes only its providers' usage; a reader of the change log
that knows this refreshes the usage of those providers with one query
instead of reloading them (trees, inventories, traits, aggregates).
Rows written before this revision are marked as full changes.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("provider_changes", sa.Column(
        "usage_only", sa.Boolean, nullable=False,
        server_default=sa.false()))
