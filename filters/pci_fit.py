"""PCI fitting: which of a node's PCI pools a request's devices may come
from, and how many they hold.

The maths PciPassthroughFilter judges hosts by and scheduler.host_devices
takes a placed instance's devices out by, so that both count the same
pools.

The node's ``pci_device_pools`` are counted devices with tags: a pool is
a dict with ``count`` and its tags (vendor_id, product_id, dev_type,
physical_network, numa_node...), flat or, as Nova's PciDevicePool
object has them, partly under ``tags``. A request (count, spec) may use
the pools matching its spec. A pool matches a spec when it matches one
of the spec's dicts; it matches a dict when each key's value equals the
pool's (text compared case-insensitively; a list value needs every item
in the pool's list).

As Nova does, pools of physical functions (dev_type ``type-PF``), of
vDPA devices (``vdpa``) and of remote managed devices
(``remote_managed`` true) count only for a spec that asks for them.
"""

_TRUE = frozenset(("1", "t", "true", "on", "y", "yes"))
_PF = "type-PF"
_VDPA = "vdpa"


def _true(value):
    # oslo's bool_from_string, which Nova applies to remote_managed.
    return value is not None and str(value).strip().lower() in _TRUE


def _lower(value):
    return value.lower() if isinstance(value, str) else value


def pool_tags(pool):
    """A pool's tags, flat: its own keys but ``count``, and ``tags``."""
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


class Need:
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
        """Devices this request may take from ``pools`` ((pool, tags)
        pairs, as pools_of gives them)."""
        return sum(int(p.get("count", 0)) for p, tags in pools
                   if self.usable(tags))


def needs_of(request):
    """The request's PCI requests as Need, parsed once per request."""
    key = ("PciPassthroughFilter", "needs")
    needs = request.memo.get(key)
    if needs is None:
        needs = request.memo[key] = [Need(r)
                                     for r in request.spec.pci_requests]
    return needs


def pools_of(table, row):
    """(pool, tags) of each PCI pool of ``row``'s node; [] without."""
    node = table.node(row)
    pools = (node.pci_device_pools if node is not None else None) or ()
    return [(p, pool_tags(p)) for p in pools]
