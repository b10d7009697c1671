"""A trace gantt-scheduler recorded (``[recording]``, rpc/recorder.py),
read as a simulation workload: ``gantt-simulate run --workload
trace.jsonl`` replays the requests it served.

The file is JSON lines. A header line (``{"trace": "gantt", "format": 1,
"started_at": ...}``) opens each file and each restart of the recorder;
the other lines are events::

    {"time": 0.5, "action": "create", "instance": "<uuid>",
     "flavor": {"name": "m1.small", "vcpus": 1, "memory_mb": 2048,
                "root_gb": 20, "extra_specs": {}},
     "zone": "az-1", "group": "<uuid>", "group_policy": "anti-affinity",
     "host": "cn-3", "error": null}
    {"time": 42.0, "action": "delete", "instance": "<uuid>"}

Only ``time``, ``action``, ``instance`` and (creates) ``flavor`` with
``vcpus`` and ``memory_mb`` are required; other fields (``request``,
``spec``, ``node``, ...) are kept for people and not read. Rotated
backups (``trace.jsonl.1`` the newest) are read first, oldest first,
then ``trace.jsonl``.

Not replayed, by design: rebuilds (they claim nothing), requests sent
without instance uuids (nor do they), a create of an instance the trace
holds live already (a move: the instance stays where it is) and deletes
of instances not created in the trace (those made before recording
started keep their allocations from the cloud snapshot).
"""

import dataclasses
import json
import os

import jsonschema

from simulation import workload as workload_mod

FORMAT = 1
SUFFIX = ".jsonl"

WorkloadError = workload_mod.WorkloadError

_NAME = {"type": "string", "minLength": 1, "maxLength": 255}
_OPTIONAL_NAME = {"anyOf": [_NAME, {"type": "null"}]}
_FLAVOR = {
    **workload_mod.SCHEMA["properties"]["flavors"]["additionalProperties"],
    "properties": {
        **workload_mod.SCHEMA["properties"]["flavors"][
            "additionalProperties"]["properties"],
        "name": _OPTIONAL_NAME,
    },
}
_HEADER = {
    "type": "object",
    "required": ["trace", "format"],
    "properties": {"trace": {"enum": ["gantt"]},
                   "format": {"enum": [FORMAT]},
                   "started_at": {"type": "string"}},
}
_EVENT = {
    "type": "object",
    "required": ["time", "action", "instance"],
    "properties": {
        "time": {"type": "number", "minimum": 0},
        "action": {"enum": ["create", "delete"]},
        "instance": _OPTIONAL_NAME,
        "flavor": _FLAVOR,
        "zone": _OPTIONAL_NAME,
        "group": _OPTIONAL_NAME,
        "group_policy": {"anyOf": [{"enum": list(workload_mod.POLICIES)},
                                   {"type": "null"}]},
        "rebuild": {"type": "boolean"},
        "host": _OPTIONAL_NAME,
    },
    "if": {"properties": {"action": {"const": "create"}}},
    "then": {"required": ["flavor"]},
}
_HEADER_CHECK = jsonschema.Draft202012Validator(_HEADER)
_EVENT_CHECK = jsonschema.Draft202012Validator(_EVENT)


def is_trace(path):
    return os.fspath(path).lower().endswith(SUFFIX)


def files(path):
    """The files of a recorded trace, oldest first: the rotated backups
    (PATH.N ... PATH.1), then PATH."""
    path = os.fspath(path)
    backups = []
    n = 1
    while os.path.exists(f"{path}.{n}"):
        backups.append(f"{path}.{n}")
        n += 1
    return [*reversed(backups), path]


@dataclasses.dataclass
class Skipped:
    """Recorded events the replay leaves out, by why."""

    rebuilds: int = 0
    without_instance: int = 0
    moves: int = 0
    deletes_of_older: int = 0


@dataclasses.dataclass
class Recording:
    workload: workload_mod.Workload
    # instance -> the host the scheduler chose, None when it failed: for
    # the creates the workload replays.
    outcomes: dict
    skipped: Skipped


def read(path):
    """The Workload of the recorded trace at ``path``."""
    return load(path).workload


def load(path):
    """The Recording at ``path``: its workload, the recorded outcomes
    and what was left out."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise WorkloadError(path, None, "no such file")
    reading = _Reading()
    rows = []
    for name in files(path):
        rows.extend(reading.rows(name))
    if not rows:
        raise WorkloadError(path, None, "no events to replay")
    events = workload_mod._replay(path, iter(rows), reading.flavors,
                                  reading.groups)
    workload = workload_mod.Workload(path, reading.flavors, reading.groups,
                                     events, None)
    return Recording(workload, reading.outcomes, reading.skipped)


class _Reading:
    """The state of reading a rotated set, file after file."""

    def __init__(self):
        self.flavors = {}  # name -> Flavor
        self.groups = {}  # group uuid -> policy
        self.outcomes = {}
        self.skipped = Skipped()
        self._flavor_names = {}  # Flavor fields -> name
        self._live = set()
        self._started_at = None
        self._offset = 0.0
        self._last = 0.0

    def rows(self, name):
        """Rows for workload._replay from the file ``name``."""
        try:
            f = open(name, encoding="utf-8")
        except OSError as exc:
            raise WorkloadError(name, None, exc.strerror or str(exc)) \
                from exc
        with f:
            try:
                for number, text in enumerate(f, 1):
                    if text.strip():
                        row = self._line(name, number, text)
                        if row is not None:
                            yield row
            except UnicodeDecodeError as exc:
                raise WorkloadError(name, None,
                                    f"not UTF-8 text: {exc}") from exc

    def _line(self, name, number, text):
        where = f"line {number}"
        try:
            item = json.loads(text)
        except ValueError as exc:
            raise WorkloadError(name, where, f"not JSON: {exc}") from None
        if isinstance(item, dict) and "trace" in item:
            self._header(name, where, item)
            return None
        _check(name, where, _EVENT_CHECK, item)
        time = self._offset + float(item["time"])
        self._last = max(self._last, time)
        if item["action"] == "create":
            return self._create(where, time, item)
        return self._delete(where, time, item)

    def _header(self, name, where, item):
        _check(name, where, _HEADER_CHECK, item)
        started = item.get("started_at")
        if self._started_at is not None and started != self._started_at:
            # The recorder restarted: its clock starts again at 0, the
            # replay goes on from where the last run stopped.
            self._offset = self._last
        self._started_at = started

    def _create(self, where, time, item):
        instance = item["instance"]
        if item.get("rebuild"):
            self.skipped.rebuilds += 1
            return None
        if instance is None:
            self.skipped.without_instance += 1
            return None
        if instance in self._live:
            self.skipped.moves += 1
            return None
        self._live.add(instance)
        self.outcomes[instance] = item.get("host")
        group = item.get("group")
        if group is not None:
            self.groups.setdefault(
                group, item.get("group_policy") or "anti-affinity")
        return (where, time, "create", instance, self._flavor(item["flavor"]),
                group, item.get("zone"))

    def _delete(self, where, time, item):
        instance = item["instance"]
        if instance not in self._live:
            self.skipped.deletes_of_older += 1
            return None
        self._live.discard(instance)
        return (where, time, "delete", instance, None, None, None)

    def _flavor(self, spec):
        """The name of the flavor ``spec`` describes; a name that comes
        back with other sizes or extra specs (a flavor redefined while
        recording) gets a suffix."""
        flavor = workload_mod._flavor(spec.get("name") or "", spec)
        key = (flavor.name, flavor.vcpus, flavor.memory_mb, flavor.root_gb,
               flavor.ephemeral_gb, flavor.swap,
               tuple(sorted(flavor.extra_specs.items())))
        name = self._flavor_names.get(key)
        if name is None:
            name = _free_name(flavor, self.flavors)
            self._flavor_names[key] = name
            self.flavors[name] = dataclasses.replace(flavor, name=name)
        return name


def _free_name(flavor, taken):
    base = flavor.name or (
        f"{flavor.vcpus}c-{flavor.memory_mb}m-{flavor.root_gb}g")
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}~{n}"
    return name


def _check(name, where, validator, item):
    bad = workload_mod._non_finite(item, [])
    if bad is not None:
        raise WorkloadError(name, _at(where, bad), "must be a finite number")
    problems = sorted(validator.iter_errors(item),
                      key=lambda e: list(map(str, e.absolute_path)))
    if problems:
        field, message = workload_mod._explain(problems[0])
        raise WorkloadError(name, _at_field(where, field), message)


def _at(where, parts):
    return _at_field(where, workload_mod._field(parts))


def _at_field(where, field):
    return f"{where}: {field}" if field else where
