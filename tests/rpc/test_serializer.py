"""rpc.serializer: Nova's object primitives in, Nova's Selection out.

The fixtures are what Nova 34 puts on the wire, written by running Nova
itself (tests/rpc/fixtures/README.md); the tests need neither Nova nor a
broker.
"""

import copy
import json
import pathlib

import pytest
from oslo_context import context as oslo_context

from rpc import nova_objects
from rpc import serializer as ser
from scheduler import request_spec
from scheduler import selection as selection_mod

FIXTURES = pathlib.Path(__file__).parent / "fixtures"

INSTANCE = "8d7c1f2e-3b4a-4c5d-9e6f-0a1b2c3d4e5f"
INSTANCE_2 = "5e4d3c2b-1a09-4f8e-8d7c-6b5a49382716"
GROUP = "0b9a8c7d-6e5f-4a3b-8c1d-2e3f4a5b6c7d"
CELL = "c0ffee00-1111-4222-8333-444455556666"
PORT = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
AGG = [f"a1a1a1a1-0000-4000-8000-00000000000{i}" for i in range(5)]
RP_ROOT = "7e57ab1e-0000-4000-8000-0000000000aa"
RP_NIC = "7e57ab1e-0000-4000-8000-0000000000bb"
NODE = "0d0d0d0d-0000-4000-8000-00000000000e"


def load(name):
    with open(FIXTURES / f"{name}.json") as f:
        return json.load(f)


def data(primitive, *path):
    """The nova_object.data of the object at ``path`` (field names and
    list indices) inside ``primitive``."""
    for step in path:
        primitive = primitive[nova_objects.DATA][step] \
            if isinstance(step, str) else primitive[step]
    return primitive[nova_objects.DATA]


BOOT_FLAVOR = {
    "vcpus": 4, "memory_mb": 4096, "root_gb": 20, "ephemeral_gb": 5,
    "swap": 1536, "name": "m1.numa", "flavorid": "f-numa",
    "extra_specs": {
        "aggregate_instance_extra_specs:ssd": "true",
        "hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "prefer",
        "hw:mem_page_size": "2MB", "hw:numa_nodes": "2",
        "resources:CUSTOM_GOLD": "1", "trait:HW_CPU_X86_AVX2": "required"}}
BOOT_IMAGE = {
    "id": "1fd1d5b4-2a5c-4c25-9d6d-2cde0e6b6d2f", "name": "ubuntu-24.04",
    "disk_format": "qcow2", "container_format": "bare", "min_ram": 512,
    "min_disk": 2,
    # Nova's ImageMetaProps names (architecture -> hw_architecture...);
    # the image's trait:CUSTOM_IMAGE_TRUSTED=required as traits_required.
    "properties": {
        "hw_architecture": "x86_64", "hw_machine_type": "q35",
        "hw_vm_mode": "hvm", "img_hv_requested_version": ">=6.0",
        "img_hv_type": "kvm", "os_distro": "ubuntu",
        "traits_required": ["CUSTOM_IMAGE_TRUSTED"]}}
BOOT_HINTS = {
    "build_near_host_ip": ["10.0.0.5"], "cidr": ["/24"],
    "different_host": [INSTANCE_2], "group": [GROUP]}
BOOT_NUMA = {
    "cells": [
        {"id": 0, "memory": 2048, "cpuset": [], "pcpuset": [0, 1],
         "pagesize": 2048},
        {"id": 1, "memory": 2048, "cpuset": [], "pcpuset": [2, 3],
         "pagesize": 2048}],
    "cpu_policy": "dedicated", "cpu_thread_policy": "prefer"}
BOOT_PCI = [{"count": 2, "spec": [{"product_id": "1520",
                                   "vendor_id": "8086"}],
             "alias_name": "nic-vf", "requester_id": None,
             "request_id": "f00df00d-0000-4000-8000-000000000001"}]

# gantt's JSON form of request_spec_boot.json, field by field.
BOOT = {
    "flavor": BOOT_FLAVOR,
    "image": BOOT_IMAGE,
    "instance_uuid": INSTANCE,
    "project_id": "project-1",
    "user_id": "user-1",
    "availability_zone": "az1",
    "num_instances": 2,
    "instance_group": {
        "policy": "anti-affinity", "uuid": GROUP,
        "members": [INSTANCE, INSTANCE_2], "hosts": ["compute-2"],
        "rules": {"max_server_per_host": 2}},
    "scheduler_hints": BOOT_HINTS,
    "ignore_hosts": [], "force_hosts": [], "force_nodes": [],
    "requested_destination": None,
    "numa_topology": BOOT_NUMA,
    "pci_requests": BOOT_PCI,
    "requested_resources": [{
        "requester_id": PORT,
        "resources": {"NET_BW_EGR_KILOBIT_PER_SEC": 1000,
                      "NET_BW_IGR_KILOBIT_PER_SEC": 2000},
        "required_traits": ["CUSTOM_PHYSNET_PHYS1",
                            "CUSTOM_VNIC_TYPE_NORMAL"],
        "forbidden_traits": [], "aggregates": [], "in_tree": None,
        "provider_uuids": []}],
    "request_level_params": {
        "root_required": ["COMPUTE_STATUS_ENABLED_X"],
        "root_forbidden": ["CUSTOM_MAINTENANCE"],
        "same_subtree": [[PORT, "_pci_group"]]},
    "is_bfv": False,
}

# request_spec_move.json: a cold migration of a volume-backed instance.
MOVE = {
    "flavor": {"vcpus": 1, "memory_mb": 2048, "root_gb": 20,
               "ephemeral_gb": 0, "swap": 0, "name": "m1.small",
               "flavorid": "2", "extra_specs": {}},
    # A volume's image metadata: no id, name or formats.
    "image": {"id": None, "name": None, "disk_format": None,
              "container_format": None, "min_ram": 0, "min_disk": 0,
              "properties": {"hw_disk_bus": "virtio"}},
    "instance_uuid": INSTANCE,
    "project_id": "project-1",
    "user_id": "user-1",
    "availability_zone": None,
    "num_instances": 1,
    "instance_group": None,
    "scheduler_hints": {"_nova_check_type": ["resize"]},
    "ignore_hosts": ["compute-1"],
    "force_hosts": ["compute-3"],
    "force_nodes": ["node-3"],
    "requested_destination": {
        "host": "compute-3", "node": "node-3",
        # The CellMapping object becomes its uuid.
        "cell": CELL,
        "aggregates": [f"{AGG[1]},{AGG[2]}", AGG[3]],
        "forbidden_aggregates": [AGG[4]],
        "allow_cross_cell_move": False},
    "numa_topology": None,
    "pci_requests": [],
    "requested_resources": [{
        "requester_id": "accel-1", "resources": {"CUSTOM_ACCEL": 1},
        "required_traits": ["CUSTOM_FPGA"],
        "forbidden_traits": ["CUSTOM_OLD"],
        "aggregates": [[AGG[1]], [AGG[2], AGG[3]]],
        "in_tree": RP_ROOT, "provider_uuids": []}],
    # Sent as a RequestLevelParams with no field set.
    "request_level_params": {"root_required": [], "root_forbidden": [],
                             "same_subtree": []},
    "is_bfv": True,
}

# legacy_4_0.json: the boot above as RPC API 4.0 carries it. The legacy
# dicts have no is_bfv, requested_resources, request level params or
# group rules; one-value hints are unwrapped, group members are a set.
LEGACY = dict(
    BOOT,
    instance_group={"policy": "anti-affinity", "uuid": GROUP,
                    "members": [INSTANCE_2, INSTANCE],
                    "hosts": ["compute-2"], "rules": {}},
    requested_resources=[],
    request_level_params={"root_required": [], "root_forbidden": [],
                          "same_subtree": []})


# -- RequestSpec as Nova 34 sends it ---------------------------------------


@pytest.mark.parametrize("fixture,expected", [
    ("request_spec_boot", BOOT), ("request_spec_move", MOVE)])
def test_request_spec_fixture_decodes_to_every_field(fixture, expected):
    primitive = load(fixture)
    assert primitive[nova_objects.VERSION] == "1.15"
    spec = ser.request_spec_from_primitive(primitive)
    assert isinstance(spec, request_spec.RequestSpec)
    assert spec.to_dict() == expected


def test_decoded_spec_round_trips_through_gantt_json():
    spec = ser.request_spec_from_primitive(load("request_spec_boot"))
    again = request_spec.RequestSpec.from_dict(
        json.loads(json.dumps(spec.to_dict())))
    assert again == spec
    assert spec.hint("group") == GROUP
    assert spec.instance_group.rules == {"max_server_per_host": 2}


def test_sets_arrive_in_any_order_and_decode_sorted():
    primitive = load("request_spec_boot")
    group = data(primitive, "requested_resources", 0)
    group["required_traits"].reverse()
    cell = data(primitive, "numa_topology", "cells", 1)
    cell["pcpuset"] = [3, 2]
    spec = ser.request_spec_from_primitive(primitive)
    assert spec.requested_resources[0].required_traits == (
        "CUSTOM_PHYSNET_PHYS1", "CUSTOM_VNIC_TYPE_NORMAL")
    assert spec.numa_topology.cells[1].pcpuset == (2, 3)


def test_newer_minor_versions_with_unknown_fields_decode():
    primitive = load("request_spec_boot")
    primitive[nova_objects.VERSION] = "1.99"
    primitive[nova_objects.DATA]["shiny_new_field"] = {"any": "thing"}
    flavor = primitive[nova_objects.DATA]["flavor"]
    flavor[nova_objects.VERSION] = "1.7"
    flavor[nova_objects.DATA]["memory_encrypted"] = True
    group = primitive[nova_objects.DATA]["instance_group"]
    group[nova_objects.VERSION] = "1.12"
    group[nova_objects.DATA]["_rules"]["max_server_per_rack"] = "3"
    cell = primitive[nova_objects.DATA]["numa_topology"][nova_objects.DATA][
        "cells"][0]
    cell[nova_objects.VERSION] = "1.20"
    cell[nova_objects.DATA]["cpu_l3_cache"] = 32
    spec = ser.request_spec_from_primitive(primitive)
    assert spec.to_dict() == BOOT


def test_fields_absent_from_an_older_version_take_gantt_defaults():
    # RequestSpec 1.5: none of requested_destination (1.6), user_id
    # (1.9), is_bfv (1.11), requested_resources (1.12) and
    # request_level_params (1.13); InstanceGroup 1.10: policies only.
    primitive = load("request_spec_move")
    primitive[nova_objects.VERSION] = "1.5"
    fields = primitive[nova_objects.DATA]
    for name in ("requested_destination", "user_id", "is_bfv",
                 "requested_resources", "request_level_params",
                 "scheduler_hints", "force_hosts"):
        del fields[name]
    fields["instance_group"] = {
        nova_objects.NAME: "InstanceGroup", nova_objects.NAMESPACE: "nova",
        nova_objects.VERSION: "1.10",
        nova_objects.DATA: {"uuid": GROUP, "policies": ["affinity"],
                            "members": [INSTANCE]}}
    spec = ser.request_spec_from_primitive(primitive)
    assert spec.requested_destination is None
    assert spec.user_id is None
    assert spec.is_bfv is False
    assert spec.requested_resources == ()
    assert spec.request_level_params == request_spec.RequestLevelParams()
    assert spec.scheduler_hints == {}
    assert spec.force_hosts == ()
    assert spec.instance_group == request_spec.InstanceGroup(
        policy="affinity", uuid=GROUP, members=(INSTANCE,))


def test_nova_nulls_mean_unset():
    primitive = load("request_spec_boot")
    fields = primitive[nova_objects.DATA]
    for name in ("image", "pci_requests", "requested_resources",
                 "scheduler_hints", "instance_group", "numa_topology"):
        fields[name] = None
    data(primitive, "flavor")["name"] = None
    spec = ser.request_spec_from_primitive(primitive)
    assert spec.image == request_spec.Image()
    assert (spec.pci_requests, spec.requested_resources) == ((), ())
    assert spec.scheduler_hints == {}
    assert spec.instance_group is None and spec.numa_topology is None
    assert spec.flavor.name == ""


def test_flavor_without_extra_specs_loaded():
    primitive = load("request_spec_move")
    del data(primitive, "flavor")["extra_specs"]
    spec = ser.request_spec_from_primitive(primitive)
    assert spec.flavor.extra_specs == {}


@pytest.mark.parametrize("pagesize,expected", [
    (-1, -1), (-2, -2), (-3, -3), (1048576, 1048576)],
    ids=["small", "large", "any", "1G-in-KiB"])
def test_symbolic_page_sizes(pagesize, expected):
    # Nova's symbolic sizes are kept as they are: the NUMA filter reads
    # them (small, large, any) against the host's page sizes.
    primitive = load("request_spec_boot")
    for cell in data(primitive, "numa_topology")["cells"]:
        cell[nova_objects.DATA]["pagesize"] = pagesize
    spec = ser.request_spec_from_primitive(primitive)
    assert {c.pagesize for c in spec.numa_topology.cells} == {expected}


def test_cells_without_pcpuset_keep_their_cpuset():
    # InstanceNUMACell before 1.5 had no pcpuset: pinned CPUs were in
    # the cpuset (the NUMA filter reads them so with cpu_policy
    # dedicated).
    primitive = load("request_spec_boot")
    for i, cell in enumerate(data(primitive, "numa_topology")["cells"]):
        cell[nova_objects.VERSION] = "1.4"
        fields = cell[nova_objects.DATA]
        del fields["pcpuset"]
        fields["cpuset"] = [2 * i, 2 * i + 1]
    spec = ser.request_spec_from_primitive(primitive)
    assert [(c.cpuset, c.pcpuset) for c in spec.numa_topology.cells] == [
        ((0, 1), ()), ((2, 3), ())]
    assert spec.numa_topology.cpu_policy == "dedicated"


# -- malformed primitives --------------------------------------------------


def _set(path, value):
    """A change to the boot primitive: set the field at ``path`` (strings
    step into nova_object.data, integers into lists; a leading "." sets
    an envelope key)."""
    def change(primitive):
        target = primitive
        for step in path[:-1]:
            target = target[nova_objects.DATA][step] \
                if isinstance(step, str) else target[step]
        last = path[-1]
        if isinstance(last, str) and last.startswith("."):
            holder, key = target, "nova_object" + last
        else:
            holder, key = target[nova_objects.DATA], last
        if value is _DELETE:
            del holder[key]
        else:
            holder[key] = value
        return primitive
    return change


_DELETE = object()


def _case(ident, change, message):
    return pytest.param(change, message, id=ident)


@pytest.mark.parametrize("change,message", [
    _case("namespace", _set([".namespace"], "cinder"),
          "RequestSpec: nova_object.namespace must be 'nova', got "
          "'cinder'"),
    _case("nested-namespace", _set(["flavor", ".namespace"], None),
          "RequestSpec.flavor: nova_object.namespace must be 'nova'"),
    _case("major", _set([".version"], "2.0"),
          "RequestSpec: RequestSpec version 2.0 is not supported "
          "(gantt reads 1.x)"),
    _case("nested-major", _set(["flavor", ".version"], "2.3"),
          "RequestSpec.flavor: Flavor version 2.3 is not supported"),
    _case("version-text", _set(["image", ".version"], "one"),
          "RequestSpec.image: nova_object.version must be 'major.minor', "
          "got 'one'"),
    _case("no-data", _set([".data"], _DELETE),
          "RequestSpec: nova_object.data missing or not a mapping"),
    _case("nested-no-data", _set(["image", "properties", ".data"], _DELETE),
          "RequestSpec.image.properties: nova_object.data missing"),
    _case("wrong-name", _set([".name"], "Instance"),
          "RequestSpec: expected a RequestSpec object, got "
          "nova_object.name 'Instance'"),
    _case("flavor-text", _set(["flavor"], "m1.small"),
          "RequestSpec.flavor: expected a Flavor object, got str"),
    _case("flavor-null", _set(["flavor"], None),
          "RequestSpec.flavor: expected a Flavor object, got null"),
    _case("vcpus-text", _set(["flavor", "vcpus"], "four"),
          "RequestSpec.flavor.vcpus: 'four' is not of type 'integer'"),
    _case("vcpus-missing", _set(["flavor", "vcpus"], _DELETE),
          "RequestSpec.flavor: 'vcpus' is a required property"),
    _case("flavor-missing", _set(["flavor"], _DELETE),
          "RequestSpec: 'flavor' is a required property"),
    _case("extra-spec-int",
          _set(["flavor", "extra_specs"], {"hw:numa_nodes": 2}),
          "RequestSpec.flavor.extra_specs.hw:numa_nodes: 2 is not of type "
          "'string'"),
    _case("instance-uuid", _set(["instance_uuid"], "not-a-uuid"),
          "RequestSpec.instance_uuid: 'not-a-uuid' is not a 'uuid'"),
    _case("num-instances", _set(["num_instances"], 0),
          "RequestSpec.num_instances: 0 is less than the minimum of 1"),
    _case("hint-not-list", _set(["scheduler_hints"], {"group": GROUP}),
          f"RequestSpec.scheduler_hints.group: '{GROUP}' is not of type "
          "'array'"),
    _case("group-policy", _set(["instance_group", "policy"], "scatter"),
          "RequestSpec.instance_group.policy: 'scatter' is not one of"),
    _case("group-rule-text",
          _set(["instance_group", "_rules"], {"max_server_per_host": "x"}),
          "RequestSpec.instance_group._rules.max_server_per_host: "
          "expected an integer, got 'x'"),
    _case("group-rule-zero",
          _set(["instance_group", "_rules"], {"max_server_per_host": "0"}),
          "RequestSpec.instance_group.rules.max_server_per_host: 0 is "
          "less than the minimum of 1"),
    _case("group-rules-list",
          _set(["instance_group", "_rules"], ["max_server_per_host"]),
          "RequestSpec.instance_group._rules: expected a mapping, got "
          "list"),
    _case("cells-text", _set(["numa_topology", "cells"], "0,1"),
          "RequestSpec.numa_topology.cells: expected a list, got str"),
    _case("pcpuset-text",
          _set(["numa_topology", "cells", 1, "pcpuset"], ["2", 3]),
          "RequestSpec.numa_topology.cells[1].pcpuset[0]: expected an "
          "integer, got str"),
    _case("page-size-unknown-symbol",
          _set(["numa_topology", "cells", 0, "pagesize"], -4),
          "RequestSpec.numa_topology.cells[0].pagesize: expected a page "
          "size in KiB or -1 (small), -2 (large), -3 (any), got -4"),
    _case("cell-memory-missing",
          _set(["numa_topology", "cells", 0, "memory"], _DELETE),
          "RequestSpec.numa_topology.cells.0: 'memory' is a required "
          "property"),
    _case("pci-wrong-name",
          _set(["pci_requests", "requests", 0, ".name"], "PciDevice"),
          "RequestSpec.pci_requests.requests[0]: expected an "
          "InstancePCIRequest object, got nova_object.name 'PciDevice'"),
    _case("trait-int",
          _set(["requested_resources", 0, "required_traits"], ["A", 1]),
          "RequestSpec.requested_resources[0].required_traits[1]: "
          "expected a string, got int"),
    _case("negative-resource",
          _set(["requested_resources", 0, "resources"], {"VCPU": -1}),
          "RequestSpec.requested_resources.0.resources.VCPU: -1 is less "
          "than the minimum of 0"),
    _case("root-required-text",
          _set(["request_level_params", "root_required"], "HW_CPU_X86"),
          "RequestSpec.request_level_params.root_required: expected a "
          "list, got str"),
])
def test_malformed_primitive_names_the_field(change, message):
    primitive = change(load("request_spec_boot"))
    with pytest.raises(ser.InvalidPrimitive) as caught:
        ser.request_spec_from_primitive(primitive)
    assert str(caught.value).startswith(message), str(caught.value)
    assert caught.value.message == str(caught.value)


def test_destination_needs_a_cell_mapping_with_a_uuid():
    primitive = load("request_spec_move")
    cell = data(primitive, "requested_destination")["cell"]
    cell[nova_objects.NAME] = "Cell"
    with pytest.raises(ser.InvalidPrimitive, match=(
            r"^RequestSpec.requested_destination.cell: expected a "
            r"CellMapping object")):
        ser.request_spec_from_primitive(primitive)
    cell[nova_objects.NAME] = "CellMapping"
    del cell[nova_objects.DATA]["uuid"]
    with pytest.raises(ser.InvalidPrimitive, match=(
            r"^RequestSpec.requested_destination.cell: no uuid")):
        ser.request_spec_from_primitive(primitive)


@pytest.mark.parametrize("value,kind", [
    ([], "list"), ("RequestSpec", "str"), (None, "null")])
def test_not_an_object_at_all(value, kind):
    with pytest.raises(ser.InvalidPrimitive, match=(
            rf"^RequestSpec: expected a RequestSpec object, got {kind}$")):
        ser.request_spec_from_primitive(value)


def test_invalid_primitive_is_a_value_error_and_a_scheduler_error():
    from scheduler import errors
    assert issubclass(ser.InvalidPrimitive, ValueError)
    assert issubclass(ser.InvalidPrimitive, errors.SchedulerError)


# -- the 4.0 legacy dicts --------------------------------------------------


def test_legacy_fixture_decodes():
    legacy = load("legacy_4_0")
    spec = ser.request_spec_from_legacy(legacy["request_spec"],
                                        legacy["filter_properties"])
    assert spec.to_dict() == LEGACY


def test_legacy_plain_dicts_of_old_conductors():
    # What build_request_spec made before objects: a flavor dict, the
    # NUMA topology as JSON text, scalar hints; new-style group and
    # destination objects in filter_properties.
    legacy = load("legacy_4_0")
    rs, fp = legacy["request_spec"], legacy["filter_properties"]
    rs["instance_type"] = dict(BOOT_FLAVOR, id=7, rxtx_factor=1.0)
    props = rs["instance_properties"]
    props["numa_topology"] = json.dumps(props["numa_topology"])
    rs["image"] = {"id": BOOT_IMAGE["id"], "disk_format": "raw",
                   "properties": {"hw_architecture": "aarch64"}}
    fp["scheduler_hints"] = {"num": 3, "flag": True, "group": GROUP,
                             "different_host": [INSTANCE, INSTANCE_2]}
    move = load("request_spec_move")[nova_objects.DATA]
    fp["requested_destination"] = move["requested_destination"]
    boot = load("request_spec_boot")[nova_objects.DATA]
    fp["instance_group"] = boot["instance_group"]
    fp["force_hosts"] = ["compute-3"]
    spec = ser.request_spec_from_legacy(rs, fp).to_dict()
    assert spec["flavor"] == BOOT_FLAVOR
    assert spec["numa_topology"] == BOOT_NUMA
    assert spec["image"] == dict(request_spec.Image().__dict__,
                                 id=BOOT_IMAGE["id"], disk_format="raw",
                                 properties={"hw_architecture": "aarch64"})
    assert spec["scheduler_hints"] == {
        "num": ["3"], "flag": ["True"], "group": [GROUP],
        "different_host": [INSTANCE, INSTANCE_2]}
    assert spec["requested_destination"] == MOVE["requested_destination"]
    assert spec["instance_group"] == BOOT["instance_group"]
    assert spec["force_hosts"] == ["compute-3"]


def test_legacy_minimal_dicts():
    spec = ser.request_spec_from_legacy(
        {"instance_type": {"vcpus": 1, "memory_mb": 512, "root_gb": 1},
         "image": {}, "instance_properties": {"uuid": INSTANCE}},
        None)
    assert spec == request_spec.RequestSpec(
        flavor=request_spec.Flavor(vcpus=1, memory_mb=512, root_gb=1),
        instance_uuid=INSTANCE)


@pytest.mark.parametrize("request_spec_dict,filter_properties,message", [
    ({"image": {}}, {}, "legacy request_spec: 'flavor' is a required"),
    ({"instance_type": {"vcpus": 0, "memory_mb": 1, "root_gb": 1}}, {},
     "legacy request_spec.flavor.vcpus: 0 is less than the minimum"),
    ({"instance_type": {"nova_object.name": "ImageMeta",
                        "nova_object.namespace": "nova",
                        "nova_object.version": "1.8",
                        "nova_object.data": {}}}, {},
     "request_spec.instance_type: expected a Flavor object"),
    ({"instance_type": {"vcpus": 1, "memory_mb": 1, "root_gb": 1},
      "instance_properties": {"numa_topology": "{not json"}}, {},
     "request_spec.instance_properties.numa_topology: not JSON"),
    ({"instance_type": {"vcpus": 1, "memory_mb": 1, "root_gb": 1}},
     {"scheduler_hints": ["group"]},
     "filter_properties.scheduler_hints: expected a mapping, got list"),
    ({"instance_type": {"vcpus": 1, "memory_mb": 1, "root_gb": 1}},
     {"group_updated": True, "group_policies": ["spread"]},
     "legacy request_spec.instance_group.policy: 'spread' is not one of"),
    ("spec", {}, "request_spec: expected a mapping, got str"),
], ids=["no-flavor", "zero-vcpus", "wrong-object", "numa-not-json",
        "hints-not-mapping", "bad-group-policy", "not-a-dict"])
def test_malformed_legacy_dicts(request_spec_dict, filter_properties,
                                message):
    with pytest.raises(ser.InvalidPrimitive) as caught:
        ser.request_spec_from_legacy(request_spec_dict, filter_properties)
    assert str(caught.value).startswith(message), str(caught.value)


# -- Selection as Nova 34 reads it -----------------------------------------


def allocation_request():
    return json.dumps({
        "allocations": {
            RP_ROOT: {"resources": {"DISK_GB": 27, "MEMORY_MB": 4096,
                                    "VCPU": 4}},
            RP_NIC: {"resources": {"NET_BW_EGR_KILOBIT_PER_SEC": 1000}}},
        "mappings": {"": [RP_ROOT], PORT: [RP_NIC]}}, sort_keys=True)


CHOSEN = selection_mod.Selection(
    compute_node_uuid=NODE, service_host="compute-1", nodename="node-1",
    cell_uuid=CELL, availability_zone="az1",
    allocation_request=allocation_request(),
    allocation_request_version="1.36")
# A rebuild (no allocation request) on a host in the default zone.
BARE = selection_mod.Selection(
    compute_node_uuid=NODE, service_host="compute-1", nodename="node-1",
    cell_uuid=CELL, availability_zone="nova", allocation_request=None,
    allocation_request_version=None)


@pytest.mark.parametrize("sel,fixture", [
    (CHOSEN, "selection"), (BARE, "selection_no_allocation")],
    ids=["chosen", "no-allocation"])
def test_selection_encodes_as_nova_does_byte_for_byte(sel, fixture):
    ours = ser.selection_to_primitive(sel)
    assert json.dumps(ours, sort_keys=True) == \
        json.dumps(load(fixture), sort_keys=True)


@pytest.mark.parametrize("sel,fixture", [
    (CHOSEN, "selection"), (BARE, "selection_no_allocation")],
    ids=["chosen", "no-allocation"])
def test_selection_decodes_from_nova(sel, fixture):
    assert ser.selection_from_primitive(load(fixture)) == sel


def test_selection_wire_facts():
    primitive = ser.selection_to_primitive(CHOSEN)
    assert primitive[nova_objects.VERSION] == "1.1"
    assert set(primitive[nova_objects.DATA]) == {
        "compute_node_uuid", "service_host", "nodename", "cell_uuid",
        "limits", "allocation_request", "allocation_request_version",
        "availability_zone"}
    limits = primitive[nova_objects.DATA]["limits"]
    assert (limits[nova_objects.NAME], limits[nova_objects.VERSION]) == (
        "SchedulerLimits", "1.0")
    assert limits[nova_objects.DATA] == dict.fromkeys(
        ("numa_topology", "vcpu", "disk_gb", "memory_mb"))
    request = json.loads(primitive[nova_objects.DATA]["allocation_request"])
    assert set(request) == {"allocations", "mappings"}


@pytest.mark.parametrize("sel", [
    CHOSEN, BARE,
    selection_mod.Selection(
        compute_node_uuid=NODE, service_host="h", nodename="n",
        cell_uuid=None, availability_zone=None, allocation_request=None,
        allocation_request_version=None,
        limits={"numa_topology": {"cpu_allocation_ratio": 4.0,
                                  "ram_allocation_ratio": 1.5,
                                  "physnets": ["phys1"], "tunneled": True},
                "vcpu": 8, "disk_gb": None, "memory_mb": 1024}),
], ids=["chosen", "no-allocation", "no-cell-numa-limits"])
def test_selection_round_trip(sel):
    primitive = json.loads(json.dumps(ser.selection_to_primitive(sel)))
    assert ser.selection_from_primitive(primitive) == sel


def test_selection_without_cell_leaves_the_field_unset():
    # Nova's cell_uuid cannot be null; unset is what it accepts.
    sel = selection_mod.Selection(
        compute_node_uuid=NODE, service_host="h", nodename="n",
        cell_uuid=None, availability_zone=None, allocation_request=None,
        allocation_request_version=None)
    assert "cell_uuid" not in ser.selection_to_primitive(sel)[
        nova_objects.DATA]


def test_selection_with_unknown_limit_is_refused():
    sel = selection_mod.Selection(
        compute_node_uuid=NODE, service_host="h", nodename="n",
        cell_uuid=CELL, availability_zone=None, allocation_request=None,
        allocation_request_version=None, limits={"pci": 1})
    with pytest.raises(ValueError, match=r"unknown limits \['pci'\]"):
        ser.selection_to_primitive(sel)


def test_selection_of_a_newer_minor_version_decodes():
    primitive = load("selection")
    primitive[nova_objects.VERSION] = "1.2"
    primitive[nova_objects.DATA]["new_field"] = "x"
    assert ser.selection_from_primitive(primitive) == CHOSEN
    assert ser.selection_from_primitive(CHOSEN) is CHOSEN


@pytest.mark.parametrize("change,message", [
    (_set([".version"], "2.0"), "Selection: Selection version 2.0"),
    (_set(["service_host"], None),
     "Selection.service_host: expected a string, got null"),
    (_set(["allocation_request"], {"allocations": {}}),
     "Selection.allocation_request: expected a string"),
    (_set(["limits", "vcpu"], "8"),
     "Selection.limits.vcpu: expected an integer, got '8'"),
    (_set(["limits", ".name"], "Limits"),
     "Selection.limits: expected a SchedulerLimits object"),
], ids=["major", "host-null", "request-not-text", "vcpu-text",
        "limits-name"])
def test_malformed_selection(change, message):
    with pytest.raises(ser.InvalidPrimitive) as caught:
        ser.selection_from_primitive(change(load("selection")))
    assert str(caught.value).startswith(message), str(caught.value)


# -- aggregates and instances ----------------------------------------------


AGGREGATE = ser.Aggregate(
    uuid=AGG[1], name="az1-hosts", hosts=("compute-1", "compute-2"),
    metadata={"availability_zone": "az1", "ssd": "true"})


def test_aggregates_fixture():
    assert ser.aggregate_from_primitive(load("aggregates")[0]) == AGGREGATE
    assert ser.NovaSerializer().deserialize_entity(
        {}, load("aggregates")) == [AGGREGATE]


def test_aggregate_list_and_unset_members():
    primitive = load("aggregates")[0]
    del primitive[nova_objects.DATA]["hosts"]
    primitive[nova_objects.DATA]["metadata"] = None
    listed = {nova_objects.NAME: "AggregateList",
              nova_objects.NAMESPACE: "nova", nova_objects.VERSION: "1.3",
              nova_objects.DATA: {"objects": [primitive]}}
    assert ser.NovaSerializer().deserialize_entity({}, listed) == [
        ser.Aggregate(uuid=AGG[1], name="az1-hosts")]


@pytest.mark.parametrize("field,value,message", [
    ("uuid", None, "Aggregate.uuid: expected a string, got null"),
    ("name", 7, "Aggregate.name: expected a string, got 7"),
    ("hosts", "compute-1", "Aggregate.hosts: expected a list of strings"),
    ("hosts", ["a", None], "Aggregate.hosts[1]: expected a string"),
    ("metadata", ["az"], "Aggregate.metadata: expected a mapping"),
    ("metadata", {"ssd": True},
     "Aggregate.metadata.ssd: expected a string, got True"),
], ids=["uuid", "name", "hosts", "host-null", "metadata", "metadata-bool"])
def test_malformed_aggregate(field, value, message):
    primitive = load("aggregates")[0]
    primitive[nova_objects.DATA][field] = value
    with pytest.raises(ser.InvalidPrimitive) as caught:
        ser.aggregate_from_primitive(primitive)
    assert str(caught.value).startswith(message), str(caught.value)


INSTANCES = [
    ser.Instance(uuid=INSTANCE, host="compute-1", node="node-1",
                 flavor_id="f-numa", project_id="project-1"),
    # Its flavor was not loaded: no flavor id.
    ser.Instance(uuid=INSTANCE_2, host="compute-1", node="node-1",
                 project_id="project-2"),
]


def test_instance_list_fixture():
    primitive = load("instance_list")
    assert primitive[nova_objects.VERSION] == "2.6"
    assert ser.instances_from_primitive(primitive) == INSTANCES
    assert ser.NovaSerializer().deserialize_entity({}, primitive) == \
        INSTANCES


def test_single_instances_and_lists_of_them():
    items = load("instance_list")[nova_objects.DATA]["objects"]
    assert ser.instances_from_primitive(items[1]) == INSTANCES[1:]
    assert ser.instances_from_primitive(items) == INSTANCES
    assert ser.NovaSerializer().deserialize_entity({}, items[0]) == \
        INSTANCES[0]


@pytest.mark.parametrize("change,message", [
    (_set(["objects"], None), "InstanceList.objects: expected a list"),
    (_set(["objects", 0, "uuid"], _DELETE),
     "InstanceList.objects[0].uuid: expected a string, got null"),
    (_set(["objects", 1, "host"], ["compute-1"]),
     "InstanceList.objects[1].host: expected a string"),
    (_set(["objects", 0, "flavor", ".version"], "3.0"),
     "InstanceList.objects[0].flavor: Flavor version 3.0"),
    (_set([".version"], "1.0"),
     "InstanceList: InstanceList version 1.0 is not supported "
     "(gantt reads 2.x)"),
], ids=["objects", "uuid", "host", "flavor-major", "list-major"])
def test_malformed_instance_list(change, message):
    with pytest.raises(ser.InvalidPrimitive) as caught:
        ser.instances_from_primitive(change(load("instance_list")))
    assert str(caught.value).startswith(message), str(caught.value)


# -- the serializers -------------------------------------------------------


def test_nova_serializer_decodes_what_it_knows_and_leaves_the_rest():
    s = ser.NovaSerializer()
    boot = load("request_spec_boot")
    retry = boot[nova_objects.DATA]["retry"] = load("request_spec_move")[
        nova_objects.DATA]["retry"]
    args = {"spec_obj": boot, "instance_uuids": [INSTANCE, INSTANCE_2],
            "return_objects": True, "retry": retry, "nested": [[boot]]}
    out = s.deserialize_entity({}, copy.deepcopy(args))
    spec = ser.request_spec_from_primitive(boot)
    assert out == {"spec_obj": spec, "instance_uuids": [INSTANCE, INSTANCE_2],
                   "return_objects": True, "retry": retry,
                   "nested": [[spec]]}


def test_nova_serializer_leaves_legacy_dicts_for_the_legacy_decoder():
    legacy = load("legacy_4_0")
    s = ser.NovaSerializer()
    out = {k: s.deserialize_entity({}, v) for k, v in legacy.items()}
    assert out == legacy
    assert ser.request_spec_from_legacy(
        out["request_spec"], out["filter_properties"]).to_dict() == LEGACY


def test_nova_serializer_encodes_selections_in_lists_of_lists():
    s = ser.NovaSerializer()
    reply = s.serialize_entity({}, [[CHOSEN, BARE], (BARE,)])
    assert reply == [[load("selection"), load("selection_no_allocation")],
                     [load("selection_no_allocation")]]
    # The legacy reply (return_objects false) goes out as it is.
    hosts = [BARE.host_dict()]
    assert s.serialize_entity({}, hosts) == hosts
    # What a client of the server reads back.
    assert s.deserialize_entity({}, json.loads(json.dumps(reply))) == [
        [CHOSEN, BARE], [BARE]]


def test_nova_serializer_sends_a_gantt_spec_as_its_json_form():
    spec = ser.request_spec_from_primitive(load("request_spec_move"))
    assert ser.NovaSerializer().serialize_entity({}, spec) == MOVE


def test_json_serializer():
    s = ser.JsonSerializer()
    spec = request_spec.RequestSpec.from_dict(MOVE)
    sent = json.loads(json.dumps(s.serialize_entity(
        {}, {"spec_obj": spec, "n": 1})))
    received = s.deserialize_entity({}, sent)
    assert received == {"spec_obj": MOVE, "n": 1}
    assert request_spec.RequestSpec.from_dict(received["spec_obj"]) == spec
    reply = json.loads(json.dumps(s.serialize_entity({}, [[CHOSEN, BARE]])))
    assert reply == [[CHOSEN.to_dict(), BARE.to_dict()]]
    assert [selection_mod.Selection(**d) for d in reply[0]] == [CHOSEN, BARE]


# -- the request context ---------------------------------------------------


@pytest.mark.parametrize("serializer", [ser.NovaSerializer(),
                                        ser.JsonSerializer()],
                         ids=["nova", "json"])
def test_nova_context_is_read(serializer):
    wire = load("context")
    ctxt = serializer.deserialize_context(copy.deepcopy(wire))
    assert (ctxt["request_id"], ctxt["user_id"], ctxt["project_id"],
            ctxt["roles"]) == (
        "req-8a6f3c2e-1d4b-4f5a-9c7e-2b1d0e9f8a7c", "user-1", "project-1",
        ["member", "reader"])
    # Nothing else is lost.
    assert ctxt == wire


def test_context_round_trip():
    s = ser.NovaSerializer()
    sent = {"request_id": "req-1", "user_id": "u", "project_id": "p",
            "roles": ["admin"], "global_request_id": "req-0"}
    wire = json.loads(json.dumps(s.serialize_context(sent)))
    # Nova's RequestContext.from_dict reads either name.
    assert (wire["user"], wire["project"]) == ("u", "p")
    assert s.deserialize_context(wire) == dict(sent, user="u", project="p")


def test_context_from_oslo_context_and_short_forms():
    s = ser.NovaSerializer()
    ctxt = oslo_context.RequestContext(user_id="u", project_id="p",
                                       roles=["reader"])
    wire = s.serialize_context(ctxt)
    assert (wire["request_id"], wire["user_id"], wire["project_id"],
            wire["roles"]) == (ctxt.request_id, "u", "p", ["reader"])
    # oslo.context's own names only; no request id: one is made up.
    read = s.deserialize_context({"user": "u2", "tenant": "t2"})
    assert (read["user_id"], read["project_id"], read["roles"]) == (
        "u2", "t2", [])
    assert read["request_id"].startswith("req-")
    empty = s.serialize_context(None)
    assert empty["user_id"] is None and empty["request_id"].startswith(
        "req-")


@pytest.mark.parametrize("value,message", [
    (["req-1"], "context: expected a mapping, got list"),
    ({"roles": "admin"}, "context.roles: expected a list of strings"),
    ({"roles": ["admin", 1]}, "context.roles[1]: expected a string"),
    ({"user_id": 7}, "context.user_id: expected a string, got 7"),
], ids=["not-mapping", "roles-text", "roles-int", "user-int"])
def test_malformed_context(value, message):
    with pytest.raises(ser.InvalidPrimitive) as caught:
        ser.NovaSerializer().deserialize_context(value)
    assert str(caught.value).startswith(message), str(caught.value)
