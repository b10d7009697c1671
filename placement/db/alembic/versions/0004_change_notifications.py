"""Raise a PostgreSQL notification at each commit that writes a change
log.

A statement trigger on provider_changes and host_changes calls
pg_notify on channel ``gantt_changes``. PostgreSQL delivers it at commit
(never for a rolled-back transaction) to the sessions that LISTEN: a
scheduler's store (placement.db.pg_listen) then reads the change logs
only after another process committed. Identical notifications of one
transaction are delivered once. Other engines are left as they are.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_FUNCTION = "gantt_announce_change"
_LOGS = ("provider_changes", "host_changes")


def upgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"""
        CREATE OR REPLACE FUNCTION {_FUNCTION}() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('gantt_changes', '');
            RETURN NULL;
        END
        $$""")
    for table in _LOGS:
        op.execute(f"CREATE TRIGGER {table}_announce AFTER INSERT ON {table}"
                   f" FOR EACH STATEMENT EXECUTE FUNCTION {_FUNCTION}()")
