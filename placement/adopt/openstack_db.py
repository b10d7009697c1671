"""Reading an OpenStack Placement database, and checking what it holds
before gantt takes it over.

The tables read (OpenStack Placement's own schema, as its alembic
migrations leave it from the Yoga release on; ``consumer_types`` and
``consumers.consumer_type_id`` are optional, for older ones):
resource_classes (a standard class's id is its index in
os-resource-classes, whether or not the table lists it), traits,
resource_providers, inventories, placement_aggregates,
resource_provider_aggregates,
resource_provider_traits, projects, users, consumer_types, consumers and
allocations (whose ``consumer_id`` is the consumer's uuid).

Everything is read in one read-only transaction at REPEATABLE READ (on
SQLite, one read transaction), so that the rows are one consistent
state even while placement keeps writing.
"""

import dataclasses

import os_resource_classes as orc
import sqlalchemy as sa

from placement.db import engine as engine_mod

REQUIRED = ("resource_classes", "traits", "resource_providers",
            "inventories", "placement_aggregates",
            "resource_provider_aggregates", "resource_provider_traits",
            "projects", "users", "consumers", "allocations")
OPTIONAL = ("consumer_types",)
# Capacities above this cannot be held by gantt's candidates index.
MAX_CAPACITY_RATIO = 2147483647


class SourceError(Exception):
    """The source cannot be read as an OpenStack Placement database."""


@dataclasses.dataclass
class Snapshot:
    """The rows of every table read, as dicts, by table name."""

    rows: dict

    def __getitem__(self, table):
        return self.rows.get(table, [])

    def counts(self):
        return {name: len(rows) for name, rows in sorted(self.rows.items())}


def database_url(url, option):
    """``url`` parsed, with a driver gantt has; SourceError naming
    ``option`` (--from, --to) when it is no database URL."""
    try:
        return engine_mod.with_installed_driver(sa.make_url(url))
    except sa.exc.ArgumentError:
        raise SourceError(f"{option}: not a database URL: {url!r}") from None


def ids_by(conn, table, key):
    """{value of column ``key``: id} of every row of ``table``."""
    return {r[0]: r[1] for r in conn.execute(
        sa.select(table.c[key], table.c.id))}


def read(url):
    """A Snapshot of the OpenStack Placement database at ``url`` (an
    SQLAlchemy URL), read in one consistent, read-only transaction."""
    parsed = database_url(url, "--from")
    options = {}
    if parsed.get_backend_name() != "sqlite":
        options["isolation_level"] = "REPEATABLE READ"
    engine = sa.create_engine(parsed, **options)
    try:
        with engine.connect() as conn:
            if parsed.get_backend_name() == "postgresql":
                conn = conn.execution_options(postgresql_readonly=True)
            with conn.begin():
                return _read_tables(conn)
    except sa.exc.DBAPIError as exc:
        raise SourceError(f"cannot read {parsed.render_as_string()}: "
                          f"{exc.orig}") from None
    finally:
        engine.dispose()


def _read_tables(conn):
    present = set(sa.inspect(conn).get_table_names())
    missing = [name for name in REQUIRED if name not in present]
    if missing:
        raise SourceError("not an OpenStack Placement database: no "
                          f"table {', '.join(missing)}")
    meta = sa.MetaData()
    names = [n for n in REQUIRED + OPTIONAL if n in present]
    meta.reflect(conn, only=names)
    rows = {}
    for name in names:
        table = meta.tables[name]
        order = list(table.primary_key.columns) or list(table.c)
        rows[name] = [dict(r._mapping) for r in conn.execute(
            sa.select(table).order_by(*order))]
    return Snapshot(rows)


def class_names(snapshot):
    """{source resource class id: name}: the standard classes by their
    index in os-resource-classes, the custom ones from the table."""
    names = dict(enumerate(orc.STANDARDS))
    names.update({r["id"]: r["name"] for r in snapshot["resource_classes"]})
    return names


def check(snapshot):
    """Every problem that would stop the import, as 'table key: what'
    lines (empty: none)."""
    problems = []
    known = set(orc.STANDARDS)
    for rc in snapshot["resource_classes"]:
        name = rc["name"]
        if not name.startswith("CUSTOM_") and name not in known:
            problems.append(f"resource_classes {name}: a standard class "
                            f"this gantt's os-resource-classes does not "
                            f"know (upgrade it first)")
    rcs = class_names(snapshot)
    providers = {r["id"]: r for r in snapshot["resource_providers"]}
    uuid_of = {i: r["uuid"] for i, r in providers.items()}
    for rp in providers.values():
        key = f"resource_providers {rp['uuid']}"
        if not rp.get("name"):
            problems.append(f"{key}: no name")
        for column in ("parent_provider_id", "root_provider_id"):
            ref = rp.get(column)
            if ref is not None and ref not in providers:
                problems.append(f"{key}: {column} {ref} is no provider")
    inventory = {}
    for inv in snapshot["inventories"]:
        rp = uuid_of.get(inv["resource_provider_id"])
        rc = rcs.get(inv["resource_class_id"])
        key = f"inventories {rp or inv['resource_provider_id']} " \
              f"{rc or inv['resource_class_id']}"
        if rp is None:
            problems.append(f"{key}: no such provider")
        if rc is None:
            problems.append(f"{key}: unknown resource class id "
                            f"{inv['resource_class_id']}")
        if inv["allocation_ratio"] > MAX_CAPACITY_RATIO:
            problems.append(f"{key}: allocation_ratio "
                            f"{inv['allocation_ratio']} is above "
                            f"{MAX_CAPACITY_RATIO}")
        inventory[(inv["resource_provider_id"],
                   inv["resource_class_id"])] = inv
    problems.extend(_check_allocations(snapshot, rcs, uuid_of, inventory))
    problems.extend(_check_links(snapshot, uuid_of))
    return problems


def _check_allocations(snapshot, rcs, uuid_of, inventory):
    used = {}
    for a in snapshot["allocations"]:
        rp = uuid_of.get(a["resource_provider_id"])
        rc = rcs.get(a["resource_class_id"])
        key = (f"allocations {a['consumer_id']} "
               f"{rp or a['resource_provider_id']} "
               f"{rc or a['resource_class_id']}")
        if rp is None:
            yield f"{key}: no such provider"
        elif rc is None:
            yield f"{key}: unknown resource class id {a['resource_class_id']}"
        elif (a["resource_provider_id"],
              a["resource_class_id"]) not in inventory:
            yield f"{key}: the provider has no inventory of {rc}"
        else:
            pair = (a["resource_provider_id"], a["resource_class_id"])
            used[pair] = used.get(pair, 0) + a["used"]
    for pair, amount in sorted(used.items()):
        inv = inventory[pair]
        capacity = (inv["total"] - inv["reserved"]) * inv["allocation_ratio"]
        if amount > capacity:
            yield (f"allocations on {uuid_of[pair[0]]} {rcs[pair[1]]}: "
                   f"{amount} used, over its capacity {capacity:g}")
    projects = {r["id"] for r in snapshot["projects"]}
    users = {r["id"] for r in snapshot["users"]}
    types = {r["id"] for r in snapshot["consumer_types"]}
    for c in snapshot["consumers"]:
        key = f"consumers {c['uuid']}"
        if c["project_id"] not in projects:
            yield f"{key}: project id {c['project_id']} is no project"
        if c["user_id"] not in users:
            yield f"{key}: user id {c['user_id']} is no user"
        type_id = c.get("consumer_type_id")
        if type_id is not None and type_id not in types:
            yield f"{key}: consumer type id {type_id} is no consumer type"


def _check_links(snapshot, uuid_of):
    aggregates = {r["id"] for r in snapshot["placement_aggregates"]}
    traits = {r["id"] for r in snapshot["traits"]}
    for table, column, targets, what in (
            ("resource_provider_aggregates", "aggregate_id", aggregates,
             "aggregate"),
            ("resource_provider_traits", "trait_id", traits, "trait")):
        for link in snapshot[table]:
            rp = link["resource_provider_id"]
            if rp not in uuid_of:
                yield f"{table} {rp}: no such provider"
            if link[column] not in targets:
                yield (f"{table} {uuid_of.get(rp, rp)}: {what} id "
                       f"{link[column]} is no {what}")
