"""Load a reference Cloud into a store and compare the engine with the
brute-force reference."""

import uuid as uuidlib

from placement.candidates import engine as engine_mod
from placement.objects import (
    aggregates,
    allocations,
    inventories,
    providers,
    traits,
)
from tests import candidates_reference as ref

NAMESPACE = uuidlib.UUID("0f3b9d7e-2c51-4bd7-a6d1-5d0c5e7f8a90")


def agg_uuid(name):
    return str(uuidlib.uuid5(NAMESPACE, "agg:" + name))


def load(store, cloud, custom_traits=("CUSTOM_T1", "CUSTOM_T2",
                                       "CUSTOM_T3")):
    """Create the cloud's providers (and the custom traits requests may
    name); returns {name: uuid}."""
    for trait in custom_traits:
        traits.ensure(store, trait)
    uuids = {}
    for name, p in cloud.providers.items():
        rp = providers.create(store, name, parent_uuid=(
            uuids[p.parent] if p.parent else None))
        uuids[name] = rp.uuid
        if p.inventory:
            # Allocate the used amounts first, under roomy inventory, then
            # set the real inventory (which may leave it over capacity).
            big = [inventories.Inventory(rc, max(inv.total, 10**6))
                   for rc, inv in p.inventory.items()]
            gen, _ = inventories.replace_all(store, rp.uuid, None, big)
            used = {rc: n for rc, n in p.used.items() if n}
            if used:
                allocations.replace(store, [allocations.ConsumerAllocations(
                    str(uuidlib.uuid4()), {rp.uuid: used}, "p", "u")])
            inventories.replace_all(store, rp.uuid, None, [
                inventories.Inventory(
                    rc, inv.total, reserved=inv.reserved,
                    min_unit=inv.min_unit, max_unit=inv.max_unit,
                    step_size=inv.step_size,
                    allocation_ratio=inv.allocation_ratio)
                for rc, inv in p.inventory.items()])
        if p.traits:
            for trait in p.traits:
                if trait.startswith("CUSTOM_"):
                    traits.ensure(store, trait)
            traits.set_for_provider(store, rp.uuid, None, sorted(p.traits))
        if p.aggregates:
            aggregates.set_for_provider(
                store, rp.uuid, [agg_uuid(a) for a in p.aggregates])
    return uuids


def with_uuids(request, uuids):
    """The request with provider names (in_tree) and aggregate names
    replaced by uuids."""
    import dataclasses
    groups = []
    for g in request.groups:
        groups.append(dataclasses.replace(
            g,
            in_tree=uuids.get(g.in_tree, g.in_tree) if g.in_tree else None,
            member_of=tuple(frozenset(agg_uuid(a) for a in s)
                            for s in g.member_of),
            forbidden_aggs=frozenset(agg_uuid(a) for a in g.forbidden_aggs)))
    return dataclasses.replace(request, groups=tuple(groups))


def engine_keys(result, uuids):
    """The engine's candidates in the reference's form, and how many
    there were (to see duplicates)."""
    names = {u: n for n, u in uuids.items()}
    keys = []
    for ar in result.allocation_requests():
        allocs = frozenset((names[rp], rc, amount)
                           for rp, res in ar.allocations.items()
                           for rc, amount in res.items())
        mappings = frozenset((s, frozenset(names[rp] for rp in rps))
                             for s, rps in ar.mappings.items())
        keys.append((allocs, mappings))
    return keys


def run_both(store, cloud, request, **engine_kwargs):
    """(engine keys as a list, reference keys as a set, result)."""
    uuids = load(store, cloud)
    engine = engine_mod.CandidatesEngine(store)
    for key, value in engine_kwargs.items():
        setattr(engine.options, key, value)
    try:
        result = engine.find(with_uuids(request, uuids))
    finally:
        engine.close()
    return (engine_keys(result, uuids), ref.candidates(cloud, request),
            result, uuids)
