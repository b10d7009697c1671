"""Writing an OpenStack Placement database's state into gantt's, in one
transaction (placement.adopt.openstack_db reads and checks it).

Kept as they are: provider uuids, names, generations, parents and
roots; consumer uuids, generations, projects, users and types; every
inventory, trait and aggregate link and allocation. Internal ids are
gantt's own (names and uuids are the keys); custom resource classes get
gantt's custom ids. Allocations whose consumer has no consumers row (an
old placement's incomplete consumers) get one, with the configured
incomplete consumer project and user, as placement's own data
migration would.

The commit names every provider in gantt's change log, so that the
provider index of every process sees the new state at its next sync,
without a restart.
"""

import sqlalchemy as sa

from placement import errors
from placement.adopt import openstack_db
from placement.db import store, tables
from placement.objects import resource_classes, traits

_T = tables


class ImportRefused(errors.PlacementError):
    """gantt's database holds providers and --replace was not given."""


@store.writer
def write(txn, snapshot, replace=False, incomplete_project=None,
          incomplete_user=None):
    """Write ``snapshot`` (checked: openstack_db.check found nothing)
    into the store. ImportRefused when providers exist and not
    ``replace``; with it, gantt's placement state is emptied first.
    Returns how many providers were replaced."""
    have = txn.scalar(sa.select(sa.func.count())
                      .select_from(_T.resource_providers))
    if have and not replace:
        raise ImportRefused(
            f"the database holds {have} resource providers already; "
            f"--replace empties it first")
    if have:
        _empty(txn)
    rc_ids = _resource_classes(txn, snapshot)
    trait_ids = _traits(txn, snapshot)
    rp_ids = _providers(txn, snapshot)
    _inventories(txn, snapshot, rp_ids, rc_ids)
    _links(txn, snapshot, rp_ids, trait_ids)
    consumer_ids = _consumers(txn, snapshot, incomplete_project,
                              incomplete_user)
    _allocations(txn, snapshot, rp_ids, rc_ids, consumer_ids)
    txn.changes.providers |= set(rp_ids.values())
    txn.changes.catalog = True
    return have


def _empty(txn):
    """Remove every provider, consumer and link, and the custom classes
    and traits: the state being replaced."""
    rp = _T.resource_providers
    txn.changes.deleted |= {r.id for r in txn.execute(sa.select(rp.c.id))}
    for table in (_T.allocations, _T.consumers, _T.inventories,
                  _T.resource_provider_traits,
                  _T.resource_provider_aggregates):
        txn.execute(table.delete())
    txn.execute(rp.update().values(root_provider_id=None,
                                   parent_provider_id=None))
    for table in (rp, _T.placement_aggregates, _T.projects, _T.users):
        txn.execute(table.delete())
    txn.execute(_T.resource_classes.delete().where(
        _T.resource_classes.c.id >= _T.MIN_CUSTOM_RESOURCE_CLASS_ID))
    txn.execute(_T.traits.delete().where(
        _T.traits.c.name.startswith(traits.CUSTOM_PREFIX)))


def _resource_classes(txn, snapshot):
    """{source class id: gantt class id}."""
    names = openstack_db.class_names(snapshot)
    for row in snapshot["resource_classes"]:
        resource_classes.ensure(txn, row["name"])
    gantt = openstack_db.ids_by(txn, _T.resource_classes, "name")
    return {source_id: gantt[name] for source_id, name in names.items()
            if name in gantt}


def _traits(txn, snapshot):
    """{source trait id: gantt trait id}. A standard trait the source's
    os-traits knows and gantt's does not is stored as it is."""
    have = openstack_db.ids_by(txn, _T.traits, "name")
    new = [{"name": r["name"], "created_at": txn.now}
           for r in snapshot["traits"] if r["name"] not in have]
    if new:
        txn.execute(_T.traits.insert(), new)
        have = openstack_db.ids_by(txn, _T.traits, "name")
    return {r["id"]: have[r["name"]] for r in snapshot["traits"]}


def _providers(txn, snapshot):
    """{source provider id: gantt provider id}; trees linked after every
    provider is in."""
    rows = snapshot["resource_providers"]
    if not rows:
        return {}
    txn.execute(_T.resource_providers.insert(), [
        {"uuid": r["uuid"], "name": r["name"],
         "generation": r["generation"] or 0,
         "created_at": r.get("created_at") or txn.now,
         "updated_at": r.get("updated_at")} for r in rows])
    by_uuid = openstack_db.ids_by(txn, _T.resource_providers, "uuid")
    ids = {r["id"]: by_uuid[r["uuid"]] for r in rows}
    rp = _T.resource_providers
    txn.execute(rp.update().where(rp.c.id == sa.bindparam("rp"))
                .values(root_provider_id=sa.bindparam("root"),
                        parent_provider_id=sa.bindparam("parent")), [
        {"rp": ids[r["id"]],
         "root": ids[r["root_provider_id"] or r["id"]],
         "parent": (ids[r["parent_provider_id"]]
                    if r["parent_provider_id"] is not None else None)}
        for r in rows])
    return ids


def _inventories(txn, snapshot, rp_ids, rc_ids):
    rows = snapshot["inventories"]
    if rows:
        txn.execute(_T.inventories.insert(), [
            {"resource_provider_id": rp_ids[r["resource_provider_id"]],
             "resource_class_id": rc_ids[r["resource_class_id"]],
             "total": r["total"], "reserved": r["reserved"],
             "min_unit": r["min_unit"], "max_unit": r["max_unit"],
             "step_size": r["step_size"],
             "allocation_ratio": r["allocation_ratio"],
             "created_at": r.get("created_at") or txn.now} for r in rows])


def _links(txn, snapshot, rp_ids, trait_ids):
    aggs = snapshot["placement_aggregates"]
    if aggs:
        have = openstack_db.ids_by(txn, _T.placement_aggregates, "uuid")
        new = [{"uuid": r["uuid"], "created_at": txn.now}
               for r in aggs if r["uuid"] not in have]
        if new:
            txn.execute(_T.placement_aggregates.insert(), new)
        have = openstack_db.ids_by(txn, _T.placement_aggregates, "uuid")
        agg_ids = {r["id"]: have[r["uuid"]] for r in aggs}
        links = snapshot["resource_provider_aggregates"]
        if links:
            txn.execute(_T.resource_provider_aggregates.insert(), [
                {"resource_provider_id": rp_ids[r["resource_provider_id"]],
                 "aggregate_id": agg_ids[r["aggregate_id"]],
                 "created_at": txn.now} for r in links])
    links = snapshot["resource_provider_traits"]
    if links:
        txn.execute(_T.resource_provider_traits.insert(), [
            {"resource_provider_id": rp_ids[r["resource_provider_id"]],
             "trait_id": trait_ids[r["trait_id"]],
             "created_at": txn.now} for r in links])


def _named(txn, table, column, values):
    """{value: id} of ``table``'s rows for ``values``, created as
    needed."""
    have = openstack_db.ids_by(txn, table, column)
    new = [{column: v, "created_at": txn.now}
           for v in sorted(set(values) - set(have))]
    if new:
        txn.execute(table.insert(), new)
        have = openstack_db.ids_by(txn, table, column)
    return have


def _consumers(txn, snapshot, incomplete_project, incomplete_user):
    """{consumer uuid: gantt consumer id}, with a row made for every
    allocated consumer the source has none for."""
    projects = {r["id"]: r["external_id"] for r in snapshot["projects"]}
    users = {r["id"]: r["external_id"] for r in snapshot["users"]}
    types = {r["id"]: r["name"] for r in snapshot["consumer_types"]}
    rows = [{"uuid": c["uuid"], "project": projects[c["project_id"]],
             "user": users[c["user_id"]],
             "type": types.get(c.get("consumer_type_id")),
             "generation": c["generation"],
             "created_at": c.get("created_at")}
            for c in snapshot["consumers"]]
    known = {c["uuid"] for c in snapshot["consumers"]}
    for uuid in sorted({a["consumer_id"] for a in snapshot["allocations"]}
                       - known):
        rows.append({"uuid": uuid, "project": incomplete_project,
                     "user": incomplete_user, "type": None,
                     "generation": 0, "created_at": None})
    if not rows:
        return {}
    project_ids = _named(txn, _T.projects, "external_id",
                         [r["project"] for r in rows])
    user_ids = _named(txn, _T.users, "external_id",
                      [r["user"] for r in rows])
    type_ids = _named(txn, _T.consumer_types, "name",
                      [r["type"] for r in rows if r["type"]])
    txn.execute(_T.consumers.insert(), [
        {"uuid": r["uuid"], "project_id": project_ids[r["project"]],
         "user_id": user_ids[r["user"]],
         "consumer_type_id": type_ids.get(r["type"]),
         "generation": r["generation"],
         "created_at": r["created_at"] or txn.now} for r in rows])
    return openstack_db.ids_by(txn, _T.consumers, "uuid")


def _allocations(txn, snapshot, rp_ids, rc_ids, consumer_ids):
    rows = snapshot["allocations"]
    if rows:
        txn.execute(_T.allocations.insert(), [
            {"resource_provider_id": rp_ids[r["resource_provider_id"]],
             "consumer_id": consumer_ids[r["consumer_id"]],
             "resource_class_id": rc_ids[r["resource_class_id"]],
             "used": r["used"],
             "created_at": r.get("created_at") or txn.now} for r in rows])
