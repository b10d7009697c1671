"""ComputeCapabilitiesFilter: flavor extra specs against what the host
reports.

Extra specs taken: keys with no scope, and keys in the ``capabilities:``
scope; other scopes (``hw:``, ``aggregate_instance_extra_specs:``...)
belong to other code. A key is a path: ``capabilities:cpu_info:features``
reads the host's ``cpu_info``, then its ``features``. The first step
names a host attribute, or else a key of the node's ``stats``; later
steps go into dicts (JSON text is parsed first). The value found is
turned into text with ``str()`` and matched with filters.extra_specs_ops
(so a list reads as ``['avx', 'sse']`` and ``<in> avx`` works on it).

A key without a scope that is neither an attribute nor a stats key is
ignored (Nova keeps this for old flavors). A path that leads nowhere
fails the host. As in Nova, ``hw:maxphysaddr_bits: N`` asks for
``capabilities:cpu_info:maxphysaddr:bits: >= N``.

Host attributes: the table's numeric columns (free_ram_mb, free_disk_mb,
total_usable_ram_mb, total_usable_disk_gb, disk_mb_used, vcpus_total,
vcpus_used, num_instances, num_io_ops, failed_builds, hypervisor_version,
the three allocation ratios), hypervisor_type, host, nodename,
hypervisor_hostname, uuid, cell_uuid, host_ip, cpu_info,
supported_instances and stats. Differences from Nova: HostState's
object-valued attributes (numa_topology, pci_stats, aggregates,
instances, metrics, limits, service, updated) are not matched; such names
fall through to stats. ``cpu_info`` matched whole is our JSON rendering
of the node's cpu_info, not the exact text the compute sent. Where
Nova's matching raises (a numeric operator such as ``>= 4`` against
text) and so fails the request, the host fails here
(filters.extra_specs_ops).
"""

import json

import numpy as np

from filters import base, extra_specs_ops

_SCOPE = "capabilities"
_MAXPHYSADDR = "hw:maxphysaddr_bits"
_COLUMNS = frozenset((
    "free_ram_mb", "free_disk_mb", "total_usable_ram_mb",
    "total_usable_disk_gb", "disk_mb_used", "vcpus_total", "vcpus_used",
    "num_instances", "num_io_ops", "failed_builds", "hypervisor_version",
    "cpu_allocation_ratio", "ram_allocation_ratio",
    "disk_allocation_ratio"))
# Attributes read from the row's records, one row at a time.
_RECORD_ATTRS = frozenset((
    "hypervisor_type", "host", "nodename", "hypervisor_hostname", "uuid",
    "cell_uuid", "host_ip", "cpu_info", "supported_instances", "stats"))
_ATTRS = _COLUMNS | _RECORD_ATTRS
_MISSING = object()


def _specs(request):
    """[(key, path, bare, requirement, predicate)] of the extra specs
    this filter reads (bare: the key has no scope); parsed once per
    request."""
    memo_key = ("ComputeCapabilitiesFilter", "specs")
    specs = request.memo.get(memo_key)
    if specs is None:
        specs = []
        for key, req in _with_maxphysaddr(
                request.spec.flavor.extra_specs).items():
            path = key.split(":")
            bare = len(path) == 1
            if not bare:
                if path[0] != _SCOPE:
                    continue
                path = path[1:]
            specs.append((key, tuple(path), bare, req,
                          extra_specs_ops.parse(req)))
        request.memo[memo_key] = specs
    return specs


def _with_maxphysaddr(extra_specs):
    """The extra specs, hw:maxphysaddr_bits turned into the capability
    it stands for (Nova does the same)."""
    bits = extra_specs.get(_MAXPHYSADDR)
    if bits is None:
        return extra_specs
    specs = {k: v for k, v in extra_specs.items() if k != _MAXPHYSADDR}
    specs[f"{_SCOPE}:cpu_info:maxphysaddr:bits"] = ">= " + bits
    return specs


def _stats(node):
    return (node.stats if node is not None else None) or {}


def _attribute(table, row, name):
    """The host's attribute ``name``, None when it has none."""
    if name in _COLUMNS:
        return getattr(table, name)[row].item()
    node = table.node(row)
    if name == "hypervisor_type":
        return table.hypervisor_types.name(int(table.hypervisor_type[row]))
    if name == "host":
        return table.hosts[row]
    if name in ("nodename", "hypervisor_hostname"):
        return table.nodenames[row]
    if name == "uuid":
        return table.uuids[row]
    if node is None:
        return None
    if name == "cpu_info" and isinstance(node.cpu_info, dict):
        # Nova holds cpu_info as the JSON text the compute reported.
        return json.dumps(node.cpu_info)
    return getattr(node, name, None)


def host_value(table, row, path, bare=False):
    """What ``path`` leads to on ``row``: None when it leads nowhere;
    _MISSING for a bare key the host knows nothing of (ignored)."""
    first = path[0]
    if bare and first not in _ATTRS and first not in _stats(
            table.node(row)):
        return _MISSING
    value = _attribute(table, row, first) if first in _ATTRS else None
    if value is None:
        # As Nova: an attribute that is unset falls back to stats.
        value = _stats(table.node(row)).get(first)
    for step in path[1:]:
        if value is None:
            return None
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return None
        value = value.get(step) if isinstance(value, dict) else None
    return value


def _row_passes(table, row, path, bare, predicate):
    value = host_value(table, row, path, bare)
    if value is _MISSING:
        return True
    return value is not None and predicate(str(value))


class ComputeCapabilitiesFilter(base.BaseFilter):
    name = "ComputeCapabilitiesFilter"
    # The flavor and what hosts report do not change within a request.
    run_filter_once_per_request = True
    RUN_ON_REBUILD = False

    def mask(self, request, rows):
        specs = _specs(request)
        out = base.all_pass(rows)
        if not specs:
            return out
        table = request.table
        for _key, path, bare, _req, predicate in specs:
            if len(path) == 1 and path[0] in _COLUMNS:
                out &= _column_mask(getattr(table, path[0])[rows],
                                    predicate)
                continue
            # JSON blobs and strings: one row at a time, only the rows
            # still in the running.
            for i in np.flatnonzero(out):
                out[i] = _row_passes(table, rows[i], path, bare,
                                     predicate)
        return out

    def why(self, request, row):
        table = request.table
        for key, path, bare, req, predicate in _specs(request):
            if _row_passes(table, row, path, bare, predicate):
                continue
            value = host_value(table, row, path, bare)
            if value is None:
                return f"extra spec {key}: the host has no such capability"
            return (f"extra spec {key} wants {req!r}, the host has "
                    f"{str(value)!r}")
        return super().why(request, row)


def _column_mask(values, predicate):
    """The predicate over a numeric column, judged once per distinct
    value (the text of each as Nova would print it)."""
    if not len(values):
        return np.ones(0, bool)
    distinct, where = np.unique(values, return_inverse=True)
    ok = np.fromiter((predicate(str(v.item())) for v in distinct), bool,
                     count=len(distinct))
    return ok[where.reshape(-1)]
