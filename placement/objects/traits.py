"""Traits: the standard names of os-traits and CUSTOM_* traits, and the
set of traits of each provider."""

import os_traits
import sqlalchemy as sa

from placement import errors
from placement.db import store, tables
from placement.objects import providers

CUSTOM_PREFIX = os_traits.CUSTOM_NAMESPACE
MAX_NAME_LENGTH = 255

_trait = tables.traits
_rp_trait = tables.resource_provider_traits


@store.reader
def list_names(txn, name_in=None, prefix=None, associated=None):
    """Trait names, sorted: only those in ``name_in``, starting with
    ``prefix``, and with ``associated`` True/False only those that some
    provider has / no provider has."""
    query = sa.select(_trait.c.name).order_by(_trait.c.name)
    if name_in is not None:
        query = query.where(_trait.c.name.in_(sorted(set(name_in))))
    if prefix is not None:
        query = query.where(_trait.c.name.startswith(prefix,
                                                     autoescape=True))
    if associated is not None:
        used = sa.select(_rp_trait.c.trait_id)
        query = query.where(_trait.c.id.in_(used) if associated
                            else _trait.c.id.not_in(used))
    return [row.name for row in txn.execute(query)]


@store.reader
def exists(txn, name):
    return txn.scalar(sa.select(_trait.c.id)
                      .where(_trait.c.name == name)) is not None


@store.reader
def get_last_modified(txn, name):
    row = txn.execute(sa.select(_trait.c.created_at, _trait.c.updated_at)
                      .where(_trait.c.name == name)).first()
    if row is None:
        raise errors.TraitNotFound(name)
    return row.updated_at or row.created_at


def _check_custom(name):
    if not isinstance(name, str) or not name.startswith(CUSTOM_PREFIX):
        raise errors.InvalidName(
            f"Trait name {name!r} must start with {CUSTOM_PREFIX}.")
    if len(name) > MAX_NAME_LENGTH:
        raise errors.InvalidName(
            f"Trait name is longer than {MAX_NAME_LENGTH} characters.")


@store.writer
def ensure(txn, name):
    """Create the CUSTOM_ trait unless it exists. Returns True when it
    was created."""
    if exists(txn, name):
        return False
    _check_custom(name)
    txn.execute(_trait.insert().values(name=name, created_at=txn.now))
    txn.changes.catalog = True
    return True


@store.writer
def delete(txn, name):
    """Delete a custom trait that no provider has."""
    if not name.startswith(CUSTOM_PREFIX):
        raise errors.TraitCannotDeleteStandard(name)
    trait_id = txn.scalar(sa.select(_trait.c.id)
                          .where(_trait.c.name == name))
    if trait_id is None:
        raise errors.TraitNotFound(name)
    if txn.scalar(sa.select(_rp_trait.c.trait_id)
                  .where(_rp_trait.c.trait_id == trait_id)
                  .limit(1)) is not None:
        raise errors.TraitInUse(name)
    txn.execute(_trait.delete().where(_trait.c.id == trait_id))
    txn.changes.catalog = True


@store.reader
def by_provider(txn):
    """{provider uuid: sorted trait names} for every provider with
    traits."""
    rp = tables.resource_providers
    result = txn.execute(
        sa.select(rp.c.uuid, _trait.c.name)
        .select_from(_rp_trait
                     .join(rp, rp.c.id == _rp_trait.c.resource_provider_id)
                     .join(_trait, _trait.c.id == _rp_trait.c.trait_id))
        .order_by(rp.c.uuid, _trait.c.name))
    out = {}
    for row in result:
        out.setdefault(row.uuid, []).append(row.name)
    return out


def _provider_trait_ids(txn, provider_id):
    return {row.trait_id for row in txn.execute(
        sa.select(_rp_trait.c.trait_id)
        .where(_rp_trait.c.resource_provider_id == provider_id))}


@store.reader
def for_provider(txn, provider_uuid):
    """(provider, sorted trait names)."""
    provider = providers.get(txn, provider_uuid)
    names = sorted(txn.catalog.trait_name(txn, t)
                   for t in _provider_trait_ids(txn, provider.id))
    return provider, names


@store.writer(retry_conflicts=True)
def set_for_provider(txn, provider_uuid, generation, names):
    """Make the provider's traits exactly ``names``. TraitNotFound names
    the unknown ones. The generation moves only when the set changes.
    Returns (new generation, sorted names)."""
    provider = providers.get(txn, provider_uuid)
    if generation is not None:
        providers.check_generation(provider, generation)
    wanted = set(txn.catalog.trait_ids(txn, set(names)).values())
    have = _provider_trait_ids(txn, provider.id)
    if wanted == have:
        return provider.generation, sorted(set(names))
    gone = have - wanted
    if gone:
        txn.execute(_rp_trait.delete()
                    .where(_rp_trait.c.resource_provider_id == provider.id)
                    .where(_rp_trait.c.trait_id.in_(sorted(gone))))
    added = sorted(wanted - have)
    if added:
        txn.execute(_rp_trait.insert(), [
            {"resource_provider_id": provider.id, "trait_id": t,
             "created_at": txn.now} for t in added])
    txn.changes.providers.add(provider.id)
    new_generation = providers.bump_generation(
        txn, provider.id, provider.uuid, provider.generation,
        engine_read=generation is None)
    return new_generation, sorted(set(names))


@store.writer(retry_conflicts=True)
def delete_for_provider(txn, provider_uuid, generation=None):
    """Remove every trait of the provider. Returns the new generation."""
    return set_for_provider(txn, provider_uuid, generation, [])[0]
