"""The answer to a candidates search.

A search returns its candidates as arrays (a provider row per unit of the
request, per candidate); the scheduler reads those directly. The dict form
of the REST API (allocation requests and provider summaries) is built only
when asked for: one object per candidate and per provider
(allocation_requests(), provider_summaries()), or, for a caller that
builds a large body itself, the same as columns (columns(),
summary_names()). Everything a result needs from the index is copied when
it is made, so later changes to the index do not show through.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass
class AllocationRequest:
    # {provider uuid: {resource class: amount}}
    allocations: dict
    # {suffix: [provider uuid, ...]} (microversion 1.34)
    mappings: dict


@dataclasses.dataclass
class ProviderSummary:
    uuid: str
    parent_provider_uuid: str | None
    root_provider_uuid: str
    # {resource class: (capacity, used)} for every class of the provider
    resources: dict
    traits: list


@dataclasses.dataclass(frozen=True)
class ProviderColumns:
    """The providers a result's summaries show, one row each (in index
    row order), as the index held them when the result was made."""

    rows: np.ndarray  # the index row of each
    parent: np.ndarray  # the index row of its parent; -1: a root
    root: np.ndarray  # the index row of its root
    has_inv: np.ndarray  # provider x index column: has inventory
    capacity: np.ndarray  # floor((total - reserved) * ratio), as shown
    used: np.ndarray
    bits: np.ndarray  # trait bitset words (index bits)
    col_rc: list  # index column -> resource class id
    bit_trait: dict  # index bit -> trait id (traits list in id order)


@dataclasses.dataclass(frozen=True)
class Columns:
    """A result as columns: what allocation_requests() and
    provider_summaries() are built from, for a caller that reads them
    once as lists (the REST API's body, where an object per candidate
    and per provider costs more than the search)."""

    # Per unit of the request: (suffix, granular, [(resource class,
    # index column, amount), ...]).
    units: list
    assign: np.ndarray  # candidate x unit: the provider row of each unit
    # Provider row -> uuid, for every row the other fields name (a dict,
    # or in a lean result the index's row list).
    uuid: object
    providers: ProviderColumns | None  # None in a lean result


def distinct_rows(arrays, size):
    """The distinct provider rows (>= 0) in ``arrays``, sorted: a mark per
    row of the index, cheaper than a hash or sort for these sizes."""
    if isinstance(arrays, tuple):
        arrays = np.concatenate([np.ravel(a) for a in arrays])
    values = np.ravel(arrays)
    mark = np.zeros(size, bool)
    mark[values[values >= 0]] = True
    return np.flatnonzero(mark)


class CandidateResult:
    def __init__(self, index, request, units, assign, anchors, lean=False,
                 trimmed=None):
        """``trimmed``: the candidates ``limit`` left out, when the
        provider summaries depend on them (Search.summaries_see_trimmed)."""
        self.request = request
        self.units = [(u.suffix, u.granular, list(u.slots)) for u in units]
        self.assign = assign
        self.anchors = anchors
        self.lean = lean
        if lean:
            # Allocation requests and anchors only: the row -> uuid list
            # is all they read (a snapshot the index copies on write).
            self._uuid = index.uuids_snapshot()
            self._providers = None
            return
        size = index.size
        used_rows = distinct_rows(assign, size)
        if request.nested_aware:
            rows = index.tree_rows(distinct_rows(index.root[used_rows], size))
            rows = distinct_rows((rows, used_rows), size)
        elif trimmed is not None and len(trimmed):
            rows = _with_trimmed(index, used_rows, trimmed)
        else:
            rows = used_rows
        self.rows = rows
        parent = index.parent[rows].copy()
        root = index.root[rows].copy()
        named = distinct_rows((rows, parent, root, anchors), size)
        self._uuid = {int(r): index.uuids[r] for r in named if r >= 0}
        self._providers = ProviderColumns(
            rows=rows, parent=parent, root=root,
            has_inv=index.has_inv[rows].copy(),
            capacity=np.floor(index.cap[rows]).astype(np.int64),
            used=index.used[rows].copy(),
            bits=index.bits[rows].copy(),
            col_rc=list(index.col_rc),
            bit_trait={bit: t for t, bit in index.trait_bit.items()})
        self._store = index.store

    @classmethod
    def empty(cls, index, request):
        return cls(index, request, [], np.empty((0, 0), np.int64),
                   np.empty(0, np.int64))

    def __len__(self):
        return len(self.assign)

    def columns(self):
        """The result as Columns (shared, not copied: read only)."""
        return Columns(self.units, self.assign, self._uuid, self._providers)

    def provider_uuids(self, rows):
        return [self._uuid[int(r)] for r in rows]

    def anchor_uuids(self):
        """The root provider uuid of each candidate's tree: the compute
        node it places on."""
        uuid = self._uuid
        return [uuid[a] for a in self.anchors.tolist()]

    def allocation_request(self, i):
        """The AllocationRequest of candidate ``i``."""
        return self._allocation_request(self.assign[i].tolist())

    def allocation_requests(self):
        """AllocationRequest per candidate."""
        return [self._allocation_request(combo)
                for combo in self.assign.tolist()]

    def _allocation_request(self, combo):
        uuid = self._uuid
        allocations = {}
        mappings = {}
        for (suffix, _granular, slots), row in zip(self.units, combo,
                                                    strict=True):
            provider = uuid[row]
            if slots:
                resources = allocations.setdefault(provider, {})
                for rc, _col, amount in slots:
                    resources[rc] = resources.get(rc, 0) + amount
            mapped = mappings.setdefault(suffix, [])
            if provider not in mapped:
                mapped.append(provider)
        return AllocationRequest(allocations, mappings)

    def provider_summaries(self):
        """{uuid: ProviderSummary} for every provider of every tree that
        takes part (before microversion 1.29: the providers used, also by
        candidates ``limit`` trimmed, in those trees)."""
        rc_name, trait_name = self.summary_names()
        p = self._providers
        out = {}
        for i, row in enumerate(p.rows.tolist()):
            cols = np.flatnonzero(p.has_inv[i])
            resources = {rc_name[c]: (int(p.capacity[i, c]),
                                      int(p.used[i, c]))
                         for c in cols.tolist()}
            parent = int(p.parent[i])
            root = int(p.root[i])
            out[self._uuid[row]] = ProviderSummary(
                uuid=self._uuid[row],
                parent_provider_uuid=(self._uuid.get(parent)
                                      if parent >= 0 else None),
                root_provider_uuid=self._uuid.get(root, self._uuid[row]),
                resources=resources,
                traits=sorted(trait_name[b] for b in _bits_set(p.bits[i])))
        return out

    def summary_names(self):
        """({index column: resource class name}, {index bit: trait
        name}) for the classes and traits the provider summaries show
        (one catalog read). Only those of these providers: the index
        keeps every id it has seen, some since deleted from the
        catalog."""
        p = self._providers
        if p is None:
            raise ValueError("a lean result has no provider summaries")
        cols = np.flatnonzero(p.has_inv.any(axis=0)).tolist()
        bits = _bits_set(np.bitwise_or.reduce(p.bits, axis=0))

        def read(txn):
            return ({c: txn.catalog.rc_name(txn, p.col_rc[c])
                     for c in cols},
                    {b: txn.catalog.trait_name(txn, p.bit_trait[b])
                     for b in bits})
        return self._store.read(read)


def _with_trimmed(index, used_rows, trimmed):
    """The rows ``used_rows`` and those the ``trimmed`` candidates use in
    the same trees."""
    size = index.size
    kept_roots = np.zeros(size, bool)
    kept_roots[index.root[used_rows]] = True
    others = distinct_rows(trimmed, size)
    others = others[kept_roots[index.root[others]]]
    return distinct_rows((used_rows, others), size)


def _bits_set(words):
    out = []
    for w, word in enumerate(words.tolist()):
        while word:
            low = word & -word
            out.append(w * 64 + low.bit_length() - 1)
            word ^= low
    return out
