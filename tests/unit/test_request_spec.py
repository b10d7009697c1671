"""RequestSpec: building from the JSON form, the round trip, and a clear
error naming the field for every kind of bad input."""

import copy
import dataclasses

import hypothesis
import pytest
from hypothesis import strategies as st

from scheduler import errors
from scheduler import request_spec as rs

UUID1 = "8d5e6b0c-1a7f-4f57-9b1e-2f0f3c5a1d11"
UUID2 = "8d5e6b0c-1a7f-4f57-9b1e-2f0f3c5a1d22"

MINIMAL = {"flavor": {"vcpus": 2, "memory_mb": 2048, "root_gb": 20}}

FULL = {
    "instance_uuid": UUID1,
    "flavor": {"name": "m1.small", "flavorid": "2", "vcpus": 2,
               "memory_mb": 2048, "root_gb": 20, "ephemeral_gb": 5,
               "swap": 512, "extra_specs": {"hw:cpu_policy": "dedicated",
                                            "trait:CUSTOM_GOLD": "required"}},
    "image": {"id": UUID2, "name": "cirros", "disk_format": "qcow2",
              "container_format": "bare", "min_ram": 64, "min_disk": 1,
              "properties": {"hw_numa_nodes": 2, "os_type": "linux"}},
    "project_id": "p1", "user_id": "u1", "availability_zone": "east",
    "num_instances": 3,
    "instance_group": {"uuid": UUID2, "policy": "anti-affinity",
                       "members": [UUID1], "hosts": ["h1"],
                       "rules": {"max_server_per_host": 2}},
    "scheduler_hints": {"same_host": [UUID1], "different_host": [UUID2],
                        "build_near_host_ip": ["10.0.0.1"],
                        "cidr": ["/24"], "query": ['[">=", "$vcpus", 2]'],
                        "group": [UUID2], "_nova_check_type": ["rebuild"]},
    "ignore_hosts": ["h9"], "force_hosts": ["h1"], "force_nodes": ["n1"],
    "requested_destination": {
        "host": "h1", "node": "n1", "cell": UUID1,
        "aggregates": [f"{UUID1},{UUID2}"],
        "forbidden_aggregates": [UUID2], "allow_cross_cell_move": True},
    "numa_topology": {"cells": [
        {"id": 0, "cpuset": [0], "pcpuset": [], "memory": 1024},
        {"id": 1, "cpuset": [1], "pcpuset": [], "memory": 1024,
         "pagesize": 2048}],
        "cpu_policy": "shared", "cpu_thread_policy": None},
    "pci_requests": [{"count": 1, "spec": [{"vendor_id": "8086"}],
                      "alias_name": "nic", "requester_id": None}],
    "requested_resources": [{
        "requester_id": "port-1",
        "resources": {"NET_BW_EGR_KILOBIT_PER_SEC": 1000},
        "required_traits": ["CUSTOM_PHYSNET_PUBLIC"],
        "forbidden_traits": [], "aggregates": [[UUID1]],
        "in_tree": None, "provider_uuids": []}],
    "request_level_params": {"root_required": ["COMPUTE_STATUS_ENABLED"],
                             "root_forbidden": ["CUSTOM_X"],
                             "same_subtree": [["port-1", "_COMPUTE"]]},
    "is_bfv": False,
}


def test_minimal_spec_gets_the_defaults():
    spec = rs.RequestSpec.from_dict(MINIMAL)
    assert spec.flavor == rs.Flavor(vcpus=2, memory_mb=2048, root_gb=20)
    assert spec.num_instances == 1
    assert spec.image == rs.Image()
    assert spec.instance_group is None and spec.numa_topology is None
    assert spec.request_level_params == rs.RequestLevelParams()
    assert not spec.is_bfv


def test_full_spec_reads_every_field():
    spec = rs.RequestSpec.from_dict(FULL)
    assert spec.flavor.swap == 512
    assert spec.flavor.extra_specs["hw:cpu_policy"] == "dedicated"
    assert spec.image.properties["hw_numa_nodes"] == 2
    assert spec.instance_group.rules == {"max_server_per_host": 2}
    assert spec.instance_group.members == (UUID1,)
    assert spec.hint("build_near_host_ip") == "10.0.0.1"
    assert spec.hint("_nova_check_type") == "rebuild"
    assert spec.hint("missing", "x") == "x"
    assert spec.requested_destination.aggregates == (f"{UUID1},{UUID2}",)
    assert spec.requested_destination.allow_cross_cell_move
    assert [c.id for c in spec.numa_topology.cells] == [0, 1]
    assert spec.numa_topology.cells[1].pagesize == 2048
    assert spec.pci_requests[0].spec == ({"vendor_id": "8086"},)
    group = spec.requested_resources[0]
    assert group.requester_id == "port-1"
    assert group.aggregates == ((UUID1,),)
    assert spec.request_level_params.same_subtree == (("port-1",
                                                       "_COMPUTE"),)


@pytest.mark.parametrize("data", [MINIMAL, FULL], ids=["minimal", "full"])
def test_round_trip(data):
    spec = rs.RequestSpec.from_dict(data)
    again = rs.RequestSpec.from_dict(spec.to_dict())
    assert again == spec


@pytest.mark.parametrize("data", [MINIMAL, FULL], ids=["minimal", "full"])
def test_as_given_is_the_form_read_and_reads_back_equal(data):
    spec = rs.RequestSpec.from_dict(data)
    assert spec.as_given() is data
    assert rs.RequestSpec.from_dict(spec.as_given()) == spec
    # Not a field: the whole form and equality leave it out.
    assert "_given" not in spec.to_dict()
    assert spec == rs.RequestSpec(**{
        f: getattr(spec, f) for f in spec.__dataclass_fields__})


def test_a_changed_or_built_spec_is_given_as_itself():
    spec = rs.RequestSpec.from_dict(FULL)
    changed = dataclasses.replace(spec, num_instances=1)
    assert changed.as_given() is changed
    # Dropping Nova's internal hints changes the spec: the form read
    # (which has one) is not given for it.
    stripped = spec.without_internal_hints()
    assert stripped is not spec and stripped.as_given() is stripped
    built = rs.RequestSpec(flavor=rs.Flavor(vcpus=1, memory_mb=1,
                                            root_gb=0))
    assert built.as_given() is built


def _with(path, value):
    """FULL with the field at ``path`` (dotted; ints index lists) set to
    ``value``, or removed when value is ``_REMOVE``."""
    data = copy.deepcopy(FULL)
    *parents, last = path.split(".")
    node = data
    for part in parents:
        node = node[int(part) if part.isdigit() else part]
    key = int(last) if last.isdigit() else last
    if value is _REMOVE:
        del node[key]
    else:
        node[key] = value
    return data


class _Removed:
    """The field taken out (its repr names the test: the same in every
    process)."""

    def __repr__(self):
        return "<removed>"


_REMOVE = _Removed()

BAD = [
    ("flavor", _REMOVE, "spec: 'flavor' is a required property"),
    ("flavor.vcpus", 0, "flavor.vcpus: 0 is less than the minimum of 1"),
    ("flavor.vcpus", "2", "flavor.vcpus: '2' is not of type 'integer'"),
    ("flavor.memory_mb", _REMOVE, "flavor: 'memory_mb' is a required"),
    ("flavor.swap", -1, "flavor.swap: -1 is less than the minimum of 0"),
    ("flavor.extra_specs", {"hw:cpu_policy": 1},
     "flavor.extra_specs.hw:cpu_policy: 1 is not of type 'string'"),
    ("flavor.colour", "red", "flavor.colour: unknown field"),
    ("num_instances", 0, "num_instances: 0 is less than the minimum of 1"),
    ("instance_group.policy", "together",
     "instance_group.policy: 'together' is not one of ['affinity', "),
    ("instance_group.rules", {"max_server_per_host": 0},
     "instance_group.rules.max_server_per_host: 0 is less than the "),
    ("instance_uuid", "not-a-uuid",
     "instance_uuid: 'not-a-uuid' is not a 'uuid'"),
    ("scheduler_hints", {"same_host": UUID1},
     "scheduler_hints.same_host: "),
    ("requested_destination.forbidden_aggregates", ["x"],
     "requested_destination.forbidden_aggregates.0: 'x' is not a 'uuid'"),
    ("numa_topology.cells", [],
     "numa_topology.cells: [] should be non-empty"),
    ("numa_topology.cpu_policy", "greedy",
     "numa_topology.cpu_policy: 'greedy' is not one of [None, "),
    ("pci_requests.0.count", 0,
     "pci_requests.0.count: 0 is less than the minimum of 1"),
    ("requested_resources.0.resources", {"VCPU": -1},
     "requested_resources.0.resources.VCPU: -1 is less than the minimum"),
    ("request_level_params.same_subtree", ["_A"],
     "request_level_params.same_subtree.0: '_A' is not of type 'array'"),
    ("is_bfv", "yes", "is_bfv: 'yes' is not of type 'boolean'"),
    ("surprise", 1, "surprise: unknown field"),
    ("numa_topology.cells.1.id", 0,
     "numa_topology.cells: cell ids must be distinct"),
    ("scheduler_hints.build_near_host_ip", _REMOVE,
     "scheduler_hints.cidr: given without build_near_host_ip"),
]


@pytest.mark.parametrize("path,value,message", BAD,
                         ids=[f"{p}={v!r}"[:40].replace(":", ";")
                              for p, v, _ in BAD])
def test_bad_spec_names_the_field(path, value, message):
    with pytest.raises(errors.InvalidRequestSpec) as caught:
        rs.RequestSpec.from_dict(_with(path, value))
    assert caught.value.message.startswith(message), caught.value.message


def test_not_an_object():
    with pytest.raises(errors.InvalidRequestSpec) as caught:
        rs.RequestSpec.from_dict([])
    assert "is not of type 'object'" in caught.value.message


# The compiled schema decides alone whenever it accepts a spec, so it
# must never accept what jsonschema refuses (nor the other way round).
EDGES = [
    ("flavor.vcpus", 2.0), ("flavor.vcpus", True), ("flavor.vcpus", 2.5),
    ("instance_uuid", UUID1.upper()), ("instance_uuid", "{" + UUID1 + "}"),
    ("instance_uuid", UUID1.replace("-", "")), ("instance_uuid", None),
    ("instance_uuid", 7), ("numa_topology.cells.0.pagesize", -2),
    ("numa_topology.cells.0.pagesize", -4), ("numa_topology", None),
    ("image.properties", []), ("flavor.name", None), ("is_bfv", 0),
    ("requested_resources.0.in_tree", UUID2),
    ("requested_resources.0.aggregates", [["x"]]),
]


def _both_accept(data):
    try:
        rs._FAST_CHECK(data)
        fast = True
    except rs.fastjsonschema.JsonSchemaException:
        fast = False
    return fast, rs._VALIDATOR.is_valid(data)


@pytest.mark.parametrize(
    "path,value", [(p, v) for p, v, _ in BAD] + EDGES,
    ids=[f"{p}={v!r}"[:40].replace(":", ";") for p, v, _ in BAD]
    + [f"edge-{p}={v!r}"[:40].replace(":", ";") for p, v in EDGES])
def test_compiled_schema_agrees_with_jsonschema(path, value):
    fast, slow = _both_accept(_with(path, value))
    assert fast == slow


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2)
    | st.sampled_from(["", "x", UUID1, UUID1.upper(), "affinity"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["id", "memory", "vcpus", "x"]),
                      inner, max_size=3),
    max_leaves=6)


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(path=st.sampled_from(
    [p for p, _v, _m in BAD] + [p for p, _v in EDGES]), value=JSON_VALUES)
def test_compiled_schema_agrees_on_random_values(path, value):
    fast, slow = _both_accept(_with(path, value))
    assert fast == slow, (path, value)
