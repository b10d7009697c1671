"""The workload of a simulation: the instance creates and deletes to
replay against the modelled cloud, read from a file or generated.

A workload file is YAML (or JSON). It declares its flavors, then says
where the events come from in exactly one of three ways::

    flavors:
      m1.small: {vcpus: 1, memory_mb: 2048, root_gb: 20}
      m1.large: {vcpus: 4, memory_mb: 8192, root_gb: 80,
                 extra_specs: {"hw:cpu_policy": dedicated}}

    synthetic:                      # generated from a seed
      seed: 7                       # default 0
      creates: 5000
      mix: {m1.small: 6, m1.large: 1}        # weights; default: equal
      arrival: {process: poisson, rate_per_s: 2.0}   # or fixed/interval_s
      lifetime: {distribution: exponential, mean_s: 3600}
      # also fixed/seconds, lognormal/median_s+sigma, forever (default)
      server_groups: {fraction: 0.2, size: 4,
                      policies: {anti-affinity: 3, affinity: 1}}
      zones: {east: 1, west: 1}

    events:                         # inline, in time order
      - {time: 0, action: create, instance: vm1, flavor: m1.small,
         group: g1, zone: east}
      - {time: 30, action: delete, instance: vm1}

    trace: events.csv               # the same rows as CSV, relative path

A trace (``events`` or ``trace``) may declare ``groups: {g1: affinity}``;
its creates may name only declared groups. A delete is matched by its
instance name; the create's columns it may repeat are not read (a
different flavor is an error). A CSV trace has a header row
with the columns ``time,action,instance`` and optionally
``flavor,group,zone``.

A bare CSV given to ``read`` has no flavors section: its create rows
carry ``vcpus,memory_mb,root_gb`` (optionally ``ephemeral_gb,swap``) and
a flavor is made for each size, named by the ``flavor`` column or after
the size (``2c-4096m-20g``). Its groups take their policy from an
optional ``group_policy`` column, anti-affinity by default.

Inline events and ``synthetic.compute_events`` may also be compute-side
events (COMPUTE_ACTIONS, played by simulation.compute_events)::

      - {time: 600, action: reshape, hosts: [cn-1], class: VGPU,
         children: 2}                 # or fraction: 0.25 instead of hosts
      - {time: 900, action: host_down, fraction: 0.1}
      - {time: 1800, action: host_up, hosts: [cn-1]}

A file whose name ends in .jsonl is a trace gantt-scheduler recorded
(``[recording]``), read by simulation.recorded_trace.

Anything wrong raises WorkloadError naming the file and the field:
``synthetic.arrival.rate_per_s``, ``events[3].action``, ``line 7: time``.
"""

import bisect
import collections
import csv
import dataclasses
import gc
import itertools
import math
import operator
import os

import jsonschema
import numpy as np

from placement import file_errors

POLICIES = ("affinity", "anti-affinity", "soft-affinity",
            "soft-anti-affinity")
# Far beyond any useful simulation; a typo of a few zeros more would
# otherwise exhaust memory before anything is reported.
MAX_CREATES = 10_000_000


class WorkloadError(file_errors.InputFileError):
    """A workload that cannot be used; says which file and field."""


@dataclasses.dataclass(frozen=True)
class Flavor:
    name: str
    vcpus: int
    memory_mb: int
    root_gb: int = 0
    ephemeral_gb: int = 0
    swap: int = 0  # MB, as Nova keeps it
    extra_specs: dict = dataclasses.field(default_factory=dict)

    def as_spec(self):
        """The flavor as a gantt request spec carries it."""
        return {"name": self.name, "vcpus": self.vcpus,
                "memory_mb": self.memory_mb, "root_gb": self.root_gb,
                "ephemeral_gb": self.ephemeral_gb, "swap": self.swap,
                "extra_specs": dict(self.extra_specs)}


@dataclasses.dataclass(frozen=True, slots=True)
class Event:
    time: float  # seconds from the start
    kind: str  # "create" or "delete"
    instance: str
    flavor: str | None = None  # the rest: creates only
    group: str | None = None
    zone: str | None = None


# Events that play the compute nodes rather than the users: a node that
# reshapes its tree, a compute service that goes down and comes back.
COMPUTE_ACTIONS = ("reshape", "host_down", "host_up")


@dataclasses.dataclass(frozen=True)
class ComputeEvent:
    """A compute-side event (simulation.compute_events plays it). The
    hosts are named (``hosts``) or drawn by the run (``fraction`` of the
    hosts it may apply to). ``where`` is the workload field, for errors
    found against the cloud (an unknown host)."""

    time: float
    kind: str  # one of COMPUTE_ACTIONS
    hosts: tuple | None = None
    fraction: float | None = None
    resource_class: str | None = None  # reshape: the class split
    children: int = 2  # reshape: into how many child providers
    where: str = ""
    # What create and delete events carry, never set here (so readers of
    # the event list, e.g. zones_asked, need not tell the kinds apart).
    instance = None
    flavor = None
    group = None
    zone = None


@dataclasses.dataclass
class Workload:
    path: str
    flavors: dict  # name -> Flavor, as written
    groups: dict  # name -> policy
    events: list  # Event, in replay order
    seed: int | None  # synthetic only

    def describe(self):
        """A JSON-able summary, for reports."""
        # Counted by C loops: a synthetic workload has millions.
        kinds = list(map(operator.attrgetter("kind"), self.events))
        creates = kinds.count("create")
        deletes = kinds.count("delete")
        out = {
            "path": self.path,
            "kind": "trace" if self.seed is None else "synthetic",
            "seed": self.seed,
            "creates": creates,
            "deletes": deletes,
            "duration_s": self.events[-1].time if self.events else 0.0,
            "flavors": {n: f.as_spec() for n, f in self.flavors.items()},
            "groups": len(self.groups),
        }
        if creates + deletes < len(kinds):
            out["compute_events"] = {a: kinds.count(a)
                                     for a in COMPUTE_ACTIONS}
        return out


def zones_asked(workload):
    """{zone: creates asking it}, in order of first appearance."""
    zones = map(operator.attrgetter("zone"), workload.events)
    return collections.Counter(zone for zone in zones if zone)


# -- schema -----------------------------------------------------------

_NAME = {"type": "string", "minLength": 1, "maxLength": 255}
_COUNT = {"type": "integer", "minimum": 0, "maximum": 2147483647}
_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_WEIGHTS = {"type": "object", "minProperties": 1, "propertyNames": _NAME,
            "additionalProperties": _POSITIVE}

_FLAVOR = {
    "type": "object",
    "required": ["vcpus", "memory_mb"],
    "properties": {
        "vcpus": {**_COUNT, "minimum": 1},
        "memory_mb": {**_COUNT, "minimum": 1},
        "root_gb": _COUNT, "ephemeral_gb": _COUNT, "swap": _COUNT,
        "extra_specs": {
            "type": "object", "propertyNames": _NAME,
            "additionalProperties": {
                "type": ["string", "number", "boolean"]}},
    },
    "additionalProperties": False,
}


def _variants(key, variants):
    """An object whose ``key`` says which other fields it has."""
    return {
        "type": "object",
        "required": [key],
        "properties": {key: {"enum": list(variants)}},
        "allOf": [
            {"if": {"required": [key],
                    "properties": {key: {"const": name}}},
             "then": {"required": list(fields),
                      "properties": {key: True, **fields},
                      "additionalProperties": False}}
            for name, fields in variants.items()],
    }


_ARRIVAL = _variants("process", {
    "poisson": {"rate_per_s": _POSITIVE},
    "fixed": {"interval_s": _POSITIVE},
})
_LIFETIME = _variants("distribution", {
    "exponential": {"mean_s": _POSITIVE},
    "fixed": {"seconds": _POSITIVE},
    "lognormal": {"median_s": _POSITIVE,
                  "sigma": {"type": "number", "minimum": 0}},
    "forever": {},
})
_SERVER_GROUPS = {
    "type": "object",
    "required": ["fraction", "size"],
    "properties": {
        "fraction": {"type": "number", "exclusiveMinimum": 0,
                     "maximum": 1},
        "size": {"type": "integer", "minimum": 1},
        "policies": {"type": "object", "minProperties": 1,
                     "properties": dict.fromkeys(POLICIES, _POSITIVE),
                     "additionalProperties": False},
    },
    "additionalProperties": False,
}
_TIME = {"type": "number", "minimum": 0}
_HOSTS = {
    "hosts": {"type": "array", "minItems": 1, "uniqueItems": True,
              "items": _NAME},
    "fraction": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
}
_RC = {"type": "string", "pattern": "^[A-Z0-9_]+$", "minLength": 1,
       "maxLength": 255}
_COMPUTE_EVENTS = {
    "reshape": {"class": _RC,
                "children": {"type": "integer", "minimum": 1,
                             "maximum": 64}},
    "host_down": {},
    "host_up": {},
}


def _action_if(actions, required, fields):
    return {"if": {"required": ["action"],
                   "properties": {"action": {"enum": list(actions)}}},
            "then": {"required": ["time", "action", *required],
                     "properties": {"time": _TIME, "action": True,
                                    **fields},
                     "additionalProperties": False}}


_EVENT = {
    "type": "object",
    "required": ["time", "action"],
    "properties": {
        "time": _TIME,
        "action": {"enum": ["create", "delete", *COMPUTE_ACTIONS]},
    },
    "allOf": [
        _action_if(("create", "delete"), ["instance"],
                   {"instance": _NAME, "flavor": _NAME, "group": _NAME,
                    "zone": _NAME}),
        *(_action_if((name,), ["class"] if name == "reshape" else [],
                     {**_HOSTS, **fields})
          for name, fields in _COMPUTE_EVENTS.items()),
    ],
}
# In a synthetic workload, at given times among the generated events.
_COMPUTE_EVENT = {**_EVENT, "properties": {
    **_EVENT["properties"], "action": {"enum": list(COMPUTE_ACTIONS)}}}
_SYNTHETIC = {
    "type": "object",
    "required": ["creates", "arrival"],
    "properties": {
        "seed": {"type": "integer", "minimum": 0},
        "creates": {"type": "integer", "minimum": 1,
                    "maximum": MAX_CREATES},
        "mix": _WEIGHTS,
        "arrival": _ARRIVAL,
        "lifetime": _LIFETIME,
        "server_groups": _SERVER_GROUPS,
        "zones": _WEIGHTS,
        "drain": {"type": "boolean"},
        "compute_events": {"type": "array", "items": _COMPUTE_EVENT},
    },
    "additionalProperties": False,
}
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["flavors"],
    "properties": {
        "flavors": {"type": "object", "minProperties": 1,
                    "propertyNames": _NAME,
                    "additionalProperties": _FLAVOR},
        "synthetic": _SYNTHETIC,
        "trace": {"type": "string", "minLength": 1},
        "events": {"type": "array", "minItems": 1, "items": _EVENT},
        "groups": {"type": "object", "propertyNames": _NAME,
                   "additionalProperties": {"enum": list(POLICIES)}},
    },
    "additionalProperties": False,
}
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

# -- reading ----------------------------------------------------------


def read(path, seed=None):
    """The workload in the file at ``path``: a bare CSV trace if its name
    ends in .csv, a trace gantt-scheduler recorded if it ends in .jsonl
    (simulation.recorded_trace), else a YAML (or JSON) document.
    ``seed`` replaces the seed of a synthetic workload."""
    path = os.fspath(path)
    _check_seed(path, seed)
    if path.lower().endswith(".csv"):
        return _bare_csv(path)
    if path.lower().endswith(".jsonl"):
        # Imported here: that module builds on this one.
        from simulation import recorded_trace
        return recorded_trace.read(path)
    data = file_errors.read_yaml(path, WorkloadError)
    return parse(data, path, seed=seed,
                 base_dir=os.path.dirname(path) or ".")


def parse(data, path="<workload>", seed=None, base_dir="."):
    """Check ``data`` (a parsed document) and return its Workload; a
    ``trace`` file is found relative to ``base_dir``."""
    if data is None:
        raise WorkloadError(path, None, "empty document")
    _check_seed(path, seed)
    _validate(path, data)
    forms = [k for k in ("synthetic", "trace", "events") if k in data]
    if len(forms) != 1:
        raise WorkloadError(
            path, None, "needs exactly one of synthetic, trace or events"
            + (f"; has {' and '.join(forms)}" if forms else ""))
    flavors = {name: _flavor(name, spec)
               for name, spec in data["flavors"].items()}
    if "synthetic" in data:
        if "groups" in data:
            raise WorkloadError(
                path, "groups", "only for traces; a synthetic workload "
                "makes its own (synthetic.server_groups)")
        return _synthetic(path, data["synthetic"], flavors, seed)
    groups = dict(data.get("groups", {}))
    if "events" in data:
        events = _inline_events(path, data["events"], flavors, groups)
    else:
        events = _yaml_trace(path, os.path.join(base_dir, data["trace"]),
                             flavors, groups)
    return Workload(path, flavors, groups, events, None)


def parse_flavors(data, path="<workload>"):
    """Just the flavors section of a workload document: {name: Flavor}
    (for commands that need flavors and no events)."""
    if not isinstance(data, dict) or "flavors" not in data:
        raise WorkloadError(path, "flavors", "missing; it is required")
    _validate(path, {"flavors": data["flavors"]})
    return {name: _flavor(name, spec)
            for name, spec in data["flavors"].items()}


def _check_seed(path, seed):
    if seed is not None and (isinstance(seed, bool)
                             or not isinstance(seed, int) or seed < 0):
        raise WorkloadError(path, "seed",
                            f"must be an integer >= 0, not {seed!r}")


def _flavor(name, spec):
    return Flavor(
        name=name, vcpus=int(spec["vcpus"]),
        memory_mb=int(spec["memory_mb"]),
        root_gb=int(spec.get("root_gb", 0)),
        ephemeral_gb=int(spec.get("ephemeral_gb", 0)),
        swap=int(spec.get("swap", 0)),
        extra_specs={k: _spec_text(v)
                     for k, v in spec.get("extra_specs", {}).items()})


def _spec_text(value):
    # Nova keeps extra specs as text; YAML makes `true` and `2` typed.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# -- structure errors -------------------------------------------------


_field = file_errors.field_path


def _validate(path, data):
    bad = _non_finite(data, [])
    if bad is not None:
        raise WorkloadError(path, _field(bad), "must be a finite number")
    problems = sorted(_VALIDATOR.iter_errors(data),
                      key=lambda e: list(map(str, e.absolute_path)))
    if problems:
        field, message = _explain(problems[0])
        raise WorkloadError(path, field or "(top)", message)


def _non_finite(data, parts):
    """Where ``data`` holds an infinite or NaN float, which YAML reads
    from .inf and .nan and which no schema keyword rejects."""
    if isinstance(data, float) and not math.isfinite(data):
        return parts
    items = (data.items() if isinstance(data, dict)
             else enumerate(data) if isinstance(data, list) else ())
    for key, value in items:
        found = _non_finite(value, parts + [key])
        if found is not None:
            return found
    return None


_TYPES = {"number": "a number", "integer": "an integer",
          "string": "a string", "object": "a mapping", "array": "a list",
          "boolean": "true or false"}


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _explain(error):
    """The field and a plain message for a schema error: what is wrong
    and what is allowed."""
    parts = list(error.absolute_path)
    kind, limit = error.validator, error.validator_value
    value = error.instance
    if kind == "required":
        missing = [k for k in limit if k not in value]
        return _field(parts + missing[:1]), "missing; it is required"
    if kind == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        extra = [k for k in value if k not in allowed]
        return (_field(parts + extra[:1]),
                "not allowed here; allowed: " + ", ".join(allowed))
    message = _limit_message(kind, limit, value) or error.message
    if "propertyNames" in error.relative_schema_path:
        message = f"key {_short(value)}: {message}"
    return _field(parts), message


def _limit_message(kind, limit, value):
    if kind == "type":
        names = [limit] if isinstance(limit, str) else limit
        want = " or ".join(_TYPES.get(n, n) for n in names)
        return f"must be {want}, not {_short(value)}"
    if kind == "enum":
        options = [str(o) for o in limit]
        want = (" or ".join(options) if len(options) <= 2
                else "one of " + ", ".join(options))
        return f"must be {want}, not {_short(value)}"
    bounds = {"minimum": ">=", "exclusiveMinimum": ">",
              "maximum": "<=", "exclusiveMaximum": "<"}
    if kind in bounds:
        return f"must be {bounds[kind]} {limit}, not {_short(value)}"
    if kind in ("minLength", "minItems", "minProperties") and limit == 1:
        return "must not be empty"
    return None


# -- synthetic --------------------------------------------------------


def _synthetic(path, spec, flavors, seed):
    for name in spec.get("mix", {}):
        if name not in flavors:
            raise WorkloadError(path, f"synthetic.mix.{name}",
                                f"unknown flavor {name!r}; flavors: "
                                + _listing(flavors))
    seed = int(spec.get("seed", 0)) if seed is None else seed
    count = int(spec["creates"])
    # One generator drawn in a fixed order (arrivals, flavors,
    # lifetimes, groups, zones): the same document and seed give the
    # same events, and adding zones leaves the earlier draws alone.
    rng = np.random.Generator(np.random.PCG64(seed))
    arrivals = _arrivals(rng, spec["arrival"], count)
    names = list(flavors)
    mix = spec.get("mix") or dict.fromkeys(names, 1)
    flavor_of = _draw(rng, [mix.get(n, 0) for n in names], count)
    lifetimes = _lifetimes(rng, spec.get("lifetime"), count)
    group_of, group_names, groups = _server_groups(
        rng, spec.get("server_groups"), count)
    zones = spec.get("zones") or {}
    zone_of = (_draw(rng, list(zones.values()), count) if zones
               else np.full(count, -1, dtype=np.intp))
    # drain false: the run stops at the last arrival, and the instances
    # alive then stay (the cloud as the arrivals leave it).
    horizon = None if spec.get("drain", True) else arrivals[-1]
    events = _merge(arrivals, lifetimes, [
        (flavor_of, names), (group_of, group_names),
        (zone_of, list(zones))], horizon)
    extra = [_compute_event(path, f"synthetic.compute_events[{i}]", item)
             for i, item in enumerate(spec.get("compute_events", ()))]
    return Workload(path, flavors, groups,
                    _insert_compute(events, extra), seed)


def _insert_compute(events, extra):
    """``events`` with the compute events ``extra`` put in at their
    times, each before the events of the same time (few insertions into
    a long list)."""
    times = None
    for event in sorted(extra, key=operator.attrgetter("time")):
        if times is None:
            times = list(map(operator.attrgetter("time"), events))
        at = bisect.bisect_left(times, event.time)
        times.insert(at, event.time)
        events.insert(at, event)
    return events


def _draw(rng, weights, count):
    """``count`` indexes into ``weights``, drawn in proportion."""
    p = np.asarray(weights, dtype=float)
    return rng.choice(len(p), size=count, p=p / p.sum())


def _arrivals(rng, spec, count):
    if spec["process"] == "fixed":
        return np.arange(count) * float(spec["interval_s"])
    return np.cumsum(rng.exponential(1.0 / spec["rate_per_s"], count))


def _lifetimes(rng, spec, count):
    """Seconds each instance lives, or None when none is deleted."""
    kind = (spec or {}).get("distribution", "forever")
    if kind == "exponential":
        return rng.exponential(float(spec["mean_s"]), count)
    if kind == "fixed":
        return np.full(count, float(spec["seconds"]))
    if kind == "lognormal":
        return rng.lognormal(math.log(spec["median_s"]),
                             float(spec["sigma"]), count)
    return None


def _server_groups(rng, spec, count):
    """Group index of each create (-1 for none), group names, and the
    policy of each group. Members of a group are consecutive."""
    if not spec:
        return np.full(count, -1, dtype=np.intp), [], {}
    members = np.flatnonzero(rng.random(count) < spec["fraction"])
    size = int(spec["size"])
    total = -(-len(members) // size)
    policies = spec.get("policies") or {"anti-affinity": 1}
    chosen = _draw(rng, list(policies.values()), total)
    names = _names("g", total, 4)
    kinds = list(policies)
    groups = {n: kinds[c]
              for n, c in zip(names, chosen.tolist(), strict=True)}
    group_of = np.full(count, -1, dtype=np.intp)
    group_of[members] = np.arange(len(members)) // size
    return group_of, names, groups


def _names(prefix, count, least):
    """``prefix`` and 1..count zero-padded to at least ``least`` digits.
    The digits are worked out with numpy: formatting a million numbers
    one at a time in Python takes longer than all the rest."""
    width = max(least, len(str(count)))
    number = np.arange(1, count + 1)
    chars = np.empty((count, width + 1), dtype=np.uint32)
    chars[:, 0] = ord(prefix)
    for place in range(width):
        chars[:, width - place] = ord("0") + number // 10 ** place % 10
    return chars.view(f"U{width + 1}").ravel().tolist()


def _merge(arrivals, lifetimes, columns, horizon=None):
    """Events in time order from the creates' arrival times and
    lifetimes; ``columns`` are (index per create, names) pairs for the
    flavor, group and zone, an index of -1 meaning none. Deletes after
    ``horizon`` (seconds) are left out."""
    count = len(arrivals)
    if lifetimes is None:
        order = np.arange(count)
        times = arrivals
    else:
        # Creates come first in the combined array, so a stable sort
        # puts a create before a delete at the same time: an instance
        # that lives a rounding error is still created first.
        times = np.concatenate([arrivals, arrivals + lifetimes])
        order = np.argsort(times, kind="stable")
        times = times[order]
        if horizon is not None:
            keep = times <= horizon
            order, times = order[keep], times[keep]
    is_create = order < count
    slot = order % count
    instances = np.array(_names("i", count, 7), dtype=object)
    kinds = np.array(["delete", "create"], dtype=object)
    values = []
    for index, names in columns:
        # -1 picks the None appended at the end.
        lookup = np.array([*names, None], dtype=object)
        values.append(lookup[np.where(is_create, index[slot], -1)].tolist())
    return _bulk_events(times.tolist(),
                        kinds[is_create.astype(np.intp)].tolist(),
                        instances[slot].tolist(), *values)


def _bulk_events(*columns):
    """Events from one list per field, built a field at a time by C
    loops. Event() would run a Python __init__ that goes through
    object.__setattr__ per field: several times slower for millions."""
    # Millions of new objects would set off full collections that find
    # no garbage; they cost more than building the events.
    enabled = gc.isenabled()
    gc.disable()
    try:
        events = list(map(object.__new__, itertools.repeat(Event,
                                                           len(columns[0]))))
        for field, values in zip(dataclasses.fields(Event), columns,
                                 strict=True):
            # A slot's descriptor writes past the frozen __setattr__.
            setter = getattr(Event, field.name).__set__
            collections.deque(map(setter, events, values), maxlen=0)
        return events
    finally:
        if enabled:
            gc.enable()


# -- traces -----------------------------------------------------------

_TRACE_COLUMNS = ("time", "action", "instance", "flavor", "group", "zone")
_SIZES = ("vcpus", "memory_mb", "root_gb", "ephemeral_gb", "swap")
_BARE_COLUMNS = _TRACE_COLUMNS + _SIZES + ("group_policy",)


def _at(where, name):
    """The field ``name`` of an event at ``where`` (events[3], line 7)."""
    if where.startswith("line "):
        return f"{where}: {name}"
    return f"{where}.{name}"


def _listing(names):
    names = list(names)
    more = f", ... ({len(names)} in all)" if len(names) > 10 else ""
    return ", ".join(names[:10]) + more


def _inline_rows(items):
    for i, item in items:
        yield (f"events[{i}]", float(item["time"]), item["action"],
               item["instance"], item.get("flavor"), item.get("group"),
               item.get("zone"))


def _inline_events(path, items, flavors, groups):
    """The inline events: creates and deletes checked as a trace is,
    compute events (COMPUTE_ACTIONS) kept at their place."""
    last, last_where = 0.0, None
    for i, item in enumerate(items):
        if item["time"] < last:
            raise WorkloadError(
                path, f"events[{i}].time",
                f"{item['time']} is before {last} of {last_where}; times "
                "must not decrease")
        last, last_where = item["time"], f"events[{i}]"
    compute = [i for i, item in enumerate(items)
               if item["action"] in COMPUTE_ACTIONS]
    if not compute:
        return _replay(path, _inline_rows(enumerate(items)), flavors,
                       groups)
    taken = set(compute)
    rest = [(i, item) for i, item in enumerate(items) if i not in taken]
    replayed = (_replay(path, _inline_rows(rest), flavors, groups)
                if rest else [])
    at = dict(zip((i for i, _ in rest), replayed, strict=True))
    for i in compute:
        at[i] = _compute_event(path, f"events[{i}]", items[i])
    return [at[i] for i in range(len(items))]


def _compute_event(path, where, item):
    """A ComputeEvent from a checked (schema) document item."""
    has = [k for k in ("hosts", "fraction") if k in item]
    if len(has) != 1:
        raise WorkloadError(
            path, where, f"a {item['action']} needs exactly one of hosts "
            "or fraction" + (f"; has {' and '.join(has)}" if has else ""))
    return ComputeEvent(
        time=float(item["time"]), kind=item["action"],
        hosts=tuple(item["hosts"]) if "hosts" in item else None,
        fraction=(float(item["fraction"]) if "fraction" in item
                  else None),
        resource_class=item.get("class"),
        children=int(item.get("children", 2)), where=where)


def _replay(path, rows, flavors, groups):
    """Events from trace rows (where, time, action, instance, flavor,
    group, zone), checked as the simulation will replay them."""
    events, live, deleted = [], {}, {}
    last, last_where = 0.0, None
    for where, time, action, instance, flavor, group, zone in rows:
        if time < last:
            raise WorkloadError(
                path, _at(where, "time"),
                f"{time} is before {last} of {last_where}; times "
                "must not decrease")
        last, last_where = time, where
        if action == "create":
            _check_create(path, where, instance, flavor, group, live,
                          flavors, groups)
            live[instance] = (where, flavor)
            deleted.pop(instance, None)
            events.append(Event(time, "create", instance, flavor, group,
                                zone))
            continue
        # A delete is matched by its instance; exported traces often
        # repeat the create's columns on it, which is fine unless they
        # contradict the create.
        if instance in live and flavor and flavor != live[instance][1]:
            raise WorkloadError(
                path, _at(where, "flavor"),
                f"instance {instance!r} was created as "
                f"{live[instance][1]!r} ({live[instance][0]}), not "
                f"{flavor!r}")
        if instance not in live:
            raise WorkloadError(
                path, _at(where, "instance"),
                f"instance {instance!r} was deleted already "
                f"({deleted[instance]})" if instance in deleted else
                f"instance {instance!r} was never created")
        del live[instance]
        deleted[instance] = where
        events.append(Event(time, "delete", instance))
    if not events:
        raise WorkloadError(path, None, "no events")
    return events


def _check_create(path, where, instance, flavor, group, live, flavors,
                  groups):
    if instance in live:
        raise WorkloadError(path, _at(where, "instance"),
                            f"instance {instance!r} is live already "
                            f"(created at {live[instance][0]})")
    if not flavor:
        raise WorkloadError(path, _at(where, "flavor"),
                            "a create needs a flavor")
    if flavor not in flavors:
        raise WorkloadError(path, _at(where, "flavor"),
                            f"unknown flavor {flavor!r}; flavors: "
                            + _listing(flavors))
    if group and group not in groups:
        raise WorkloadError(path, _at(where, "group"),
                            f"unknown group {group!r}; groups: "
                            + (_listing(groups) or "none declared"))


def _yaml_trace(path, csv_path, flavors, groups):
    try:
        f = open(csv_path, newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise WorkloadError(path, "trace", f"cannot read {csv_path}: "
                            f"{exc.strerror or exc}") from exc
    with f:
        records = _csv_records(csv_path, f, _TRACE_COLUMNS)
        rows = (_trace_row(csv_path, line, cells)
                for line, cells in records)
        return _replay(csv_path, rows, flavors, groups)


def _bare_csv(path):
    try:
        f = open(path, newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise WorkloadError(path, None, exc.strerror or str(exc)) from exc
    flavors, groups, known = {}, {}, {}
    with f:
        records = _csv_records(path, f, _BARE_COLUMNS, _SIZES[:3])
        rows = (_bare_row(path, line, cells, flavors, known, groups)
                for line, cells in records)
        events = _replay(path, rows, flavors, groups)
    return Workload(path, flavors, groups, events, None)


def _csv_records(path, f, allowed, needed=()):
    """(line number, {column: cell}) for each row after the header."""
    reader = csv.reader(f)
    try:
        header = [h.strip() for h in next(reader, [])]
        _check_header(path, header, allowed, needed)
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue  # a blank line
            if len(cells) != len(header):
                raise WorkloadError(
                    path, f"line {reader.line_num}",
                    f"{len(cells)} cells, the header has {len(header)}")
            yield reader.line_num, dict(
                zip(header, (c.strip() for c in cells), strict=True))
    except csv.Error as exc:
        raise WorkloadError(path, f"line {reader.line_num}",
                            f"not valid CSV: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise WorkloadError(path, None, f"not UTF-8 text: {exc}") from exc


def _check_header(path, header, allowed, needed):
    if not header:
        raise WorkloadError(path, None, "empty file; the first line must "
                            "name the columns")
    for column in header:
        if column not in allowed:
            raise WorkloadError(path, f"line 1: {column or '(empty)'}",
                                "unknown column; columns: "
                                + ", ".join(allowed))
        if header.count(column) > 1:
            raise WorkloadError(path, f"line 1: {column}",
                                "column named twice")
    for column in (*_TRACE_COLUMNS[:3], *needed):
        if column not in header:
            raise WorkloadError(path, "line 1", f"no {column} column; "
                                "required: " + ", ".join(
                                    (*_TRACE_COLUMNS[:3], *needed)))


def _trace_row(path, line, cells):
    where = f"line {line}"
    try:
        time = float(cells["time"])
    except ValueError:
        time = -1.0
    if not (math.isfinite(time) and time >= 0):
        raise WorkloadError(path, _at(where, "time"),
                            f"must be a number >= 0, not "
                            f"{cells['time']!r}")
    action = cells["action"]
    if action not in ("create", "delete"):
        raise WorkloadError(path, _at(where, "action"),
                            f"must be create or delete, not {action!r}")
    if not cells["instance"]:
        raise WorkloadError(path, _at(where, "instance"),
                            "must not be empty")
    return (where, time, action, cells["instance"],
            cells.get("flavor") or None, cells.get("group") or None,
            cells.get("zone") or None)


def _bare_row(path, line, cells, flavors, known, groups):
    """A row of a bare CSV, declaring its flavor (from the sizes) and its
    group (with the policy) on the way."""
    row = _trace_row(path, line, cells)
    where, action = row[0], row[2]
    if action == "delete":
        # Sizes, group and zone a delete row may repeat are not read.
        return (*row[:4], None, None, None)
    flavor = _bare_flavor(path, where, cells, flavors, known)
    if row[5]:
        _bare_group(path, where, row[5], cells.get("group_policy"),
                    groups, known)
    elif cells.get("group_policy"):
        raise WorkloadError(path, _at(where, "group_policy"),
                            "a group policy needs a group")
    return (*row[:4], flavor, *row[5:])


def _bare_flavor(path, where, cells, flavors, known):
    sizes = {c: _size(path, where, c, cells.get(c, ""))
             for c in _SIZES}
    name = cells.get("flavor") or (
        "{vcpus}c-{memory_mb}m-{root_gb}g".format(**sizes)
        + (f"-{sizes['ephemeral_gb']}e" if sizes["ephemeral_gb"] else "")
        + (f"-{sizes['swap']}s" if sizes["swap"] else ""))
    flavor = Flavor(name, **sizes)
    old = flavors.setdefault(name, flavor)
    if old != flavor:
        column = next(c for c in _SIZES
                      if getattr(old, c) != getattr(flavor, c))
        raise WorkloadError(
            path, _at(where, column),
            f"{sizes[column]} contradicts flavor {name!r} of "
            f"{known[('flavor', name)]}, which has {getattr(old, column)}")
    known.setdefault(("flavor", name), where)
    return name


def _size(path, where, column, text):
    least = 1 if column in ("vcpus", "memory_mb") else 0
    if not text and column in ("ephemeral_gb", "swap"):
        return 0
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    # 2.0 too: tools that write a column with gaps often write floats.
    if not (number.is_integer() and least <= number <= 2147483647):
        raise WorkloadError(path, _at(where, column),
                            f"must be an integer >= {least}, not {text!r}")
    return int(number)


def _bare_group(path, where, group, policy, groups, known):
    if policy:
        if policy not in POLICIES:
            raise WorkloadError(path, _at(where, "group_policy"),
                                f"must be one of {', '.join(POLICIES)}, "
                                f"not {policy!r}")
        first = known.setdefault(("group", group), (policy, where))
        if first[0] != policy:
            raise WorkloadError(path, _at(where, "group_policy"),
                                f"group {group!r} is {first[0]} on "
                                f"{first[1]}, not {policy}")
        groups[group] = policy
    else:
        groups.setdefault(group, "anti-affinity")
