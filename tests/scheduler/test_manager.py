"""select_destinations end to end on SQLite: picks, claims, alternates,
all-or-nothing, rebuilds, forced and ignored hosts, lost races, the PCPU
fallback and explain."""

import json
import uuid as uuidlib

import pytest

from scheduler import errors, manager
from tests.scheduler import cloud as cloud_mod

FLAVOR = {"vcpus": 2, "memory_mb": 1024, "root_gb": 10}
CELL_A = "0a1b2c3d-0000-4000-8000-00000000000a"
CELL_B = "0a1b2c3d-0000-4000-8000-00000000000b"


def spec(**fields):
    data = {"flavor": dict(FLAVOR), "project_id": "p1", "user_id": "u1"}
    data.update(fields)
    return data


def ids(n):
    return [str(uuidlib.uuid4()) for _ in range(n)]


def hosts(cloud, placement, sizes, cell=CELL_A):
    """Hosts n0, n1, ... with the given memory (MB); 8 vCPUs, 100 GB."""
    return [cloud_mod.add_host(cloud, placement, f"n{i}", memory_mb=m,
                               cell=cell)
            for i, m in enumerate(sizes)]


def used(placement, uuid):
    """{class: amount} in use on the provider (classes in use only)."""
    return {rc: n for rc, n in placement.get_provider_usages(uuid)[1].items()
            if n}


def test_picks_most_free_ram_and_claims(cloud, placement, make):
    uuids = hosts(cloud, placement, [4096, 16384, 8192])
    s = make()
    [[chosen, *alternates]] = s.select_destinations(
        None, spec(), ids(1))
    assert chosen.nodename == "n1"
    assert chosen.compute_node_uuid == uuids[1]
    assert used(placement, uuids[1]) == {
        "VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}
    assert used(placement, uuids[0]) == {}
    request = json.loads(chosen.allocation_request)
    assert request["allocations"] == {uuids[1]: {"resources": {
        "VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}}}
    assert chosen.allocation_request_version == "1.36"
    assert chosen.cell_uuid == CELL_A
    assert chosen.availability_zone == "nova"
    # Two alternates (max_attempts 3), best first, each with its own
    # allocation request, none claimed.
    assert [a.nodename for a in alternates] == ["n2", "n0"]
    for alt in alternates:
        body = json.loads(alt.allocation_request)
        assert list(body["allocations"]) == [alt.compute_node_uuid]


def test_instances_spread_as_host_state_is_consumed(cloud, placement, make):
    hosts(cloud, placement, [8192, 8192, 8192])
    s = make()
    out = s.select_destinations(None, spec(num_instances=3), ids(3))
    assert sorted(sel[0].nodename for sel in out) == ["n0", "n1", "n2"]


def test_alternates_same_cell_never_a_chosen_host(cloud, placement, make):
    for i, cell in enumerate([CELL_A, CELL_A, CELL_B, CELL_A, CELL_B]):
        cloud_mod.add_host(cloud, placement, f"n{i}",
                           memory_mb=16384 - 1024 * i, cell=cell)
    s = make({("scheduler", "max_attempts"): 4})
    out = s.select_destinations(None, spec(num_instances=2), ids(2))
    chosen = {sel[0].nodename for sel in out}
    assert chosen == {"n0", "n1"}
    for sel in out:
        alternates = [a.nodename for a in sel[1:]]
        assert alternates == ["n3"]  # the only other cell-A host
        assert not set(alternates) & chosen


def test_all_or_nothing(cloud, placement, make):
    # Room for 2 instances of 4 vCPUs in all: the third fails, and the
    # two claims made are removed.
    uuids = [cloud_mod.add_host(cloud, placement, f"n{i}", vcpus=4)
             for i in range(2)]
    s = make()
    s.table.sync()
    before = [int(s.table.free_ram_mb[s.table.row_of(u)]) for u in uuids]
    with pytest.raises(manager.NoValidHost) as caught:
        s.schedule(spec(flavor=dict(FLAVOR, vcpus=4), num_instances=3),
                   ids(3))
    assert "instance 3 of 3" in caught.value.message
    for u in uuids:
        assert used(placement, u) == {}
    after = [int(s.table.free_ram_mb[s.table.row_of(u)]) for u in uuids]
    assert after == before


def test_no_claims_without_instance_uuids(cloud, placement, make):
    [uuid] = hosts(cloud, placement, [8192])
    s = make()
    [[chosen]] = s.select_destinations(None, spec(), None)
    assert chosen.nodename == "n0"
    assert used(placement, uuid) == {}


def test_old_return_form(cloud, placement, make):
    hosts(cloud, placement, [8192])
    s = make()
    [dest] = s.select_destinations(None, spec(), ids(1),
                                   return_objects=False)
    assert dest["host"] == "n0" and dest["nodename"] == "n0"
    assert "limits" in dest


def test_no_alternates_when_not_asked(cloud, placement, make):
    hosts(cloud, placement, [8192, 8192])
    s = make()
    out = s.select_destinations(None, spec(), ids(1),
                                return_alternates=False)
    assert len(out) == 1 and len(out[0]) == 1


def test_disabled_host_filtered_and_reason_given(cloud, placement, make):
    hosts(cloud, placement, [16384, 8192, 4096])
    cloud.service("n0", enabled=False, disabled_reason="maintenance")
    s = make()
    decision = s.schedule(spec(), ids(1), explain=True)
    assert decision.selections[0][0].nodename == "n1"
    [turn] = decision.explain["instances"]
    compute = next(f for f in turn["filters"] if f["name"] == "ComputeFilter")
    assert compute["before"] == 3 and compute["after"] == 2
    assert "maintenance" in compute["rejected"]["n0"]
    assert set(turn["weights"]) == {"n1", "n2"}
    ram = turn["weighers"]["RAMWeigher"]
    assert ram["raw"] == {"n1": 8192.0, "n2": 4096.0}
    assert turn["weights"]["n1"] > turn["weights"]["n2"]
    assert "root_required=!COMPUTE_STATUS_DISABLED" in \
        decision.explain["query"]


def test_no_valid_host_says_where_hosts_went(cloud, placement, make):
    hosts(cloud, placement, [8192])
    cloud.service("n0", enabled=False)
    s = make()
    with pytest.raises(manager.NoValidHost) as caught:
        s.schedule(spec(), ids(1))
    assert "ComputeFilter removed 1" in caught.value.message


def test_forced_host_skips_filters(cloud, placement, make):
    hosts(cloud, placement, [16384, 8192])
    cloud.service("n1", enabled=False)
    s = make()
    [[chosen, *alternates]] = s.select_destinations(
        None, spec(force_hosts=["n1"]), ids(1))
    assert chosen.nodename == "n1" and alternates == []


def test_ignored_hosts(cloud, placement, make):
    hosts(cloud, placement, [16384, 8192])
    s = make()
    [[chosen, *_]] = s.select_destinations(
        None, spec(ignore_hosts=["n0"]), ids(1))
    assert chosen.nodename == "n1"


# A rebuild with a new image, as Nova 34's compute API sends it
# (nova/compute/api.py, rebuild): the instance's own host and node
# forced, and the internal hint _nova_check_type = ['rebuild'].
def rebuild_spec(host, image=None):
    return spec(scheduler_hints={"_nova_check_type": ["rebuild"]},
                force_hosts=[host], force_nodes=[host],
                image={"properties": image or {}})


def test_rebuild_claims_nothing_and_skips_compute_filter(
        cloud, placement, make):
    """Nova's host manager runs the filters on forced hosts when the
    request carries _nova_check_type, and only those with RUN_ON_REBUILD
    (ComputeFilter is not one): a disabled host still passes; Nova's
    scheduler asks placement nothing and claims nothing for a rebuild."""
    uuids = hosts(cloud, placement, [8192, 8192])
    cloud.service("n0", enabled=False)
    s = make()
    [[chosen]] = s.select_destinations(None, rebuild_spec("n0"), ids(1))
    assert chosen.nodename == "n0"
    assert chosen.allocation_request is None
    assert used(placement, uuids[0]) == {}


def test_rebuild_runs_the_image_filter_on_the_forced_host(
        cloud, placement, make):
    """A new image the instance's host cannot run: ImagePropertiesFilter
    (RUN_ON_REBUILD) removes the forced host, NoValidHost; Nova skips the
    filters for forced hosts only when _nova_check_type is absent."""
    cloud.node("x86", supported_instances=[["x86_64", "qemu", "hvm"]])
    cloud.node("arm", supported_instances=[["aarch64", "qemu", "hvm"]])
    s = make()
    with pytest.raises(manager.NoValidHost,
                       match="ImagePropertiesFilter removed 1"):
        s.schedule(rebuild_spec("x86", {"hw_architecture": "aarch64"}),
                   ids(1))
    [[chosen]] = s.select_destinations(
        None, rebuild_spec("x86", {"hw_architecture": "x86_64"}), ids(1))
    assert chosen.nodename == "x86"


def test_a_forced_host_placement_did_not_return_is_named(
        cloud, placement, make):
    hosts(cloud, placement, [8192, 8192])
    s = make()
    with pytest.raises(manager.NoValidHost,
                       match="forced host n9 not among the 2 candidate "
                             "hosts placement returned"):
        s.schedule(spec(force_hosts=["n9"]), ids(1))
    big = dict(FLAVOR, memory_mb=8192 + 1)
    with pytest.raises(manager.NoValidHost,
                       match="forced host n0 and node n0 not among the 0 "):
        s.schedule(spec(flavor=big, force_hosts=["n0"],
                        force_nodes=["n0"]), ids(1))


def affinity_spec(policy, count):
    return spec(num_instances=count,
                instance_group={"policy": policy, "hosts": [],
                                "members": []})


def test_affinity_multi_create_gets_no_alternates(cloud, placement, make):
    """Nova filters and weighs again after every pick of a request of
    several instances and takes every instance's alternates from that
    (SchedulerManager._get_alternate_hosts): with affinity only the
    chosen host passes, and a chosen host is never an alternate."""
    hosts(cloud, placement, [16384, 12288, 8192, 6144])
    s = make()
    picks = s.select_destinations(None, affinity_spec("affinity", 2),
                                  ids(2))
    assert [[sel.nodename for sel in one] for one in picks] == [
        ["n0"], ["n0"]]


def test_anti_affinity_multi_create_alternates_pass_the_filters(
        cloud, placement, make):
    """With anti-affinity, an alternate is a host no instance of the
    request took (what the filters allow after every pick)."""
    hosts(cloud, placement, [16384, 12288, 8192, 6144])
    s = make()
    picks = s.select_destinations(None, affinity_spec("anti-affinity", 2),
                                  ids(2))
    chosen = [one[0].nodename for one in picks]
    assert chosen == ["n0", "n1"]
    for one in picks:
        assert [sel.nodename for sel in one[1:]] == ["n2", "n3"]


def test_lost_race_goes_to_next_host(cloud, placement, make):
    uuids = hosts(cloud, placement, [16384, 8192])
    s = make()
    original = s.engine.find

    def find_then_fill(request, lean=False, sync=True):
        # Another scheduler takes all of n0 between search and claim.
        result = original(request, lean=lean, sync=sync)
        if request.groups[0].in_tree is None:
            placement.put_allocations(
                str(uuidlib.uuid4()), {uuids[0]: {"VCPU": 8}},
                project_id="other", user_id="other")
        return result

    s.engine.find = find_then_fill
    [[chosen, *_]] = s.select_destinations(None, spec(), ids(1))
    assert chosen.nodename == "n1"
    assert used(placement, uuids[0]) == {"VCPU": 8}


def test_pcpu_request_falls_back_to_vcpu(cloud, placement, make):
    [uuid] = hosts(cloud, placement, [8192])
    s = make()
    dedicated = dict(FLAVOR, extra_specs={"hw:cpu_policy": "dedicated"})
    [[chosen]] = s.select_destinations(None, spec(flavor=dedicated), ids(1))
    assert chosen.nodename == "n0"
    assert used(placement, uuid)["VCPU"] == 2


def test_pcpu_fallback_can_be_disabled(cloud, placement, make):
    hosts(cloud, placement, [8192])
    s = make({("workarounds", "disable_fallback_pcpu_query"): True})
    dedicated = dict(FLAVOR, extra_specs={"hw:cpu_policy": "dedicated"})
    with pytest.raises(manager.NoValidHost):
        s.schedule(spec(flavor=dedicated), ids(1))


def test_unknown_zone_restricts_nothing_as_in_nova(cloud, placement, make):
    hosts(cloud, placement, [8192])
    s = make()
    [[chosen, *_]] = s.schedule(spec(availability_zone="mars"),
                                ids(1)).selections
    assert chosen.nodename == "n0"


def test_unknown_zone_is_no_valid_host_when_strict(cloud, placement, make):
    hosts(cloud, placement, [8192])
    s = make({("scheduler", "strict_availability_zones"): True})
    with pytest.raises(manager.NoValidHost) as caught:
        s.schedule(spec(availability_zone="mars"), ids(1))
    assert "mars" in caught.value.message


def test_unknown_resource_class_is_no_valid_host(cloud, placement, make):
    hosts(cloud, placement, [8192])
    s = make()
    with pytest.raises(manager.NoValidHost) as caught:
        s.schedule(spec(flavor=dict(
            FLAVOR, extra_specs={"resources:CUSTOM_NOPE": "1"})), ids(1))
    assert "CUSTOM_NOPE" in caught.value.message


def test_zone_becomes_member_of(cloud, placement, make):
    agg = cloud_mod.uuid_of("agg-z1")
    hosts(cloud, placement, [16384])
    cloud_mod.add_host(cloud, placement, "n1", memory_mb=8192,
                       aggregates=[agg])
    cloud.aggregate("z1", ["n1"], availability_zone="z1")
    s = make()
    [[chosen]] = s.select_destinations(
        None, spec(availability_zone="z1"), ids(1))
    assert chosen.nodename == "n1" and chosen.availability_zone == "z1"
    # The default zone keeps out of z1.
    [[chosen, *_]] = s.select_destinations(
        None, spec(availability_zone="nova"), ids(1))
    assert chosen.nodename == "n0"


def test_instance_holding_allocations_is_claimed_beside_them(
        cloud, placement, make):
    """An evacuation: the instance still holds its source's allocation;
    the destination is claimed beside it in one write (Nova's report
    client doubles the allocation up the same way)."""
    source, dest = hosts(cloud, placement, [8192, 8192])
    s = make()
    [instance] = ids(1)
    placement.put_allocations(instance, {source: {"VCPU": 1}},
                              project_id="p1", user_id="u1")
    generation = placement.get_consumer(instance).generation
    [[chosen, *_]] = s.select_destinations(
        None, spec(ignore_hosts=["n0"]), [instance])
    assert chosen.compute_node_uuid == dest
    view = placement.get_allocations(instance)
    assert {rp: a.resources for rp, a in view.allocations.items()} == {
        source: {"VCPU": 1},
        dest: {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}}
    assert view.consumer.generation == generation + 1


def test_bad_spec_is_invalid(cloud, placement, make):
    s = make()
    with pytest.raises(errors.InvalidRequestSpec):
        s.schedule({"flavor": {"vcpus": 0}}, ids(1))


def test_request_claimed_in_one_go_falls_back_one_by_one(
        cloud, placement, make):
    # The host table says n0 has far more free RAM, so both instances
    # are first picked there; placement has room for one only (4 vCPUs):
    # the joint claim fails and the one-by-one path puts the second on
    # n1.
    uuids = [cloud_mod.add_host(cloud, placement, "n0", vcpus=4,
                                memory_mb=65536),
             cloud_mod.add_host(cloud, placement, "n1", vcpus=8,
                                memory_mb=8192)]
    s = make()
    flavor = dict(FLAVOR, vcpus=4)
    out = s.select_destinations(None, spec(flavor=flavor, num_instances=2),
                                ids(2))
    assert sorted(sel[0].nodename for sel in out) == ["n0", "n1"]
    assert used(placement, uuids[0])["VCPU"] == 4
    assert used(placement, uuids[1])["VCPU"] == 4


def test_request_claimed_in_one_transaction(cloud, placement, make):
    uuids = hosts(cloud, placement, [8192, 8192, 8192])
    s = make()
    commits = []
    s.store.add_listener(commits.append)
    instances = ids(3)
    s.select_destinations(None, spec(num_instances=3), instances)
    assert len(commits) == 1
    assert sum(used(placement, u)["VCPU"] for u in uuids) == 6
    for instance in instances:
        assert placement.get_allocations(instance).allocations


# -- NUMA cells and PCI devices taken between instances ---------------------

NUMA_FILTERS = ["ComputeFilter", "NUMATopologyFilter"]


def two_cells(pinned=()):
    """Two NUMA cells of 4 pinnable CPUs and 4 GB each."""
    return {"cells": [
        {"id": k, "cpuset": [], "pcpuset": list(range(4 * k, 4 * k + 4)),
         "pinned_cpus": [c for c in pinned if 4 * k <= c < 4 * k + 4],
         "memory": 4096, "memory_usage": 0}
        for k in range(2)]}


def pinned_spec():
    flavor = dict(FLAVOR, vcpus=4,
                  extra_specs={"hw:cpu_policy": "dedicated"})
    return spec(flavor=flavor, numa_topology={
        "cells": [{"id": 0, "pcpuset": [0, 1, 2, 3], "memory": 1024}],
        "cpu_policy": "dedicated"})


def pinned_cpus(s, uuid):
    topology = s.table.node(s.table.row_of(uuid)).numa_topology
    return [cell["pinned_cpus"] for cell in topology["cells"]]


def test_numa_cells_taken_between_instances(cloud, placement, make):
    # Placement has room for 4 such instances; the NUMA cells for 2.
    uuid = cloud_mod.add_host(cloud, placement, "n0", vcpus=16,
                              memory_mb=16384, numa_topology=two_cells())
    s = make({("filter_scheduler", "enabled_filters"): NUMA_FILTERS})
    with pytest.raises(manager.NoValidHost) as caught:
        s.schedule(pinned_spec(), ids(3))
    assert "instance 3 of 3" in caught.value.message
    assert used(placement, uuid) == {}
    assert pinned_cpus(s, uuid) == [[], []]  # rolled back

    s.schedule(pinned_spec(), ids(2))
    assert pinned_cpus(s, uuid) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert used(placement, uuid)["VCPU"] == 8
    # Until the node reports again, a third does not fit either.
    with pytest.raises(manager.NoValidHost):
        s.schedule(pinned_spec(), ids(1))
    cloud.node("n0", vcpus=16, memory_mb=16384,
               numa_topology=two_cells(pinned=range(4)))
    [[chosen, *_]] = s.select_destinations(None, pinned_spec(), ids(1))
    assert chosen.nodename == "n0"
    assert pinned_cpus(s, uuid) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_numa_taken_on_the_one_claim_at_a_time_path(cloud, placement, make):
    # Without instance uuids nothing is claimed: each instance is
    # placed in turn, and the cells still run out after two.
    cloud_mod.add_host(cloud, placement, "n0", vcpus=16, memory_mb=16384,
                       numa_topology=two_cells())
    s = make({("filter_scheduler", "enabled_filters"): NUMA_FILTERS})
    two = dict(pinned_spec(), num_instances=2)
    assert len(s.schedule(two).selections) == 2
    with pytest.raises(manager.NoValidHost):
        s.schedule(dict(pinned_spec(), num_instances=1))


VF_POOL = {"count": 1, "vendor_id": "8086", "product_id": "1520",
           "dev_type": "type-VF"}
PCI_FILTERS = ["ComputeFilter", "PciPassthroughFilter"]


def vf_spec():
    return spec(pci_requests=[{"count": 1, "spec": [
        {"vendor_id": "8086", "product_id": "1520"}]}])


def test_pci_devices_taken_between_instances(cloud, placement, make):
    for name, memory in (("n0", 8192), ("n1", 16384)):
        cloud_mod.add_host(cloud, placement, name, memory_mb=memory,
                           pci_device_pools=[dict(VF_POOL)])
    s = make({("filter_scheduler", "enabled_filters"): PCI_FILTERS})
    # The RAM weigher prefers n1 both times; its one VF is gone after
    # the first instance.
    picks = s.select_destinations(None, vf_spec() | {"num_instances": 2},
                                  ids(2))
    assert sorted(p[0].nodename for p in picks) == ["n0", "n1"]
    table = s.table
    assert [table.node(r).pci_device_pools[0]["count"]
            for r in cloud.rows("n0", "n1")] == [0, 0]
    assert table.pci_devices[cloud.rows("n0", "n1")].tolist() == [0, 0]
    with pytest.raises(manager.NoValidHost):
        s.schedule(vf_spec(), ids(1))


def test_pci_devices_given_back_when_the_request_fails(cloud, placement,
                                                       make):
    for name in ("n0", "n1"):
        cloud_mod.add_host(cloud, placement, name,
                           pci_device_pools=[dict(VF_POOL)])
    s = make({("filter_scheduler", "enabled_filters"): PCI_FILTERS})
    with pytest.raises(manager.NoValidHost):
        s.schedule(vf_spec() | {"num_instances": 3}, ids(3))
    assert s.table.pci_devices[cloud.rows("n0", "n1")].tolist() == [1, 1]
    assert len(s.schedule(vf_spec() | {"num_instances": 2},
                          ids(2)).selections) == 2
