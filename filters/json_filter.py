"""JsonFilter: hosts for which the scheduler hint ``query`` holds.

The query is JSON: a list whose first item is an operator (=, <, >, <=,
>=, in, not, or, and) and whose other items are its arguments: nested
queries, constants, or ``$name`` (``$name.key`` for a mapping) naming
host state: $free_ram_mb, $free_disk_mb, $total_usable_ram_mb,
$total_usable_disk_gb, $disk_mb_used, $vcpus_total, $vcpus_used,
$num_instances, $num_io_ops, $failed_builds, the allocation ratios,
$host, $nodename, $hypervisor_type, $hypervisor_version, $host_ip,
$stats.KEY, $cpu_info.KEY...

Nova's evaluation is kept, oddities included:

- an argument that comes out as nothing (an unknown $name, an empty
  string, null) is dropped before the operator sees it, so
  ``["=", "$nope", 1]`` has one argument left and is false;
- a comparison compares its first argument with each of the others and
  holds when all of them hold; ``in`` asks whether the first argument
  equals one of the others;
- ``not`` gives the list of its arguments negated; a list counts as true
  inside ``and``/``or`` when it is not empty, whatever it holds, and a
  query whose result is a list passes a host when any item is true;
- an empty query passes every host.

Where Nova would raise (an unknown operator, bad JSON, a number compared
with a string) the hosts concerned are rejected instead, and why() says
so.

Queries over the numeric columns only are evaluated on all rows at once;
the others host by host.
"""

import json

import numpy as np

from filters import base

HINT = "query"

# Host state with a numeric column that is never missing: safe to
# evaluate over all rows at once.
_COLUMNS = frozenset((
    "free_ram_mb", "free_disk_mb", "total_usable_ram_mb",
    "total_usable_disk_gb", "disk_mb_used", "vcpus_total", "vcpus_used",
    "num_instances", "num_io_ops", "failed_builds", "cpu_allocation_ratio",
    "ram_allocation_ratio", "disk_allocation_ratio"))

# Other host state, read from one row (Nova's HostState attributes).
_FIELDS = {
    "host": lambda t, r: t.hosts[r],
    "nodename": lambda t, r: t.nodenames[r],
    "hypervisor_hostname": lambda t, r: t.nodenames[r],
    "uuid": lambda t, r: t.uuids[r],
    "hypervisor_type": lambda t, r: t.node(r).hypervisor_type,
    "hypervisor_version": lambda t, r: t.node(r).hypervisor_version,
    "cell_uuid": lambda t, r: t.node(r).cell_uuid,
    "host_ip": lambda t, r: t.node(r).host_ip,
    "cpu_info": lambda t, r: t.node(r).cpu_info,
    "stats": lambda t, r: t.node(r).stats,
    "supported_instances": lambda t, r: t.node(r).supported_instances,
    "instances": lambda t, r: t.instances_on(r),
}


class BadQuery(ValueError):
    """The query cannot be evaluated at all."""


class _RowWise(Exception):
    """This query needs host-by-host evaluation."""


# -- values: Python values for one host, or numpy arrays over rows --------

def _truth(value):
    if isinstance(value, np.ndarray):
        return value.astype(bool)
    return bool(value)


def _has_array(values):
    return any(isinstance(v, np.ndarray) or (
        isinstance(v, list) and _has_array(v)) for v in values)


def _compare(op):
    def run(args):
        if len(args) < 2:
            return False
        if not _has_array(args):
            # Every comparison runs, as in Nova: a bad one is never
            # hidden behind a false one before it.
            results = [op(args[0], other) for other in args[1:]]
            return all(results)
        if any(isinstance(a, list) for a in args):
            raise _RowWise  # list against array: numpy would broadcast
        out = True
        for other in args[1:]:
            out = out & _truth(op(args[0], other))
        return out
    return run


def _in(args):
    if len(args) < 2:
        return False
    if not _has_array(args):
        return args[0] in args[1:]
    if any(isinstance(a, list) for a in args):
        raise _RowWise
    out = False
    for other in args[1:]:
        out = out | _truth(args[0] == other)
    return out


def _not(args):
    return [~_truth(a) if isinstance(a, np.ndarray) else not a
            for a in args]


def _or(args):
    out = False
    for a in args:
        out = out | _truth(a)
    return out


def _and(args):
    out = True
    for a in args:
        out = out & _truth(a)
    return out


OPS = {
    "=": _compare(lambda a, b: a == b),
    "<": _compare(lambda a, b: a < b),
    ">": _compare(lambda a, b: a > b),
    "<=": _compare(lambda a, b: a <= b),
    ">=": _compare(lambda a, b: a >= b),
    "in": _in,
    "not": _not,
    "or": _or,
    "and": _and,
}


# -- the query ------------------------------------------------------------

def parse(text):
    """The query of hint text ``text``; None: no query (pass all)."""
    if not text:
        return None
    try:
        query = json.loads(text)
    except ValueError as exc:
        raise BadQuery(f"hint query is not valid JSON: {exc}") from None
    if not query:
        return None
    _check(query)
    return query


def _check(query):
    if not isinstance(query, list):
        raise BadQuery(f"hint query: expected a list, got {query!r}")
    if not query:
        return
    op = query[0]
    if not isinstance(op, str) or op not in OPS:
        raise BadQuery(f"hint query: unknown operator {op!r}")
    for arg in query[1:]:
        if isinstance(arg, list):
            _check(arg)


def variables(query):
    """The $names a query reads, in order of appearance."""
    found = []
    for arg in query[1:]:
        if isinstance(arg, list):
            found += [v for v in variables(arg) if v not in found]
        elif isinstance(arg, str) and arg.startswith("$") \
                and arg not in found:
            found.append(arg)
    return found


def evaluate(query, lookup):
    """Run ``query`` with ``lookup`` resolving ``$names``."""
    if not query:
        return True
    args = []
    for arg in query[1:]:
        if isinstance(arg, list):
            arg = evaluate(arg, lookup)
        elif isinstance(arg, str):
            arg = lookup(arg) if arg.startswith("$") else (arg or None)
        if arg is not None:
            args.append(arg)
    return OPS[query[0]](args)


def outcome(result):
    """A query's result as pass/fail (bool or bool array)."""
    if isinstance(result, list):
        return _or(result)
    return _truth(result)


def column_lookup(table, rows):
    def lookup(name):
        if name[1:] not in _COLUMNS:
            raise _RowWise
        return getattr(table, name[1:])[rows]
    return lookup


def row_lookup(table, row):
    def lookup(name):
        path = name[1:].split(".")
        if path[0] in _COLUMNS:
            value = getattr(table, path[0])[row].item()
        elif path[0] in _FIELDS:
            value = _FIELDS[path[0]](table, row)
        else:
            return None
        for key in path[1:]:
            value = value.get(key) if isinstance(value, dict) else None
        return value
    return lookup


def passes_row(query, table, row):
    """Whether the host of ``row`` passes; TypeError when the query
    compares what cannot be compared there."""
    return bool(outcome(evaluate(query, row_lookup(table, row))))


class JsonFilter(base.BaseFilter):
    name = "JsonFilter"

    def mask(self, request, rows):
        try:
            query = parse(request.hint(HINT))
        except BadQuery:
            return np.zeros(len(rows), bool)
        if query is None:
            return np.ones(len(rows), bool)
        table = request.table
        try:
            result = outcome(evaluate(query, column_lookup(table, rows)))
            return np.broadcast_to(result, len(rows)).copy()
        except (_RowWise, TypeError, OverflowError):
            pass
        out = np.zeros(len(rows), bool)
        for i, row in enumerate(rows):
            try:
                out[i] = passes_row(query, table, row)
            except (TypeError, OverflowError):
                out[i] = False
        return out

    def why(self, request, row):
        text = request.hint(HINT)
        try:
            query = parse(text)
        except BadQuery as exc:
            return str(exc)
        lookup = row_lookup(request.table, row)
        seen = ", ".join(f"{v}={lookup(v)!r}" for v in variables(query))
        try:
            passes_row(query, request.table, row)
        except (TypeError, OverflowError) as exc:
            return f"query {text} cannot be evaluated here ({seen}): {exc}"
        return f"query {text} is false here ({seen})"
