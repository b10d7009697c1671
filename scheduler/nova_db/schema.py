"""The parts of Nova's API and cell database schemas gantt reads.

Only the columns the scheduler needs are declared; gantt never writes
to these tables and never creates them. Names and types follow Nova's
models (nova/db/api/models.py and nova/db/main/models.py): every table
has created_at and updated_at, the cell tables are soft-deleted (a row
is gone when ``deleted`` is non-zero; ``deleted_at`` says when).
"""

import sqlalchemy as sa

api = sa.MetaData()
cell = sa.MetaData()


def _stamps():
    return [sa.Column("created_at", sa.DateTime),
            sa.Column("updated_at", sa.DateTime)]


def _soft_delete():
    return [sa.Column("deleted_at", sa.DateTime),
            sa.Column("deleted", sa.Integer)]


# -- the API database -----------------------------------------------------

cell_mappings = sa.Table(
    "cell_mappings", api,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("name", sa.String(255)),
    sa.Column("database_connection", sa.Text),
    sa.Column("disabled", sa.Boolean),
    *_stamps())

aggregates = sa.Table(
    "aggregates", api,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("name", sa.String(255)),
    *_stamps())

aggregate_hosts = sa.Table(
    "aggregate_hosts", api,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("host", sa.String(255)),
    sa.Column("aggregate_id", sa.Integer),
    *_stamps())

aggregate_metadata = sa.Table(
    "aggregate_metadata", api,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("aggregate_id", sa.Integer),
    sa.Column("key", sa.String(255)),
    sa.Column("value", sa.String(255)),
    *_stamps())

# Instances being built: nova-api writes these before the scheduler
# claims, the conductor creates the instance in its cell after.
build_requests = sa.Table(
    "build_requests", api,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("instance_uuid", sa.String(36)),
    *_stamps())

# -- a cell database ------------------------------------------------------

compute_nodes = sa.Table(
    "compute_nodes", cell,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("host", sa.String(255)),
    sa.Column("hypervisor_hostname", sa.String(255)),
    sa.Column("vcpus", sa.Integer),
    sa.Column("memory_mb", sa.Integer),
    sa.Column("local_gb", sa.Integer),
    sa.Column("vcpus_used", sa.Integer),
    sa.Column("memory_mb_used", sa.Integer),
    sa.Column("local_gb_used", sa.Integer),
    sa.Column("hypervisor_type", sa.Text),
    sa.Column("hypervisor_version", sa.Integer),
    sa.Column("free_ram_mb", sa.Integer),
    sa.Column("free_disk_gb", sa.Integer),
    sa.Column("disk_available_least", sa.Integer),
    sa.Column("host_ip", sa.String(39)),
    sa.Column("cpu_info", sa.Text),
    sa.Column("supported_instances", sa.Text),
    sa.Column("metrics", sa.Text),
    sa.Column("pci_stats", sa.Text),
    sa.Column("stats", sa.Text),
    sa.Column("numa_topology", sa.Text),
    sa.Column("cpu_allocation_ratio", sa.Float),
    sa.Column("ram_allocation_ratio", sa.Float),
    sa.Column("disk_allocation_ratio", sa.Float),
    *_stamps(), *_soft_delete())

services = sa.Table(
    "services", cell,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("host", sa.String(255)),
    sa.Column("binary", sa.String(255)),
    sa.Column("disabled", sa.Boolean),
    sa.Column("disabled_reason", sa.String(255)),
    sa.Column("last_seen_up", sa.DateTime),
    sa.Column("forced_down", sa.Boolean),
    sa.Column("version", sa.Integer),
    *_stamps(), *_soft_delete())

instances = sa.Table(
    "instances", cell,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("host", sa.String(255)),
    sa.Column("project_id", sa.String(255)),
    *_stamps(), *_soft_delete())

migrations = sa.Table(
    "migrations", cell,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("instance_uuid", sa.String(36)),
    sa.Column("status", sa.String(255)),
    *_stamps(), *_soft_delete())

COMPUTE_BINARY = "nova-compute"
# Migration statuses Nova counts as over (its in-progress queries leave
# these out).
MIGRATION_DONE = ("confirmed", "reverted", "error", "failed", "completed",
                  "cancelled", "done")
CELL0_UUID = "00000000-0000-0000-0000-000000000000"
