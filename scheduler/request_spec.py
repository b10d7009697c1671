"""What a conductor asks the scheduler for: the fields of Nova's
RequestSpec that scheduling reads, as plain dataclasses.

:meth:`RequestSpec.from_dict` builds one from gantt's JSON form (the
field names of Nova's RequestSpec, nested objects as dicts) and checks it
against a JSON schema first, so that a bad request fails with the path of
the field at fault (``flavor.vcpus: -1 is less than the minimum of 0``)
before anything is scheduled. An adapter for Nova's versioned-object
primitives feeds the same dicts (RPC issue).
"""

import dataclasses
import difflib
import uuid

import fastjsonschema
import jsonschema

from scheduler import errors

_UUID = {"type": "string", "format": "uuid"}
_UUID_OR_NULL = {"anyOf": [_UUID, {"type": "null"}]}
_COUNT = {"type": "integer", "minimum": 0}
_NAMES = {"type": "array", "items": {"type": "string", "minLength": 1}}
_STR_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_INT_MAP = {"type": "object", "additionalProperties": _COUNT}
_NULLABLE_STR = {"type": ["string", "null"]}

_FLAVOR = {
    "type": "object",
    "required": ["vcpus", "memory_mb", "root_gb"],
    "properties": {
        "name": {"type": "string"},
        "flavorid": {"type": "string"},
        "vcpus": {"type": "integer", "minimum": 1},
        "memory_mb": {"type": "integer", "minimum": 1},
        "root_gb": _COUNT, "ephemeral_gb": _COUNT,
        "swap": _COUNT,  # MB, as Nova keeps it
        "extra_specs": _STR_MAP,
    },
    "additionalProperties": False,
}
_IMAGE = {
    "type": "object",
    "properties": {
        "id": {"type": ["string", "null"]},
        "name": _NULLABLE_STR,
        "disk_format": _NULLABLE_STR,
        "container_format": _NULLABLE_STR,
        "min_ram": _COUNT, "min_disk": _COUNT,
        # Values keep their types (hw_numa_nodes may be an integer).
        "properties": {"type": "object"},
    },
    "additionalProperties": False,
}
_GROUP_POLICIES = ["affinity", "anti-affinity", "soft-affinity",
                   "soft-anti-affinity"]
_INSTANCE_GROUP = {
    "type": "object",
    "required": ["policy"],
    "properties": {
        "uuid": _UUID_OR_NULL,
        "policy": {"enum": _GROUP_POLICIES},
        "members": _NAMES, "hosts": _NAMES,
        "rules": {"type": "object", "properties": {
            "max_server_per_host": {"type": "integer", "minimum": 1}},
            "additionalProperties": False},
    },
    "additionalProperties": False,
}
_DESTINATION = {
    "type": "object",
    "properties": {
        "host": _NULLABLE_STR, "node": _NULLABLE_STR,
        "cell": _UUID_OR_NULL,
        # Each entry is a comma-separated any-of list of aggregate uuids.
        "aggregates": {"type": "array", "items": {"type": "string"}},
        "forbidden_aggregates": {"type": "array", "items": _UUID},
        "allow_cross_cell_move": {"type": "boolean"},
    },
    "additionalProperties": False,
}
_NUMA_CELL = {
    "type": "object",
    "required": ["id", "memory"],
    "properties": {
        "id": _COUNT,
        "cpuset": {"type": "array", "items": _COUNT},
        "pcpuset": {"type": "array", "items": _COUNT},
        "memory": {"type": "integer", "minimum": 1},
        # KiB, or Nova's symbolic sizes: -1 small, -2 large, -3 any.
        "pagesize": {"anyOf": [{"type": "null"},
                               {"type": "integer", "minimum": 1},
                               {"enum": [-1, -2, -3]}]},
    },
    "additionalProperties": False,
}
_NUMA = {
    "type": "object",
    "required": ["cells"],
    "properties": {
        "cells": {"type": "array", "items": _NUMA_CELL, "minItems": 1},
        "cpu_policy": {"enum": [None, "shared", "dedicated", "mixed"]},
        "cpu_thread_policy": {"enum": [None, "prefer", "isolate",
                                       "require"]},
    },
    "additionalProperties": False,
}
_PCI_REQUEST = {
    "type": "object",
    "required": ["count", "spec"],
    "properties": {
        "count": {"type": "integer", "minimum": 1},
        "spec": {"type": "array", "items": {"type": "object"}},
        "alias_name": _NULLABLE_STR,
        "requester_id": _NULLABLE_STR,
        # Nova's id of the request: its request groups in placement (one
        # per device) are named "<request_id>-<n>".
        "request_id": _NULLABLE_STR,
    },
    "additionalProperties": False,
}
_REQUEST_GROUP = {
    "type": "object",
    "properties": {
        "requester_id": _NULLABLE_STR,
        "resources": _INT_MAP,
        "required_traits": _NAMES,
        "forbidden_traits": _NAMES,
        # Each entry is a list of any-of aggregate uuids.
        "aggregates": {"type": "array", "items": {
            "type": "array", "items": _UUID}},
        "in_tree": _UUID_OR_NULL,
        "provider_uuids": {"type": "array", "items": _UUID},
    },
    "additionalProperties": False,
}
_REQUEST_LEVEL = {
    "type": "object",
    "properties": {
        "root_required": _NAMES,
        "root_forbidden": _NAMES,
        "same_subtree": {"type": "array", "items": _NAMES},
    },
    "additionalProperties": False,
}
SCHEMA = {
    "type": "object",
    "required": ["flavor"],
    "properties": {
        "instance_uuid": _UUID_OR_NULL,
        "flavor": _FLAVOR,
        "image": _IMAGE,
        "project_id": _NULLABLE_STR,
        "user_id": _NULLABLE_STR,
        "availability_zone": _NULLABLE_STR,
        "num_instances": {"type": "integer", "minimum": 1},
        "instance_group": {"anyOf": [_INSTANCE_GROUP, {"type": "null"}]},
        # Nova keeps every hint as a list of strings.
        "scheduler_hints": {"type": "object", "additionalProperties": {
            "type": "array", "items": {"type": "string"}}},
        "ignore_hosts": _NAMES, "force_hosts": _NAMES, "force_nodes": _NAMES,
        "requested_destination": {"anyOf": [_DESTINATION,
                                            {"type": "null"}]},
        "numa_topology": {"anyOf": [_NUMA, {"type": "null"}]},
        "pci_requests": {"type": "array", "items": _PCI_REQUEST},
        "requested_resources": {"type": "array", "items": _REQUEST_GROUP},
        "request_level_params": _REQUEST_LEVEL,
        "is_bfv": {"type": "boolean"},
    },
    "additionalProperties": False,
}
_VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def _is_uuid(value):
    """The "uuid" format: a UUID in its dashed form (any case)."""
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return all(value[i] == "-" for i in (8, 13, 18, 23))


# The same schema compiled to Python: twenty times faster than
# jsonschema on every request. It only says whether a spec is valid;
# jsonschema names the field at fault when it is not.
_FAST_CHECK = fastjsonschema.compile(SCHEMA, formats={"uuid": _is_uuid})


def _validation_error(data):
    """What is wrong with ``data`` as a spec's JSON form (the deepest
    best match, as a message with the field's path), or None."""
    try:
        _FAST_CHECK(data)
        return None
    except fastjsonschema.JsonSchemaException:
        pass
    found = list(_VALIDATOR.iter_errors(data))
    unknown = _unknown_field(found)
    if unknown is not None:
        return unknown
    error = jsonschema.exceptions.best_match(found)
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path) or "spec"
    message = error.message
    if error.validator in ("anyOf", "oneOf"):
        # jsonschema says "not valid under any of the given schemas":
        # say what the choices were instead.
        choices = " or ".join(_expected(s) for s in error.validator_value)
        message = f"{error.instance!r} is not {choices}"
    return f"{where}: {message}"


def _unknown_field(found):
    """The first field the schema does not know, named with its path
    and the known field it is most like (a misspelling such as
    "flavour" also makes "flavor" missing: the unknown name is the one
    to say), or None."""
    for error in sorted(found, key=lambda e: len(e.absolute_path)):
        if (error.validator != "additionalProperties"
                or error.validator_value is not False):
            continue
        known = error.schema.get("properties", {})
        extra = sorted(k for k in error.instance if k not in known)
        if not extra:
            continue
        path = [str(p) for p in error.absolute_path]
        where = ".".join([*path, extra[0]])
        like = difflib.get_close_matches(extra[0], sorted(known), n=1)
        hint = f" (did you mean {like[0]}?)" if like else ""
        return f"{where}: unknown field{hint}"
    return None


_TYPE_NAMES = {"object": "an object", "array": "a list", "string": "a string",
               "integer": "an integer", "number": "a number",
               "boolean": "true or false", "null": "null"}


def _expected(schema):
    """What a value valid under ``schema`` is, in words."""
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    if "format" in schema:
        return f"a {schema['format']}"
    kinds = schema.get("type")
    if kinds is None:
        return "a valid value"
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return " or ".join(_TYPE_NAMES.get(k, k) for k in kinds)


@dataclasses.dataclass(frozen=True)
class Flavor:
    vcpus: int
    memory_mb: int
    root_gb: int
    ephemeral_gb: int = 0
    swap: int = 0
    name: str = ""
    flavorid: str = ""
    extra_specs: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Image:
    id: str | None = None
    name: str | None = None
    disk_format: str | None = None
    container_format: str | None = None
    min_ram: int = 0
    min_disk: int = 0
    properties: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class InstanceGroup:
    policy: str
    uuid: str | None = None
    members: tuple = ()
    hosts: tuple = ()
    rules: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Destination:
    host: str | None = None
    node: str | None = None
    cell: str | None = None
    aggregates: tuple = ()
    forbidden_aggregates: tuple = ()
    allow_cross_cell_move: bool = False


@dataclasses.dataclass(frozen=True)
class NumaCell:
    id: int
    memory: int
    cpuset: tuple = ()
    pcpuset: tuple = ()
    pagesize: int | None = None


@dataclasses.dataclass(frozen=True)
class NumaTopology:
    cells: tuple
    cpu_policy: str | None = None
    cpu_thread_policy: str | None = None


@dataclasses.dataclass(frozen=True)
class PciRequest:
    count: int
    spec: tuple
    alias_name: str | None = None
    requester_id: str | None = None
    request_id: str | None = None


@dataclasses.dataclass(frozen=True)
class RequestedGroup:
    """A request group a port or device asked for (Nova's RequestGroup)."""

    requester_id: str | None = None
    resources: dict = dataclasses.field(default_factory=dict)
    required_traits: tuple = ()
    forbidden_traits: tuple = ()
    aggregates: tuple = ()
    in_tree: str | None = None
    provider_uuids: tuple = ()


@dataclasses.dataclass(frozen=True)
class RequestLevelParams:
    root_required: tuple = ()
    root_forbidden: tuple = ()
    same_subtree: tuple = ()


@dataclasses.dataclass(frozen=True)
class RequestSpec:
    flavor: Flavor
    image: Image = Image()
    instance_uuid: str | None = None
    project_id: str | None = None
    user_id: str | None = None
    availability_zone: str | None = None
    num_instances: int = 1
    instance_group: InstanceGroup | None = None
    scheduler_hints: dict = dataclasses.field(default_factory=dict)
    ignore_hosts: tuple = ()
    force_hosts: tuple = ()
    force_nodes: tuple = ()
    requested_destination: Destination | None = None
    numa_topology: NumaTopology | None = None
    pci_requests: tuple = ()
    requested_resources: tuple = ()
    request_level_params: RequestLevelParams = RequestLevelParams()
    is_bfv: bool = False

    @classmethod
    def from_dict(cls, data):
        """A RequestSpec from gantt's JSON form; InvalidRequestSpec names
        the first field at fault."""
        error = _validation_error(data)
        if error is not None:
            raise errors.InvalidRequestSpec(error)
        _check_meaning(data)
        spec = cls(
            flavor=Flavor(**data["flavor"]),
            image=Image(**data.get("image", {})),
            instance_uuid=data.get("instance_uuid"),
            project_id=data.get("project_id"),
            user_id=data.get("user_id"),
            availability_zone=data.get("availability_zone"),
            num_instances=data.get("num_instances", 1),
            instance_group=_maybe(_group, data.get("instance_group")),
            scheduler_hints={k: tuple(v) for k, v in
                             data.get("scheduler_hints", {}).items()},
            ignore_hosts=tuple(data.get("ignore_hosts", ())),
            force_hosts=tuple(data.get("force_hosts", ())),
            force_nodes=tuple(data.get("force_nodes", ())),
            requested_destination=_maybe(
                _destination, data.get("requested_destination")),
            numa_topology=_maybe(_numa, data.get("numa_topology")),
            pci_requests=tuple(
                PciRequest(**{**p, "spec": tuple(p["spec"])})
                for p in data.get("pci_requests", ())),
            requested_resources=tuple(
                _requested_group(g)
                for g in data.get("requested_resources", ())),
            request_level_params=_request_level(
                data.get("request_level_params", {})),
            is_bfv=data.get("is_bfv", False))
        # Kept by reference, as its nested dicts (extra_specs, image
        # properties) already are; not a field, so not compared, copied
        # by dataclasses.replace or written by orjson.
        object.__setattr__(spec, "_given", data)
        return spec

    def as_given(self):
        """The JSON form this spec was read from (from_dict) as its
        caller gave it, fields left out that take their defaults
        (from_dict reads it back as an equal spec); the spec itself
        when it was built or changed otherwise. What the decision log
        writes: for a plain request, about a sixth of the whole form's
        bytes (109 against 623)."""
        return self.__dict__.get("_given", self)

    def to_dict(self):
        """The JSON form: from_dict(to_dict()) gives an equal spec."""
        return _plain(dataclasses.asdict(self))

    def without_internal_hints(self):
        """The spec without Nova's internal scheduler hints (names that
        start with ``_nova``, such as ``_nova_check_type``, which makes a
        request a rebuild check: no placement query, no claim). Nova 34's
        API drops them from users' requests; gantt drops them from
        requests that do not come from Nova's conductor."""
        kept = {k: v for k, v in self.scheduler_hints.items()
                if not k.startswith(INTERNAL_HINT_PREFIX)}
        if len(kept) == len(self.scheduler_hints):
            return self
        return dataclasses.replace(self, scheduler_hints=kept)

    def hint(self, name, default=None):
        """The first value of a scheduler hint (most hints are single)."""
        values = self.scheduler_hints.get(name)
        return values[0] if values else default


# Scheduler hints only Nova's own services may set.
INTERNAL_HINT_PREFIX = "_nova"


def _check_meaning(data):
    """Rules a schema cannot say well."""
    numa = data.get("numa_topology")
    if numa:
        ids = [c["id"] for c in numa["cells"]]
        if len(set(ids)) != len(ids):
            raise errors.InvalidRequestSpec(
                "numa_topology.cells: cell ids must be distinct")
    hints = data.get("scheduler_hints", {})
    if "cidr" in hints and "build_near_host_ip" not in hints:
        raise errors.InvalidRequestSpec(
            "scheduler_hints.cidr: given without build_near_host_ip")


def _maybe(build, value):
    return None if value is None else build(value)


def _group(d):
    return InstanceGroup(
        policy=d["policy"], uuid=d.get("uuid"),
        members=tuple(d.get("members", ())), hosts=tuple(d.get("hosts", ())),
        rules=dict(d.get("rules", {})))


def _destination(d):
    return Destination(
        host=d.get("host"), node=d.get("node"), cell=d.get("cell"),
        aggregates=tuple(d.get("aggregates", ())),
        forbidden_aggregates=tuple(d.get("forbidden_aggregates", ())),
        allow_cross_cell_move=d.get("allow_cross_cell_move", False))


def _numa(d):
    return NumaTopology(
        cells=tuple(NumaCell(
            id=c["id"], memory=c["memory"],
            cpuset=tuple(c.get("cpuset", ())),
            pcpuset=tuple(c.get("pcpuset", ())),
            pagesize=c.get("pagesize")) for c in d["cells"]),
        cpu_policy=d.get("cpu_policy"),
        cpu_thread_policy=d.get("cpu_thread_policy"))


def _requested_group(d):
    return RequestedGroup(
        requester_id=d.get("requester_id"),
        resources=dict(d.get("resources", {})),
        required_traits=tuple(d.get("required_traits", ())),
        forbidden_traits=tuple(d.get("forbidden_traits", ())),
        aggregates=tuple(tuple(a) for a in d.get("aggregates", ())),
        in_tree=d.get("in_tree"),
        provider_uuids=tuple(d.get("provider_uuids", ())))


def _request_level(d):
    return RequestLevelParams(
        root_required=tuple(d.get("root_required", ())),
        root_forbidden=tuple(d.get("root_forbidden", ())),
        same_subtree=tuple(tuple(s) for s in d.get("same_subtree", ())))


def _plain(value):
    """Tuples to lists, recursively, for JSON."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
