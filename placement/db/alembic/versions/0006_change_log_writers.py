"""Mark each change log row with the write that made it.

A write whose connection fails during COMMIT is told committed or not by
its change log rows. Their sequence numbers alone cannot tell it: on a
Galera cluster the numbers of a transaction that never replicated (its
node fell out of the primary component) are handed out again by the
nodes that stayed, once the cluster's auto-increment offsets change, so
another write's rows can carry them. Each attempt of a write now stamps
its rows with a random number of its own, read back with the numbers.
Rows written before this revision carry none.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade():
    for table in ("provider_changes", "host_changes"):
        op.add_column(table, sa.Column("written_by", sa.BigInteger,
                                       nullable=True))
