"""What travels over RPC, both ways.

:class:`NovaSerializer` speaks Nova's scheduler RPC API: arguments come
as Nova versioned-object primitives (see :mod:`rpc.nova_objects`) and
become gantt values; Selections go back as Nova's Selection 1.1 objects,
byte for byte what Nova's own scheduler sends (a newer version makes the
conductor try a backport, and fail). :class:`JsonSerializer` is gantt's
plain JSON form for clients that are not Nova: request specs as
``RequestSpec.to_dict()`` dicts, Selections as ``Selection.to_dict()``.

The request context travels as a plain dict (Nova's
``RequestContext.to_dict()``); the server sees a dict that always has
``request_id``, ``user_id``, ``project_id`` and ``roles``.
"""

import dataclasses
import json
import uuid

from oslo_messaging import serializer as om_serializer

from rpc import nova_objects
from scheduler import request_spec as gantt_spec
from scheduler import selection as gantt_selection

InvalidPrimitive = nova_objects.InvalidPrimitive
request_spec_from_primitive = nova_objects.request_spec_from_primitive
request_spec_from_legacy = nova_objects.request_spec_from_legacy

SELECTION_VERSION = "1.1"
LIMITS_VERSION = "1.0"
NUMA_LIMITS_VERSION = "1.1"
NETWORK_METADATA_VERSION = "1.0"
LIMIT_FIELDS = ("numa_topology", "vcpu", "disk_gb", "memory_mb")


@dataclasses.dataclass(frozen=True)
class Aggregate:
    """A host aggregate as Nova's update_aggregates sends it."""

    uuid: str
    name: str
    hosts: tuple = ()
    metadata: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Instance:
    """What the scheduler keeps of an instance a compute host reports."""

    uuid: str
    host: str | None = None
    node: str | None = None
    flavor_id: str | None = None  # the flavor's flavorid, when sent
    project_id: str | None = None


# -- Selection -------------------------------------------------------------


def selection_to_primitive(sel):
    """Nova's Selection 1.1 primitive of a gantt Selection, as Nova's
    Selection.from_host_state builds it (every field set, SchedulerLimits
    1.0 with unset limits as null, no allocation request as "null")."""
    limits = dict(sel.limits or {})
    unknown = sorted(set(limits) - set(LIMIT_FIELDS))
    if unknown:
        raise ValueError(f"Selection.limits: unknown limits {unknown}")
    limits = {name: limits.get(name) for name in LIMIT_FIELDS}
    if limits["numa_topology"] is not None:
        limits["numa_topology"] = _numa_limits(limits["numa_topology"])
    data = {
        "compute_node_uuid": sel.compute_node_uuid,
        "service_host": sel.service_host,
        "nodename": sel.nodename,
        "limits": nova_objects.envelope("SchedulerLimits", LIMITS_VERSION,
                                        limits),
        # Nova JSON-encodes the request even when there is none.
        "allocation_request": (json.dumps(None)
                               if sel.allocation_request is None
                               else sel.allocation_request),
        "allocation_request_version": sel.allocation_request_version,
        "availability_zone": sel.availability_zone,
    }
    # Nova's cell_uuid cannot be null: a host without a cell leaves it
    # unset.
    if sel.cell_uuid is not None:
        data["cell_uuid"] = sel.cell_uuid
    return nova_objects.envelope("Selection", SELECTION_VERSION, data)


def _numa_limits(value):
    """NUMATopologyLimits of {cpu_allocation_ratio, ram_allocation_ratio,
    physnets, tunneled}."""
    network = nova_objects.envelope(
        "NetworkMetadata", NETWORK_METADATA_VERSION,
        {"physnets": sorted(value.get("physnets", ())),
         "tunneled": bool(value.get("tunneled", False))})
    return nova_objects.envelope("NUMATopologyLimits", NUMA_LIMITS_VERSION, {
        "cpu_allocation_ratio": value["cpu_allocation_ratio"],
        "ram_allocation_ratio": value["ram_allocation_ratio"],
        "network_metadata": network})


def selection_from_primitive(primitive):
    """A gantt Selection from a Nova Selection primitive (a Selection is
    returned as it is)."""
    if isinstance(primitive, gantt_selection.Selection):
        return primitive
    path = "Selection"
    data = nova_objects.unwrap(primitive, path, "Selection")
    for name in ("compute_node_uuid", "service_host", "nodename"):
        _string(data.get(name), f"{path}.{name}")
    for name in ("cell_uuid", "availability_zone", "allocation_request",
                 "allocation_request_version"):
        _string(data.get(name), f"{path}.{name}", nullable=True)
    request = data.get("allocation_request")
    return gantt_selection.Selection(
        compute_node_uuid=data["compute_node_uuid"],
        service_host=data["service_host"],
        nodename=data["nodename"],
        cell_uuid=data.get("cell_uuid"),
        availability_zone=data.get("availability_zone"),
        allocation_request=None if request in (None, "null") else request,
        allocation_request_version=data.get("allocation_request_version"),
        limits=_limits_from_primitive(data.get("limits"), f"{path}.limits"))


def _limits_from_primitive(value, path):
    limits = dict.fromkeys(LIMIT_FIELDS)
    if value is None:
        return limits
    data = nova_objects.unwrap(value, path, "SchedulerLimits")
    for name in LIMIT_FIELDS[1:]:
        if data.get(name) is not None:
            limits[name] = _integer(data[name], f"{path}.{name}")
    numa = data.get("numa_topology")
    if numa is not None:
        where = f"{path}.numa_topology"
        numa = nova_objects.unwrap(numa, where, "NUMATopologyLimits")
        out = {k: numa[k] for k in ("cpu_allocation_ratio",
                                    "ram_allocation_ratio") if k in numa}
        if numa.get("network_metadata") is not None:
            network = nova_objects.unwrap(
                numa["network_metadata"], f"{where}.network_metadata",
                "NetworkMetadata")
            out["physnets"] = sorted(network.get("physnets") or ())
            out["tunneled"] = bool(network.get("tunneled", False))
        limits["numa_topology"] = out
    return limits


# -- aggregates and instances ----------------------------------------------


def aggregate_from_primitive(primitive):
    """An Aggregate from a Nova Aggregate primitive."""
    path = "Aggregate"
    data = nova_objects.unwrap(primitive, path, "Aggregate")
    hosts = data.get("hosts") or []
    metadata = data.get("metadata") or {}
    _strings(hosts, f"{path}.hosts")
    if not isinstance(metadata, dict):
        raise InvalidPrimitive(f"{path}.metadata: expected a mapping, got "
                               f"{type(metadata).__name__}")
    for key, value in metadata.items():
        _string(value, f"{path}.metadata.{key}")
    return Aggregate(uuid=_string(data.get("uuid"), f"{path}.uuid"),
                     name=_string(data.get("name"), f"{path}.name"),
                     hosts=tuple(hosts), metadata=dict(metadata))


def aggregates_from_primitive(primitive):
    """Aggregates from an AggregateList primitive."""
    data = nova_objects.unwrap(primitive, "AggregateList", "AggregateList")
    items = data.get("objects")
    if not isinstance(items, list):
        raise InvalidPrimitive("AggregateList.objects: expected a list")
    return [aggregate_from_primitive(a) for a in items]


def instance_from_primitive(primitive, path="Instance"):
    data = nova_objects.unwrap(primitive, path, "Instance")
    flavor_id = None
    if data.get("flavor") is not None:
        flavor = nova_objects.unwrap(data["flavor"], f"{path}.flavor",
                                     "Flavor")
        flavor_id = _string(flavor.get("flavorid"),
                            f"{path}.flavor.flavorid", nullable=True)
    return Instance(
        uuid=_string(data.get("uuid"), f"{path}.uuid"),
        host=_string(data.get("host"), f"{path}.host", nullable=True),
        node=_string(data.get("node"), f"{path}.node", nullable=True),
        flavor_id=flavor_id,
        project_id=_string(data.get("project_id"), f"{path}.project_id",
                           nullable=True))


def instances_from_primitive(primitive):
    """Instances from an InstanceList primitive (what a compute host's
    update_instance_info sends), an Instance primitive, or a list of
    either."""
    if isinstance(primitive, list):
        return [i for item in primitive
                for i in instances_from_primitive(item)]
    if nova_objects.is_object(primitive, "Instance"):
        return [instance_from_primitive(primitive)]
    data = nova_objects.unwrap(primitive, "InstanceList", "InstanceList")
    items = data.get("objects")
    if not isinstance(items, list):
        raise InvalidPrimitive("InstanceList.objects: expected a list")
    return [instance_from_primitive(item, f"InstanceList.objects[{i}]")
            for i, item in enumerate(items)]


def _string(value, path, nullable=False):
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise InvalidPrimitive(f"{path}: expected a string, got "
                               f"{'null' if value is None else repr(value)}")
    return value


def _strings(value, path):
    if not isinstance(value, list):
        raise InvalidPrimitive(f"{path}: expected a list of strings")
    for i, item in enumerate(value):
        _string(item, f"{path}[{i}]")
    return value


def _integer(value, path):
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidPrimitive(f"{path}: expected an integer, got "
                               f"{value!r}")
    return value


# -- the request context ---------------------------------------------------


def context_to_dict(ctxt):
    """The wire form of a context: a dict (or anything with to_dict(),
    such as an oslo.context RequestContext), with both the oslo.context
    and the Nova names of user and project, so that Nova reads it too."""
    if ctxt is None:
        values = {}
    elif isinstance(ctxt, dict):
        values = dict(ctxt)
    elif callable(getattr(ctxt, "to_dict", None)):
        values = dict(ctxt.to_dict())
    else:
        raise TypeError(f"context: expected a mapping, got "
                        f"{type(ctxt).__name__}")
    values = _complete(values)
    values["user"] = values["user_id"]
    values["project"] = values["project_id"]
    return values


def context_from_dict(values):
    """A received context, checked: always has request_id, user_id,
    project_id and roles (a request id is made up when none came)."""
    if not isinstance(values, dict):
        raise InvalidPrimitive(f"context: expected a mapping, got "
                               f"{type(values).__name__}")
    return _complete(dict(values))


def _complete(values):
    values["user_id"] = values.get("user_id") or values.get("user")
    values["project_id"] = (values.get("project_id") or values.get("project")
                            or values.get("tenant"))
    if not values.get("request_id"):
        values["request_id"] = f"req-{uuid.uuid4()}"
    if values.get("roles") is None:
        values["roles"] = []
    for name in ("request_id", "user_id", "project_id"):
        _string(values[name], f"context.{name}", nullable=True)
    _strings(values["roles"], "context.roles")
    return values


# -- the serializers -------------------------------------------------------


class _ContextAsDict(om_serializer.Serializer):
    def serialize_context(self, ctxt):
        return context_to_dict(ctxt)

    def deserialize_context(self, ctxt):
        return context_from_dict(ctxt)


class NovaSerializer(_ContextAsDict):
    """Nova's object primitives in, Nova's Selection objects out."""

    def serialize_entity(self, ctxt, entity):
        return _serialize_tree(entity, _nova_leaf)

    def deserialize_entity(self, ctxt, entity):
        if isinstance(entity, list):
            return [self.deserialize_entity(ctxt, e) for e in entity]
        if not isinstance(entity, dict):
            return entity
        if nova_objects.NAME in entity:
            decode = _DECODERS.get(entity[nova_objects.NAME])
            # Objects gantt does not read stay primitives (the legacy
            # 4.0 dicts nest some; request_spec_from_legacy reads them).
            return entity if decode is None else decode(entity)
        return {k: self.deserialize_entity(ctxt, v)
                for k, v in entity.items()}


_DECODERS = {
    "RequestSpec": request_spec_from_primitive,
    "Selection": selection_from_primitive,
    "Aggregate": aggregate_from_primitive,
    "AggregateList": aggregates_from_primitive,
    "Instance": instance_from_primitive,
    "InstanceList": instances_from_primitive,
}


class JsonSerializer(_ContextAsDict):
    """gantt's plain JSON form: request specs stay dicts (the server
    runs RequestSpec.from_dict); Selections become their to_dict()."""

    def serialize_entity(self, ctxt, entity):
        return _serialize_tree(entity, _json_leaf)

    def deserialize_entity(self, ctxt, entity):
        return entity


def _serialize_tree(entity, leaf):
    """``entity`` with lists, tuples and dicts walked and every gantt
    object in them turned into its wire form by ``leaf`` (None: not one
    of ours, sent as it is)."""
    if isinstance(entity, (list, tuple)):
        return [_serialize_tree(e, leaf) for e in entity]
    if isinstance(entity, dict):
        return {k: _serialize_tree(v, leaf) for k, v in entity.items()}
    wire = leaf(entity)
    return entity if wire is None else wire


def _nova_leaf(entity):
    if isinstance(entity, gantt_selection.Selection):
        return selection_to_primitive(entity)
    if isinstance(entity, gantt_spec.RequestSpec):
        # gantt's JSON form: a gantt server reads it (not Nova).
        return entity.to_dict()
    return None


def _json_leaf(entity):
    if isinstance(entity, (gantt_selection.Selection,
                           gantt_spec.RequestSpec)):
        return entity.to_dict()
    return None
