"""From a RequestSpec to an allocation candidates query, as Nova builds it.

The flavor gives the unsuffixed group's VCPU, MEMORY_MB and DISK_GB
(DISK_GB = root + ephemeral + swap rounded up to GB; no root disk when
booting from volume). Flavor extra specs then override and add:
``resources[S]:CLASS=N``, ``trait[S]:NAME=required|forbidden``,
``group_policy``, ``hw:cpu_policy`` (dedicated: PCPU instead of VCPU,
one more with ``hw:emulator_threads_policy=isolate``; mixed: PCPU for
``hw:cpu_dedicated_mask``, VCPU for the rest) and ``hw:cpu_thread_policy``
with either (isolate: no HW_CPU_HYPERTHREADING; require:
HW_CPU_HYPERTHREADING), also from the image's ``hw_cpu_policy`` /
``hw_cpu_thread_policy``. Suffixed groups that ask VCPU or PCPU replace
the flavor's vcpus. Image ``trait:NAME=required``
properties are required traits. The requested_resources groups (ports,
devices) become suffixed groups named by their requester_id.

Then Nova 34's request filters, in Nova's order and with Nova's
semantics. Below, ``hw:NAME`` is the flavor extra spec or else the image
property ``hw_NAME``: when both are set they must agree. Booleans read
as oslo's bool_from_string does (1, t, true, on, y, yes in any case are
true, anything else false). A conflict, or a value Nova refuses, is an
InvalidRequestSpec naming the extra spec or property; an image value
Nova's objects would not hold (hw_sound_model, hw_tpm_version,
hw_tpm_model, hw_ephemeral_encryption_format) is refused first.

- ``limit_tenants_to_placement_aggregate``: member_of the aggregates
  with a ``filter_tenant_id*`` key whose value is the project (one
  project per key, as Nova matches it);
- the availability zone becomes member_of the aggregates carrying it;
  when none does (the default zone, an unknown zone) nothing is added,
  as Nova does. ``[scheduler] strict_availability_zones`` keeps the rule
  of Nova's removed AvailabilityZoneFilter instead: the default zone
  means no zone aggregate, an unknown zone means no host;
- ``query_placement_for_image_type_support``: the root must have
  COMPUTE_IMAGE_TYPE_<disk format> (not when booting from volume);
- COMPUTE_STATUS_DISABLED is a forbidden root trait, always;
- ``enable_isolated_aggregate_filtering``: aggregates requiring a trait
  (``trait:NAME=required`` metadata) the request does not ask for are
  forbidden (the traits of every group count);
- ``image_metadata_prefilter``: hw_cdrom_bus, hw_disk_bus,
  hw_video_model, hw_vif_model, hw_architecture,
  hw_emulation_architecture and hw_viommu_model become required root
  traits; when one names a trait os-traits does not know, none is added
  (as Nova does; Nova's hw_viommu_model traits never exist, so that
  property turns the filter off);
- ``accel:device_profile``: COMPUTE_ACCELERATORS (the profile's request
  groups arrive in requested_resources, fetched from Cyborg by Nova's
  API and conductor);
- hw:virtio_packed_ring: COMPUTE_NET_VIRTIO_PACKED;
- a PCI request asking a remote managed device (the tag
  ``remote_managed`` true, which Nova's API sets on the PCI request of a
  port whose vnic type is remote-managed): COMPUTE_REMOTE_MANAGED_PORTS;
- hw:ephemeral_encryption: COMPUTE_EPHEMERAL_ENCRYPTION, and with
  hw:ephemeral_encryption_format COMPUTE_EPHEMERAL_ENCRYPTION_<format>;
- hw:sound_model virtio: COMPUTE_SOUND_MODEL_VIRTIO;
- a vTPM (hw:tpm_version, with hw:tpm_model):
  COMPUTE_SECURITY_TPM_SECRET_SECURITY_<USER, HOST or DEPLOYMENT: the
  flavor's hw:tpm_secret_security, user when unset>;
- OWNER_NOVA on the root and on the request groups of the flavor's PCI
  requests, when every nova-compute service is at version 73 or later
  (never on gantt's own records, which know no versions);
- a requested destination becomes in_tree (host and node) and member_of
  / forbidden member_of (its aggregates).

Nova's routed_networks_filter asks Neutron for the segments of the
requested networks; gantt does not, and only warns (once) when
``[scheduler] query_placement_for_routed_network_aggregates`` is set.

``limit`` is ``[scheduler] max_placement_results``, left out when a
server group or a same_host / different_host hint could need hosts a
limit would cut off, when hosts are forced, and when a requested
destination host has several nodes.

A dedicated-CPU request also carries a fallback query asking VCPU, for
compute nodes that do not report PCPU yet, unless ``[workarounds]
disable_fallback_pcpu_query`` is set. The manager runs the fallback only
when the main query finds nothing.
"""

import dataclasses
import difflib
import logging
import math
import re
import typing
import urllib.parse

import os_resource_classes
import os_traits

from placement import option_values
from placement.candidates import request as cand
from scheduler import errors

LOG = logging.getLogger(__name__)

_RESOURCES = re.compile(r"^resources([a-zA-Z0-9_-]{0,64}):(.+)$")
_TRAIT = re.compile(r"^trait([a-zA-Z0-9_-]{0,64}):(.+)$")
# What urlencode (quote_plus, safe=":,!") leaves as it is.
_UNQUOTED = re.compile(r"[A-Za-z0-9_.~:,!-]*")
# The resource classes Nova's API lets a flavor ask for: the standard
# ones and custom ones by their form.
_STANDARD_CLASSES = frozenset(os_resource_classes.STANDARDS)
_CUSTOM_CLASS = re.compile(r"CUSTOM_[A-Z0-9_]+")
# Flavor extra specs gantt reads whose other values Nova 34's API
# refuses.
_FLAVOR_CHOICES = {
    "hw:cpu_policy": ("shared", "dedicated", "mixed"),
    "hw:cpu_thread_policy": ("prefer", "isolate", "require"),
    "hw:emulator_threads_policy": ("share", "isolate"),
}
_KNOWN_TRAITS = frozenset(os_traits.get_traits())
_HYPERTHREADING = "HW_CPU_HYPERTHREADING"
_DISABLED = "COMPUTE_STATUS_DISABLED"
# Image property -> trait prefix, for image_metadata_prefilter (Nova's
# table: hw_viommu_model's traits are COMPUTE_VIOMMU_MODEL_* in
# os-traits, so Nova never finds them).
_IMAGE_TRAIT_PREFIXES = {
    "hw_cdrom_bus": "COMPUTE_STORAGE_BUS_",
    "hw_disk_bus": "COMPUTE_STORAGE_BUS_",
    "hw_video_model": "COMPUTE_GRAPHICS_MODEL_",
    "hw_vif_model": "COMPUTE_NET_VIF_MODEL_",
    "hw_architecture": "HW_ARCH_",
    "hw_emulation_architecture": "COMPUTE_ARCH_",
    "hw_viommu_model": "COMPUTE_VIOMMU_",
}
# Nova's values for what the request filters read.
_SOUND_MODELS = ("sb16", "es1370", "pcspk", "ac97", "ich6", "ich9", "usb",
                 "virtio")
_TPM_VERSIONS = ("1.2", "2.0")
_TPM_MODELS = ("tpm-tis", "tpm-crb")
_EPHEMERAL_FORMATS = ("plain", "luks", "luksv2")
# Image properties that Nova's objects keep to their values.
_IMAGE_CHOICES = {
    "hw_sound_model": _SOUND_MODELS,
    "hw_tpm_version": _TPM_VERSIONS,
    "hw_tpm_model": _TPM_MODELS,
    "hw_ephemeral_encryption_format": _EPHEMERAL_FORMATS,
}
_TPM_SECRET_SECURITY = {
    "user": "COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER",
    "host": "COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST",
    "deployment": "COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT",
}
# oslo's bool_from_string: these are true, anything else false.
_TRUE = frozenset(("1", "t", "true", "on", "y", "yes"))
_OWNER = "OWNER_NOVA"
# The nova-compute service version from which computes report OWNER_NOVA.
_OWNER_MIN_VERSION = 73
# Nova options gantt accepts but cannot honour, already warned about.
_WARNED = set()
# Query strings by request shape (ResourceRequest.query), at most so
# many kept.
_QUERIES: dict = {}
_QUERIES_KEPT = 1024

# Hints whose hosts a placement limit could drop.
_UNLIMITED_HINTS = ("group", "same_host", "different_host")


class NoHostsPossible(errors.SchedulerError):
    """The request rules out every host before placement is asked (an
    unknown destination, a project without its aggregate, an unknown
    zone with strict_availability_zones)."""


@dataclasses.dataclass
class Group:
    suffix: str = ""
    resources: dict = dataclasses.field(default_factory=dict)
    required: set = dataclasses.field(default_factory=set)
    forbidden: set = dataclasses.field(default_factory=set)
    # Each entry: a set of any-of aggregate uuids; entries are ANDed.
    member_of: list = dataclasses.field(default_factory=list)
    forbidden_aggs: set = dataclasses.field(default_factory=set)
    in_tree: str | None = None


@dataclasses.dataclass
class ResourceRequest:
    groups: dict  # suffix -> Group; "" is the unsuffixed group
    group_policy: str | None = None
    limit: int | None = None
    root_required: set = dataclasses.field(default_factory=set)
    root_forbidden: set = dataclasses.field(default_factory=set)
    same_subtree: list = dataclasses.field(default_factory=list)
    # Host-side limits a placement query cannot say: the allowed host
    # names and cell (None: any).
    hosts: frozenset | None = None
    cell: str | None = None
    # The VCPU query to try when this (PCPU) one finds nothing.
    fallback: "ResourceRequest | None" = None

    @property
    def unsuffixed(self):
        return self.groups[""]

    def candidates_request(self):
        """The placement.candidates request for this query."""
        groups = []
        for suffix, g in self.groups.items():
            resources = {rc: n for rc, n in g.resources.items() if n}
            if suffix and not resources and not g.required \
                    and not g.member_of:
                continue
            groups.append(cand.RequestGroup(
                suffix=suffix, resources=resources,
                required_traits=tuple(frozenset([t])
                                      for t in sorted(g.required)),
                forbidden_traits=frozenset(g.forbidden),
                member_of=tuple(frozenset(m) for m in g.member_of),
                forbidden_aggs=frozenset(g.forbidden_aggs),
                in_tree=g.in_tree))
        return cand.CandidatesRequest(
            groups=tuple(groups), limit=self.limit,
            group_policy=self.group_policy,
            root_required=frozenset(self.root_required),
            root_forbidden=frozenset(self.root_forbidden),
            same_subtrees=tuple(tuple(s) for s in self.same_subtree))

    def query(self):
        """The GET /allocation_candidates query string (microversion
        1.39) that asks the same: for explain output and logs (the
        decision log writes one for every request, and most requests
        ask what an earlier one asked)."""
        shape = self._shape()
        found = _QUERIES.get(shape)
        if found is None:
            if len(_QUERIES) >= _QUERIES_KEPT:
                _QUERIES.clear()
            found = _QUERIES[shape] = self._query()
        return found

    def _shape(self):
        """What query() reads, as a key: equal keys, equal queries (two
        equal sets may iterate in other orders: a miss, not a wrong
        answer). Flat, each part led by its length: the cheapest key
        to build (the decision log asks for every request)."""
        key = [self.group_policy, self.limit, len(self.root_required),
               *self.root_required, len(self.root_forbidden),
               *self.root_forbidden, len(self.same_subtree)]
        for subtree in self.same_subtree:
            key += (len(subtree), *subtree)
        for suffix, g in self.groups.items():
            key += (suffix, g.in_tree, len(g.resources),
                    *g.resources.items(), len(g.required), *g.required,
                    len(g.forbidden), *g.forbidden, len(g.forbidden_aggs),
                    *g.forbidden_aggs, len(g.member_of))
            for any_of in g.member_of:
                key += (len(any_of), *any_of)
        return tuple(key)

    def _query(self):
        pairs = []
        for suffix, g in self.groups.items():
            resources = ",".join(f"{rc}:{n}" for rc, n in
                                 sorted(g.resources.items()) if n)
            if resources:
                pairs.append((f"resources{suffix}", resources))
            traits = sorted(g.required) + sorted(f"!{t}" for t in
                                                 g.forbidden)
            if traits:
                pairs.append((f"required{suffix}", ",".join(traits)))
            for any_of in g.member_of:
                pairs.append((f"member_of{suffix}",
                              "in:" + ",".join(sorted(any_of))))
            if g.forbidden_aggs:
                pairs.append((f"member_of{suffix}",
                              "!in:" + ",".join(sorted(g.forbidden_aggs))))
            if g.in_tree:
                pairs.append((f"in_tree{suffix}", g.in_tree))
        roots = sorted(self.root_required) + sorted(
            f"!{t}" for t in self.root_forbidden)
        if roots:
            pairs.append(("root_required", ",".join(roots)))
        for subtree in self.same_subtree:
            pairs.append(("same_subtree", ",".join(subtree)))
        if self.group_policy:
            pairs.append(("group_policy", self.group_policy))
        if self.limit:
            pairs.append(("limit", str(self.limit)))
        if _UNQUOTED.fullmatch("".join(k + v for k, v in pairs)):
            # Nothing to quote (names, uuids, numbers: the usual case,
            # and the decision log's, which writes it for every
            # request): joined, as urlencode would, in a tenth of its
            # time.
            return "&".join(f"{k}={v}" for k, v in pairs)
        return urllib.parse.urlencode(pairs, safe=":,!")


def from_spec(spec, conf, table):
    """The ResourceRequest of ``spec`` (a RequestSpec) for hosts in
    ``table`` (a HostStateTable: aggregates and nodes, lock held).
    Raises InvalidRequestSpec for bad extra specs or image properties
    (or the two in conflict) and NoHostsPossible when the request
    filters leave no host."""
    specs = dict(spec.flavor.extra_specs)
    image = dict(spec.image.properties)
    request = ResourceRequest(groups={"": Group()})
    _flavor_resources(request, spec)
    _extra_specs(request, specs)
    if "resources:VCPU" not in specs and any(
            {"VCPU", "PCPU"} & g.resources.keys()
            for suffix, g in request.groups.items() if suffix):
        # CPUs asked per group (a group per NUMA node): the flavor's
        # vcpus are those, not more on top.
        request.unsuffixed.resources.pop("VCPU", None)
    cpu_policy = specs.get("hw:cpu_policy") or image.get("hw_cpu_policy")
    fallback = None
    if cpu_policy in ("dedicated", "mixed"):
        fallback = _pcpu(request, spec, specs, image, cpu_policy)
    _image_traits(request, image)
    _requested_groups(request, spec)
    level = spec.request_level_params
    request.root_required.update(level.root_required)
    request.root_forbidden.update(level.root_forbidden)
    request.same_subtree.extend(list(s) for s in level.same_subtree)
    options = option_values.read(conf, _read_options)
    _request_filters(request, spec, conf, options, table)
    if not request.group_policy and len(request.groups) > 2:
        # Placement needs a policy with several suffixed groups; Nova
        # sends none for the groups of ports when the flavor is silent.
        request.group_policy = "none"
    request.limit = _limit(spec, options)
    if request.hosts is not None and request.unsuffixed.in_tree is None:
        request.limit = None  # several nodes: a limit could cut some off
    if fallback is not None and \
            not conf.workarounds.disable_fallback_pcpu_query:
        request.fallback = _as_fallback(request, fallback)
    return request


def _flavor_resources(request, spec):
    flavor = spec.flavor
    disk = flavor.ephemeral_gb + math.ceil(flavor.swap / 1024)
    if not spec.is_bfv:
        disk += flavor.root_gb
    request.unsuffixed.resources.update(
        VCPU=flavor.vcpus, MEMORY_MB=flavor.memory_mb, DISK_GB=disk)


def _group(request, suffix):
    group = request.groups.get(suffix)
    if group is None:
        group = request.groups[suffix] = Group(suffix)
    return group


def _bad(key, why):
    raise errors.InvalidRequestSpec(f"flavor.extra_specs.{key}: {why}")


def _extra_specs(request, specs):
    for key, value in specs.items():
        if key == "group_policy":
            if value not in ("none", "isolate"):
                _bad(key, f"expected none or isolate, got {value!r}")
            request.group_policy = value
            continue
        if key in _FLAVOR_CHOICES and value not in _FLAVOR_CHOICES[key]:
            _bad(key, f"expected one of {', '.join(_FLAVOR_CHOICES[key])}, "
                      f"got {value!r}")
        found = _RESOURCES.match(key)
        if found:
            suffix, rc = found.groups()
            if rc not in _STANDARD_CLASSES and not _CUSTOM_CLASS.fullmatch(
                    rc):
                like = difflib.get_close_matches(
                    rc, sorted(_STANDARD_CLASSES), n=1)
                hint = f" (did you mean {like[0]}?)" if like else ""
                _bad(key, f"unknown resource class {rc}: neither a "
                          f"standard class nor CUSTOM_*{hint}")
            try:
                amount = int(value)
            except ValueError:
                _bad(key, f"expected an integer, got {value!r}")
            if amount < 0:
                _bad(key, f"expected 0 or more, got {amount}")
            _group(request, suffix).resources[rc] = amount
            continue
        found = _TRAIT.match(key)
        if found:
            suffix, trait = found.groups()
            if value == "required":
                _group(request, suffix).required.add(trait)
            elif value == "forbidden":
                _group(request, suffix).forbidden.add(trait)
            else:
                _bad(key, f"expected required or forbidden, got {value!r}")


def _cpuset(text, what):
    """Cpu ids of a Nova cpuset string such as "0-3,^2,6"."""
    include, exclude = set(), set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        target = exclude if part.startswith("^") else include
        part = part.lstrip("^")
        try:
            if "-" in part:
                low, high = (int(x) for x in part.split("-", 1))
                if low > high:
                    raise ValueError
                target.update(range(low, high + 1))
            else:
                target.add(int(part))
        except ValueError:
            _bad(what, f"not a CPU set: {text!r}")
    return include, exclude


def _pcpu(request, spec, specs, image, policy):
    """Turn the flavor's VCPU into PCPU (dedicated) or a PCPU/VCPU split
    (mixed); returns the VCPU amount of the fallback query, or None."""
    vcpus = spec.flavor.vcpus
    group = request.unsuffixed
    asked = {k.split(":", 1)[1] for k in specs if k.startswith("resources:")}
    if asked & {"PCPU", "VCPU"}:
        return None  # the operator spelt the classes out: keep them
    thread = specs.get("hw:cpu_thread_policy") or image.get(
        "hw_cpu_thread_policy")
    if thread == "isolate":
        group.forbidden.add(_HYPERTHREADING)
    elif thread == "require":
        group.required.add(_HYPERTHREADING)
    elif thread not in (None, "prefer"):
        _bad("hw:cpu_thread_policy",
             f"expected prefer, isolate or require, got {thread!r}")
    if policy == "dedicated":
        emulator = specs.get("hw:emulator_threads_policy") or image.get(
            "hw_emulator_threads_policy")
        group.resources.pop("VCPU", None)
        # An isolated emulator thread takes a dedicated CPU of its own.
        group.resources["PCPU"] = vcpus + (emulator == "isolate")
        return vcpus
    mask = specs.get("hw:cpu_dedicated_mask")
    if not mask:
        _bad("hw:cpu_dedicated_mask", "required with hw:cpu_policy=mixed")
    include, exclude = _cpuset(mask, "hw:cpu_dedicated_mask")
    every = set(range(vcpus))
    dedicated = (every - exclude) if not include else (include - exclude)
    if not dedicated or not dedicated <= every or dedicated == every:
        _bad("hw:cpu_dedicated_mask",
             f"must name some but not all of the {vcpus} vCPUs: {mask!r}")
    group.resources["PCPU"] = len(dedicated)
    group.resources["VCPU"] = vcpus - len(dedicated)
    return None


def _as_fallback(request, vcpus):
    fallback = dataclasses.replace(
        request, fallback=None,
        groups={s: dataclasses.replace(
            g, resources=dict(g.resources), required=set(g.required),
            forbidden=set(g.forbidden)) for s, g in request.groups.items()})
    group = fallback.unsuffixed
    group.resources.pop("PCPU", None)
    group.resources["VCPU"] = vcpus
    group.required.discard(_HYPERTHREADING)
    group.forbidden.discard(_HYPERTHREADING)
    return fallback


def _image_traits(request, image):
    for key, value in image.items():
        if key.startswith("trait:") and value == "required":
            request.unsuffixed.required.add(key[len("trait:"):])
    for trait in image.get("traits_required") or ():
        request.unsuffixed.required.add(trait)


def _requested_suffix(index, group):
    """The suffix of a requested group: its requester_id, made valid."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_",
                  group.requester_id or f"_group{index + 1}")[:64]


def _requested_groups(request, spec):
    for i, g in enumerate(spec.requested_resources):
        group = _group(request, _requested_suffix(i, g))
        group.resources.update(g.resources)
        group.required.update(g.required_traits)
        group.forbidden.update(g.forbidden_traits)
        group.member_of.extend(set(a) for a in g.aggregates)
        if g.in_tree:
            group.in_tree = g.in_tree


def _limit(spec, options):
    if spec.instance_group is not None or spec.force_hosts \
            or spec.force_nodes:
        return None
    if any(spec.scheduler_hints.get(h) for h in _UNLIMITED_HINTS):
        return None
    return options.max_placement_results


class _Options(typing.NamedTuple):
    """The [scheduler] options every request reads."""

    routed_networks: bool
    tenant_aggregates: bool
    image_type: bool
    isolated_aggregates: bool
    image_metadata: bool
    max_placement_results: int


def _read_options(conf):
    options = conf.scheduler
    return _Options(
        options.query_placement_for_routed_network_aggregates,
        options.limit_tenants_to_placement_aggregate,
        options.query_placement_for_image_type_support,
        options.enable_isolated_aggregate_filtering,
        options.image_metadata_prefilter,
        options.max_placement_results)


# -- request filters ---------------------------------------------------------

def warn_unsupported_options(conf):
    """Log, once per process, the Nova options set in ``conf`` that gantt
    accepts but cannot honour."""
    _warn_unsupported(option_values.read(conf, _read_options))


def _warn_unsupported(options):
    if options.routed_networks and "routed" not in _WARNED:
        _WARNED.add("routed")
        LOG.warning(
            "[scheduler] query_placement_for_routed_network_aggregates is "
            "set, but gantt does not ask Neutron for the segments of the "
            "requested networks: hosts are not limited to their segment "
            "aggregates")


def _request_filters(request, spec, conf, options, table):
    """Nova's request filters, in Nova's order (the first refusal
    wins)."""
    _warn_unsupported(options)
    _check_image_choices(spec.image.properties)
    aggregates = [r for r in table.agg_records if r is not None]
    if options.tenant_aggregates:
        _tenant_aggregates(request, spec, conf, aggregates)
    _availability_zone(request, spec, conf, aggregates)
    if options.image_type:
        _image_type(request, spec)
    request.root_forbidden.add(_DISABLED)
    if options.isolated_aggregates:
        _isolated_aggregates(request, aggregates)
    if options.image_metadata:
        _image_metadata(request, spec.image.properties)
    if spec.flavor.extra_specs.get("accel:device_profile"):
        request.root_required.add("COMPUTE_ACCELERATORS")
    if _flag_of(spec, "virtio_packed_ring"):
        request.root_required.add("COMPUTE_NET_VIRTIO_PACKED")
    if _remote_managed(spec):
        request.root_required.add("COMPUTE_REMOTE_MANAGED_PORTS")
    _ephemeral_encryption(request, spec)
    if _choice_of(spec, "sound_model", _SOUND_MODELS) == "virtio":
        request.root_required.add("COMPUTE_SOUND_MODEL_VIRTIO")
    _tpm_secret_security(request, spec)
    _owner_nova(request, spec, table)
    if spec.requested_destination is not None:
        _destination(request, spec.requested_destination, table)


def _tenant_aggregates(request, spec, conf, aggregates):
    project = spec.project_id
    # As Nova: the whole value is the project (filter_tenant_id2=... for
    # a second one), not a list.
    mine = {agg.uuid for agg in aggregates
            if any(k.startswith("filter_tenant_id") and v == project
                   for k, v in agg.metadata.items())}
    if mine:
        request.unsuffixed.member_of.append(mine)
    elif conf.scheduler.placement_aggregate_required_for_tenants:
        raise NoHostsPossible(
            f"project {project} is in no aggregate's filter_tenant_id and "
            "[scheduler] placement_aggregate_required_for_tenants is set")


def _availability_zone(request, spec, conf, aggregates):
    zone = spec.availability_zone
    if not zone:
        return
    zoned = {a.uuid: a.metadata.get("availability_zone")
             for a in aggregates if a.metadata.get("availability_zone")}
    members = {u for u, z in zoned.items() if z == zone}
    if members:
        request.unsuffixed.member_of.append(members)
    elif not conf.scheduler.strict_availability_zones:
        return  # Nova: no aggregate carries the zone, any host will do
    elif zone == conf.default_availability_zone:
        request.unsuffixed.forbidden_aggs.update(zoned)
    else:
        raise NoHostsPossible(f"availability zone {zone!r} has no hosts")


def _image_type(request, spec):
    if spec.is_bfv:
        return  # the image never reaches the host's disk
    fmt = spec.image.disk_format
    trait = f"COMPUTE_IMAGE_TYPE_{(fmt or '').upper()}"
    if fmt and trait in _KNOWN_TRAITS:
        request.root_required.add(trait)


def _isolated_aggregates(request, aggregates):
    asked = set().union(*(g.required for g in request.groups.values()))
    for agg in aggregates:
        needs = {k[len("trait:"):] for k, v in agg.metadata.items()
                 if k.startswith("trait:") and v == "required"}
        if needs and not needs <= asked:
            request.unsuffixed.forbidden_aggs.add(agg.uuid)


def _image_metadata(request, image):
    traits = set()
    for prop, prefix in _IMAGE_TRAIT_PREFIXES.items():
        value = image.get(prop)
        if value is None:
            continue
        trait = prefix + str(value).replace("-", "_").upper()
        if trait not in _KNOWN_TRAITS:
            # As Nova: one trait os-traits does not know and the filter
            # requires none.
            LOG.warning("image property %s=%s: no trait %s, so "
                        "image_metadata_prefilter adds no trait", prop,
                        value, trait)
            return
        traits.add(trait)
    request.root_required.update(traits)


def _check_image_choices(image):
    """Nova's objects refuse these image properties' other values."""
    for prop, choices in _IMAGE_CHOICES.items():
        value = image.get(prop)
        if value is not None and value not in choices:
            raise errors.InvalidRequestSpec(
                f"image.properties.{prop}: expected one of "
                f"{', '.join(choices)}, got {value!r}")


def _hw(spec, name):
    """The flavor's ``hw:NAME`` extra spec and the image's ``hw_NAME``
    property (None when not set)."""
    return (spec.flavor.extra_specs.get(f"hw:{name}"),
            spec.image.properties.get(f"hw_{name}"))


def _where(spec, name):
    """Which of ``hw:NAME`` and ``hw_NAME`` gives the value, for errors:
    the flavor's when it has one."""
    if spec.flavor.extra_specs.get(f"hw:{name}"):
        return f"flavor.extra_specs.hw:{name}"
    return f"image.properties.hw_{name}"


def _conflict(name, flavor, image):
    raise errors.InvalidRequestSpec(
        f"flavor.extra_specs.hw:{name}: {flavor!r} conflicts with "
        f"image.properties.hw_{name} {image!r}")


def _flag(value):
    """A boolean as oslo's bool_from_string reads text (not strict)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _TRUE


def _flag_of(spec, name):
    """``hw:NAME`` / ``hw_NAME`` as one boolean: either may turn it on;
    both set must agree."""
    flavor, image = _hw(spec, name)
    wants = [None if v is None else _flag(v) for v in (flavor, image)]
    if None not in wants and wants[0] != wants[1]:
        _conflict(name, flavor, image)
    return True in wants


def _choice_of(spec, name, choices):
    """``hw:NAME`` or else ``hw_NAME`` (None when neither is set or
    empty); both set must be equal, and the flavor's be one of
    ``choices`` (the image's were checked up front)."""
    flavor, image = _hw(spec, name)
    if flavor and image and flavor != image:
        _conflict(name, flavor, image)
    if flavor and flavor not in choices:
        _bad(f"hw:{name}",
             f"expected one of {', '.join(choices)}, got {flavor!r}")
    return flavor or image or None


def _remote_managed(spec):
    """Whether a port is remote managed. Nova asks Neutron each port's
    vnic type; the spec carries the PCI request Nova's API made for the
    port, whose ``remote_managed`` tag says it ("True" or "False")."""
    return any(_flag(s.get("remote_managed", False))
               for p in spec.pci_requests for s in p.spec)


def _ephemeral_encryption(request, spec):
    if not _flag_of(spec, "ephemeral_encryption"):
        return
    request.root_required.add("COMPUTE_EPHEMERAL_ENCRYPTION")
    fmt = _choice_of(spec, "ephemeral_encryption_format",
                     _EPHEMERAL_FORMATS)
    if fmt:
        request.root_required.add(
            f"COMPUTE_EPHEMERAL_ENCRYPTION_{fmt.upper()}")


def _tpm_secret_security(request, spec):
    version = _choice_of(spec, "tpm_version", _TPM_VERSIONS)
    if version is None:
        return  # no vTPM
    model = _choice_of(spec, "tpm_model", _TPM_MODELS)
    if model == "tpm-crb" and version != "2.0":
        raise errors.InvalidRequestSpec(
            f"{_where(spec, 'tpm_model')}: tpm-crb needs TPM version 2.0, "
            f"got {version}")
    # A flavor extra spec only: Nova has no image property for it.
    security = spec.flavor.extra_specs.get("hw:tpm_secret_security")
    trait = _TPM_SECRET_SECURITY.get(security or "user")
    if trait is None:
        _bad("hw:tpm_secret_security", "expected one of "
             f"{', '.join(_TPM_SECRET_SECURITY)}, got {security!r}")
    request.root_required.add(trait)


def _owner_nova(request, spec, table):
    """OWNER_NOVA on the root and on the groups of the flavor's PCI
    requests (named ``<request_id>-<n>``), once every compute reports
    the trait."""
    if _OWNER in request.root_required:
        return  # asked already (a reschedule): Nova adds nothing more
    version = table.min_compute_service_version()
    if version is None or version < _OWNER_MIN_VERSION:
        return
    request.root_required.add(_OWNER)
    # A port's PCI request has no alias; its devices are not in placement.
    flavor_pci = {p.request_id for p in spec.pci_requests
                  if p.alias_name is not None and p.request_id}
    for i, g in enumerate(spec.requested_resources):
        if g.requester_id and \
                g.requester_id.rsplit("-", 1)[0] in flavor_pci:
            request.groups[_requested_suffix(i, g)].required.add(_OWNER)


def _destination(request, dest, table):
    group = request.unsuffixed
    if dest.host or dest.node:
        rows = _destination_rows(table, dest)
        if not rows:
            raise NoHostsPossible(
                f"requested destination host {dest.host!r} node "
                f"{dest.node!r} is not a known compute node")
        if len(rows) == 1:
            group.in_tree = table.uuids[rows[0]]
        request.hosts = frozenset(table.hosts[r] for r in rows)
    for entry in dest.aggregates:
        group.member_of.append({a.strip() for a in entry.split(",")
                                if a.strip()})
    group.forbidden_aggs.update(dest.forbidden_aggregates)
    if dest.cell:
        request.cell = dest.cell


def _destination_rows(table, dest):
    if dest.host and dest.node:
        row = table.row_for_node(dest.host, dest.node)
        return [] if row is None else [row]
    if dest.host:
        return table.rows_of_host(dest.host)
    return [r for r in table.live_rows().tolist()
            if table.nodenames[r] == dest.node]
