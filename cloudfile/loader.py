"""Read, check and load a cloud file.

Everything in the file goes into the database in one transaction: a file
that fails anywhere loads nothing. Errors name the file and the field
(``providers[1].inventories.VCPU.total``).
"""

import dataclasses
import uuid as uuidlib

import jsonschema
import os_resource_classes as orc
import os_traits

from cloudfile import hosts as hosts_mod
from cloudfile import schema
from placement import errors, file_errors
from placement.db import store
from placement.objects import (
    aggregates,
    allocations,
    inventories,
    providers,
    resource_classes,
    traits,
)

# Names without a uuid get a stable one, so that loading the same file into
# another database yields the same uuids.
NAMESPACE = uuidlib.UUID("5b0d7a4e-6a59-4b5c-9d2c-2f3e0c9a8e11")


def stable_uuid(kind, name):
    return str(uuidlib.uuid5(NAMESPACE, f"{kind}:{name}"))


class CloudFileError(file_errors.InputFileError):
    """A cloud file that cannot be loaded; says which file and field."""


@dataclasses.dataclass
class ProviderSpec:
    field: str
    name: str
    uuid: str
    parent: str | None  # a name or uuid, as written
    inventories: list
    traits: list
    aggregates: list
    compute: hosts_mod.HostSpec | None = None


@dataclasses.dataclass
class AllocationSpec:
    field: str
    consumer_uuid: str
    project_id: str
    user_id: str
    consumer_type: str | None
    resources: dict  # {provider name or uuid: {rc: amount}}


@dataclasses.dataclass
class Cloud:
    path: str
    providers: list  # parents before children
    allocations: list
    resource_classes: list
    traits: list
    hosts: list = dataclasses.field(default_factory=list)  # HostSpec
    # Every aggregate of the aggregates section (AggregateSpec).
    aggregates: list = dataclasses.field(default_factory=list)


def read(path):
    """Parse the file at ``path`` (YAML, of which JSON is a subset)."""
    return parse(file_errors.read_yaml(path, CloudFileError), path)


_field = file_errors.field_path


def _is_uuid(value):
    try:
        uuidlib.UUID(value)
        return True
    except (ValueError, TypeError, AttributeError):
        return False


def parse(data, path="<cloud>"):
    """Check ``data`` (the parsed file) and return a Cloud."""
    validator = jsonschema.Draft202012Validator(schema.CLOUD)
    problems = sorted(validator.iter_errors(data),
                      key=lambda e: list(map(str, e.absolute_path)))
    if problems:
        first = problems[0]
        raise CloudFileError(path, _field(first.absolute_path) or "(top)",
                             first.message)
    declared_aggs = _aggregate_specs(data.get("aggregates") or {})
    agg_names = {a.name: a.uuid for a in declared_aggs}
    specs = []

    def walk(items, parts, parent):
        for i, item in enumerate(items):
            here = parts + [i]
            if parent is not None and "parent" in item:
                raise CloudFileError(path, _field(here + ["parent"]),
                                     "a child listed under children names "
                                     "its parent already")
            name = item["name"]
            spec = ProviderSpec(
                field=_field(here), name=name,
                uuid=(providers.canonical_uuid(item["uuid"])
                      if "uuid" in item else stable_uuid("provider", name)),
                parent=parent if parent is not None else item.get("parent"),
                inventories=_inventories(path, here, item),
                traits=list(item.get("traits", [])),
                aggregates=[_aggregate_uuid(agg_names, a)
                            for a in item.get("aggregates", [])])
            if "compute" in item:
                if spec.parent is not None:
                    raise CloudFileError(path, _field(here + ["compute"]),
                                         "only a root provider can be a "
                                         "compute node")
                spec.compute = _host_spec(_field(here + ["compute"]), spec,
                                          item["compute"])
            specs.append(spec)
            walk(item.get("children", []), here + ["children"], spec.name)

    walk(data["providers"], ["providers"], None)
    _check_unique(path, specs)
    hosts = [s.compute for s in specs if s.compute is not None]
    _check_unique_nodes(path, hosts)
    ordered = _parents_first(path, specs)
    declared_rcs = list(data.get("resource_classes", []))
    declared_traits = list(data.get("traits", []))
    _check_names(path, ordered, declared_rcs, declared_traits)
    allocs = [
        AllocationSpec(
            field=_field(["allocations", i]),
            consumer_uuid=(providers.canonical_uuid(a["consumer"])
                           if _is_uuid(a["consumer"])
                           else stable_uuid("consumer", a["consumer"])),
            project_id=a["project_id"], user_id=a["user_id"],
            consumer_type=a.get("consumer_type"),
            resources=a["resources"])
        for i, a in enumerate(data.get("allocations", []))]
    seen = {}
    for spec in allocs:
        if spec.consumer_uuid in seen:
            raise CloudFileError(path, spec.field + ".consumer",
                                 f"consumer also allocated in "
                                 f"{seen[spec.consumer_uuid]}")
        seen[spec.consumer_uuid] = spec.field
    return Cloud(path, ordered, allocs, declared_rcs, declared_traits,
                 hosts=hosts, aggregates=declared_aggs)


def _aggregate_specs(declared):
    """AggregateSpec of each entry of the aggregates section: a uuid, or
    an object with an optional uuid and host aggregate metadata."""
    out = []
    for name, value in declared.items():
        if isinstance(value, str):
            value = {"uuid": value}
        uuid = (providers.canonical_uuid(value["uuid"]) if "uuid" in value
                else stable_uuid("aggregate", name))
        metadata = {k: hosts_mod.metadata_value(v)
                    for k, v in value.get("metadata", {}).items()}
        out.append(hosts_mod.AggregateSpec(
            field=_field(["aggregates", name]), name=name, uuid=uuid,
            metadata=metadata))
    return out


def _host_spec(field, provider, entry):
    host = entry.get("host", provider.name)
    cell = entry.get("cell")
    if cell is not None:
        cell = (providers.canonical_uuid(cell) if _is_uuid(cell)
                else stable_uuid("cell", cell))
    report = {k: entry[k] for k in ("hypervisor_type", "host_ip",
                                    "cpu_info", "supported_instances")
              if k in entry}
    if "hypervisor_version" in entry:
        report["hypervisor_version"] = hosts_mod.version_to_int(
            entry["hypervisor_version"])
    return hosts_mod.HostSpec(
        field=field, uuid=provider.uuid, host=host,
        nodename=entry.get("nodename", host), cell_uuid=cell, report=report,
        enabled=entry.get("enabled", True),
        disabled_reason=entry.get("disabled_reason"),
        forced_down=entry.get("forced_down", False))


def _check_unique_nodes(path, hosts):
    seen = {}
    for spec in hosts:
        key = (spec.host, spec.nodename)
        if key in seen:
            raise CloudFileError(path, spec.field + ".nodename",
                                 f"host {spec.host!r} has a node "
                                 f"{spec.nodename!r} in {seen[key]} already")
        seen[key] = spec.field


def _inventories(path, parts, item):
    out = []
    for rc, value in item.get("inventories", {}).items():
        fields = {"total": value} if isinstance(value, int) else dict(value)
        inv = inventories.Inventory(rc, **fields)
        try:
            inv.check("(new)")
        except errors.PlacementError as exc:
            raise CloudFileError(
                path, _field(parts + ["inventories", rc]),
                exc.message) from exc
        out.append(inv)
    return out


def _aggregate_uuid(names, value):
    if value in names:
        return providers.canonical_uuid(names[value])
    if _is_uuid(value):
        return providers.canonical_uuid(value)
    return stable_uuid("aggregate", value)


def _check_unique(path, specs):
    names, uuids = {}, {}
    for spec in specs:
        if spec.name in names:
            raise CloudFileError(path, spec.field + ".name",
                                 f"{spec.name!r} is also the name of "
                                 f"{names[spec.name]}")
        if spec.uuid in uuids:
            raise CloudFileError(path, spec.field + ".uuid",
                                 f"{spec.uuid} is also the uuid of "
                                 f"{uuids[spec.uuid]}")
        names[spec.name] = spec.field
        uuids[spec.uuid] = spec.field


def _parents_first(path, specs):
    """Specs ordered so that a parent in the file precedes its children;
    a parent not in the file must exist in the database already."""
    by_ref = {s.name: s for s in specs}
    by_ref.update({s.uuid: s for s in specs})
    ordered, placed = [], set()

    def place(spec, chain):
        if spec.uuid in placed:
            return
        if spec.uuid in chain:
            raise CloudFileError(path, spec.field + ".parent",
                                 "parents form a loop")
        parent = by_ref.get(spec.parent) if spec.parent else None
        if parent is not None:
            place(parent, chain | {spec.uuid})
        elif spec.parent is not None and not _is_uuid(spec.parent):
            raise CloudFileError(path, spec.field + ".parent",
                                 f"no provider named {spec.parent!r} in "
                                 f"this file")
        placed.add(spec.uuid)
        ordered.append(spec)

    for spec in specs:
        place(spec, frozenset())
    return ordered


def _check_names(path, specs, declared_rcs, declared_traits):
    for i, rc in enumerate(declared_rcs):
        if not rc.startswith(orc.CUSTOM_NAMESPACE):
            raise CloudFileError(path, _field(["resource_classes", i]),
                                 f"{rc} is not a CUSTOM_ resource class")
    for i, trait in enumerate(declared_traits):
        if not trait.startswith(os_traits.CUSTOM_NAMESPACE):
            raise CloudFileError(path, _field(["traits", i]),
                                 f"{trait} is not a CUSTOM_ trait")
    standard_traits = set(os_traits.get_traits())
    for spec in specs:
        for inv in spec.inventories:
            rc = inv.resource_class
            if rc not in orc.STANDARDS and not rc.startswith(
                    orc.CUSTOM_NAMESPACE):
                raise CloudFileError(
                    path, f"{spec.field}.inventories.{rc}",
                    f"unknown resource class {rc} (standard classes are "
                    f"those of os-resource-classes; others start with "
                    f"{orc.CUSTOM_NAMESPACE})")
        for j, trait in enumerate(spec.traits):
            if trait not in standard_traits and not trait.startswith(
                    os_traits.CUSTOM_NAMESPACE):
                raise CloudFileError(
                    path, f"{spec.field}.traits[{j}]",
                    f"unknown trait {trait} (standard traits are those of "
                    f"os-traits; others start with "
                    f"{os_traits.CUSTOM_NAMESPACE})")


@dataclasses.dataclass
class LoadSummary:
    providers: int
    inventories: int
    consumers: int
    allocations: int
    hosts: int = 0
    host_aggregates: int = 0


def load(db, cloud):
    """Load ``cloud`` into the database, all of it or nothing."""
    try:
        return store.writer(_load)(db, cloud)
    except _AtField as failure:
        raise CloudFileError(cloud.path, failure.field,
                             failure.error.message) from failure.error
    except hosts_mod.HostLoadError as failure:
        raise CloudFileError(cloud.path, failure.field,
                             failure.message) from failure


class _AtField(Exception):
    def __init__(self, field, error):
        super().__init__(field)
        self.field = field
        self.error = error


def _at(field, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except errors.PlacementError as exc:
        raise _AtField(field, exc) from exc


def _load(txn, cloud):
    for rc in _custom(cloud.resource_classes, cloud.providers,
                      lambda s: [i.resource_class for i in s.inventories]):
        resource_classes.ensure(txn, rc)
    for trait in _custom(cloud.traits, cloud.providers, lambda s: s.traits):
        traits.ensure(txn, trait)
    uuid_of = {}
    for spec in cloud.providers:
        parent = uuid_of.get(spec.parent, spec.parent)
        _at(spec.field, providers.create, txn, spec.name, uuid=spec.uuid,
            parent_uuid=parent)
        uuid_of[spec.name] = uuid_of[spec.uuid] = spec.uuid
        if spec.inventories:
            _at(spec.field + ".inventories", inventories.replace_all, txn,
                spec.uuid, None, spec.inventories)
        if spec.traits:
            _at(spec.field + ".traits", traits.set_for_provider, txn,
                spec.uuid, None, spec.traits)
        if spec.aggregates:
            _at(spec.field + ".aggregates", aggregates.set_for_provider,
                txn, spec.uuid, spec.aggregates)
    count = 0
    for spec in cloud.allocations:
        resources = {uuid_of.get(ref, ref): amounts
                     for ref, amounts in spec.resources.items()}
        for ref in spec.resources:
            if ref not in uuid_of and not _is_uuid(ref):
                raise _AtField(spec.field + ".resources",
                               errors.BadRequest(
                                   f"no provider named {ref!r} in this "
                                   f"file"))
        write = allocations.ConsumerAllocations(
            spec.consumer_uuid, resources, project_id=spec.project_id,
            user_id=spec.user_id, consumer_generation=None,
            consumer_type=spec.consumer_type)
        _at(spec.field, allocations.replace, txn, [write])
        count += sum(len(a) for a in resources.values())
    hosts, host_aggregates = hosts_mod.load(txn, cloud, uuid_of)
    return LoadSummary(
        providers=len(cloud.providers),
        inventories=sum(len(s.inventories) for s in cloud.providers),
        consumers=len(cloud.allocations), allocations=count,
        hosts=hosts, host_aggregates=host_aggregates)


def _custom(declared, specs, names_of):
    """Declared custom names plus the custom names the providers use."""
    found = dict.fromkeys(declared)
    for spec in specs:
        for name in names_of(spec):
            if name.startswith("CUSTOM_"):
                found[name] = None
    return list(found)
