"""The modelled cloud of a simulation: a cloud file, a compact template,
or a live placement endpoint, as a checked ``loader.Cloud``.

A cloud file is the format of ``gantt-manage cloud load`` (README.md,
"Cloud files"). A template is a document whose only key is ``template``
and that says how many hosts of which shape, in how many availability
zones and cells::

    template:
      shapes:
        S: {inventories: {VCPU: {total: 64, allocation_ratio: 4.0},
                          MEMORY_MB: 262144, DISK_GB: 4000},
            traits: [HW_CPU_X86_AVX2], numa_nodes: 2}
      hosts:
        - {count: 400, shape: S, zones: 4, cells: 2, prefix: cn}

``zones`` is a count (zones az-1 .. az-N) or a list of names; hosts go
round-robin over zones and cells. ``numa_nodes`` splits VCPU, PCPU and
MEMORY_MB over that many child providers, as a NUMA host reports them.
"""

import copy

import jsonschema

from cloudfile import loader
from placement import file_errors

_NAME = {"type": "string", "minLength": 1, "maxLength": 100,
         "pattern": "^[A-Za-z0-9_.-]+$"}
_SHAPE = {
    "type": "object",
    "required": ["inventories"],
    "properties": {
        # Checked again, in full, when the expanded cloud is parsed.
        "inventories": {"type": "object", "minProperties": 1},
        "traits": {"type": "array", "items": {"type": "string"}},
        "numa_nodes": {"type": "integer", "minimum": 1, "maximum": 16},
        "hypervisor_type": {"type": "string", "minLength": 1},
        "hypervisor_version": {"type": ["string", "integer"]},
    },
    "additionalProperties": False,
}
_NAMES_OR_COUNT = {"oneOf": [
    {"type": "integer", "minimum": 1, "maximum": 1000},
    {"type": "array", "items": _NAME, "minItems": 1, "uniqueItems": True}]}
TEMPLATE = {
    "type": "object",
    "required": ["template"],
    "properties": {"template": {
        "type": "object",
        "required": ["hosts"],
        "properties": {
            "shapes": {"type": "object", "propertyNames": _NAME,
                       "additionalProperties": _SHAPE},
            "hosts": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "required": ["count", "shape"],
                "properties": {
                    "count": {"type": "integer", "minimum": 1,
                              "maximum": 1000000},
                    "shape": {"oneOf": [_NAME, _SHAPE]},
                    "zones": _NAMES_OR_COUNT,
                    "cells": _NAMES_OR_COUNT,
                    "aggregates": {"type": "array", "items": _NAME},
                    "prefix": _NAME,
                },
                "additionalProperties": False}},
        },
        "additionalProperties": False}},
    "additionalProperties": False,
}
_SPLIT = ("VCPU", "PCPU", "MEMORY_MB")


def read(path):
    """The cloud at ``path`` (cloud file or template); CloudFileError
    names the file and field of anything wrong."""
    return parse(file_errors.read_yaml(path, loader.CloudFileError), path)


def parse(data, path="<cloud>"):
    if isinstance(data, dict) and "template" in data:
        data = expand(data, path)
    return loader.parse(data, path)


def _names(value, prefix):
    if value is None:
        return [None]
    if isinstance(value, int):
        return [f"{prefix}-{i + 1}" for i in range(value)]
    return list(value)


def expand(data, path="<cloud>"):
    """A template document as the cloud document it stands for."""
    validator = jsonschema.Draft202012Validator(TEMPLATE)
    problems = sorted(validator.iter_errors(data),
                      key=lambda e: list(map(str, e.absolute_path)))
    if problems:
        first = problems[0]
        raise loader.CloudFileError(
            path, file_errors.field_path(first.absolute_path) or "(top)",
            first.message)
    template = data["template"]
    shapes = template.get("shapes", {})
    aggregates, providers, names = {}, [], set()
    for n, group in enumerate(template["hosts"]):
        field = f"template.hosts[{n}]"
        shape = group["shape"]
        if isinstance(shape, str):
            if shape not in shapes:
                raise loader.CloudFileError(
                    path, f"{field}.shape",
                    f"unknown shape {shape!r}; shapes: "
                    f"{', '.join(sorted(shapes)) or 'none'}")
            shape = shapes[shape]
        zones = _names(group.get("zones"), "az")
        cells = _names(group.get("cells"), "cell") if group.get(
            "cells") else ["cell1"]
        for zone in zones:
            if zone is not None:
                aggregates[f"az-{zone}" if not zone.startswith("az")
                           else zone] = {
                    "metadata": {"availability_zone": zone}}
        for name in group.get("aggregates", ()):
            aggregates.setdefault(name, {"metadata": {}})
        prefix = group.get("prefix", f"h{n}-")
        width = len(str(group["count"]))
        for i in range(group["count"]):
            name = f"{prefix}{i + 1:0{width}d}"
            if name in names:
                raise loader.CloudFileError(
                    path, f"{field}.prefix",
                    f"host name {name!r} is used twice; give each hosts "
                    "entry its own prefix")
            names.add(name)
            zone = zones[i % len(zones)]
            aggs = list(group.get("aggregates", ()))
            if zone is not None:
                aggs.append(f"az-{zone}" if not zone.startswith("az")
                            else zone)
            providers.append(_host(name, shape, cells[i % len(cells)],
                                   aggs))
    return {"aggregates": aggregates, "providers": providers}


def _host(name, shape, cell, aggs):
    inventories = copy.deepcopy(shape["inventories"])
    host = {
        "name": name,
        "compute": {
            "cell": cell,
            "hypervisor_type": shape.get("hypervisor_type", "QEMU"),
            "hypervisor_version": shape.get("hypervisor_version", "8.2.0"),
            "supported_instances": [["x86_64", "qemu", "hvm"]],
        },
        "traits": list(shape.get("traits", ())),
        "aggregates": aggs,
    }
    numa = shape.get("numa_nodes", 1)
    split = {rc: inventories.pop(rc) for rc in _SPLIT
             if rc in inventories} if numa > 1 else {}
    host["inventories"] = inventories
    if split:
        host["children"] = [
            {"name": f"{name}-numa{k}",
             "inventories": {rc: _share(inv, numa, k)
                             for rc, inv in split.items()}}
            for k in range(numa)]
    return host


def _share(inventory, parts, k):
    """Part ``k`` of ``parts`` of an inventory: its total (and reserved)
    divided as evenly as whole units allow."""
    if isinstance(inventory, int):
        inventory = {"total": inventory}
    out = dict(inventory)
    for key in ("total", "reserved"):
        if key in out and isinstance(out[key], int):
            whole, extra = divmod(out[key], parts)
            out[key] = whole + (1 if k < extra else 0)
    if "max_unit" in out and isinstance(out.get("total"), int):
        out["max_unit"] = min(out["max_unit"], out["total"])
    return out
