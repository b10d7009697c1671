"""The allocation candidates search, vectorised over the provider index.

A candidate is an anchor tree (a root provider) and, for every *unit* of
the request, a provider: each suffixed group is one unit (one provider
holds all its resources); the unsuffixed group has a unit per resource
class (each class may come from a different provider of the tree, or from
a sharing provider that serves the tree through an aggregate).

1. For every unit, boolean masks over all providers give the providers
   that could serve it on their own (capacity, min/max unit, step size,
   traits, aggregates, in_tree), paired with the anchors they can serve.
2. Anchors that every unit can use are kept.
3. The combinations per anchor are enumerated - all at once with numpy
   when their number is bounded, otherwise depth first with pruning - and
   checked: the unsuffixed group's required traits over its providers
   together, group_policy=isolate, same_subtree, the summed amounts of the
   combination against capacity and max_unit, and (before microversion
   1.29) at most one provider per tree.
4. Candidates made only of sharing providers may be reachable from several
   anchors; they are kept once. Candidates that differ only in their
   mappings are distinct.

A flat request on a flat cloud (one unsuffixed group, nothing shared, no
child provider able to serve the group) skips steps 1 to 4: its
candidates are the root providers of one mask, in row order, which is
what the steps would give (Search.flat_answer).

docs/candidates.md states the semantics precisely, with the few places
where OpenStack Placement 16 is inconsistent and what gantt does instead.
"""

import dataclasses
import itertools
import random

import numpy as np

from placement import errors
from placement.candidates import result as result_mod

# Up to this many raw combinations are enumerated at once with numpy.
VECTOR_LIMIT = 200_000


@dataclasses.dataclass
class Unit:
    """What one provider of a candidate must serve."""

    suffix: str
    granular: bool
    # [(resource class name, column, amount)]
    slots: list
    # Pairs, sorted by anchor: anchor rows and provider rows.
    anchors: np.ndarray = None
    providers: np.ndarray = None


@dataclasses.dataclass
class Options:
    max_candidates: int = -1
    breadth_first: bool = True
    randomize: bool = False
    rng: random.Random = None
    # Results without provider summaries (the scheduler's): cheaper.
    lean: bool = False


class Search:
    """One request against one index (the caller holds ``index.lock``)."""

    def __init__(self, index, request, names, options):
        self.index = index
        self.request = request
        self.names = names  # placement.candidates.names.Resolved
        self.options = options
        self.n = index.size
        self.alive = index.alive[:self.n]
        self.root = index.root[:self.n]
        self.unsuffixed_required = []

    # -- masks -------------------------------------------------------------

    def fits(self, col, amount):
        """Providers whose inventory of the column can take ``amount`` on
        its own: capacity, min_unit, max_unit and step size."""
        return self.index.fits(col, amount)

    def has_all(self, any_sets):
        mask = self.alive.copy()
        for ids in any_sets:
            mask &= self.index.has_any_trait(ids)
        return mask

    def in_all_aggs(self, member_of):
        mask = self.alive.copy()
        for aggs in member_of:
            mask &= self.index.in_aggregates(aggs)
        return mask

    # -- units and pairs -----------------------------------------------------

    def run(self):
        """The answer: the flat one when the request has its shape,
        otherwise units, their common anchors, then the enumeration."""
        self.anchor_ok = self._anchor_mask()
        self.sharing = self.index.sharing()
        self.anchor_map = self.index.anchors()
        flat = self.flat_answer()
        if flat is not None:
            return flat
        units = self._units()
        if units is None:
            return self.empty()
        self.units = units
        common = self._common_anchors(units)
        if common is None or not len(common):
            return self.empty()
        self._keep_common(units, common)
        self.common = common
        assign, anchors = self.enumerate()
        return self.finish(assign, anchors)

    def _anchor_mask(self):
        """Root providers that may anchor a candidate: alive, with the
        request's root_required traits and none of its root_forbidden
        ones."""
        request = self.request
        anchor_ok = self.alive & (self.index.parent[:self.n] < 0)
        if request.root_required:
            anchor_ok &= self.has_all(
                [{t} for t in self.names.traits(request.root_required)])
        if request.root_forbidden:
            anchor_ok &= ~self.index.has_any_trait(
                self.names.traits(request.root_forbidden))
        return anchor_ok

    def _units(self):
        """Every group's units, in request order; None as soon as one
        group cannot be satisfied."""
        units = []
        for group in self.request.groups:
            made = self.units_for(group)
            if made is None:
                return None
            units.extend(made)
        return units

    def _common_anchors(self, units):
        """The anchors (sorted, unique) that every unit can use; None
        when there are no units."""
        common = None
        for unit in units:
            # Sorted already (by _keep_anchors): drop the repeats.
            anchors = unit.anchors
            if len(anchors):
                anchors = anchors[np.r_[True, anchors[1:] != anchors[:-1]]]
            common = anchors if common is None else np.intersect1d(
                common, anchors, assume_unique=True)
        return common

    def _keep_common(self, units, common):
        """Drop from each unit the pairs of anchors not in ``common``."""
        for unit in units:
            # As many entries as common anchors: exactly those already.
            if len(unit.anchors) == len(common):
                continue
            keep = np.isin(unit.anchors, common)
            unit.anchors = unit.anchors[keep]
            unit.providers = unit.providers[keep]

    def flat_answer(self):
        """The answer straight from one mask, when each candidate can
        only be a single root provider serving the whole request: one
        unsuffixed group asking for resources, no sharing provider in
        the index, and no child provider that could serve any of the
        group's classes. Then pairing and enumeration would give exactly
        the rows of the mask, in row order (the common flat cloud; the
        general path stays the reference, and the property tests compare
        the two). None when the request is not of that shape."""
        if not self._flat_shape():
            return None
        group = self.request.groups[0]
        slots = self._slots(group)
        if slots is None:
            return self.empty()  # no provider has one of its classes
        tree = self._tree_filter(group)
        if tree == -1:
            return self.empty()
        mask = self._flat_roots(group, slots)
        if mask is None:
            return None  # a child could serve a class: pair them
        rows = self._flat_keep(np.flatnonzero(
            self._flat_filters(mask, group, tree)))
        self.units = [Unit("", False, [slot]) for slot in slots]
        for unit in self.units:
            unit.anchors = unit.providers = rows
        return self.finish(np.repeat(rows[:, None], len(slots), axis=1),
                           rows)

    def _flat_shape(self):
        """Whether the request and the index have the flat answer's
        shape, as far as they tell without a mask: one unsuffixed group
        asking for resources, no same_subtree, no sharing provider."""
        request = self.request
        if len(request.groups) != 1 or request.same_subtrees:
            return False
        group = request.groups[0]
        return not (group.suffix or not group.resources
                    or self.sharing.any())

    def _flat_roots(self, group, slots):
        """The usable root providers (alive, allowed as anchors, no
        forbidden trait) that fit every slot on their own; None as soon
        as a usable child provider fits a slot, since the child could
        then serve that class for its root."""
        usable = self.alive.copy()
        forbidden = self.names.traits(group.forbidden_traits)
        if forbidden:
            usable &= ~self.index.has_any_trait(forbidden)
        roots = self.index.parent[:self.n] < 0
        child = usable & ~roots
        mask = usable & roots & self.anchor_ok
        for _rc, col, amount in slots:
            fit = self.fits(col, amount)
            if (fit & child).any():
                return None
            mask &= fit
        return mask

    def _flat_filters(self, mask, group, tree):
        """``mask`` narrowed by the group's in_tree, required traits,
        member_of and forbidden aggregates (a root provider of the flat
        answer is its own tree: nothing is inherited)."""
        if tree is not None:
            mask &= self.root == tree
        required = [self.names.traits(t) for t in group.required_traits]
        if required:
            mask &= self.has_all(required)
        if group.member_of:
            mask &= self.in_all_aggs(group.member_of)
        if group.forbidden_aggs:
            mask &= ~self.index.in_aggregates(group.forbidden_aggs)
        return mask

    def _flat_keep(self, rows):
        """The first rows only, when the answer keeps no more:
        max_allocation_candidates, and ``limit`` unless randomized
        (finish() keeps the first ``limit`` only; the others are roots
        of other trees: no summary needs them)."""
        cap = self.options.max_candidates
        if cap >= 0:
            rows = rows[:cap]
        limit = self.request.limit
        if limit is not None and not self.options.randomize:
            rows = rows[:limit]
        return rows

    def empty(self):
        return result_mod.CandidateResult.empty(self.index, self.request)

    def _tree_filter(self, group):
        if group.in_tree is None:
            return None
        row = self.index.row_of_uuid.get(group.in_tree)
        return -1 if row is None else int(self.root[row])

    def _slots(self, group):
        """[(resource class, index column, amount)] of the group's
        resources, in request order; None when no provider has one of
        its classes at all (the group cannot be satisfied)."""
        slots = []
        for rc, amount in group.resources.items():
            col = self.index.rc_col.get(self.names.rc(rc))
            if col is None:
                return None
            slots.append((rc, col, amount))
        return slots

    def units_for(self, group):
        """The group's units, or None when it cannot be satisfied."""
        names = self.names
        tree = self._tree_filter(group)
        if tree == -1:
            return None
        slots = self._slots(group)
        if slots is None:
            return None
        required = [names.traits(s) for s in group.required_traits]
        forbidden = names.traits(group.forbidden_traits)
        if group.suffix:
            mask = self.granular_mask(group, slots, tree, required,
                                      forbidden)
            unit = Unit(group.suffix, True, slots)
            unit.anchors, unit.providers = self.pairs_one_provider(mask)
            return [unit] if len(unit.anchors) else None
        return self.unsuffixed_units(group, slots, tree, required,
                                     forbidden)

    def granular_mask(self, group, slots, tree, required, forbidden):
        if not slots and not required and not group.member_of:
            # As OpenStack Placement: a resourceless group filtered only by
            # in_tree or forbidden traits matches nothing.
            return np.zeros(self.n, bool)
        mask = self.has_all(required)
        for _rc, col, amount in slots:
            mask &= self.fits(col, amount)
        if tree is not None and slots:
            mask &= self.root == tree
        if forbidden:
            mask &= ~self.index.has_any_trait(forbidden)
        if group.member_of:
            mask &= self.in_all_aggs(group.member_of)
        if group.forbidden_aggs:
            mask &= ~self.index.in_aggregates(group.forbidden_aggs)
        return mask

    def pairs_one_provider(self, mask):
        """(anchor, provider) pairs of a provider serving a whole unit: its
        own root, and for a sharing provider every root it serves."""
        rows = np.flatnonzero(mask)
        anchors = [self.root[rows]]
        providers = [rows]
        for row in rows[self.sharing[rows]]:
            served = self.anchor_map.get(int(row))
            if served is not None:
                served = served[served != self.root[row]]
                anchors.append(served)
                providers.append(np.full(len(served), row))
        return self._keep_anchors(np.concatenate(anchors),
                                  np.concatenate(providers))

    def _keep_anchors(self, anchors, providers):
        keep = self.anchor_ok[anchors]
        anchors, providers = anchors[keep], providers[keep]
        order = np.lexsort((providers, anchors))
        return anchors[order], providers[order]

    def unsuffixed_units(self, group, slots, tree, required, forbidden):
        """A unit per resource class; pairs with providers of the anchor's
        tree, or with sharing providers serving the anchor."""
        base = self.alive.copy()
        if forbidden:
            base &= ~self.index.has_any_trait(forbidden)
        in_aggs = (self.in_all_aggs(group.member_of) if group.member_of
                   else None)
        bad = (self.index.in_aggregates(group.forbidden_aggs)
               if group.forbidden_aggs else None)
        self.unsuffixed_required = required
        units = []
        for rc, col, amount in slots:
            fit = base & self.fits(col, amount)
            anchors, providers = self._class_pairs(fit, tree, in_aggs)
            anchors, providers = _aggregate_filter(anchors, providers,
                                                   in_aggs, bad)
            unit = Unit("", False, [(rc, col, amount)])
            unit.anchors, unit.providers = self._keep_anchors(anchors,
                                                              providers)
            if not len(unit.anchors):
                return None
            units.append(unit)
        return units

    def _class_pairs(self, fit, tree, in_aggs):
        """(anchors, providers) for one class of the unsuffixed group:
        each fitting provider with its own root, and (without in_tree)
        each fitting sharing provider in the group's aggregates with
        every root it serves; no pair twice."""
        tree_rows = np.flatnonzero(
            fit if tree is None else fit & (self.root == tree))
        anchors = [self.root[tree_rows]]
        providers = [tree_rows]
        if tree is None:
            shared = fit & self.sharing
            if in_aggs is not None:
                shared &= in_aggs
            self._shared_pairs(shared, anchors, providers)
        anchors = np.concatenate(anchors)
        providers = np.concatenate(providers)
        if len(anchors) > len(tree_rows):
            # Sharing pairs may repeat tree pairs. One int64 key per
            # pair: a 1-D unique is far cheaper than unique(axis=1).
            keys = np.unique(anchors.astype(np.int64) * self.n + providers)
            anchors, providers = keys // self.n, keys % self.n
        return anchors, providers

    def _shared_pairs(self, shared, anchors, providers):
        """Append to ``anchors`` and ``providers`` a pair for every root
        that each provider of the ``shared`` mask serves."""
        for row in np.flatnonzero(shared):
            served = self.anchor_map.get(int(row))
            if served is not None:
                anchors.append(served)
                providers.append(np.full(len(served), row))

    # -- enumeration -------------------------------------------------------

    def enumerate(self):
        """(assign, anchors): a row per valid combination, a column per
        unit, in generation order."""
        nA = len(self.common)
        counts, starts = [], []
        one_each = np.arange(nA)
        for unit in self.units:
            if len(unit.anchors) == nA:
                # One entry per common anchor (the common flat case).
                starts.append(one_each)
                counts.append(np.ones(nA, np.int64))
                continue
            left = np.searchsorted(unit.anchors, self.common, "left")
            right = np.searchsorted(unit.anchors, self.common, "right")
            starts.append(left)
            counts.append(right - left)
        sizes = np.ones(nA, np.float64)
        for c in counts:
            sizes *= c
        if sizes.sum() <= VECTOR_LIMIT:
            sizes = sizes.astype(np.int64)
            want = self.wanted()
            if want is not None and want < nA and (sizes == 1).all():
                return self.enumerate_prefix(counts, starts, sizes, want)
            return self.enumerate_vectorised(counts, starts, sizes)
        return self.enumerate_depth_first(counts, starts)

    def wanted(self):
        """How many candidates the answer keeps at most when it keeps the
        first ones generated (no randomize); None: all of them."""
        if self.options.randomize:
            return None
        limit = self.request.limit
        if self.summaries_see_trimmed():
            limit = None  # finish() needs the candidates it trims
        caps = [c for c in (self.options.max_candidates, limit)
                if c is not None and c >= 0]
        return min(caps) if caps else None

    def summaries_see_trimmed(self):
        """Whether the provider summaries depend on the candidates that
        ``limit`` trims: before microversion 1.29, on a cloud with trees,
        they hold every provider that any candidate uses in a tree that
        the kept candidates use (OpenStack Placement 16 filters its
        summaries by those trees after the limit)."""
        return (not self.request.nested_aware and not self.options.lean
                and self.index.has_trees())

    def enumerate_prefix(self, counts, starts, sizes, want):
        """enumerate_vectorised over the first anchors only. With one
        combination per anchor, generation order is anchor order, so the
        first ``want`` valid candidates come from a prefix of the anchors:
        a flat cloud of 100,000 hosts asked for 1,000 checks little more
        than 1,000. The prefix doubles until it yields enough."""
        nA = len(self.common)
        hi = min(nA, want + want // 4 + 16)
        while True:
            assign, anchors = self.enumerate_vectorised(
                [c[:hi] for c in counts], [s[:hi] for s in starts],
                sizes[:hi])
            if len(assign) >= want or hi == nA:
                return assign, anchors
            hi = min(nA, hi * 2)

    def enumerate_vectorised(self, counts, starts, sizes):
        total = int(sizes.sum())
        which = np.repeat(np.arange(len(sizes)), sizes)
        local = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        assign = np.empty((total, len(self.units)), np.int64)
        rest = local.copy()
        for u in range(len(self.units) - 1, -1, -1):
            c = counts[u][which]
            digit = rest % c
            rest //= c
            assign[:, u] = self.units[u].providers[starts[u][which] + digit]
        ok = self.check(assign)
        assign, which = assign[ok], which[ok]
        anchors = self.common[which]
        if self.options.breadth_first and len(which):
            # Rank of each candidate within its anchor, then round robin.
            first = np.r_[0, np.flatnonzero(np.diff(which)) + 1]
            rank = np.arange(len(which)) - np.repeat(
                first, np.diff(np.r_[first, len(which)]))
            order = np.lexsort((which, rank))
            assign, anchors = assign[order], anchors[order]
        assign, anchors = self.dedupe_shared(assign, anchors)
        cap = self.options.max_candidates
        if cap >= 0:
            assign, anchors = assign[:cap], anchors[:cap]
        return assign, anchors

    def enumerate_depth_first(self, counts, starts):
        generators = [
            self.combinations(i, [
                self.units[u].providers[starts[u][i]:
                                        starts[u][i] + counts[u][i]]
                for u in range(len(self.units))])
            for i in range(len(self.common))]
        if self.options.breadth_first:
            stream = _round_robin(generators)
        else:
            stream = itertools.chain.from_iterable(generators)
        cap = self.options.max_candidates
        rows, anchors = [], []
        seen_shared = set()
        for i, combo in stream:
            if self._all_sharing(combo):
                key = self._key(combo)
                if key in seen_shared:
                    continue
                seen_shared.add(key)
            rows.append(combo)
            anchors.append(self.common[i])
            if 0 <= cap <= len(rows):
                break
        assign = np.array(rows, np.int64).reshape(-1, len(self.units))
        return assign, np.array(anchors, np.int64)

    def combinations(self, anchor_index, choices):
        """Valid combinations for one anchor, depth first, pruning on
        partial sums and policies; yields (anchor index, combo)."""
        ix = self.index
        units = self.units
        isolate = self.request.group_policy == "isolate"
        nested = self.request.nested_aware
        order = sorted(range(len(units)), key=lambda u: len(choices[u]))
        combo = [0] * len(units)
        totals = {}

        def fits_partial(u, p):
            for _rc, col, amount in units[u].slots:
                total = totals.get((p, col), 0) + amount
                if (ix.used[p, col] + total > int(ix.cap[p, col])
                        or total > ix.max_unit[p, col]):
                    return False
            for v in order[:depth_of[u]]:
                q = combo[v]
                if q == p:
                    if isolate and units[u].granular and units[v].granular:
                        return False
                elif not nested and self.root[q] == self.root[p]:
                    return False
            return True

        depth_of = {u: d for d, u in enumerate(order)}

        def walk(depth):
            if depth == len(order):
                if self.check_one(combo):
                    yield anchor_index, list(combo)
                return
            u = order[depth]
            for p in choices[u]:
                p = int(p)
                if not fits_partial(u, p):
                    continue
                combo[u] = p
                for _rc, col, amount in units[u].slots:
                    totals[(p, col)] = totals.get((p, col), 0) + amount
                yield from walk(depth + 1)
                for _rc, col, amount in units[u].slots:
                    totals[(p, col)] -= amount

        return walk(0)

    # -- checks --------------------------------------------------------------

    def check(self, assign):
        """Which rows of ``assign`` are valid candidates (vectorised)."""
        ok = np.ones(len(assign), bool)
        if not len(assign):
            return ok
        self._check_amounts(assign, ok)
        self._check_pairs(assign, ok)
        if self.unsuffixed_required:
            self._check_unsuffixed_traits(assign, ok)
        for subtree in self.request.same_subtrees:
            members = [u for u, unit in enumerate(self.units)
                       if unit.suffix in subtree]
            ok &= self._same_subtree(assign[:, members])
        return ok

    def _check_amounts(self, assign, ok):
        """Clear in ``ok`` the rows that put more on a provider than it
        can take: each unit's provider must hold the amounts of every unit
        of the row that it serves, summed per class (capacity and
        max_unit; min_unit and step size held for each unit alone)."""
        ix = self.index
        for u, unit in enumerate(self.units):
            p = assign[:, u]
            for _rc, col, _amount in unit.slots:
                total = self._summed(assign, p, col)
                ok &= ix.used[p, col] + total <= np.floor(ix.cap[p, col])
                ok &= total <= ix.max_unit[p, col]

    def _summed(self, assign, p, col):
        """Per row: the amount of column ``col`` that the row's units
        put on provider ``p`` (the row's entry for one unit)."""
        total = np.zeros(len(assign), np.int64)
        for v, other in enumerate(self.units):
            same = assign[:, v] == p
            for _rc, col2, amount2 in other.slots:
                if col2 == col:
                    total += np.where(same, amount2, 0)
        return total

    def _check_pairs(self, assign, ok):
        """Clear in ``ok`` the rows that break a policy between two units:
        group_policy=isolate (two suffixed groups, one provider), and
        before microversion 1.29 two providers of one tree."""
        units = self.units
        isolate = self.request.group_policy == "isolate"
        nested = self.request.nested_aware
        for u, v in itertools.combinations(range(len(units)), 2):
            same = assign[:, u] == assign[:, v]
            if isolate and units[u].granular and units[v].granular:
                ok &= ~same
            if not nested:
                ok &= same | (self.root[assign[:, u]]
                              != self.root[assign[:, v]])

    def _check_unsuffixed_traits(self, assign, ok):
        """Clear in ``ok`` the rows whose unsuffixed group's providers,
        together, lack one of the group's required traits (any of each
        set)."""
        ix = self.index
        cols = [u for u, unit in enumerate(self.units) if not unit.granular]
        union = np.bitwise_or.reduce(ix.bits[assign[:, cols]], axis=1)
        for ids in self.unsuffixed_required:
            ok &= (union & ix.trait_mask(ids)).any(axis=1)

    def check_one(self, combo):
        """The checks that need the whole combination (capacity and the
        pairwise policies were checked on the way down)."""
        if self.unsuffixed_required and not self._one_has_traits(combo):
            return False
        return not self.request.same_subtrees or self._one_same_subtree(
            combo)

    def _one_has_traits(self, combo):
        """Whether the unsuffixed group's providers of ``combo`` have,
        together, one trait of each of its required sets."""
        ix = self.index
        union = np.zeros(ix.bits.shape[1], np.uint64)
        for unit, p in zip(self.units, combo, strict=True):
            if not unit.granular:
                union |= ix.bits[p]
        return all((union & ix.trait_mask(ids)).any()
                   for ids in self.unsuffixed_required)

    def _one_same_subtree(self, combo):
        """Whether, for every same_subtree of the request, the providers
        of ``combo`` for its groups all lie under one of them."""
        depth, ancestors = self.index.depths()
        for subtree in self.request.same_subtrees:
            rows = [p for unit, p in zip(self.units, combo, strict=True)
                    if unit.suffix in subtree]
            if not any(all(ancestors[depth[top], p] == top for p in rows)
                       for top in rows):
                return False
        return True

    def _same_subtree(self, rows):
        """Rows whose providers all lie under one of them."""
        depth, ancestors = self.index.depths()
        ok = np.zeros(len(rows), bool)
        for u in range(rows.shape[1]):
            top = rows[:, u]
            under = np.ones(len(rows), bool)
            for v in range(rows.shape[1]):
                under &= ancestors[depth[top], rows[:, v]] == top
            ok |= under
        return ok

    def _all_sharing(self, combo):
        return all(self.sharing[p] for p in combo)

    def _key(self, combo):
        allocations = {}
        mappings = {}
        for unit, p in zip(self.units, combo, strict=True):
            for _rc, col, amount in unit.slots:
                allocations[(p, col)] = allocations.get((p, col), 0) + amount
            mappings.setdefault(unit.suffix, set()).add(p)
        return (tuple(sorted(allocations.items())),
                tuple(sorted((s, tuple(sorted(ps)))
                             for s, ps in mappings.items())))

    def dedupe_shared(self, assign, anchors):
        """Drop repeats of candidates made only of sharing providers."""
        if not len(assign):
            return assign, anchors
        shared = self.sharing[assign].all(axis=1)
        if not shared.any():
            return assign, anchors
        keep = np.ones(len(assign), bool)
        seen = set()
        for i in np.flatnonzero(shared):
            key = self._key([int(p) for p in assign[i]])
            if key in seen:
                keep[i] = False
            seen.add(key)
        return assign[keep], anchors[keep]

    # -- result ------------------------------------------------------------

    def finish(self, assign, anchors):
        limit = self.request.limit
        if self.options.randomize:
            rng = self.options.rng or random
            order = list(range(len(assign)))
            rng.shuffle(order)
            assign, anchors = assign[order], anchors[order]
        trimmed = None
        if limit is not None and limit < len(assign):
            if self.summaries_see_trimmed():
                trimmed = assign[limit:]
            assign, anchors = assign[:limit], anchors[:limit]
        return result_mod.CandidateResult(
            self.index, self.request, self.units, assign, anchors,
            lean=self.options.lean, trimmed=trimmed)


def _aggregate_filter(anchors, providers, in_aggs, bad):
    """The unsuffixed group's pairs whose provider or anchor is in its
    member_of aggregates (``in_aggs``; None: no such filter), and
    neither is in a forbidden one (``bad``; None: none)."""
    if in_aggs is not None:
        keep = in_aggs[providers] | in_aggs[anchors]
        anchors, providers = anchors[keep], providers[keep]
    if bad is not None:
        keep = ~(bad[providers] | bad[anchors])
        anchors, providers = anchors[keep], providers[keep]
    return anchors, providers


def _round_robin(generators):
    active = list(generators)
    while active:
        still = []
        for gen in active:
            item = next(gen, None)
            if item is not None:
                yield item
                still.append(gen)
        active = still


def search(index, request, names, options=None):
    """Allocation candidates for ``request`` (a CandidatesRequest) from
    ``index`` (synced by the caller, whose lock must be held)."""
    if not request.groups:
        raise errors.BadRequest("A request needs at least one group.")
    return Search(index, request, names, options or Options()).run()
