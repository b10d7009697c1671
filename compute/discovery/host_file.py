"""The YAML host file: a description of the host that stands in for
discovery (``discover: false``) or changes and adds to it (the default).
The format is in docs/compute.md, "Discovery and the host file"; errors
name the file and the field, as for gantt's other input files."""

import dataclasses

import jsonschema

from compute.discovery import traits as traits_mod
from compute.discovery.cpus import CpuConfigError, cpus_from_sets
from compute.discovery.cpuset import CpuSetError, parse_cpu_set
from compute.discovery.model import (
    Cpus,
    Disk,
    Gpu,
    HostDescription,
    HugePages,
    MdevType,
    Memory,
    NumaNode,
    PhysicalFunction,
)
from placement import file_errors


class HostFileError(file_errors.InputFileError):
    """``path: field: message`` of a host file that cannot be used."""


_COUNT = {"type": "integer", "minimum": 0}
_NODE = {"type": ["integer", "null"], "minimum": 0}
_HEX = {"type": "string", "pattern": "^(0x)?[0-9a-fA-F]{1,8}$"}
_PCI = {"type": "string",
        "pattern": r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}"
                   r"\.[0-7]$"}
_HUGEPAGES = {"type": "array", "items": {
    "type": "object", "additionalProperties": False,
    "required": ["size_kb", "total"],
    "properties": {"size_kb": {"type": "integer", "minimum": 1},
                   "total": _COUNT, "free": _COUNT}}}

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "discover": {"type": "boolean"},
        "hostname": {"type": "string", "minLength": 1},
        "cpus": {"type": "object", "additionalProperties": False,
                 "properties": {"online": {"type": "string"},
                                "shared_set": {"type": "string"},
                                "dedicated_set": {"type": "string"}}},
        "memory": {"type": "object", "additionalProperties": False,
                   "properties": {"total_mb": _COUNT,
                                  "reserved_mb": _COUNT}},
        "numa_nodes": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["id", "cpus", "memory_mb"],
            "properties": {"id": _COUNT, "cpus": {"type": "string"},
                           "memory_mb": _COUNT,
                           "hugepages": _HUGEPAGES}}},
        "hugepages": _HUGEPAGES,
        "physical_functions": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["address"],
            "properties": {"address": _PCI, "interface": {"type": "string"},
                           "vendor_id": _HEX, "product_id": _HEX,
                           "vf_product_id": _HEX,
                           "total_vfs": _COUNT, "num_vfs": _COUNT,
                           "numa_node": _NODE,
                           "physnet": {"type": ["string", "null"]}}}},
        "gpus": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["address"],
            "properties": {
                "address": _PCI, "vendor_id": _HEX, "product_id": _HEX,
                "numa_node": _NODE,
                "mdev_types": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False,
                    "required": ["id", "available_instances"],
                    "properties": {
                        "id": {"type": "string", "minLength": 1},
                        "name": {"type": "string"},
                        "available_instances": _COUNT,
                        "device_api": {"type": "string"},
                        "created": _COUNT}}}}}},
        "disk": {"type": "object", "additionalProperties": False,
                 "required": ["total_gb"],
                 "properties": {"path": {"type": "string"},
                                "total_gb": _COUNT, "free_gb": _COUNT,
                                "reserved_gb": _COUNT}},
        "traits": {"type": "array", "items": {"type": "string"}},
    },
    # Without discovery, the file must say what the host has.
    "if": {"required": ["discover"],
           "properties": {"discover": {"const": False}}},
    "then": {"required": ["cpus", "memory"],
             "properties": {"cpus": {"required": ["online"]},
                            "memory": {"required": ["total_mb"]}}},
}


def load_host_file(path):
    """The checked document of the host file at ``path`` (a dict)."""
    path = str(path)
    data = file_errors.read_yaml(path, HostFileError)
    if data is None:
        data = {}
    return check(data, path)


def check(data, path="<host file>"):
    validator = jsonschema.Draft202012Validator(SCHEMA)
    problems = sorted(validator.iter_errors(data),
                      key=lambda e: list(map(str, e.absolute_path)))
    if problems:
        first = problems[0]
        raise HostFileError(
            path, file_errors.field_path(first.absolute_path) or "(top)",
            first.message)
    return data


def discovers(data):
    return data.get("discover", True)


def _cpu_set(path, field, spec):
    try:
        return parse_cpu_set(spec)
    except CpuSetError as exc:
        raise HostFileError(path, field, str(exc)) from None


def _hugepages(items):
    return {h["size_kb"]: HugePages(size_kb=h["size_kb"], total=h["total"],
                                    free=h.get("free", h["total"]))
            for h in items}


def _merge(obj, item, cls, key):
    """A ``cls`` from ``obj`` (or a new one) with ``item``'s fields."""
    fields = {f.name for f in dataclasses.fields(cls)}
    values = {k: v for k, v in item.items() if k in fields and k != key}
    if obj is None:
        return cls(**{key: item[key], **values})
    return dataclasses.replace(obj, **values)


def apply(host, data, path="<host file>", shared_set=None,
          dedicated_set=None):
    """``host`` changed by the checked document ``data``: a section
    replaces what discovery found for it (field by field for cpus,
    memory and disk; per id/size/address for the lists), traits are
    added. ``shared_set``/``dedicated_set``: the configured CPU sets,
    which the file's ``cpus`` section overrides."""
    host = dataclasses.replace(host)
    if "hostname" in data:
        host.hostname = data["hostname"]
    cpus = data.get("cpus", {})
    online = (_cpu_set(path, "cpus.online", cpus["online"])
              if "online" in cpus else host.cpus.online)
    for name in ("shared_set", "dedicated_set"):
        if name in cpus:
            _cpu_set(path, f"cpus.{name}", cpus[name])
    if cpus:
        try:
            host.cpus = cpus_from_sets(
                online, cpus.get("shared_set", shared_set),
                cpus.get("dedicated_set", dedicated_set))
        except CpuConfigError as exc:
            raise HostFileError(path, "cpus", str(exc)) from None
    memory = data.get("memory", {})
    host.memory = Memory(
        total_mb=memory.get("total_mb", host.memory.total_mb),
        reserved_mb=memory.get("reserved_mb", host.memory.reserved_mb))
    nodes = {n.id: n for n in host.numa_nodes}
    for i, item in enumerate(data.get("numa_nodes", [])):
        nodes[item["id"]] = NumaNode(
            id=item["id"],
            cpus=_cpu_set(path, f"numa_nodes[{i}].cpus", item["cpus"]),
            memory_mb=item["memory_mb"],
            hugepages=_hugepages(item.get("hugepages", [])))
    host.numa_nodes = [nodes[k] for k in sorted(nodes)]
    host.hugepages = {**host.hugepages,
                      **_hugepages(data.get("hugepages", []))}
    host.physical_functions = _by_address(
        host.physical_functions, data.get("physical_functions", []),
        lambda old, item: _pf(old, item, path))
    host.gpus = _by_address(host.gpus, data.get("gpus", []), _gpu)
    if "disk" in data:
        d = data["disk"]
        old = host.disk
        host.disk = Disk(
            path=d.get("path", old.path if old else ""),
            total_gb=d["total_gb"],
            free_gb=d.get("free_gb", d["total_gb"]),
            reserved_gb=d.get("reserved_gb", old.reserved_gb if old else 0))
    added = []
    for i, name in enumerate(data.get("traits", [])):
        try:
            added.append(traits_mod.check_trait(name))
        except traits_mod.TraitError as exc:
            raise HostFileError(path, f"traits[{i}]", str(exc)) from None
    host.traits = sorted(set(host.traits) | set(added))
    return host


def _by_address(current, items, make):
    found = {d.address: d for d in current}
    for item in items:
        found[item["address"]] = make(found.get(item["address"]), item)
    return [found[a] for a in sorted(found)]


def _pf(old, item, path):
    item = {k: (v.lower().removeprefix("0x") if k.endswith("_id") else v)
            for k, v in item.items()}
    if old is None:
        item = {"vendor_id": None, "product_id": None, "total_vfs":
                item.get("num_vfs", 0), "num_vfs": 0, **item}
    pf = _merge(old, item, PhysicalFunction, "address")
    if pf.num_vfs > pf.total_vfs:
        raise HostFileError(path, f"physical_functions {pf.address}",
                            f"num_vfs {pf.num_vfs} is more than total_vfs "
                            f"{pf.total_vfs}")
    pf.vfs = [dataclasses.replace(vf, **_vf_fields(item))
              for vf in pf.vfs]
    return pf


# A PF's fields in the file that its VFs share: the file describes the
# card, and must not leave discovered VFs saying otherwise.
_PF_TO_VF = {"vendor_id": "vendor_id", "vf_product_id": "product_id",
             "numa_node": "numa_node"}


def _vf_fields(item):
    return {vf_key: item[key] for key, vf_key in _PF_TO_VF.items()
            if key in item}


def _gpu(old, item):
    item = {k: (v.lower().removeprefix("0x") if k.endswith("_id") else v)
            for k, v in item.items()}
    types = dict(old.mdev_types) if old else {}
    for t in item.pop("mdev_types", []):
        types[t["id"]] = MdevType(
            id=t["id"], name=t.get("name"),
            available_instances=t["available_instances"],
            device_api=t.get("device_api"), created=t.get("created", 0))
    if old is None:
        item = {"vendor_id": None, "product_id": None, **item}
    gpu = _merge(old, item, Gpu, "address")
    gpu.mdev_types = types
    return gpu


def empty_host(hostname, reserved_mb=0):
    """The base a ``discover: false`` file is applied to."""
    return HostDescription(
        hostname=hostname,
        cpus=Cpus(online=frozenset(), shared=frozenset()),
        memory=Memory(total_mb=0, reserved_mb=reserved_mb))
