"""Nova 34's request filters in scheduler.resource_request, against what
Nova's own filters made of the same requests.

fixtures/request_filters/cases.json was written by running Nova 34's
nova.scheduler.request_filter on Nova RequestSpecs (see the README
there); each case holds the spec in gantt's JSON form and Nova's result.
The image properties are tried both as given (Glance-style text) and as
Nova's RPC sends them (typed).
"""

import json
import logging
import pathlib
import re

import pytest

from scheduler import errors, host_options, host_state
from scheduler import resource_request as rr

HERE = pathlib.Path(__file__).parent
DATA = json.loads(
    (HERE / "fixtures" / "request_filters" / "cases.json").read_text())
CASES = {case["name"]: case for case in DATA["cases"]}
# Nova's refusals of a bad or conflicting value (its objects' ValueError
# for an image property they cannot hold): gantt's InvalidRequestSpec.
INVALID = {"FlavorImageConflict", "Invalid", "ValueError"}


def _forms():
    for name, case in CASES.items():
        yield pytest.param(name, "given", id=f"{name}-given")
        if "wire_properties" in case:
            yield pytest.param(name, "wire", id=f"{name}-wire")


@pytest.fixture
def aggregates(cloud):
    """The cases' aggregates in the host cloud: uuid -> name."""
    host_options.register_opts(cloud.conf)
    return {cloud.aggregate(name, [], **metadata): name
            for name, metadata in DATA["aggregates"].items()}


def build(cloud, monkeypatch, case, form="given"):
    """gantt's ResourceRequest for ``case``, with its options and its
    minimum nova-compute version."""
    for option, value in case["conf"].items():
        cloud.set("scheduler", option, value)
    version = case["min_compute_version"]
    monkeypatch.setattr(host_state.HostStateTable,
                        "min_compute_service_version",
                        lambda self: version)
    spec = dict(case["spec"])
    if form == "wire":
        spec["image"] = dict(spec["image"],
                             properties=case["wire_properties"])
    return rr.from_spec(cloud.spec(**spec), cloud.conf, cloud.table)


def outcome(req, spec, names):
    """What the fixture says of Nova's result, read off gantt's query.
    The requested groups' requester_ids (uuids, "<uuid>-<n>") are their
    suffixes as they are."""
    requesters = [g["requester_id"]
                  for g in spec.get("requested_resources", ())]
    return {
        "root_required": sorted(req.root_required),
        "root_forbidden": sorted(req.root_forbidden),
        "member_of": sorted(sorted(names[u] for u in any_of)
                            for any_of in req.unsuffixed.member_of),
        "forbidden_aggregates": sorted(
            names[u] for u in req.unsuffixed.forbidden_aggs),
        "group_traits": {rid: sorted(req.groups[rid].required)
                         for rid in requesters},
    }


def _named_field(message, case):
    """Whether an InvalidRequestSpec message starts with a flavor extra
    spec or image property the case sets."""
    spec = case["spec"]
    fields = [f"flavor.extra_specs.{k}" for k in spec["flavor"][
        "extra_specs"]] + [f"image.properties.{k}" for k in spec["image"][
            "properties"]]
    return any(message.startswith(f + ": ") for f in fields)


@pytest.mark.parametrize("name,form", list(_forms()))
def test_as_nova(cloud, aggregates, monkeypatch, name, form):
    case = CASES[name]
    nova = case["nova"]
    if "error" in nova:
        # Nova's RequestFilterFailed (no aggregate for a required tenant,
        # an unsupported TPM secret security) is NoValidHost for Nova's
        # caller; gantt says NoHostsPossible or InvalidRequestSpec.
        refusal = (errors.InvalidRequestSpec if nova["error"] in INVALID
                   else errors.SchedulerError)
        with pytest.raises(refusal) as raised:
            build(cloud, monkeypatch, case, form)
        if isinstance(raised.value, errors.InvalidRequestSpec):
            assert _named_field(raised.value.message, case), \
                raised.value.message
        return
    req = build(cloud, monkeypatch, case, form)
    # member_of entries are ANDed: their order means nothing.
    assert outcome(req, case["spec"], aggregates) == dict(
        nova, member_of=sorted(nova["member_of"]))


def test_fixtures_cover_every_filter():
    """The cases make each of Nova's traits and refusals at least once."""
    made = set().union(*(c["nova"].get("root_required", ())
                         for c in CASES.values()))
    assert {"COMPUTE_ACCELERATORS", "COMPUTE_NET_VIRTIO_PACKED",
            "COMPUTE_REMOTE_MANAGED_PORTS", "COMPUTE_EPHEMERAL_ENCRYPTION",
            "COMPUTE_EPHEMERAL_ENCRYPTION_LUKS", "COMPUTE_SOUND_MODEL_VIRTIO",
            "COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER",
            "COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST",
            "COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT", "OWNER_NOVA",
            "COMPUTE_IMAGE_TYPE_QCOW2", "HW_ARCH_X86_64"} <= made
    refusals = {c["nova"].get("error") for c in CASES.values()}
    assert INVALID | {"RequestFilterFailed"} <= refusals
    seeded = [c for c in CASES.values() if c["name"].startswith("seeded")]
    assert len(seeded) >= 40


# The fixture case, what gantt raises, and the field it names.
REFUSALS = [
    ("packed-conflict", errors.InvalidRequestSpec,
     "flavor.extra_specs.hw:virtio_packed_ring"),
    ("ephemeral-conflict", errors.InvalidRequestSpec,
     "flavor.extra_specs.hw:ephemeral_encryption"),
    ("ephemeral-invalid-format", errors.InvalidRequestSpec,
     "flavor.extra_specs.hw:ephemeral_encryption_format"),
    ("ephemeral-image-invalid-format", errors.InvalidRequestSpec,
     "image.properties.hw_ephemeral_encryption_format"),
    ("sound-invalid-flavor", errors.InvalidRequestSpec,
     "flavor.extra_specs.hw:sound_model"),
    ("sound-invalid-image", errors.InvalidRequestSpec,
     "image.properties.hw_sound_model"),
    ("tpm-invalid-version", errors.InvalidRequestSpec,
     "flavor.extra_specs.hw:tpm_version"),
    ("tpm-image-invalid-version", errors.InvalidRequestSpec,
     "image.properties.hw_tpm_version"),
    ("tpm-invalid-model", errors.InvalidRequestSpec,
     "flavor.extra_specs.hw:tpm_model"),
    ("tpm-crb-needs-2", errors.InvalidRequestSpec,
     "image.properties.hw_tpm_model"),
    ("tpm-security-unsupported", errors.InvalidRequestSpec,
     "flavor.extra_specs.hw:tpm_secret_security"),
    ("tenant-none-required", rr.NoHostsPossible, "project p9"),
]


# Ids without ':' (gabbi's pytest plugin takes such names for its own).
@pytest.mark.parametrize("name,refusal,field", REFUSALS,
                         ids=[name for name, _, _ in REFUSALS])
def test_refusals(cloud, aggregates, monkeypatch, name, refusal, field):
    case = CASES[name]
    assert "error" in case["nova"]  # Nova refuses it too
    with pytest.raises(refusal, match=f"^{re.escape(field)}") as raised:
        build(cloud, monkeypatch, case)
    assert type(raised.value) is refusal


def test_conflict_names_both_sides(cloud, aggregates, monkeypatch):
    with pytest.raises(errors.InvalidRequestSpec) as raised:
        build(cloud, monkeypatch, CASES["sound-conflict"])
    assert raised.value.message == (
        "flavor.extra_specs.hw:sound_model: 'virtio' conflicts with "
        "image.properties.hw_sound_model 'ich6'")


def test_owner_nova_reaches_placement(cloud, aggregates, monkeypatch):
    """OWNER_NOVA on the root and on the flavor's PCI groups, not on a
    port's group, in the query placement gets."""
    case = CASES["owner-pci-groups"]
    req = build(cloud, monkeypatch, case)
    creq = req.candidates_request()
    assert "OWNER_NOVA" in creq.root_required
    pci = [g["requester_id"] for g in case["spec"]["requested_resources"]
           if g["requester_id"].startswith("f00df00d")]
    assert len(pci) == 2
    for suffix in pci:
        assert frozenset({"OWNER_NOVA"}) in creq.group(
            suffix).required_traits
    port = creq.group("2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f")
    assert frozenset({"OWNER_NOVA"}) not in port.required_traits
    assert "root_required=OWNER_NOVA,!COMPUTE_STATUS_DISABLED" in req.query()


def test_owner_nova_not_on_own_records(cloud):
    """gantt's own host records know no service versions: no OWNER_NOVA
    (no compute of ours reports it)."""
    assert cloud.table.min_compute_service_version() is None
    req = rr.from_spec(cloud.spec(), cloud.conf, cloud.table)
    assert "OWNER_NOVA" not in req.root_required


@pytest.mark.parametrize("tag,trait", [
    ("True", True), ("true", True), ("False", False), (None, False)])
def test_remote_managed_tag(cloud, tag, trait):
    pci = {"count": 1, "spec": [{"physical_network": "physnet1"}]}
    if tag is not None:
        pci["spec"][0]["remote_managed"] = tag
    req = rr.from_spec(cloud.spec(pci_requests=[pci]), cloud.conf,
                       cloud.table)
    assert ("COMPUTE_REMOTE_MANAGED_PORTS" in req.root_required) == trait


def test_new_options_default_to_nova(cloud):
    assert cloud.conf.scheduler.strict_availability_zones is False
    assert cloud.conf.scheduler.\
        query_placement_for_routed_network_aggregates is False


def test_routed_networks_warned_once(cloud, monkeypatch, caplog):
    monkeypatch.setattr(rr, "_WARNED", set())
    caplog.set_level(logging.WARNING, logger=rr.__name__)
    rr.from_spec(cloud.spec(), cloud.conf, cloud.table)
    assert not caplog.records  # not set: nothing to say
    cloud.set("scheduler", "query_placement_for_routed_network_aggregates",
              True)
    for _ in range(3):
        req = rr.from_spec(cloud.spec(), cloud.conf, cloud.table)
    warnings = [r for r in caplog.records
                if "query_placement_for_routed_network_aggregates"
                in r.getMessage()]
    assert len(warnings) == 1
    assert req.unsuffixed.member_of == []  # and nothing else changes
