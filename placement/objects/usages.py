"""Usages: what is allocated, per provider and per project/user."""

import sqlalchemy as sa

from placement.db import store, tables
from placement.objects import consumers, providers

_alloc = tables.allocations
_inv = tables.inventories
_consumer = tables.consumers
_project = tables.projects
_user = tables.users
_ctype = tables.consumer_types

ALL = "all"


@store.reader
def for_provider(txn, provider_uuid):
    """(provider, {resource class: used}) for every class the provider has
    inventory of (0 when nothing is allocated)."""
    provider = providers.get(txn, provider_uuid)
    same = sa.and_(
        _alloc.c.resource_provider_id == _inv.c.resource_provider_id,
        _alloc.c.resource_class_id == _inv.c.resource_class_id)
    used = (sa.select(sa.func.coalesce(sa.func.sum(_alloc.c.used), 0))
            .where(same).scalar_subquery())
    result = txn.execute(
        sa.select(_inv.c.resource_class_id, used.label("used"))
        .where(_inv.c.resource_provider_id == provider.id))
    return provider, {txn.catalog.rc_name(txn, r.resource_class_id):
                      int(r.used) for r in result}


@store.reader
def by_provider(txn):
    """{provider uuid: {resource class: used}} for every provider with
    allocations."""
    rp = tables.resource_providers
    result = txn.execute(
        sa.select(rp.c.uuid, _alloc.c.resource_class_id,
                  sa.func.sum(_alloc.c.used).label("used"))
        .select_from(_alloc.join(rp, rp.c.id == _alloc.c.resource_provider_id))
        .group_by(rp.c.uuid, _alloc.c.resource_class_id))
    out = {}
    for row in result:
        out.setdefault(row.uuid, {})[
            txn.catalog.rc_name(txn, row.resource_class_id)] = int(row.used)
    return out


def _owned_by(query, project_id, user_id):
    query = (query.join(_consumer, _consumer.c.id == _alloc.c.consumer_id)
             .join(_project, _project.c.id == _consumer.c.project_id)
             .where(_project.c.external_id == project_id))
    if user_id is not None:
        query = (query.join(_user, _user.c.id == _consumer.c.user_id)
                 .where(_user.c.external_id == user_id))
    return query


@store.reader
def for_project(txn, project_id, user_id=None):
    """{resource class: used} over the consumers of the project (and
    user)."""
    query = _owned_by(
        sa.select(_alloc.c.resource_class_id,
                  sa.func.sum(_alloc.c.used).label("used"))
        .select_from(_alloc), project_id, user_id)
    result = txn.execute(query.group_by(_alloc.c.resource_class_id))
    return {txn.catalog.rc_name(txn, r.resource_class_id): int(r.used)
            for r in result}


@store.reader
def for_project_by_consumer_type(txn, project_id, user_id=None,
                                 consumer_type=None):
    """{consumer type: {"consumer_count": n, "usages": {rc: used}}}.

    ``consumer_type`` None groups by each type (consumers without one under
    'unknown'); 'all' puts everything in one 'all' group; 'unknown' or any
    other name keeps only that type.
    """
    type_name = sa.func.coalesce(_ctype.c.name,
                                 consumers.UNKNOWN_CONSUMER_TYPE)
    group = sa.literal(ALL) if consumer_type == ALL else type_name
    base = _owned_by(
        sa.select(group.label("ctype"), _alloc.c.resource_class_id,
                  _alloc.c.used, _alloc.c.consumer_id)
        .select_from(_alloc), project_id, user_id)
    base = base.outerjoin(_ctype,
                          _ctype.c.id == _consumer.c.consumer_type_id)
    if consumer_type not in (None, ALL):
        base = base.where(type_name == consumer_type)
    rows = base.subquery()
    usage = txn.execute(
        sa.select(rows.c.ctype, rows.c.resource_class_id,
                  sa.func.sum(rows.c.used).label("used"))
        .group_by(rows.c.ctype, rows.c.resource_class_id))
    counts = txn.execute(
        sa.select(rows.c.ctype,
                  sa.func.count(sa.distinct(rows.c.consumer_id))
                  .label("n")).group_by(rows.c.ctype))
    result = {r.ctype: {"consumer_count": int(r.n), "usages": {}}
              for r in counts}
    for r in usage:
        result[r.ctype]["usages"][
            txn.catalog.rc_name(txn, r.resource_class_id)] = int(r.used)
    return result
