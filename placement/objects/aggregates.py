"""Aggregates: groups of providers, named by uuid. An aggregate exists as
soon as a provider is put in it and is never deleted (as in OpenStack
Placement)."""

import sqlalchemy as sa

from placement.db import fastsql, rows, store, tables
from placement.objects import providers

_agg = tables.placement_aggregates
_rp_agg = tables.resource_provider_aggregates


# Read and written for each provider a cloud load or a compute node's
# report touches: on the raw cursor.
_OF_PROVIDER = fastsql.Fast(
    sa.select(_agg.c.id, _agg.c.uuid)
    .select_from(_agg.join(_rp_agg, _agg.c.id == _rp_agg.c.aggregate_id))
    .where(_rp_agg.c.resource_provider_id == sa.bindparam("rp_id")))
_INSERT_MEMBERS = fastsql.FastInsert(_rp_agg, [
    "resource_provider_id", "aggregate_id", "created_at"])


def _provider_aggregates(txn, provider_id):
    """{aggregate id: uuid} of the provider."""
    return {row.id: row.uuid
            for row in _OF_PROVIDER.rows(txn, {"rp_id": provider_id})}


@store.reader
def for_provider(txn, provider_uuid):
    """(provider, sorted aggregate uuids)."""
    provider = providers.get(txn, provider_uuid)
    return provider, sorted(_provider_aggregates(txn, provider.id).values())


@store.reader
def by_provider(txn):
    """{provider uuid: sorted aggregate uuids} for every provider in an
    aggregate."""
    rp = tables.resource_providers
    result = txn.execute(
        sa.select(rp.c.uuid, _agg.c.uuid.label("agg"))
        .select_from(_rp_agg
                     .join(rp, rp.c.id == _rp_agg.c.resource_provider_id)
                     .join(_agg, _agg.c.id == _rp_agg.c.aggregate_id))
        .order_by(rp.c.uuid, _agg.c.uuid))
    out = {}
    for row in result:
        out.setdefault(row.uuid, []).append(row.agg)
    return out


@store.reader
def provider_uuids_in(txn, aggregate_uuids):
    """Uuids of the providers in any of ``aggregate_uuids``, sorted."""
    aggregate_uuids = sorted({str(a) for a in aggregate_uuids})
    if not aggregate_uuids:
        return []
    rp = tables.resource_providers
    result = txn.execute(
        sa.select(rp.c.uuid).distinct()
        .select_from(
            rp.join(_rp_agg, rp.c.id == _rp_agg.c.resource_provider_id)
            .join(_agg, _agg.c.id == _rp_agg.c.aggregate_id))
        .where(_agg.c.uuid.in_(aggregate_uuids)).order_by(rp.c.uuid))
    return [row.uuid for row in result]


@store.writer(retry_conflicts=True)
def set_for_provider(txn, provider_uuid, aggregate_uuids, generation=None,
                     bump_generation=False):
    """Make the provider's aggregates exactly ``aggregate_uuids``.

    From microversion 1.19 the caller gives the provider generation and the
    generation moves (``bump_generation``); before, neither happens.
    Returns (generation, sorted aggregate uuids).
    """
    provider = providers.get(txn, provider_uuid)
    if generation is not None:
        providers.check_generation(provider, generation)
    wanted = {providers.canonical_uuid(a) for a in aggregate_uuids}
    have = _provider_aggregates(txn, provider.id)
    gone = [agg_id for agg_id, agg_uuid in have.items()
            if agg_uuid not in wanted]
    if gone:
        txn.execute(_rp_agg.delete()
                    .where(_rp_agg.c.resource_provider_id == provider.id)
                    .where(_rp_agg.c.aggregate_id.in_(sorted(gone))))
    added = sorted(wanted - set(have.values()))
    if added:
        ids = [rows.get_or_create_id(txn, _agg, _agg.c.uuid, agg_uuid,
                                      "aggregate") for agg_uuid in added]
        _INSERT_MEMBERS.rows(txn, [
            {"resource_provider_id": provider.id, "aggregate_id": agg_id,
             "created_at": txn.now} for agg_id in ids])
    if gone or added:
        txn.changes.providers.add(provider.id)
    new_generation = provider.generation
    if bump_generation:
        txn.changes.providers.add(provider.id)
        new_generation = providers.bump_generation(
            txn, provider.id, provider.uuid, provider.generation,
            engine_read=generation is None)
    return new_generation, sorted(wanted)
