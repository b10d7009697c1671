"""PciPassthroughFilter: does the node have the PCI devices the request
asks for?

The node's ``pci_device_pools`` are counted devices with tags: a pool is
a dict with ``count`` and its tags (vendor_id, product_id, dev_type,
physical_network, numa_node...), flat or, as Nova's PciDevicePool
object has them, partly under ``tags``. A request (count, spec) is met
when the pools matching its spec hold at least ``count`` devices in all.
A pool matches a spec when it matches one of the spec's dicts; it
matches a dict when each key's value equals the pool's (text compared
case-insensitively; a list value needs every item in the pool's list).

As Nova does, pools of physical functions (dev_type ``type-PF``), of
vDPA devices (``vdpa``) and of remote managed devices
(``remote_managed`` true) count only for a spec that asks for them.
Each request is judged on its own, not after the others took their
devices (Nova's filter does the same).

Differences from Nova: NUMA affinity of devices is not considered here
(NUMATopologyFilter does not either), and with [filter_scheduler]
pci_in_placement the pools are not narrowed to the providers placement
allocated.
"""

import numpy as np

from filters import base

_TRUE = frozenset(("1", "t", "true", "on", "y", "yes"))
_PF = "type-PF"
_VDPA = "vdpa"


def _true(value):
    # oslo's bool_from_string, which Nova applies to remote_managed.
    return value is not None and str(value).strip().lower() in _TRUE


def _lower(value):
    return value.lower() if isinstance(value, str) else value


def pool_tags(pool):
    tags = {k: v for k, v in pool.items() if k not in ("count", "tags")}
    tags.update(pool.get("tags") or {})
    return tags


def _dict_matches(spec, tags):
    for key, want in spec.items():
        have = tags.get(key)
        if isinstance(want, list) and isinstance(have, list):
            if not all(item in have for item in want):
                return False
        elif _lower(want) != _lower(have):
            return False
    return True


class _Need:
    """One PCI request, with what it allows of the special pools."""

    def __init__(self, request):
        self.count = request.count
        self.specs = [dict(s) for s in request.spec]
        types = {s.get("dev_type") for s in self.specs}
        self.pf = _PF in types
        self.vdpa = _VDPA in types
        self.remote = any(_true(s.get("remote_managed"))
                          for s in self.specs)
        self.label = request.alias_name or str(self.specs)

    def usable(self, tags):
        kind = tags.get("dev_type")
        if kind == _PF and not self.pf:
            return False
        if kind == _VDPA and not self.vdpa:
            return False
        if _true(tags.get("remote_managed")) and not self.remote:
            return False
        return any(_dict_matches(s, tags) for s in self.specs)

    def available(self, pools):
        return sum(int(p.get("count", 0)) for p, tags in pools
                   if self.usable(tags))


def needs_of(request):
    key = ("PciPassthroughFilter", "needs")
    needs = request.memo.get(key)
    if needs is None:
        needs = request.memo[key] = [_Need(r)
                                     for r in request.spec.pci_requests]
    return needs


def _pools(table, row):
    node = table.node(row)
    pools = (node.pci_device_pools if node is not None else None) or ()
    return [(p, pool_tags(p)) for p in pools]


class PciPassthroughFilter(base.BaseFilter):
    name = "PciPassthroughFilter"
    RUN_ON_REBUILD = False

    def mask(self, request, rows):
        needs = needs_of(request)
        if not needs:
            return base.all_pass(rows)
        table = request.table

        def passes(row):
            pools = _pools(table, row)
            return bool(pools) and all(n.available(pools) >= n.count
                                       for n in needs)

        return np.fromiter((passes(r) for r in rows), bool,
                           count=len(rows))

    def why(self, request, row):
        pools = _pools(request.table, row)
        for need in needs_of(request):
            have = need.available(pools)
            if have < need.count:
                return (f"PCI request {need.label} wants {need.count} "
                        f"devices; the host has {have} that match")
        return super().why(request, row)
