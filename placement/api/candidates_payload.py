"""The GET /allocation_candidates body, built from a CandidateResult.

A large answer (the perfload query returns a candidate and a summary for
each of 1,000 providers) is dominated by turning the engine's arrays into
JSON-ready dicts. The fast path reads the result's columnar export
(CandidateResult.columns() and summary_names()) once, as lists, and
builds the final dicts directly; the slow path builds them from the
objects of allocation_requests() / provider_summaries(). A test checks
that both paths give the same body.
"""


def has_fast_path(result):
    """Whether the fast path can build the whole body of ``result``: its
    columns hold the provider summaries (a lean result's do not)."""
    return result.columns().providers is not None


def allocation_requests(result, dict_form, with_mappings, fast=True):
    """The allocation_requests list: dict form from 1.12 (with mappings
    from 1.34), list form before."""
    if dict_form and fast and has_fast_path(result):
        return _fast_requests(result.columns(), with_mappings)
    out = []
    for candidate in result.allocation_requests():
        allocations = candidate.allocations
        if not dict_form:
            out.append({"allocations": [
                {"resource_provider": {"uuid": rp}, "resources": res}
                for rp, res in allocations.items()]})
            continue
        entry = {"allocations": {rp: {"resources": res}
                                 for rp, res in allocations.items()}}
        if with_mappings:
            entry["mappings"] = candidate.mappings
        out.append(entry)
    return out


def _fast_requests(columns, with_mappings):
    uuid = columns.uuid
    units = []
    for suffix, _granular, slots in columns.units:
        resources = {}
        for rc, _col, amount in slots:
            resources[rc] = resources.get(rc, 0) + amount
        units.append((suffix, resources))
    # Candidates differ in their providers, rarely in how units share
    # them: the layout (which units share a provider) is worked out once
    # per distinct sharing pattern, and each candidate only fills in the
    # uuids. The {"resources": ...} objects are shared between candidates
    # (the encoder only reads them).
    layouts = {}
    out = []
    for combo in columns.assign.tolist():
        pattern = tuple(combo.index(row) for row in combo)
        layout = layouts.get(pattern)
        if layout is None:
            layout = layouts[pattern] = _layout(units, pattern)
        allocations_layout, mappings_layout = layout
        allocations = {uuid[combo[i]]: wrapped
                       for i, wrapped in allocations_layout}
        if with_mappings:
            out.append({"allocations": allocations, "mappings": {
                suffix: [uuid[combo[i]] for i in firsts]
                for suffix, firsts in mappings_layout}})
        else:
            out.append({"allocations": allocations})
    return out


def _layout(units, pattern):
    """For a sharing pattern (the first unit holding each unit's
    provider): [(unit, {"resources": ...})] per provider, and
    [(suffix, [unit, ...])] naming each suffix's distinct providers."""
    merged = {}
    for (_suffix, resources), first in zip(units, pattern, strict=True):
        if resources:
            have = merged.setdefault(first, {})
            for rc, amount in resources.items():
                have[rc] = have.get(rc, 0) + amount
    mappings = {}
    for (suffix, _resources), first in zip(units, pattern, strict=True):
        firsts = mappings.setdefault(suffix, [])
        if first not in firsts:
            firsts.append(first)
    return ([(first, {"resources": res}) for first, res in merged.items()],
            list(mappings.items()))


def provider_summaries(result, requested, with_traits, with_tree,
                       trait_ids, fast=True):
    """The provider_summaries object. ``requested``: the only classes to
    show (before 1.27), or None for all; traits listed in trait id order
    (``trait_ids(names) -> {name: id}`` for the slow path)."""
    if fast and has_fast_path(result):
        return _fast_summaries(result, requested, with_traits, with_tree)
    summaries = result.provider_summaries()
    order = {}
    if with_traits:
        names = {n for s in summaries.values() for n in s.traits}
        order = trait_ids(names) if names else {}
    out = {}
    for uuid, summary in summaries.items():
        entry = {"resources": {
            rc: {"capacity": capacity, "used": used}
            for rc, (capacity, used) in summary.resources.items()
            if requested is None or rc in requested}}
        if with_traits:
            entry["traits"] = sorted(summary.traits, key=order.get)
        if with_tree:
            entry["parent_provider_uuid"] = summary.parent_provider_uuid
            entry["root_provider_uuid"] = summary.root_provider_uuid
        out[uuid] = entry
    return out


def _fast_summaries(result, requested, with_traits, with_tree):
    columns = result.columns()
    providers = columns.providers
    rc_name, trait_name = result.summary_names()
    bit_trait = providers.bit_trait
    uuid = columns.uuid
    # The columns (resource classes) the answer may show.
    shown = [c for c in sorted(rc_name)
             if requested is None or rc_name[c] in requested]
    has_inv = providers.has_inv.tolist()
    capacity = providers.capacity.tolist()
    used = providers.used.tolist()
    parents = providers.parent.tolist()
    roots = providers.root.tolist()
    bits = providers.bits.tolist()
    trait_lists = {}  # bit words -> trait names (providers share sets)
    out = {}
    for i, row in enumerate(providers.rows.tolist()):
        has_i, cap_i, used_i = has_inv[i], capacity[i], used[i]
        entry = {"resources": {
            rc_name[c]: {"capacity": cap_i[c], "used": used_i[c]}
            for c in shown if has_i[c]}}
        if with_traits:
            words = tuple(bits[i])
            names = trait_lists.get(words)
            if names is None:
                names = trait_lists[words] = _trait_names(
                    words, bit_trait, trait_name)
            # A copy: one list object must not appear twice in a body
            # that a caller might modify.
            entry["traits"] = list(names)
        if with_tree:
            parent, root = parents[i], roots[i]
            entry["parent_provider_uuid"] = (
                uuid.get(parent) if parent >= 0 else None)
            entry["root_provider_uuid"] = uuid.get(root, uuid[row])
        out[uuid[row]] = entry
    return out



def _trait_names(words, bit_trait, trait_name):
    found = []
    for w, word in enumerate(words):
        while word:
            low = word & -word
            found.append(w * 64 + low.bit_length() - 1)
            word ^= low
    # Trait id order: standard traits first, as upstream lists them.
    found.sort(key=bit_trait.get)
    return [trait_name[b] for b in found]
