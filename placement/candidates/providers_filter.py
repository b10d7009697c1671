"""GET /resource_providers filters, answered from the provider index."""

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class ProviderFilters:
    # {resource class: amount}: capacity, min/max unit, step size (as for
    # candidates)
    resources: dict = dataclasses.field(default_factory=dict)
    # Each set is any-of; the sets are ANDed. On the provider itself.
    required_traits: tuple = ()
    forbidden_traits: frozenset = frozenset()
    # Each set is any-of aggregate uuids; the sets are ANDed.
    member_of: tuple = ()
    forbidden_aggs: frozenset = frozenset()
    in_tree: str | None = None
    name: str | None = None
    uuid: str | None = None


def matching_ids(index, filters, names):
    """Internal ids of the providers matching every filter, oldest first
    (the caller holds ``index.lock``; ``names`` resolves classes and
    traits)."""
    n = index.size
    mask = index.alive[:n].copy()
    if filters.uuid is not None:
        row = index.row_of_uuid.get(filters.uuid)
        keep = np.zeros(n, bool)
        if row is not None:
            keep[row] = True
        mask &= keep
    if filters.name is not None:
        mask &= np.array([name == filters.name
                          for name in index.names[:n]], bool)
    if filters.in_tree is not None:
        row = index.row_of_uuid.get(filters.in_tree)
        if row is None:
            return []
        mask &= index.root[:n] == index.root[row]
    for rc, amount in filters.resources.items():
        col = index.rc_col.get(names.rc(rc))
        if col is None:
            return []
        mask &= index.fits(col, amount)
    for any_of in filters.required_traits:
        mask &= index.has_any_trait(names.traits(any_of))
    if filters.forbidden_traits:
        mask &= ~index.has_any_trait(names.traits(filters.forbidden_traits))
    for aggs in filters.member_of:
        mask &= index.in_aggregates(aggs)
    if filters.forbidden_aggs:
        mask &= ~index.in_aggregates(filters.forbidden_aggs)
    return sorted(int(i) for i in index.ids[:n][mask])
