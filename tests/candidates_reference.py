"""A brute-force reference for allocation candidates.

Obviously correct and exponential: for every anchor root it tries every
assignment of every unit of the request to every provider and keeps those
that satisfy the rules below, written out one by one. Fine for clouds of a
handful of providers; the engine is compared with it on thousands of them.

The cloud is plain Python:

    Cloud(providers={name: Provider(parent, inventory, used, traits,
                                    aggregates)})

and a request is a placement.candidates.request.CandidatesRequest whose
names are provider names (for in_tree) and aggregate names.

Rules (docs/candidates.md says the same in prose):

- A candidate has an anchor: a root provider that root_required and
  root_forbidden accept.
- Units: one per suffixed group; one per resource class of the unsuffixed
  group.
- A suffixed group's provider holds all its classes itself, each fitting on
  its own (used + amount <= (total - reserved) * ratio, min_unit <= amount
  <= max_unit, amount % step_size == 0), has every required any-of set,
  none of the forbidden traits, is itself in every member_of set and in
  none of the forbidden aggregates, and lies in the in_tree provider's
  tree (for groups with resources). It belongs to the anchor's tree, or is
  a sharing provider (MISC_SHARES_VIA_AGGREGATE) in an aggregate with some
  provider of the anchor's tree. A resourceless group with neither
  required traits nor member_of matches nothing.
- The unsuffixed group's provider for a class fits that class on its own
  and has none of the group's forbidden traits. It is in the anchor's tree
  (and in the in_tree tree, if given), or - without in_tree - a sharing
  provider serving the anchor that is itself in every member_of set. With
  member_of, the provider or the anchor must be in every set; with
  forbidden aggregates, neither may be in any. The group's required traits
  are judged on the union of the traits of its providers.
- isolate: the suffixed groups' providers are pairwise different.
- same_subtree: the providers of the named groups all lie under one of
  them.
- Per (provider, class), the amounts of all units together fit: used +
  sum <= floor(capacity) and sum <= max_unit.
- Before microversion 1.29 (nested_aware False), two different providers
  of a candidate are never in the same tree.
- Candidates are equal when their summed allocations and their mappings
  (suffix -> set of providers) are equal.
"""

import dataclasses
import itertools
import math

SHARING = "MISC_SHARES_VIA_AGGREGATE"


@dataclasses.dataclass
class Inv:
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = 2147483647
    step_size: int = 1
    allocation_ratio: float = 1.0

    @property
    def capacity(self):
        return (self.total - self.reserved) * self.allocation_ratio


@dataclasses.dataclass
class Provider:
    parent: str | None = None
    inventory: dict = dataclasses.field(default_factory=dict)
    used: dict = dataclasses.field(default_factory=dict)
    traits: set = dataclasses.field(default_factory=set)
    aggregates: set = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class Cloud:
    providers: dict  # name -> Provider, parents before children

    def root(self, name):
        while self.providers[name].parent is not None:
            name = self.providers[name].parent
        return name

    def ancestors_or_self(self, name):
        out = [name]
        while self.providers[name].parent is not None:
            name = self.providers[name].parent
            out.append(name)
        return out

    def fits(self, name, rc, amount):
        p = self.providers[name]
        inv = p.inventory.get(rc)
        if inv is None:
            return False
        return (p.used.get(rc, 0) + amount <= inv.capacity
                and inv.min_unit <= amount <= inv.max_unit
                and amount % inv.step_size == 0)

    def serves(self, sharing, anchor):
        """A sharing provider serves the trees of the providers it shares
        an aggregate with."""
        aggs = self.providers[sharing].aggregates
        return any(self.root(q) == anchor and aggs & p.aggregates
                   for q, p in self.providers.items())

    def is_sharing(self, name):
        return SHARING in self.providers[name].traits


def _in_all(aggs, member_of):
    return all(aggs & set(any_of) for any_of in member_of)


def _granular_ok(cloud, group, name, anchor):
    p = cloud.providers[name]
    if (not group.resources and not group.required_traits
            and not group.member_of):
        return False
    for rc, amount in group.resources.items():
        if not cloud.fits(name, rc, amount):
            return False
    if not all(p.traits & set(s) for s in group.required_traits):
        return False
    if p.traits & set(group.forbidden_traits):
        return False
    if not _in_all(p.aggregates, group.member_of):
        return False
    if p.aggregates & set(group.forbidden_aggs):
        return False
    if group.in_tree is not None and group.resources:
        if cloud.root(name) != cloud.root(group.in_tree):
            return False
    if cloud.root(name) == anchor:
        return True
    return cloud.is_sharing(name) and cloud.serves(name, anchor)


def _unsuffixed_ok(cloud, group, rc, name, anchor):
    p = cloud.providers[name]
    if not cloud.fits(name, rc, group.resources[rc]):
        return False
    if p.traits & set(group.forbidden_traits):
        return False
    in_tree = cloud.root(name) == anchor
    if group.in_tree is not None:
        if not in_tree or cloud.root(name) != cloud.root(group.in_tree):
            return False
    elif not in_tree:
        if not (cloud.is_sharing(name) and cloud.serves(name, anchor)
                and _in_all(p.aggregates, group.member_of)):
            return False
    anchor_aggs = cloud.providers[anchor].aggregates
    if group.member_of and not (_in_all(p.aggregates, group.member_of)
                                or _in_all(anchor_aggs, group.member_of)):
        return False
    bad = set(group.forbidden_aggs)
    if bad and (p.aggregates & bad or anchor_aggs & bad):
        return False
    return True


def candidates(cloud, request):
    """The set of candidates: (allocations, mappings) with allocations a
    frozenset of (provider, class, amount) and mappings a frozenset of
    (suffix, frozenset of providers)."""
    names = list(cloud.providers)
    roots = [n for n in names if cloud.providers[n].parent is None]
    units = []  # (group, rc or None)
    for group in request.groups:
        if group.suffix:
            units.append((group, None))
        else:
            units.extend((group, rc) for rc in group.resources)
    found = set()
    for anchor in roots:
        traits = cloud.providers[anchor].traits
        if not set(request.root_required) <= traits:
            continue
        if traits & set(request.root_forbidden):
            continue
        # Each unit's own conditions first (the same as checking them on
        # every combination), then every combination of what is left.
        choices = [[n for n in names
                    if (_granular_ok(cloud, group, n, anchor) if group.suffix
                        else _unsuffixed_ok(cloud, group, rc, n, anchor))]
                   for group, rc in units]
        for combo in itertools.product(*choices):
            key = _check(cloud, request, units, combo)
            if key is not None:
                found.add(key)
    return found


def _check(cloud, request, units, combo):
    unsuffixed = [name for (group, _), name in zip(units, combo, strict=True)
                  if not group.suffix]
    for group in request.groups:
        if not group.suffix and unsuffixed:
            have = set().union(*(cloud.providers[n].traits
                                 for n in unsuffixed))
            if not all(have & set(s) for s in group.required_traits):
                return None
    granular = [(group.suffix, name)
                for (group, _), name in zip(units, combo, strict=True)
                if group.suffix]
    if request.group_policy == "isolate":
        chosen = [name for _, name in granular]
        if len(set(chosen)) != len(chosen):
            return None
    for subtree in request.same_subtrees:
        members = [name for suffix, name in granular if suffix in subtree]
        if not any(all(top in cloud.ancestors_or_self(m) for m in members)
                   for top in members):
            return None
    totals = {}
    for (group, rc), name in zip(units, combo, strict=True):
        classes = group.resources.items() if group.suffix else [
            (rc, group.resources[rc])]
        for c, amount in classes:
            totals[(name, c)] = totals.get((name, c), 0) + amount
    for (name, rc), total in totals.items():
        p = cloud.providers[name]
        inv = p.inventory[rc]
        if p.used.get(rc, 0) + total > math.floor(inv.capacity):
            return None
        if total > inv.max_unit:
            return None
    if not request.nested_aware:
        distinct = set(combo)
        if len({cloud.root(n) for n in distinct}) != len(distinct):
            return None
    mappings = {}
    for (group, _), name in zip(units, combo, strict=True):
        mappings.setdefault(group.suffix, set()).add(name)
    return (frozenset((n, rc, t) for (n, rc), t in totals.items()),
            frozenset((s, frozenset(ps)) for s, ps in mappings.items()))
