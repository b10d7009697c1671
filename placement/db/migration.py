"""Schema migrations (alembic) and the standard catalog seed.

``sync`` is what ``gantt-manage db sync`` runs, and what a store runs on
open when [placement_database] sync_on_startup is set. Several processes
may run it at once: a database lock serialises them, and the latecomers
find nothing left to do.
"""

import contextlib

import os_resource_classes as orc
import os_traits
import sqlalchemy as sa
from alembic import command

from placement.db import engine as engine_mod
from placement.db import schema_state, tables
from placement.db import store as store_mod

head_revision = schema_state.head_revision
current_revision = schema_state.current_revision


@contextlib.contextmanager
def _migration_lock(conn, backend):
    if backend == "postgresql":
        conn.exec_driver_sql("SELECT pg_advisory_xact_lock(727357)")
    elif backend == "mysql":
        conn.exec_driver_sql("SELECT GET_LOCK('gantt_db_sync', 300)")
    try:
        yield
    finally:
        if backend == "mysql":
            conn.exec_driver_sql("SELECT RELEASE_LOCK('gantt_db_sync')")


def sync(engine, revision="head"):
    """Upgrade the schema to ``revision`` and seed the standard catalog."""
    backend = engine_mod.backend_name(engine)
    with engine.connect() as conn:
        # On SQLite this begins IMMEDIATE: concurrent syncs queue up.
        conn.execution_options(**{engine_mod.WRITE_OPTION: True})
        with conn.begin():
            with _migration_lock(conn, backend):
                command.upgrade(schema_state.alembic_config(conn), revision)
                seed_catalog(conn)


def seed(engine):
    """Seed the standard catalog and counters in a transaction of its own."""
    with engine.connect() as conn:
        conn.execution_options(**{engine_mod.WRITE_OPTION: True})
        with conn.begin():
            seed_catalog(conn)


def seed_catalog(conn):
    """Insert the standard resource classes (id = their index in
    os-resource-classes) and standard traits that the database lacks, and
    the counters. Custom entries are left alone."""
    now = store_mod.utcnow()
    rc = tables.resource_classes
    have = {r.name for r in conn.execute(sa.select(rc.c.name))}
    missing = [{"id": i, "name": name, "created_at": now}
               for i, name in enumerate(orc.STANDARDS) if name not in have]
    if missing:
        conn.execute(rc.insert(), missing)
    tr = tables.traits
    have = {r.name for r in conn.execute(sa.select(tr.c.name))}
    missing = [{"name": name, "created_at": now}
               for name in sorted(os_traits.get_traits()) if name not in have]
    if missing:
        conn.execute(tr.insert(), missing)
    counters = tables.counters
    have = {r.name for r in conn.execute(sa.select(counters.c.name))}
    initial = {tables.CUSTOM_RC_COUNTER:
               tables.MIN_CUSTOM_RESOURCE_CLASS_ID - 1,
               tables.CHANGES_PRUNED_COUNTER: 0}
    # Other packages' change logs (the scheduler's host records), for
    # those loaded in this process; a missing counter reads as 0.
    initial.update({log.counter: 0 for log in store_mod.change_logs()})
    rows = [{"name": k, "value": v} for k, v in initial.items()
            if k not in have]
    if rows:
        conn.execute(counters.insert(), rows)
