"""The provider index: an in-memory, columnar copy of what candidate
searches read.

One row per provider: tree (parent and root rows), inventory and usage per
resource class (2-D numpy arrays, a column per class in use), traits (a
bitset per row) and aggregates (member rows per aggregate). Searches build
boolean masks over all rows at once; nothing is scanned in SQL.

The database stays the truth. The index follows the ``provider_changes``
log as every cache of the database follows its log
(placement.db.follower: load, catch up, own commits, full reload in
doubt); what is its own is how it applies a change:

- after each commit of its own store it is told what changed
  (placement.db.store.ChangeSet): usage deltas are applied at once, other
  changes mark providers for reloading;
- before each search, :meth:`sync` reads the log rows it has not seen
  (one indexed query when nothing changed) and reloads only the providers
  they name, in one snapshot: only their usage when that is all the rows
  say changed (another process's claims, the common case).

A stale index can only propose a candidate that the claim then refuses,
and it never serves a state it failed to reach (the follower's full
reload when applying a change fails part way).
"""

import logging
import math
import time

import numpy as np
import os_traits
import sqlalchemy as sa

from placement.db import fastsql, follower, tables

LOG = logging.getLogger(__name__)

SHARING_TRAIT = os_traits.MISC_SHARES_VIA_AGGREGATE

_rp = tables.resource_providers
_inv = tables.inventories
_alloc = tables.allocations
_rp_trait = tables.resource_provider_traits
_rp_agg = tables.resource_provider_aggregates
_agg = tables.placement_aggregates


# What a (re)load reads: providers, inventories, usage, traits and
# aggregates, each with the column that picks some providers' rows.
_LOAD_QUERIES = (
    (sa.select(_rp.c.id, _rp.c.uuid, _rp.c.name, _rp.c.parent_provider_id,
               _rp.c.root_provider_id), _rp.c.id),
    (sa.select(_inv), _inv.c.resource_provider_id),
    (sa.select(_alloc.c.resource_provider_id, _alloc.c.resource_class_id,
               sa.func.sum(_alloc.c.used).label("used"))
     .group_by(_alloc.c.resource_provider_id, _alloc.c.resource_class_id),
     _alloc.c.resource_provider_id),
    (sa.select(_rp_trait.c.resource_provider_id, _rp_trait.c.trait_id),
     _rp_trait.c.resource_provider_id),
    (sa.select(_rp_agg.c.resource_provider_id, _agg.c.uuid)
     .select_from(_rp_agg.join(_agg, _agg.c.id == _rp_agg.c.aggregate_id)),
     _rp_agg.c.resource_provider_id),
)
# The same for a list of provider ids: the catch-up after another
# process's commit, run on the raw cursor (it follows every foreign claim).
_LOAD_BY_IDS = tuple(
    fastsql.Fast(query.where(column.in_(sa.bindparam("ids", expanding=True))))
    for query, column in _LOAD_QUERIES)
_USAGE_BY_IDS = _LOAD_BY_IDS[2]
_IDS_CHUNK = 500


# Provider x resource class arrays (kept column-major), and the value
# new cells start with where it is not 0.
_PER_CLASS = ("has_inv", "total", "reserved", "min_unit", "max_unit", "used",
              "cap", "ratio", "step", "room")
# ``room`` of a cell without inventory: no amount fits.
NO_ROOM = -(2 ** 62)
_FILL = {"step": 1, "room": NO_ROOM}
# Capacity is kept below this, so that floor(cap) - used stays a valid
# int64. The inventory bounds (every integer field and the ratio at most
# 2 ** 31 - 1: placement.objects.inventories) keep every capacity below
# it; a row written past them is clipped, not wrapped around.
CAP_LIMIT = float(2 ** 62)


def capacity(total, reserved, ratio):
    """(total - reserved) * ratio as the index holds it, within 0 and
    CAP_LIMIT (0 for NaN). A valid inventory's capacity is above -1, and
    placement shows one below 0 as 0 (int() truncates toward 0)."""
    cap = (total - reserved) * ratio
    if cap != cap:  # NaN
        return 0.0
    return max(0.0, min(cap, CAP_LIMIT))


class ProviderIndex(follower.Follower):
    """Columnar provider state for one store, following its
    provider_changes log (placement.db.follower.Follower: sync, sync_in,
    reload, loaded; ``dirty`` holds ids of providers to reload).
    Thread-safe: every public method holds ``lock``; searches hold it
    while they read the arrays. ``clock``: the change cursor's (how long
    a gap is asked for)."""

    what = "candidates index"
    logger = LOG

    def __init__(self, store, clock=time.monotonic):
        super().__init__(store, follower.PROVIDER_LOG, cursor_clock=clock)

    # -- state -------------------------------------------------------------

    def _clear(self):
        super()._clear()
        self.size = 0  # rows ever used: arrays are valid up to here
        self.row_of_id = {}
        self.row_of_uuid = {}
        self.free_rows = []
        self.ids = np.full(0, -1, np.int64)
        self.uuids = []
        # A lean result holds on to ``uuids`` (uuids_snapshot); the next
        # change then copies the list first instead of changing it.
        self._uuids_shared = False
        self.names = []
        self.alive = np.zeros(0, bool)
        self.parent = np.zeros(0, np.int32)
        self.root = np.zeros(0, np.int32)
        self.rc_col = {}  # resource class id -> column
        self.col_rc = []  # column -> resource class id
        self.has_inv = np.zeros((0, 0), bool)
        self.total = np.zeros((0, 0), np.int64)
        self.reserved = np.zeros((0, 0), np.int64)
        self.min_unit = np.zeros((0, 0), np.int64)
        self.max_unit = np.zeros((0, 0), np.int64)
        self.step = np.ones((0, 0), np.int64)
        self.ratio = np.zeros((0, 0), np.float64)
        self.used = np.zeros((0, 0), np.int64)
        self.cap = np.zeros((0, 0), np.float64)  # (total - reserved) * ratio
        # The largest amount one allocation can still take: the lower of
        # floor(cap) - used and max_unit (NO_ROOM without inventory).
        # Kept with ``used``, so that a search compares one array.
        self.room = np.full((0, 0), NO_ROOM, np.int64)
        self.trait_bit = {}  # trait id -> bit number
        self.bits = np.zeros((0, 1), np.uint64)
        self.agg_rows = {}  # aggregate uuid -> set of rows
        self.row_aggs = []  # row -> frozenset of aggregate uuids
        self.sharing_trait_id = None
        # Moves on every change, and keeps counting across full reloads so
        # that a version is never seen twice for different states.
        self.version = getattr(self, "version", 0) + 1
        # Moves on tree, trait, aggregate and provider changes; keeps
        # counting across full reloads too.
        self.structure_version = getattr(self, "structure_version", 0) + 1
        self._derived = {}

    @property
    def gaps(self):
        """Missing sequence numbers still asked for -> when first missed."""
        return self.cursor.gaps

    @property
    def rows(self):
        return self.size

    def _grow(self, need):
        capacity = len(self.alive)
        if need <= capacity:
            return
        new = max(need, int(capacity * 1.5) + 64)
        extra = new - capacity

        def pad(array, fill):
            shape = (extra,) + array.shape[1:]
            return np.concatenate([array, np.full(shape, fill, array.dtype)])

        self.ids = pad(self.ids, -1)
        self.alive = pad(self.alive, False)
        self.parent = pad(self.parent, -1)
        self.root = pad(self.root, -1)
        for name in _PER_CLASS:
            fill = _FILL.get(name, 0)
            # Column-major: a search reads whole columns (one class over
            # every provider), contiguous this way.
            setattr(self, name, np.asfortranarray(pad(getattr(self, name),
                                                      fill)))
        self.bits = pad(self.bits, 0)
        self._own_uuids()
        self.uuids.extend([None] * extra)
        self.names.extend([None] * extra)
        self.row_aggs.extend([frozenset()] * extra)

    def _column(self, rc_id):
        col = self.rc_col.get(rc_id)
        if col is not None:
            return col
        col = len(self.col_rc)
        self.rc_col[rc_id] = col
        self.col_rc.append(rc_id)
        for name in _PER_CLASS:
            array = getattr(self, name)
            fill = _FILL.get(name, 0)
            extra = np.full((array.shape[0], 1), fill, array.dtype)
            setattr(self, name, np.asfortranarray(
                np.concatenate([array, extra], axis=1)))
        return col

    def _bit(self, trait_id):
        bit = self.trait_bit.get(trait_id)
        if bit is None:
            bit = len(self.trait_bit)
            self.trait_bit[trait_id] = bit
            words = bit // 64 + 1
            if words > self.bits.shape[1]:
                extra = np.zeros((self.bits.shape[0], 1), np.uint64)
                self.bits = np.concatenate([self.bits, extra], axis=1)
        return bit

    # -- loading -----------------------------------------------------------

    def _load_all(self, txn):
        self._load(txn, None)

    def _refresh(self, txn, entries):
        """Reload the providers the log ``entries`` (provider id, usage
        only) and ``dirty`` name: only the usage of known providers
        whose every entry says only usage changed."""
        reload = set(self.dirty)
        usage = set()
        for rp_id, usage_only in entries:
            (usage if usage_only and rp_id in self.row_of_id
             else reload).add(rp_id)
        usage -= reload
        if reload:
            self._load(txn, sorted(reload))
        if usage:
            self._load_usage(txn, sorted(usage))

    def _load_usage(self, txn, ids):
        """Read again the usage of these known providers (their claims
        changed, nothing else did)."""
        rows = [self.row_of_id[rp_id] for rp_id in ids]
        self.used[rows] = 0
        self._set_usage(self.row_of_id,
                        _USAGE_BY_IDS.rows_in(txn, "ids", ids, _IDS_CHUNK))
        self._set_room(rows)
        self.version += 1

    def _apply_commit(self, changes):
        """Usage deltas into ``used`` and ``room``; other changes mark
        their providers for the next sync."""
        for (rp_id, rc_id), delta in changes.usage.items():
            row = self.row_of_id.get(rp_id)
            col = self.rc_col.get(rc_id)
            if row is None or col is None or not self.has_inv[row, col]:
                self.dirty.add(rp_id)
            else:
                self.used[row, col] += delta
                self.room[row, col] = min(
                    math.floor(self.cap[row, col]) - self.used[row, col],
                    self.max_unit[row, col])
        self.dirty.update(changes.providers)
        self.dirty.update(changes.deleted)
        self.version += 1

    def _load(self, txn, ids):
        """(Re)load the providers with these ids (all when None). A reload
        that changed only usage (another process's claims, the common
        case) keeps the structure version and the derived structures."""
        before = self._structure_of(ids)
        self._load_rows(txn, ids)
        if before is None or before != self._structure_of(ids):
            self.structure_version += 1
            self._derived = {}

    def _structure_of(self, ids):
        """Everything but usage of these known providers, to compare (None
        when some are not known: a new provider changes the structure)."""
        if ids is None:
            return None
        rows = [self.row_of_id.get(rp_id) for rp_id in ids]
        if None in rows:
            return None
        arrays = (self.parent, self.root, self.has_inv, self.total,
                  self.reserved, self.min_unit, self.max_unit, self.step,
                  self.ratio, self.bits)
        return (len(self.row_of_id), tuple(a.shape[1:] for a in arrays),
                [a[rows].tobytes() for a in arrays],
                [(self.uuids[r], self.names[r], self.row_aggs[r])
                 for r in rows])

    def _load_rows(self, txn, ids):
        if ids is None:
            found, inv, usage, trait_rows, agg_rows = (
                txn.execute(query).all() for query, _ in _LOAD_QUERIES)
        else:
            found, inv, usage, trait_rows, agg_rows = (
                fast.rows_in(txn, "ids", ids, _IDS_CHUNK)
                for fast in _LOAD_BY_IDS)
        self.sharing_trait_id = txn.catalog.trait_ids(
            txn, [SHARING_TRAIT])[SHARING_TRAIT]
        self._apply(ids, found, inv, usage, trait_rows, agg_rows)
        # A parent or root this batch did not bring (only possible when the
        # index missed a change) is loaded too.
        missing = {r.parent_provider_id for r in found} | {
            r.root_provider_id for r in found}
        missing = sorted(m for m in missing
                         if m is not None and m not in self.row_of_id)
        if missing:
            self._load_rows(txn, missing)
        self._link(found)

    def _apply(self, ids, found, inv, usage, trait_rows, agg_rows):
        present = {r.id for r in found}
        for rp_id in (ids or ()):
            if rp_id not in present:
                self._drop(rp_id)
        rows = {}
        for r in found:
            row = self._row_for(r.id)
            rows[r.id] = row
            if self.uuids[row] != r.uuid:
                # (A reload of a known provider changes nothing here: no
                # copy of a list a result shares.)
                self._own_uuids()
                self.uuids[row] = r.uuid
            self.names[row] = r.name
            self.row_of_uuid[r.uuid] = row
            self.has_inv[row] = False
            self.used[row] = 0
            self.bits[row] = 0
            self._set_aggs(row, frozenset())
        for r in inv:
            row = rows[r.resource_provider_id]
            col = self._column(r.resource_class_id)
            self.has_inv[row, col] = True
            self.total[row, col] = r.total
            self.reserved[row, col] = r.reserved
            self.min_unit[row, col] = r.min_unit
            self.max_unit[row, col] = r.max_unit
            self.step[row, col] = r.step_size
            self.ratio[row, col] = r.allocation_ratio
            self.cap[row, col] = capacity(r.total, r.reserved,
                                          r.allocation_ratio)
        self._set_usage(rows, usage)
        self._set_room(list(rows.values()))
        for r in trait_rows:
            row = rows[r.resource_provider_id]
            bit = self._bit(r.trait_id)
            self.bits[row, bit // 64] |= np.uint64(1 << (bit % 64))
        aggs = {}
        for r in agg_rows:
            aggs.setdefault(rows[r.resource_provider_id], set()).add(r.uuid)
        for row, members in aggs.items():
            self._set_aggs(row, frozenset(members))
        self.version += 1

    def _set_usage(self, row_of, usage):
        """Usage rows (provider id, class id, used) into ``used``, for
        the providers ``row_of`` (id -> row) maps."""
        for r in usage:
            row = row_of.get(r.resource_provider_id)
            col = self.rc_col.get(r.resource_class_id)
            if row is not None and col is not None:
                self.used[row, col] = int(r.used)

    def uuids_snapshot(self):
        """The row -> uuid list as it is now, for a reader to keep: later
        changes go to a copy (copy-on-write: no copy per search)."""
        self._uuids_shared = True
        return self.uuids

    def _own_uuids(self):
        if self._uuids_shared:
            self.uuids = list(self.uuids)
            self._uuids_shared = False

    def _set_room(self, rows):
        """Recompute ``room`` on these rows, every class."""
        cap = np.floor(self.cap[rows]).astype(np.int64)
        self.room[rows] = np.where(
            self.has_inv[rows],
            np.minimum(cap - self.used[rows], self.max_unit[rows]), NO_ROOM)

    def _link(self, found):
        """Parent and root rows (once every provider of the batch has one)."""
        for r in found:
            row = self.row_of_id[r.id]
            self.parent[row] = (self.row_of_id[r.parent_provider_id]
                                if r.parent_provider_id is not None else -1)
            self.root[row] = self.row_of_id[r.root_provider_id]

    def _row_for(self, rp_id):
        row = self.row_of_id.get(rp_id)
        if row is not None:
            return row
        if self.free_rows:
            row = self.free_rows.pop()
        else:
            row = self.size
            self._grow(row + 1)
            self.size += 1
        self.row_of_id[rp_id] = row
        self.ids[row] = rp_id
        self.alive[row] = True
        return row

    def _drop(self, rp_id):
        row = self.row_of_id.pop(rp_id, None)
        if row is None:
            return
        self.row_of_uuid.pop(self.uuids[row], None)
        self._set_aggs(row, frozenset())
        self.ids[row] = -1
        self.alive[row] = False
        self.has_inv[row] = False
        self.used[row] = 0
        self.room[row] = NO_ROOM
        self.bits[row] = 0
        self.parent[row] = -1
        self.root[row] = -1
        self._own_uuids()
        self.uuids[row] = None
        self.names[row] = None
        self.free_rows.append(row)

    def _set_aggs(self, row, members):
        for agg in self.row_aggs[row] - members:
            rows = self.agg_rows.get(agg)
            if rows is not None:
                rows.discard(row)
                if not rows:
                    del self.agg_rows[agg]
        for agg in members - self.row_aggs[row]:
            self.agg_rows.setdefault(agg, set()).add(row)
        self.row_aggs[row] = members

    # -- masks and derived structures ---------------------------------------

    def derived(self, key, build):
        """A structure computed from the index, cached until the trees,
        traits or aggregates change."""
        value = self._derived.get(key)
        if value is None:
            value = self._derived[key] = build()
        return value

    def fits(self, col, amount):
        """Rows whose inventory of column ``col`` can take ``amount`` (at
        least 1, as placement asks) in one allocation: capacity,
        max_unit, min_unit and step size."""
        n = self.size
        ok = self.room[:n, col] >= amount
        if not self.derived(("plain_units", col), lambda: not (
                self.has_inv[:n, col] & ((self.min_unit[:n, col] > 1)
                                         | (self.step[:n, col] != 1))).any()):
            ok &= ((self.min_unit[:n, col] <= amount)
                   & (amount % self.step[:n, col] == 0))
        return ok

    def trait_mask(self, trait_ids):
        """uint64 words with the bits of ``trait_ids`` (unknown to the index:
        no provider has them; they add no bit)."""
        mask = np.zeros(self.bits.shape[1], np.uint64)
        for trait_id in trait_ids:
            bit = self.trait_bit.get(trait_id)
            if bit is not None:
                mask[bit // 64] |= np.uint64(1 << (bit % 64))
        return mask

    def has_any_trait(self, trait_ids):
        """Rows that have at least one of ``trait_ids`` (read-only: kept
        with the derived structures, as every scheduler request forbids
        the same COMPUTE_STATUS_DISABLED)."""
        def build():
            mask = self.trait_mask(trait_ids)
            found = (self.bits[:self.size] & mask).any(axis=1)
            found.flags.writeable = False
            return found
        return self.derived(("any_trait", frozenset(trait_ids)), build)

    def sharing(self):
        """Rows of sharing providers (MISC_SHARES_VIA_AGGREGATE)."""
        return self.derived(
            "sharing", lambda: self.has_any_trait([self.sharing_trait_id])
            & self.alive[:self.size])

    def in_aggregates(self, agg_uuids):
        """Rows in at least one of ``agg_uuids``."""
        mask = np.zeros(self.size, bool)
        for agg in agg_uuids:
            rows = self.agg_rows.get(agg)
            if rows:
                mask[list(rows)] = True
        return mask

    def has_trees(self):
        """Whether any provider has a parent."""
        return self.derived(
            "has_trees",
            lambda: bool((self.parent[:self.size][self.alive[:self.size]]
                          >= 0).any()))

    def anchors(self):
        """{sharing provider row: array of the root rows it can serve}: the
        roots of every provider sharing an aggregate with it."""
        def build():
            out = {}
            for row in np.flatnonzero(self.sharing()):
                members = set()
                for agg in self.row_aggs[row]:
                    members |= self.agg_rows.get(agg, set())
                if members:
                    out[int(row)] = np.unique(self.root[list(members)])
            return out
        return self.derived("anchors", build)

    def tree_rows(self, roots):
        """Rows of every provider in the trees of these root rows."""
        def build():
            roots_of = np.where(self.alive[:self.size],
                                self.root[:self.size], -1)
            order = np.argsort(roots_of, kind="stable")
            return roots_of[order], order
        sorted_roots, order = self.derived("tree_order", build)
        roots = np.asarray(roots, np.int64)
        left = np.searchsorted(sorted_roots, roots, "left")
        right = np.searchsorted(sorted_roots, roots, "right")
        if not len(roots):
            return np.empty(0, np.int64)
        return np.concatenate([order[a:b] for a, b in zip(left, right,
                                                          strict=True)])

    def depths(self):
        """(depth per row, ancestors): ancestors[d, row] is the row's
        ancestor at depth d (-1 above its own depth)."""
        def build():
            n = self.size
            depth = np.zeros(n, np.int32)
            parent = self.parent[:n]
            current = parent.copy()
            while True:
                has = current >= 0
                if not has.any():
                    break
                depth[has] += 1
                current = np.where(has, parent[np.maximum(current, 0)], -1)
            top = int(depth.max()) + 1 if n else 1
            ancestors = np.full((top, n), -1, np.int32)
            rows = np.arange(n, dtype=np.int32)
            walk = rows.copy()
            for _ in range(top):
                ok = walk >= 0
                ancestors[depth[walk[ok]], rows[ok]] = walk[ok]
                walk = np.where(ok, parent[np.maximum(walk, 0)], -1)
            return depth, ancestors
        return self.derived("depths", build)
