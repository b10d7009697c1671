"""The way back: gantt's placement state written into an empty OpenStack
Placement database (its schema made by placement's own ``placement-manage
db sync``), so that an operator can return to OpenStack Placement after
running on gantt.

gantt's rows are read in one read transaction of its store and written
in one transaction of the destination, into the tables
placement.adopt.openstack_db reads: the same uuids, names, generations,
trees, inventories, traits, aggregates, projects, users, consumer
types, consumers and allocations. Standard resource classes keep their
os-resource-classes index as id and custom ones gantt's ids (both as
placement numbers them); other ids are the destination's own. Placement
adds the standard classes' and traits' rows itself when it starts.
"""

import sqlalchemy as sa

from placement.adopt import openstack_db
from placement.db import tables

_T = tables


class ExportRefused(Exception):
    """The destination is no empty OpenStack Placement database."""


def read_gantt(txn):
    """{table: [row dict]} of gantt's placement tables."""
    out = {}
    for name in openstack_db.REQUIRED + openstack_db.OPTIONAL:
        table = _T.metadata.tables[name]
        out[name] = [dict(r._mapping) for r in txn.execute(
            sa.select(table).order_by(*table.primary_key.columns))]
    return out


def write(url, rows):
    """Write gantt's ``rows`` (read_gantt) into the empty OpenStack
    Placement database at ``url``. Returns {table: rows written}."""
    parsed = openstack_db.database_url(url, "--to")
    engine = sa.create_engine(parsed)
    try:
        with engine.begin() as conn:
            meta = _destination(conn)
            return _write_all(conn, meta, rows)
    except sa.exc.DBAPIError as exc:
        raise openstack_db.SourceError(
            f"cannot write {parsed.render_as_string()}: {exc.orig}") from None
    finally:
        engine.dispose()


def _destination(conn):
    present = set(sa.inspect(conn).get_table_names())
    missing = [n for n in openstack_db.REQUIRED if n not in present]
    if missing:
        raise ExportRefused(
            "not an OpenStack Placement database (run placement-manage db "
            f"sync on it first): no table {', '.join(missing)}")
    meta = sa.MetaData()
    meta.reflect(conn, only=[n for n in openstack_db.REQUIRED
                             + openstack_db.OPTIONAL if n in present])
    held = conn.scalar(sa.select(sa.func.count()).select_from(
        meta.tables["resource_providers"]))
    if held:
        raise ExportRefused(f"the destination holds {held} resource "
                            f"providers already: it must be empty")
    return meta


def _write_all(conn, meta, rows):
    t = meta.tables
    written = {}

    def insert(name, values):
        if values:
            conn.execute(t[name].insert(), values)
        written[name] = len(values)

    # The custom resource classes, with gantt's ids (at or above 10000,
    # as placement numbers them). The standard ones are their index in
    # os-resource-classes on both sides; placement adds their rows itself
    # when it starts (on MySQL an explicit id 0 would not be kept).
    have = set(openstack_db.ids_by(conn, t["resource_classes"], "name"))
    insert("resource_classes", [
        {"id": r["id"], "name": r["name"], "created_at": r["created_at"]}
        for r in rows["resource_classes"]
        if r["id"] >= _T.MIN_CUSTOM_RESOURCE_CLASS_ID
        and r["name"] not in have])
    have = openstack_db.ids_by(conn, t["traits"], "name")
    insert("traits", [{"name": r["name"], "created_at": r["created_at"]}
                      for r in rows["traits"] if r["name"] not in have])
    trait_ids = openstack_db.ids_by(conn, t["traits"], "name")
    trait_of = {r["id"]: trait_ids[r["name"]] for r in rows["traits"]}

    providers = rows["resource_providers"]
    insert("resource_providers", [
        {"uuid": r["uuid"], "name": r["name"],
         "generation": r["generation"], "created_at": r["created_at"],
         "updated_at": r["updated_at"]} for r in providers])
    by_uuid = openstack_db.ids_by(conn, t["resource_providers"], "uuid")
    rp_of = {r["id"]: by_uuid[r["uuid"]] for r in providers}
    rp = t["resource_providers"]
    if providers:
        conn.execute(rp.update().where(rp.c.id == sa.bindparam("rp"))
                     .values(root_provider_id=sa.bindparam("root"),
                             parent_provider_id=sa.bindparam("parent")), [
            {"rp": rp_of[r["id"]], "root": rp_of[r["root_provider_id"]],
             "parent": rp_of.get(r["parent_provider_id"])}
            for r in providers])
    insert("inventories", [
        {**{k: r[k] for k in ("resource_class_id", "total", "reserved",
                              "min_unit", "max_unit", "step_size",
                              "allocation_ratio", "created_at",
                              "updated_at")},
         "resource_provider_id": rp_of[r["resource_provider_id"]]}
        for r in rows["inventories"]])
    insert("placement_aggregates", [
        {"uuid": r["uuid"], "created_at": r["created_at"]}
        for r in rows["placement_aggregates"]])
    agg_ids = openstack_db.ids_by(conn, t["placement_aggregates"], "uuid")
    agg_of = {r["id"]: agg_ids[r["uuid"]]
              for r in rows["placement_aggregates"]}
    insert("resource_provider_aggregates", [
        {"resource_provider_id": rp_of[r["resource_provider_id"]],
         "aggregate_id": agg_of[r["aggregate_id"]],
         "created_at": r["created_at"]}
        for r in rows["resource_provider_aggregates"]])
    insert("resource_provider_traits", [
        {"resource_provider_id": rp_of[r["resource_provider_id"]],
         "trait_id": trait_of[r["trait_id"]], "created_at": r["created_at"]}
        for r in rows["resource_provider_traits"]])
    _write_consumers(conn, t, rows, insert, rp_of)
    return written


def _write_consumers(conn, t, rows, insert, rp_of):
    """Projects, users, consumer types, consumers and allocations;
    ``rp_of``: {gantt provider id: destination provider id}."""
    named = {}
    for name, key in (("projects", "external_id"), ("users", "external_id"),
                      ("consumer_types", "name")):
        if name not in t:
            continue
        insert(name, [{key: r[key], "created_at": r["created_at"]}
                      for r in rows[name]])
        ids = openstack_db.ids_by(conn, t[name], key)
        named[name] = {r["id"]: ids[r[key]] for r in rows[name]}
    has_types = "consumer_type_id" in t["consumers"].c
    consumers = []
    for r in rows["consumers"]:
        row = {"uuid": r["uuid"],
               "project_id": named["projects"][r["project_id"]],
               "user_id": named["users"][r["user_id"]],
               "generation": r["generation"],
               "created_at": r["created_at"], "updated_at": r["updated_at"]}
        if has_types:
            row["consumer_type_id"] = named.get("consumer_types", {}).get(
                r["consumer_type_id"])
        consumers.append(row)
    insert("consumers", consumers)
    uuid_of = {r["id"]: r["uuid"] for r in rows["consumers"]}
    insert("allocations", [
        {"resource_provider_id": rp_of[r["resource_provider_id"]],
         "consumer_id": uuid_of[r["consumer_id"]],
         "resource_class_id": r["resource_class_id"], "used": r["used"],
         "created_at": r["created_at"], "updated_at": r["updated_at"]}
        for r in rows["allocations"]])
