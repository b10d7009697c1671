"""Capacity arithmetic over a scheduler's provider index: utilisation per
resource class, per-host fill, how many more instances of a flavor fit,
which resource runs out first, and stranded capacity.

A flavor's resources are what the scheduler would ask placement for
(scheduler.resource_request, all groups added up). A host fits ``k`` more
when each of those classes has room for ``k`` more in its provider tree:
per provider, ``floor(free / amount)`` where the amount respects the
inventory's min_unit, max_unit and step_size, added up over the tree (the
unsuffixed group may take each class from any provider of the tree). A
class the compute trees lack but sharing providers (MISC_SHARES_VIA_
AGGREGATE) offer is counted once per group of hosts, against the sharing
providers of those hosts' aggregates. Traits and host filters are not
applied: this is room, not a scheduling decision.
"""

import dataclasses

import numpy as np

from cloudfile.loader import stable_uuid
from scheduler import request_spec, resource_request

# Float capacity ((total - reserved) x ratio) against integer usage.
_EPSILON = 1e-9


def flavor_resources(flavor, conf, table):
    """{resource class: amount} one instance of ``flavor`` (a dict in
    request spec form) asks placement for."""
    spec = request_spec.RequestSpec.from_dict({"flavor": flavor})
    with table.lock:
        rr = resource_request.from_spec(spec, conf, table)
    out = {}
    for group in rr.groups.values():
        for rc, amount in group.resources.items():
            if amount:
                out[rc] = out.get(rc, 0) + amount
    return out


def cell_name(cell_uuid):
    """A cell's name where the cloud file made its uuid from one of the
    usual names (a template's cell-1, cell-2, ...; cell1, cell2, ...):
    uuids say little to a reader. Its uuid otherwise."""
    for n in range(1, 65):
        for name in (f"cell-{n}", f"cell{n}"):
            if stable_uuid("cell", name) == cell_uuid:
                return name
    return cell_uuid


@dataclasses.dataclass
class Fit:
    """How many more instances fit in a group of hosts."""
    hosts: int
    fits: int
    # Per class: how many would fit if only that class counted.
    by_class: dict
    # The class that runs out first (None: nothing asked).
    limiting: str | None


class CloudView:
    """Per-host capacity and usage of the compute hosts in a scheduler's
    index and host table. Build it once per cloud: provider trees do not
    change during a simulation; usage is read fresh on every call."""

    def __init__(self, scheduler):
        self.scheduler = scheduler
        index = scheduler.engine.index
        self.index = index
        with index.lock:
            rows = np.flatnonzero(index.alive[:index.size])
            roots = index.root[rows]
            host_rows = scheduler.host_rows_of(roots)
            compute = host_rows >= 0
            self.host_rows, host_of = np.unique(host_rows[compute],
                                                return_inverse=True)
            self.rows = rows[compute]  # providers in a compute tree
            self.host_of = host_of  # provider -> position in host_rows
            self.sharing_rows = rows[index.sharing()[rows]]
            self.names = scheduler.store.read(
                lambda txn: [txn.catalog.rc_name(txn, rc)
                             for rc in index.col_rc])
        self.col = {name: c for c, name in enumerate(self.names)}
        self._taking = {}

    @property
    def size(self):
        return len(self.host_rows)

    def classes(self):
        """Resource classes some compute tree has inventory of."""
        idx = self.index
        with idx.lock:
            has = idx.has_inv[self.rows].any(axis=0)
        return [n for n, c in self.col.items() if c < len(has) and has[c]]

    def _per_host(self, column):
        return np.bincount(self.host_of, weights=column, minlength=self.size)

    def host_usage(self):
        """{class: (capacity per host, used per host)} over each tree."""
        idx = self.index
        out = {}
        with idx.lock:
            for rc in self.classes():
                c = self.col[rc]
                has = idx.has_inv[self.rows, c]
                cap = np.where(has, idx.cap[self.rows, c], 0.0)
                used = np.where(has, idx.used[self.rows, c], 0)
                out[rc] = (self._per_host(cap), self._per_host(used))
        return out

    def utilisation(self, usage=None):
        """{class: used / capacity} over the compute trees (of
        ``usage``, a host_usage() read once for several figures)."""
        out = {}
        for rc, (cap, used) in (usage or self.host_usage()).items():
            total = float(cap.sum())
            out[rc] = float(used.sum()) / total if total else 0.0
        return out

    def group_utilisation(self, masks, usage=None):
        """{label: {class: used / capacity}} over the hosts of each
        mask of ``masks`` ({label: host mask}); a class the group has
        no capacity of is left out."""
        usage = usage or self.host_usage()
        labels = list(masks)
        if not labels:
            return {}
        member = np.vstack([masks[label] for label in labels]).astype(float)
        out = {label: {} for label in labels}
        for rc, (cap, used) in usage.items():
            caps, useds = member @ cap, member @ used
            for label, c, u in zip(labels, caps.tolist(), useds.tolist(),
                                   strict=True):
                if c > 0:
                    out[label][rc] = u / c
        return out

    def totals(self):
        """{class: (capacity, used)} over the compute trees."""
        return {rc: (float(cap.sum()), float(used.sum()))
                for rc, (cap, used) in self.host_usage().items()}

    def _fits_rows(self, rows, rc, amount):
        c = self.col.get(rc)
        if c is None or not len(rows):
            return np.zeros(len(rows))
        ok, cap = self._takes(rows, c, amount)
        free = cap - self.index.used[rows, c]
        return np.where(ok, np.floor((free + _EPSILON) / amount), 0.0)

    def _takes(self, rows, c, amount):
        """(whether each provider of ``rows`` takes ``amount`` of column
        ``c`` at all, its capacity). Inventories stay put like the trees
        (only usage moves), so this is worked out once per amount: a
        simulation asks it at every NoValidHost."""
        which = ("trees" if rows is self.rows else
                 "sharing" if rows is self.sharing_rows else None)
        found = self._taking.get((which, c, amount))
        if found is None:
            idx = self.index
            ok = idx.has_inv[rows, c] & (amount >= idx.min_unit[rows, c]) & (
                amount <= idx.max_unit[rows, c]) & (
                amount % np.maximum(idx.step[rows, c], 1) == 0)
            found = (ok, idx.cap[rows, c])
            if which is not None:
                self._taking[(which, c, amount)] = found
        return found

    def host_fits(self, resources):
        """(fits per host, {class: fits per host}, {class: sharing
        fits per sharing provider row}) for ``resources``."""
        by_class, shared = {}, {}
        with self.index.lock:
            for rc, amount in resources.items():
                per_host = self._per_host(
                    self._fits_rows(self.rows, rc, amount))
                c = self.col.get(rc)
                sharing = self._fits_rows(self.sharing_rows, rc, amount)
                if c is not None and len(sharing) and sharing.any():
                    # Hosts without the class draw on the pool instead.
                    shared[rc] = sharing
                    in_trees = self._per_host(
                        self.index.has_inv[self.rows, c]).astype(bool)
                    per_host = np.where(in_trees, per_host, np.inf)
                by_class[rc] = per_host
        if not by_class:
            return np.zeros(self.size), by_class, shared
        fits = np.min(np.vstack(list(by_class.values())), axis=0)
        return fits, by_class, shared

    def group_fit(self, resources, mask=None, fitted=None):
        """A Fit for the hosts of ``mask`` (a boolean array over the
        hosts; default all). Hosts that draw a class on sharing
        providers are bounded, together, by what the pool holds."""
        fits, by_class, shared = fitted or self.host_fits(resources)
        if mask is None:
            mask = np.ones(self.size, bool)
        draws = np.zeros(self.size, bool)
        totals = {}
        for rc, per_host in by_class.items():
            pooled = mask & ~np.isfinite(per_host)
            draws |= pooled
            totals[rc] = float(per_host[mask & ~pooled].sum()) + (
                float(shared[rc].sum()) if pooled.any() else 0.0)
        own = mask & ~draws
        count = float(fits[own].sum())
        binding = _Binding(by_class, totals)
        binding.hosts(fits, own)
        if draws.any():
            drawn = fits[draws]
            pool_rc = min(shared, key=lambda rc: (float(shared[rc].sum()),
                                                  rc))
            pool = float(shared[pool_rc].sum())
            wanted = (float(drawn[np.isfinite(drawn)].sum())
                      if np.isfinite(drawn).all() else pool)
            if wanted < pool:
                binding.hosts(fits, draws)
            else:
                binding.pool(pool_rc, pool)
            count += min(wanted, pool)
        return Fit(hosts=int(mask.sum()), fits=int(count),
                   by_class={rc: int(v) for rc, v in totals.items()},
                   limiting=binding.first())

    def stranded(self, flavors):
        """{class: (free, stranded)}: free capacity on hosts where no
        flavor of ``flavors`` (resource dicts) fits any more."""
        if not flavors:
            return {}
        none_fit = np.ones(self.size, bool)
        for resources in flavors:
            fits, _, _ = self.host_fits(resources)
            none_fit &= ~(fits >= 1)
        out = {}
        for rc, (cap, used) in self.host_usage().items():
            free = np.maximum(cap - used, 0.0)
            out[rc] = (float(free.sum()), float(free[none_fit].sum()))
        return out

    def fill(self):
        """{class: used / capacity per host} (hosts with capacity)."""
        out = {}
        for rc, (cap, used) in self.host_usage().items():
            has = cap > 0
            out[rc] = used[has] / cap[has]
        return out

    def groups(self, cells=True):
        """{label: host mask} per availability zone, per host aggregate
        and (``cells``) per cell: "zone east", "aggregate rack-1",
        "cell cell1"."""
        table = self.scheduler.table
        out = {}
        with table.lock:
            for zone, mask in self.zone_masks().items():
                out[f"zone {zone}"] = mask
            member = table.aggregates[self.host_rows]
            for col, record in enumerate(table.agg_records):
                if record is None or col >= member.shape[1]:
                    continue
                mask = member[:, col].astype(bool)
                if mask.any():
                    out[f"aggregate {record.name or record.uuid}"] = mask
            if cells:
                codes = table.cell[self.host_rows]
                for code in sorted(set(codes.tolist()) - {-1}):
                    name = cell_name(table.cells.name(code))
                    out[f"cell {name}"] = codes == code
        return out

    def zone_masks(self):
        """{zone: host mask}; a host in several zones is in each."""
        table = self.scheduler.table
        with table.lock:
            zones = [table.zone(int(r)) or "" for r in self.host_rows]
        names = sorted({z for joined in zones for z in joined.split(",")
                        if z})
        return {zone: np.array([zone in joined.split(",")
                                for joined in zones], bool)
                for zone in names}

    def out_of_room(self, resources, mask=None, fitted=None):
        """Why no host of ``mask`` takes one more of ``resources``: the
        class that no room is left of on the most of those hosts (the
        tie to the first name); None when some host has room for all."""
        fits, by_class, shared = fitted or self.host_fits(resources)
        if mask is None:
            mask = np.ones(self.size, bool)
        room = (self.group_fit(resources, mask, (fits, by_class, shared))
                .fits if shared else (fits[mask] >= 1).any())
        if room:
            return None
        full = {}
        for rc, per_host in by_class.items():
            if rc in shared and float(shared[rc].sum()) < 1:
                per_host = np.where(np.isinf(per_host), 0.0, per_host)
            full[rc] = int(np.count_nonzero(mask & (per_host < 1)))
        if not full or not max(full.values()):
            return None
        return min(full, key=lambda rc: (-full[rc], rc))


class _Binding:
    """Which class limits a group's count. On each host the count stops
    at the class with the least room (the binding one); the group's
    limit is the class that binds the most of the instances that still
    fit, then the most hosts (a full group), then the least room alone,
    then the name. A class with little room in all but on hosts that
    another class has already filled does not limit the count."""

    def __init__(self, by_class, totals):
        self.by_class = by_class
        self.totals = totals
        self.instances = dict.fromkeys(by_class, 0.0)
        self.host_count = dict.fromkeys(by_class, 0)

    def hosts(self, fits, mask):
        """Credit each class with the hosts of ``mask`` it binds on."""
        for rc, per_host in self.by_class.items():
            binds = mask & (per_host == fits)
            self.instances[rc] += float(fits[binds].sum())
            self.host_count[rc] += int(binds.sum())

    def pool(self, rc, instances):
        """A sharing pool of ``rc`` that ends the pooled hosts' count."""
        self.instances[rc] += instances
        self.host_count[rc] += 1

    def first(self):
        if not self.by_class:
            return None
        return min(self.by_class, key=lambda rc: (
            -self.instances[rc], -self.host_count[rc], self.totals[rc],
            rc))
