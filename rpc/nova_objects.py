"""Nova's versioned-object primitives, read without Nova.

On the wire a Nova object is a JSON envelope::

    {"nova_object.name": "Flavor", "nova_object.namespace": "nova",
     "nova_object.version": "1.2", "nova_object.data": {field: value},
     "nova_object.changes": [field, ...]}

Fields that were never set are absent from ``data``; nested objects are
envelopes of their own. gantt reads the objects a conductor sends the
scheduler: a RequestSpec and what it nests, at the versions Nova 34
sends, and any newer minor version (a minor version only adds fields,
which we ignore). A major version we do not know, another namespace or a
missing ``data`` is refused with :class:`InvalidPrimitive`.

The RequestSpec decoder builds gantt's JSON form (field names of Nova's
RequestSpec, see :mod:`scheduler.request_spec`) and hands it to
``RequestSpec.from_dict``, so that values are checked in one place.
"""

import json

from scheduler import errors
from scheduler import request_spec as gantt_spec

NAME = "nova_object.name"
NAMESPACE = "nova_object.namespace"
VERSION = "nova_object.version"
DATA = "nova_object.data"
CHANGES = "nova_object.changes"
NOVA = "nova"

# The major version of each object gantt reads (Nova 34 sends, for
# instance, RequestSpec 1.15, Flavor 1.2, ImageMeta 1.8 with
# ImageMetaProps 1.44, InstanceGroup 1.11, Destination 1.4). A
# RequestSpec's retry, limits, security groups and networks are not
# read: gantt schedules without them (alternates replaced retries).
MAJORS = {
    "RequestSpec": 1, "Flavor": 1, "ImageMeta": 1, "ImageMetaProps": 1,
    "InstanceGroup": 1, "Destination": 1, "CellMapping": 1,
    "RequestGroup": 1, "RequestLevelParams": 1, "InstanceNUMATopology": 1,
    "InstanceNUMACell": 1, "InstancePCIRequests": 1, "InstancePCIRequest": 1,
    "SchedulerLimits": 1, "NUMATopologyLimits": 1,
    "NetworkMetadata": 1, "Selection": 1, "Aggregate": 1,
    "AggregateList": 1, "Instance": 2, "InstanceList": 2,
}

# Nova's symbolic guest page sizes (InstanceNUMACell.pagesize).
_PAGES_SMALL, _PAGES_LARGE, _PAGES_ANY = -1, -2, -3


class InvalidPrimitive(errors.SchedulerError, ValueError):
    """A primitive gantt cannot read; the message starts with the path
    of the field at fault."""


def is_object(value, name=None):
    """Whether ``value`` is an object envelope (named ``name``)."""
    return (isinstance(value, dict) and NAME in value
            and (name is None or value[NAME] == name))


def version_of(value, path):
    """(major, minor) of an envelope's version string."""
    version = value.get(VERSION)
    try:
        major, minor = version.split(".")
        return int(major), int(minor)
    except (AttributeError, ValueError):
        raise InvalidPrimitive(
            f"{path}: {VERSION} must be 'major.minor', got {version!r}"
        ) from None


def unwrap(value, path, name):
    """The fields of the ``name`` object at ``path``, after checking its
    envelope."""
    expected = f"expected {'an' if name[0] in 'AEIOU' else 'a'} {name} object"
    if not isinstance(value, dict):
        raise InvalidPrimitive(f"{path}: {expected}, got {_kind(value)}")
    if value.get(NAME) != name:
        raise InvalidPrimitive(
            f"{path}: {expected}, got {NAME} {value.get(NAME)!r}")
    if value.get(NAMESPACE) != NOVA:
        raise InvalidPrimitive(
            f"{path}: {NAMESPACE} must be {NOVA!r}, got "
            f"{value.get(NAMESPACE)!r}")
    major, minor = version_of(value, path)
    if major != MAJORS[name]:
        raise InvalidPrimitive(
            f"{path}: {name} version {major}.{minor} is not supported "
            f"(gantt reads {MAJORS[name]}.x)")
    data = value.get(DATA)
    if not isinstance(data, dict):
        raise InvalidPrimitive(
            f"{path}: {DATA} missing or not a mapping")
    return data


def envelope(name, version, data):
    """A primitive as Nova writes a new object: every set field is listed
    as changed (sorted; Nova's order is that of a set)."""
    return {NAME: name, NAMESPACE: NOVA, VERSION: version, DATA: data,
            CHANGES: sorted(data)}


def _kind(value):
    return "null" if value is None else type(value).__name__


def _list(value, path):
    if not isinstance(value, list):
        raise InvalidPrimitive(f"{path}: expected a list, got "
                               f"{_kind(value)}")
    return value


def _mapping(value, path):
    if not isinstance(value, dict):
        raise InvalidPrimitive(f"{path}: expected a mapping, got "
                               f"{_kind(value)}")
    return value


def _strings(value, path):
    """A list of strings, sorted (Nova sets arrive as lists in no
    particular order)."""
    for i, item in enumerate(_list(value, path)):
        if not isinstance(item, str):
            raise InvalidPrimitive(
                f"{path}[{i}]: expected a string, got {_kind(item)}")
    return sorted(value)


def _integers(value, path):
    for i, item in enumerate(_list(value, path)):
        if not isinstance(item, int) or isinstance(item, bool):
            raise InvalidPrimitive(
                f"{path}[{i}]: expected an integer, got {_kind(item)}")
    return sorted(value)


def _copy(data, names, out, drop_null=()):
    """Copy the fields ``names`` that are set; ``drop_null``: those whose
    null means "not set" to gantt."""
    for name in names:
        if name in data and not (data[name] is None and name in drop_null):
            out[name] = data[name]
    return out


# -- RequestSpec ---------------------------------------------------------


def request_spec_from_primitive(primitive):
    """A gantt RequestSpec from a Nova RequestSpec primitive."""
    data = unwrap(primitive, "RequestSpec", "RequestSpec")
    return build_spec(request_spec_dict(data), "RequestSpec")


def build_spec(spec, where):
    """RequestSpec.from_dict, with its errors said as InvalidPrimitive."""
    try:
        return gantt_spec.RequestSpec.from_dict(spec)
    except errors.InvalidRequestSpec as e:
        # from_dict names the field at fault, or "spec" for the whole.
        field, _, message = e.message.partition(": ")
        where = where if field == "spec" else f"{where}.{field}"
        raise InvalidPrimitive(f"{where}: {message}") from None


def request_spec_dict(data, path="RequestSpec"):
    """gantt's JSON form of the fields of a RequestSpec primitive."""
    out = _copy(data, ("instance_uuid", "project_id", "user_id",
                       "availability_zone", "num_instances", "is_bfv"), {})
    for name in ("ignore_hosts", "force_hosts", "force_nodes",
                 "scheduler_hints"):
        _copy(data, (name,), out, drop_null=(name,))
    if "flavor" in data:
        out["flavor"] = flavor_dict(
            unwrap(data["flavor"], f"{path}.flavor", "Flavor"))
    if data.get("image") is not None:
        out["image"] = image_dict(data["image"], f"{path}.image")
    if "instance_group" in data:
        out["instance_group"] = _maybe(
            instance_group_dict, data["instance_group"],
            f"{path}.instance_group")
    if "requested_destination" in data:
        out["requested_destination"] = _maybe(
            destination_dict, data["requested_destination"],
            f"{path}.requested_destination")
    if "numa_topology" in data:
        out["numa_topology"] = _maybe(
            numa_dict, data["numa_topology"], f"{path}.numa_topology")
    if data.get("pci_requests") is not None:
        out["pci_requests"] = pci_requests_list(
            data["pci_requests"], f"{path}.pci_requests")
    if data.get("requested_resources") is not None:
        where = f"{path}.requested_resources"
        out["requested_resources"] = [
            request_group_dict(g, f"{where}[{i}]")
            for i, g in enumerate(_list(data["requested_resources"], where))]
    if data.get("request_level_params") is not None:
        out["request_level_params"] = request_level_dict(
            data["request_level_params"], f"{path}.request_level_params")
    return out


def _maybe(build, value, path):
    return None if value is None else build(value, path)


def flavor_dict(data):
    """gantt's flavor from Flavor fields (or a legacy flavor dict)."""
    return _copy(data, ("vcpus", "memory_mb", "root_gb", "ephemeral_gb",
                        "swap", "name", "flavorid", "extra_specs"), {},
                 drop_null=("name", "extra_specs"))


def image_dict(value, path):
    data = unwrap(value, path, "ImageMeta")
    out = _copy(data, ("id", "name", "disk_format", "container_format",
                       "min_ram", "min_disk"), {})
    if data.get("properties") is not None:
        out["properties"] = dict(unwrap(
            data["properties"], f"{path}.properties", "ImageMetaProps"))
    return out


def instance_group_dict(value, path):
    data = unwrap(value, path, "InstanceGroup")
    out = _copy(data, ("uuid",), {})
    _copy(data, ("members", "hosts"), out, drop_null=("members", "hosts"))
    # 1.11 sends policy; older versions only the one-item list policies.
    policy = data.get("policy")
    if policy is None and data.get("policies"):
        policy = _list(data["policies"], f"{path}.policies")[0]
    out["policy"] = policy
    rules = _mapping(data.get("_rules") or {}, f"{path}._rules")
    if "max_server_per_host" in rules:
        out["rules"] = {"max_server_per_host": _int_string(
            rules["max_server_per_host"],
            f"{path}._rules.max_server_per_host")}
    return out


def _int_string(value, path):
    """Nova keeps group rules as strings: '2' -> 2."""
    try:
        if isinstance(value, bool):
            raise ValueError
        return int(value)
    except (TypeError, ValueError):
        raise InvalidPrimitive(
            f"{path}: expected an integer, got {value!r}") from None


def destination_dict(value, path):
    data = unwrap(value, path, "Destination")
    out = _copy(data, ("host", "node", "allow_cross_cell_move"), {})
    # Nova's aggregates are already gantt's: each entry a comma-separated
    # any-of list.
    _copy(data, ("aggregates",), out, drop_null=("aggregates",))
    if data.get("forbidden_aggregates") is not None:
        out["forbidden_aggregates"] = _strings(
            data["forbidden_aggregates"], f"{path}.forbidden_aggregates")
    if data.get("cell") is not None:
        cell = unwrap(data["cell"], f"{path}.cell", "CellMapping")
        if "uuid" not in cell:
            raise InvalidPrimitive(f"{path}.cell: no uuid")
        out["cell"] = cell["uuid"]
    return out


def numa_dict(value, path):
    data = unwrap(value, path, "InstanceNUMATopology")
    where = f"{path}.cells"
    cells = [numa_cell(c, f"{where}[{i}]")
             for i, c in enumerate(_list(data.get("cells"), where))]
    out = {"cells": [c for c, _, _ in cells]}
    # Nova keeps the CPU policies per cell, all cells alike; gantt per
    # topology.
    for key, index in (("cpu_policy", 1), ("cpu_thread_policy", 2)):
        out[key] = next((c[index] for c in cells if c[index]), None)
    return out


def numa_cell(value, path):
    """(gantt cell, cpu_policy, cpu_thread_policy) of an InstanceNUMACell."""
    data = unwrap(value, path, "InstanceNUMACell")
    cell = _copy(data, ("id", "memory"), {})
    for name in ("cpuset", "pcpuset"):
        if data.get(name) is not None:
            cell[name] = _integers(data[name], f"{path}.{name}")
    if data.get("pagesize") is not None:
        cell["pagesize"] = _pagesize(data["pagesize"], f"{path}.pagesize")
    return cell, data.get("cpu_policy"), data.get("cpu_thread_policy")


def _pagesize(value, path):
    """Page size in KiB, or Nova's symbolic sizes (small, large, any),
    which gantt's model keeps as Nova sends them."""
    if value in (_PAGES_SMALL, _PAGES_LARGE, _PAGES_ANY):
        return value
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidPrimitive(
            f"{path}: expected a page size in KiB or -1 (small), -2 "
            f"(large), -3 (any), got {value!r}")
    return value


def pci_requests_list(value, path):
    data = unwrap(value, path, "InstancePCIRequests")
    where = f"{path}.requests"
    out = []
    for i, item in enumerate(_list(data.get("requests", []), where)):
        request = unwrap(item, f"{where}[{i}]", "InstancePCIRequest")
        out.append(_copy(request, ("count", "spec", "alias_name",
                                   "requester_id", "request_id"), {}))
    return out


def request_group_dict(value, path):
    data = unwrap(value, path, "RequestGroup")
    out = _copy(data, ("requester_id", "resources", "aggregates", "in_tree",
                       "provider_uuids"), {})
    for name in ("required_traits", "forbidden_traits"):
        if data.get(name) is not None:
            out[name] = _strings(data[name], f"{path}.{name}")
    return out


def request_level_dict(value, path):
    data = unwrap(value, path, "RequestLevelParams")
    out = _copy(data, ("same_subtree",), {})
    for name in ("root_required", "root_forbidden"):
        if data.get(name) is not None:
            out[name] = _strings(data[name], f"{path}.{name}")
    return out


# -- the 4.0 legacy dicts -------------------------------------------------


def request_spec_from_legacy(request_spec, filter_properties):
    """A gantt RequestSpec from the ``request_spec`` and
    ``filter_properties`` dicts of scheduler RPC API 4.0 (what Nova's
    RequestSpec.to_legacy_request_spec_dict and
    to_legacy_filter_properties_dict give, nested objects as
    primitives)."""
    spec = legacy_spec_dict(
        _mapping(request_spec, "request_spec"), "request_spec")
    spec.update(legacy_filter_dict(
        _mapping(filter_properties or {}, "filter_properties"),
        "filter_properties"))
    return build_spec(spec, "legacy request_spec")


def legacy_spec_dict(request_spec, path):
    out = _copy(request_spec, ("num_instances",), {})
    flavor = request_spec.get("instance_type")
    if is_object(flavor):
        flavor = unwrap(flavor, f"{path}.instance_type", "Flavor")
    if flavor is not None:
        out["flavor"] = flavor_dict(
            _mapping(flavor, f"{path}.instance_type"))
    image = request_spec.get("image")
    if is_object(image):
        out["image"] = image_dict(image, f"{path}.image")
    elif image:
        out["image"] = _copy(
            _mapping(image, f"{path}.image"),
            ("id", "name", "disk_format", "container_format", "min_ram",
             "min_disk", "properties"), {}, drop_null=("properties",))
    instance = _mapping(request_spec.get("instance_properties") or {},
                        f"{path}.instance_properties")
    where = f"{path}.instance_properties"
    _copy(instance, ("project_id", "user_id", "availability_zone"), out)
    if "uuid" in instance:
        out["instance_uuid"] = instance["uuid"]
    numa = instance.get("numa_topology")
    if isinstance(numa, str):  # older senders: the primitive as JSON text
        try:
            numa = json.loads(numa)
        except ValueError:
            raise InvalidPrimitive(
                f"{where}.numa_topology: not JSON") from None
    if numa is not None:
        out["numa_topology"] = numa_dict(numa, f"{where}.numa_topology")
    if instance.get("pci_requests") is not None:
        out["pci_requests"] = pci_requests_list(
            instance["pci_requests"], f"{where}.pci_requests")
    return out


def legacy_filter_dict(props, path):
    out = _copy(props, ("ignore_hosts", "force_hosts", "force_nodes"), {},
                drop_null=("ignore_hosts", "force_hosts", "force_nodes"))
    hints = props.get("scheduler_hints")
    if hints is not None:
        # The legacy form unwraps one-value hints; Nova keeps lists.
        out["scheduler_hints"] = {
            name: [_hint(v) for v in (value if isinstance(value, list)
                                      else [value])]
            for name, value in _mapping(
                hints, f"{path}.scheduler_hints").items()}
    if props.get("instance_group") is not None:
        out["instance_group"] = instance_group_dict(
            props["instance_group"], f"{path}.instance_group")
    elif props.get("group_updated") is True:
        policies = _list(props.get("group_policies") or [],
                         f"{path}.group_policies")
        group = {"policy": policies[0] if policies else None,
                 "hosts": list(props.get("group_hosts") or []),
                 "members": list(props.get("group_members") or [])}
        if props.get("group_uuid"):
            group["uuid"] = props["group_uuid"]
        out["instance_group"] = group
    if props.get("requested_destination") is not None:
        out["requested_destination"] = destination_dict(
            props["requested_destination"],
            f"{path}.requested_destination")
    return out


def _hint(value):
    """Nova turns scalar hint values into strings (True -> 'True')."""
    return str(value) if isinstance(value, (int, float)) else value
