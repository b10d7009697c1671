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
- an empty query passes every host;
- ``$stats.KEY`` is text, as in Nova, whose compute node stats hold
  strings (a number reported as a number is read as its text):
  ``["=", "$stats.num_instances", "3"]`` may hold, ``["=",
  "$stats.num_instances", 3]`` never does, and ``["<",
  "$stats.num_instances", 5]`` compares text with a number, which fails
  the request (below).

Where Nova raises, and so fails the request, we fail it too, with
JsonQueryError (a filters.base.RequestError, which the scheduler reports
as InvalidRequestSpec: RPC callers get InvalidRequest) that names the
query, the host and the values it read: bad JSON, a query that is not a
list, an unknown operator, the hint given more than once, a comparison
Python cannot make (text with a number, a list with a number...), a
``$name.key`` step into a value that is not a mapping.
As in Nova, this happens only when the query is evaluated for some host
(a request whose hosts all went to earlier filters is not failed).

We fail rather than reject the hosts concerned because that is Nova's
outcome, and because a query that cannot be evaluated is the caller's
mistake, best reported as such rather than as NoValidHost.

Known differences from Nova: $cpu_info is the node's cpu_info as a
mapping, so ``$cpu_info.arch`` reads a key (in Nova it is the JSON text,
and any key fails the request); $host_ip is text (Nova holds an address
object, equal to no text and not ordered against it); $service,
$metrics, $numa_topology, $pci_stats, $aggregates, $limits and $updated
are not offered (they read as nothing).

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
    "stats": lambda t, r: _as_text(t.node(r).stats),
    "supported_instances": lambda t, r: t.node(r).supported_instances or [],
    "instances": lambda t, r: t.instances_on(r),
}


class JsonQueryError(base.RequestError):
    """The query fails the request, as it makes Nova's filter raise."""


class _RowWise(Exception):
    """This query needs host-by-host evaluation."""


class _NotAMapping(Exception):
    """A ``$name.key`` step into a value that has no keys."""


def _as_text(stats):
    """Nova's view of a node's stats: a mapping, maybe empty, with
    numbers and booleans as text."""
    return {k: str(v) if isinstance(v, int | float) else v
            for k, v in (stats or {}).items()}


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

def _error(text, why):
    return JsonQueryError(f"scheduler_hints.{HINT}: {text}: {why}")


def parse(text):
    """The query of hint text ``text``; None: no query (pass all)."""
    if not text:
        return None
    try:
        query = json.loads(text)
    except ValueError as exc:
        raise _error(text, f"not valid JSON ({exc})") from None
    if not query:
        return None
    _check(query, text)
    return query


def _check(query, text):
    if not isinstance(query, list):
        raise _error(text, f"expected a list, got {query!r}")
    if not query:
        return
    op = query[0]
    if not isinstance(op, str) or op not in OPS:
        raise _error(text, f"unknown operator {op!r}")
    for arg in query[1:]:
        if isinstance(arg, list):
            _check(arg, text)


def request_query(request):
    """The request's query (None: none, pass all hosts); JsonQueryError
    when it cannot be evaluated at all."""
    texts = request.hints(HINT)
    if len(texts) > 1:
        # Nova hands the list of them to the JSON parser, which fails.
        raise _error(json.dumps(list(texts)), "the hint is given "
                     f"{len(texts)} times, expected once")
    return parse(texts[0] if texts else None)


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
            if value is None:
                return None
            if isinstance(value, dict):
                value = value.get(key)
            elif isinstance(value, str | int | float | list):
                # Nova calls .get() on it, which raises.
                raise _NotAMapping(f"{name}: {value!r} has no key {key!r}")
            else:
                return None
        return value
    return lookup


def passes_row(query, table, row):
    """Whether the host of ``row`` passes; TypeError when the query
    compares what cannot be compared there, _NotAMapping when it looks
    a key up in what has none."""
    return bool(outcome(evaluate(query, row_lookup(table, row))))


def _seen(query, table, row):
    """What the query's $names read on ``row``, as text."""
    lookup = row_lookup(table, row)
    found = []
    for name in variables(query):
        try:
            found.append(f"{name}={lookup(name)!r}")
        except _NotAMapping as exc:
            found.append(str(exc))
    return ", ".join(found)


class JsonFilter(base.BaseFilter):
    name = "JsonFilter"

    def mask(self, request, rows):
        if not len(rows):
            return np.zeros(0, bool)
        query = request_query(request)
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
            except (TypeError, _NotAMapping) as exc:
                raise _error(
                    request.hint(HINT),
                    f"cannot be evaluated on host {table.hosts[row]} "
                    f"({_seen(query, table, row)}): {exc}") from None
        return out

    def why(self, request, row):
        text = request.hint(HINT)
        query = request_query(request)
        return (f"query {text} is false here "
                f"({_seen(query, request.table, row)})")
