"""scheduler.resource_request: RequestSpec -> allocation candidates query."""

import pytest

from placement.candidates import request as cand
from scheduler import errors, host_options
from scheduler import resource_request as rr
from tests.scheduler import cloud as cloud_mod

AGG = cloud_mod.uuid_of
CELL = "11111111-2222-3333-4444-555555555555"
BASE = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}


def build(cloud, extra=None, flavor=None, **fields):
    f = dict(cloud_mod.FLAVOR, **(flavor or {}))
    f["extra_specs"] = dict(extra or {})
    return rr.from_spec(cloud.spec(flavor=f, **fields), cloud.conf,
                        cloud.table)


@pytest.mark.parametrize("flavor,extra,bfv,expected", [
    ({}, {}, False, BASE),
    ({"root_gb": 10, "ephemeral_gb": 2, "swap": 1025}, {}, False,
     {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 14}),
    ({"root_gb": 10, "ephemeral_gb": 2, "swap": 512}, {}, True,
     {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 3}),
    ({"root_gb": 10}, {}, True, {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 0}),
    ({}, {"resources:DISK_GB": "0", "resources:CUSTOM_FPGA": "2",
          "resources:MEMORY_MB": "1024"}, False,
     {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 0, "CUSTOM_FPGA": 2}),
    # As Nova: it takes the flavor's vcpus only when no request group
    # (numbered ones included) names VCPU or PCPU: resources1:VCPU=2 +
    # resources2:VCPU=2 (a group per NUMA node) asks 4 VCPU in all, not 4
    # more in the unsuffixed group.
    ({"vcpus": 4}, {"resources1:VCPU": "2", "resources2:VCPU": "2",
                    "group_policy": "isolate"}, False,
     {"MEMORY_MB": 512, "DISK_GB": 1}),
], ids=["plain", "swap-rounds-up", "bfv-no-root", "bfv-root-only",
        "extra-spec-override", "suffixed-vcpu"])
def test_flavor_resources(cloud, flavor, extra, bfv, expected):
    req = build(cloud, extra, flavor, is_bfv=bfv)
    assert req.unsuffixed.resources == expected
    # Zero amounts are not asked for.
    asked = {k: v for k, v in expected.items() if v}
    assert req.candidates_request().group("").resources == asked
    assert ("DISK_GB" in req.query()) == bool(expected["DISK_GB"])


@pytest.mark.parametrize("extra,groups,policy", [
    ({"resources1:CUSTOM_NIC": "1", "trait1:CUSTOM_PHYS_A": "required",
      "trait1:CUSTOM_SLOW": "forbidden", "trait:HW_CPU_X86_AVX": "required",
      "group_policy": "isolate"},
     {"": ({}, {"HW_CPU_X86_AVX"}, set()),
      "1": ({"CUSTOM_NIC": 1}, {"CUSTOM_PHYS_A"}, {"CUSTOM_SLOW"})},
     "isolate"),
    ({"resources_gpu:VGPU": "1", "resources_nic:SRIOV_NET_VF": "2",
      "group_policy": "none"},
     {"": ({}, set(), set()), "_gpu": ({"VGPU": 1}, set(), set()),
      "_nic": ({"SRIOV_NET_VF": 2}, set(), set())}, "none"),
    ({"hw:numa_nodes": "1", "aggregate_instance_extra_specs:x": "y"},
     {"": ({}, set(), set())}, None),
], ids=["numbered", "named-two-groups", "unrelated-keys"])
def test_extra_spec_groups(cloud, extra, groups, policy):
    req = build(cloud, extra)
    assert set(req.groups) == set(groups)
    for suffix, (resources, required, forbidden) in groups.items():
        g = req.groups[suffix]
        assert g.suffix == suffix
        assert {k: v for k, v in g.resources.items()
                if k not in BASE} == resources
        assert (g.required, g.forbidden) == (required, forbidden)
    assert req.group_policy == policy


MIXED, MASK = {"hw:cpu_policy": "mixed"}, "hw:cpu_dedicated_mask"


@pytest.mark.parametrize("extra,key", [
    ({"resources:VCPU": "two"}, "resources:VCPU"),
    ({"resources1:CUSTOM_X": "-1"}, "resources1:CUSTOM_X"),
    ({"trait:CUSTOM_A": "preferred"}, "trait:CUSTOM_A"),
    ({"group_policy": "spread"}, "group_policy"),
    ({"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "always"},
     "hw:cpu_thread_policy"),
    (MIXED, MASK), ({**MIXED, MASK: "0-3"}, MASK),
    ({**MIXED, MASK: "3-1"}, MASK), ({**MIXED, MASK: "0,7"}, MASK),
    ({**MIXED, MASK: "x"}, MASK),
], ids=["amount-not-int", "amount-negative", "trait-value", "group-policy",
        "thread-policy", "mixed-no-mask", "mask-all", "mask-reversed",
        "mask-out-of-range", "mask-garbage"])
def test_bad_extra_specs(cloud, extra, key):
    with pytest.raises(errors.InvalidRequestSpec, match=key):
        build(cloud, extra, {"vcpus": 4})


DED, HT = {"hw:cpu_policy": "dedicated"}, {"HW_CPU_HYPERTHREADING"}


@pytest.mark.parametrize("extra,image,cpus,required,forbidden,fb", [
    (DED, {}, {"PCPU": 4}, set(), set(), 4),
    ({}, {"hw_cpu_policy": "dedicated", "hw_cpu_thread_policy": "isolate"},
     {"PCPU": 4}, set(), HT, 4),
    ({**DED, "hw:cpu_thread_policy": "require"}, {}, {"PCPU": 4}, HT, set(),
     4),
    ({**DED, "resources:PCPU": "2", "resources:VCPU": "2"}, {},
     {"PCPU": 2, "VCPU": 2}, set(), set(), None),
    ({**MIXED, MASK: "0-1"}, {}, {"PCPU": 2, "VCPU": 2}, set(), set(), None),
    ({**MIXED, MASK: "^0"}, {}, {"PCPU": 3, "VCPU": 1}, set(), set(), None),
    ({"hw:cpu_policy": "shared"}, {}, {"VCPU": 4}, set(), set(), None),
    # As Nova: Nova adds one PCPU for the emulator threads with
    # hw:emulator_threads_policy=isolate and a dedicated CPU policy
    # (PCPU = vcpus + 1); the module ignores the extra spec.
    ({**DED, "hw:emulator_threads_policy": "isolate"}, {}, {"PCPU": 5},
     set(), set(), 4),
    # As Nova: Nova turns hw:cpu_thread_policy into the HW_CPU_HYPERTHREADING
    # trait whatever the pinning policy, so mixed + isolate forbids it too;
    # the module only does so for dedicated.
    ({**MIXED, MASK: "0", "hw:cpu_thread_policy": "isolate"}, {},
     {"PCPU": 1, "VCPU": 3}, set(), HT, None),
], ids=["dedicated", "image-dedicated-isolate", "require", "explicit-classes",
        "mixed-range", "mixed-exclude", "shared", "emulator-threads-isolate",
        "mixed-thread-policy"])
def test_cpu_policy(cloud, extra, image, cpus, required, forbidden, fb):
    req = build(cloud, extra, {"vcpus": 4}, image={"properties": image})
    g = req.unsuffixed
    assert {k: v for k, v in g.resources.items()
            if k in ("PCPU", "VCPU") and v} == cpus
    assert (g.required, g.forbidden) == (required, forbidden)
    if fb is None:
        assert req.fallback is None
        return
    back = req.fallback
    assert back.unsuffixed.resources == {**BASE, "VCPU": fb}
    assert not HT & (back.unsuffixed.required | back.unsuffixed.forbidden)
    assert (back.fallback, back.limit, back.root_forbidden) == (
        None, req.limit, req.root_forbidden)
    # The fallback is a copy: the main query still asks PCPU.
    assert g.resources["PCPU"] == cpus["PCPU"] and "PCPU" in req.query()
    assert "PCPU" not in back.query() and "VCPU:4" in back.query()


def test_fallback_disabled(cloud):
    cloud.set("workarounds", "disable_fallback_pcpu_query", True)
    req = build(cloud, DED)
    assert req.fallback is None and req.unsuffixed.resources["PCPU"] == 1


def test_image_traits_and_request_level(cloud):
    req = build(cloud, image={"properties": {
        "trait:CUSTOM_A": "required", "trait:CUSTOM_B": "forbidden",
        "traits_required": ["CUSTOM_C"]}}, request_level_params={
        "root_required": ["CUSTOM_ROOT"], "root_forbidden": ["CUSTOM_NO"],
        "same_subtree": [["_a", "_b"]]})
    assert req.unsuffixed.required == {"CUSTOM_A", "CUSTOM_C"}
    assert req.unsuffixed.forbidden == set()
    assert req.root_required == {"CUSTOM_ROOT"}
    assert req.root_forbidden == {"CUSTOM_NO", "COMPUTE_STATUS_DISABLED"}
    assert req.same_subtree == [["_a", "_b"]]
    assert "same_subtree=_a,_b" in req.query()
    assert req.candidates_request().same_subtrees == (("_a", "_b"),)


@pytest.mark.parametrize("groups,extra,suffixes,policy", [
    ([{"requester_id": "port/1", "resources": {"NET_BW_EGR_KILOBIT_PER_SEC":
                                               1000}}],
     {}, ["", "port_1"], None),
    ([{"resources": {"VGPU": 1}}, {"requester_id": "p2",
                                   "resources": {"VGPU": 1}}],
     {}, ["", "_group1", "p2"], "none"),
    ([{"requester_id": "a", "resources": {"VGPU": 1}},
      {"requester_id": "b", "resources": {"VGPU": 1}}],
     {"group_policy": "isolate"}, ["", "a", "b"], "isolate"),
], ids=["one-port", "two-default-none", "flavor-policy-kept"])
def test_requested_resources(cloud, groups, extra, suffixes, policy):
    req = build(cloud, extra, requested_resources=groups)
    assert list(req.groups) == suffixes
    assert req.group_policy == policy
    assert [g.suffix for g in req.candidates_request().groups] == suffixes


def test_requested_group_details(cloud):
    a, tree = AGG("agg-a"), AGG("tree")
    req = build(cloud, requested_resources=[{
        "requester_id": "port1", "resources": {"SRIOV_NET_VF": 1},
        "required_traits": ["CUSTOM_PHYSNET_A"], "in_tree": tree,
        "forbidden_traits": ["CUSTOM_SLOW"], "aggregates": [[a]]}])
    assert req.groups["port1"].member_of == [{a}]
    cg = req.candidates_request().group("port1")
    assert cg.use_same_provider and cg.in_tree == tree
    assert cg.required_traits == (frozenset({"CUSTOM_PHYSNET_A"}),)
    assert cg.forbidden_traits == frozenset({"CUSTOM_SLOW"})
    assert cg.member_of == (frozenset({a}),)
    assert (f"resourcesport1=SRIOV_NET_VF:1&requiredport1=CUSTOM_PHYSNET_A,"
            f"!CUSTOM_SLOW&member_ofport1=in:{a}&in_treeport1={tree}"
            ) in req.query()


@pytest.fixture
def zones(cloud):
    for n in ("n1", "n2", "n3"):
        cloud.node(n)
    return {"a": cloud.aggregate("a", ["n1"], availability_zone="az1"),
            "b": cloud.aggregate("b", ["n2"], availability_zone="az1"),
            "c": cloud.aggregate("c", ["n3"], availability_zone="az2"),
            "d": cloud.aggregate("d", ["n3"], other="x")}


@pytest.mark.parametrize("zone,default,strict,member_of,forbidden", [
    (None, "nova", False, [], set()), (None, "nova", True, [], set()),
    ("az1", "nova", False, [{"a", "b"}], set()),
    ("az1", "nova", True, [{"a", "b"}], set()),
    ("az2", "nova", False, [{"c"}], set()),
    # As Nova: no aggregate carries the zone, so no restriction at all.
    ("nova", "nova", False, [], set()), ("az9", "nova", False, [], set()),
    # Strict: the default zone is the hosts in no zone aggregate; a zone
    # nobody carries has no host.
    ("nova", "nova", True, [], {"a", "b", "c"}),
    ("az9", "nova", True, None, None),
    ("az1", "az1", False, [{"a", "b"}], set()),
    ("az1", "az1", True, [{"a", "b"}], set()),
], ids=["no-zone", "no-zone-strict", "az1", "az1-strict", "az2",
        "default-zone", "unknown", "default-zone-strict", "unknown-strict",
        "default-is-zoned", "default-is-zoned-strict"])
def test_availability_zone(cloud, zones, zone, default, strict, member_of,
                           forbidden):
    host_options.register_opts(cloud.conf)
    cloud.set(None, "default_availability_zone", default)
    cloud.set("scheduler", "strict_availability_zones", strict)
    if member_of is None:
        with pytest.raises(rr.NoHostsPossible, match=zone):
            build(cloud, availability_zone=zone)
        return
    req = build(cloud, availability_zone=zone)
    assert req.unsuffixed.member_of == [{zones[n] for n in s}
                                        for s in member_of]
    assert req.unsuffixed.forbidden_aggs == {zones[n] for n in forbidden}
    assert req.root_forbidden == {"COMPUTE_STATUS_DISABLED"}


@pytest.mark.parametrize("strict", [False, True])
def test_default_zone_without_zoned_aggregates(cloud, strict):
    host_options.register_opts(cloud.conf)
    cloud.set("scheduler", "strict_availability_zones", strict)
    req = build(cloud, availability_zone="nova")
    assert (req.unsuffixed.forbidden_aggs, req.unsuffixed.member_of) == (
        set(), [])


@pytest.mark.parametrize("enabled,required,project,expected", [
    (True, False, "p1", {"t1", "t2"}), (True, False, "p9", set()),
    (False, True, "p1", set()), (True, True, "p3", {"t3"}),
    (True, True, "p9", None),
    # As Nova: a value is one project; "p4, p5" names neither.
    (True, False, "p5", set()),
    # As Nova: the project must be the value of a filter_tenant_id* key.
    (True, True, "p6", None),
], ids=["member", "no-aggregate", "disabled", "required-and-found",
        "required-missing", "comma-list", "other-key"])
def test_tenant_aggregates(cloud, enabled, required, project, expected):
    aggs = {"t1": cloud.aggregate("t1", [], filter_tenant_id="p1"),
            "t2": cloud.aggregate("t2", [], filter_tenant_id2="p1"),
            "t3": cloud.aggregate("t3", [], filter_tenant_id="p3"),
            "t4": cloud.aggregate("t4", [], filter_tenant_id="p4, p5",
                                  owner="p6")}
    cloud.set("scheduler", "limit_tenants_to_placement_aggregate", enabled)
    cloud.set("scheduler", "placement_aggregate_required_for_tenants",
              required)
    if expected is None:
        with pytest.raises(rr.NoHostsPossible, match=project):
            build(cloud, project_id=project)
        return
    req = build(cloud, project_id=project)
    want = [{aggs[n] for n in expected}] if expected else []
    assert req.unsuffixed.member_of == want


@pytest.mark.parametrize("enabled,fmt,bfv,expected", [
    (True, "qcow2", False, {"COMPUTE_IMAGE_TYPE_QCOW2"}),
    (True, "bogus", False, set()), (True, None, False, set()),
    (False, "raw", False, set()),
    # As Nova: Nova's require_image_type_support skips boot-from-volume
    # requests (the image is never written to the host's disk); the module
    # still requires COMPUTE_IMAGE_TYPE_QCOW2.
    (True, "qcow2", True, set()),
], ids=["qcow2", "unknown-format", "no-format", "disabled", "bfv"])
def test_image_type_support(cloud, enabled, fmt, bfv, expected):
    cloud.set("scheduler", "query_placement_for_image_type_support", enabled)
    req = build(cloud, image={"disk_format": fmt}, is_bfv=bfv)
    assert req.root_required == expected


@pytest.mark.parametrize("enabled,props,expected", [
    (True, {"hw_disk_bus": "virtio", "hw_vif_model": "e1000e",
            "hw_video_model": "virtio", "hw_cdrom_bus": "scsi",
            "hw_architecture": "aarch64",
            "hw_emulation_architecture": "x86_64"},
     {"COMPUTE_STORAGE_BUS_VIRTIO", "COMPUTE_NET_VIF_MODEL_E1000E",
      "COMPUTE_GRAPHICS_MODEL_VIRTIO", "COMPUTE_STORAGE_BUS_SCSI",
      "HW_ARCH_AARCH64", "COMPUTE_ARCH_X86_64"}),
    (True, {"hw_disk_bus": "bogus"}, set()),
    # As Nova: one unknown trait and none is required.
    (True, {"hw_disk_bus": "virtio", "hw_video_model": "bogus"}, set()),
    (True, {"hw_disk_bus": "virtio", "hw_viommu_model": "virtio"}, set()),
    (False, {"hw_disk_bus": "virtio"}, set()),
], ids=["all-props", "unknown-value", "one-unknown", "viommu", "disabled"])
def test_image_metadata_prefilter(cloud, enabled, props, expected):
    cloud.set("scheduler", "image_metadata_prefilter", enabled)
    req = build(cloud, image={"properties": props})
    # As Nova: traits of the root provider, not of the unsuffixed group.
    assert req.root_required == expected
    assert req.unsuffixed.required == set()


@pytest.mark.parametrize("extra,forbidden", [
    ({}, {"iso", "iso2"}), ({"trait:CUSTOM_A": "required"}, {"iso2"}),
    ({"trait:CUSTOM_A": "required", "trait:CUSTOM_B": "required"}, set()),
    # As Nova: Nova's isolate_aggregates counts the required traits of every
    # request group (all_required_traits), so trait1:CUSTOM_A lets the
    # request into the CUSTOM_A aggregate; the module reads only the
    # unsuffixed group.
    ({"trait1:CUSTOM_A": "required", "resources1:CUSTOM_X": "1",
      "trait:CUSTOM_B": "required"}, set()),
], ids=["none-asked", "one-of-two", "all-asked", "suffixed-trait"])
def test_isolated_aggregates(cloud, extra, forbidden):
    aggs = {"iso": cloud.aggregate("iso", [], **{"trait:CUSTOM_A":
                                                 "required"}),
            "iso2": cloud.aggregate("iso2", [], **{
                "trait:CUSTOM_A": "required", "trait:CUSTOM_B": "required"}),
            "open": cloud.aggregate("open", [], **{"trait:CUSTOM_C": "no"})}
    cloud.set("scheduler", "enable_isolated_aggregate_filtering", True)
    req = build(cloud, extra)
    assert req.unsuffixed.forbidden_aggs == {aggs[n] for n in forbidden}


@pytest.mark.parametrize("dest,in_tree,hosts,limited", [
    ({"host": "h1"}, "n1", {"h1"}, True),
    ({"node": "n2"}, "n2", {"h2"}, True),
    ({"host": "h2", "node": "n3"}, "n3", {"h2"}, True),
    ({"host": "nowhere"}, None, None, None),
    ({"node": "n9"}, None, None, None),
    ({"host": "h1", "node": "n2"}, None, None, None),
    # As Nova: Nova drops the limit when a requested host has several nodes
    # (placement takes one in_tree uuid, so a limit could cut off the
    # host's other nodes); the module keeps max_placement_results.
    ({"host": "h2"}, None, {"h2"}, False),
], ids=["host", "node", "host-and-node", "unknown-host", "unknown-node",
        "node-of-other-host", "host-with-two-nodes"])
def test_destination_host(cloud, dest, in_tree, hosts, limited):
    cloud.node("n1", host="h1")
    cloud.node("n2", host="h2")
    cloud.node("n3", host="h2")
    if hosts is None:
        with pytest.raises(rr.NoHostsPossible, match="not a known"):
            build(cloud, requested_destination=dest)
        return
    req = build(cloud, requested_destination=dest)
    assert req.unsuffixed.in_tree == (in_tree and cloud_mod.uuid_of(in_tree))
    assert req.hosts == frozenset(hosts)
    assert (req.limit is not None) == limited


def test_destination_aggregates_and_cell(cloud):
    a, b, c, x = (AGG(n) for n in "abcx")
    req = build(cloud, requested_destination={
        "aggregates": [f"{a}, {b}", c], "forbidden_aggregates": [x],
        "cell": CELL})
    assert req.unsuffixed.member_of == [{a, b}, {c}]
    assert req.unsuffixed.forbidden_aggs == {x}
    assert (req.cell, req.hosts) == (CELL, None)
    q = req.query()
    assert f"member_of=in:{min(a, b)},{max(a, b)}&member_of=in:{c}" \
           f"&member_of=!in:{x}" in q
    g = req.candidates_request().group("")
    assert g.member_of == (frozenset({a, b}), frozenset({c}))
    assert g.forbidden_aggs == frozenset({x})


@pytest.mark.parametrize("fields,limit", [
    ({}, 7), ({"scheduler_hints": {"foo": ["bar"]}}, 7),
    ({"instance_group": {"policy": "anti-affinity"}}, None),
    ({"scheduler_hints": {"group": ["g"]}}, None),
    ({"scheduler_hints": {"same_host": ["u"]}}, None),
    ({"scheduler_hints": {"different_host": ["u"]}}, None),
    ({"force_hosts": ["h1"]}, None), ({"force_nodes": ["n1"]}, None),
], ids=["plain", "other-hint", "server-group", "group-hint", "same-host",
        "different-host", "force-hosts", "force-nodes"])
def test_limit(cloud, fields, limit):
    cloud.set("scheduler", "max_placement_results", 7)
    req = build(cloud, **fields)
    assert req.limit == limit
    assert req.candidates_request().limit == limit
    assert ("limit=7" in req.query()) == (limit == 7)


def test_query_and_candidates_request(cloud):
    req = build(cloud, {"resources1:VGPU": "1", "group_policy": "isolate",
                        "trait:CUSTOM_Z": "required",
                        "trait:CUSTOM_Y": "forbidden"})
    assert req.query() == (
        "resources=DISK_GB:1,MEMORY_MB:512,VCPU:1"
        "&required=CUSTOM_Z,!CUSTOM_Y&resources1=VGPU:1"
        "&root_required=!COMPUTE_STATUS_DISABLED"
        "&group_policy=isolate&limit=1000")
    creq = req.candidates_request()
    assert isinstance(creq, cand.CandidatesRequest)
    assert [g.suffix for g in creq.groups] == ["", "1"]
    assert creq.group("").resources == BASE
    assert creq.group("").required_traits == (frozenset({"CUSTOM_Z"}),)
    assert creq.group("1").resources == {"VGPU": 1}
    assert creq.root_forbidden == frozenset({"COMPUTE_STATUS_DISABLED"})
    assert (creq.group_policy, creq.limit) == ("isolate", 1000)


def test_a_query_string_kept_for_its_shape_is_never_another_shapes(cloud):
    # query() keeps the strings it made by request shape: a request that
    # differs anywhere it reads gets its own.
    first = build(cloud, {"trait:CUSTOM_Z": "required"})
    assert "required=CUSTOM_Z" in first.query()
    again = build(cloud, {"trait:CUSTOM_Z": "required"})
    assert again.query() == first.query()
    for change in ({"trait:CUSTOM_Z": "forbidden"},
                   {"trait:CUSTOM_Y": "required"},
                   {"resources:VCPU": "2", "trait:CUSTOM_Z": "required"}):
        other = build(cloud, change)
        assert other.query() == other._query() != first.query()
    first.limit = 3
    assert first.query().endswith("&limit=3")
    first.groups[""].member_of.append({"agg-b", "agg-a"})
    assert "member_of=in:agg-a,agg-b" in first.query()


def test_empty_suffixed_group_left_out(cloud):
    req = build(cloud, {"resources1:VGPU": "0"})
    assert [g.suffix for g in req.candidates_request().groups] == [""]
    assert "resources1" not in req.query()

