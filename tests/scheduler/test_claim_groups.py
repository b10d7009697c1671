"""Requests that queue for the Scheduler are decided in a row and claimed
in one transaction (scheduler.request_groups): each sees what the ones
before it took, a group's claim is all-or-nothing, and when it fails each
request is decided again alone. On SQLite; the race test runs threaded
schedulers on PostgreSQL and MySQL."""

import threading
import time
import uuid as uuidlib

from scheduler import errors
from tests.scheduler import cloud as cloud_mod

FLAVOR = {"vcpus": 2, "memory_mb": 1024, "root_gb": 10}


def spec(**fields):
    data = {"flavor": dict(FLAVOR), "project_id": "p1", "user_id": "u1"}
    data.update(fields)
    return data


def queued_calls(s, specs, instances=None):
    """select_destinations for each spec (one instance each, new ones
    unless given) from its own thread, all queued while the scheduler is
    busy, then let go: [(instance, chosen Selection or the error)] in
    queue order."""
    out = [None] * len(specs)
    instances = instances or [str(uuidlib.uuid4()) for _ in specs]

    def call(i):
        try:
            [[chosen, *_]] = s.select_destinations(None, specs[i],
                                                   [instances[i]])
            out[i] = (instances[i], chosen)
        except Exception as exc:
            out[i] = (instances[i], exc)

    threads = []
    with s._lock:  # a decision under way
        for i in range(len(specs)):
            threads.append(threading.Thread(target=call, args=(i,)))
            threads[-1].start()
            deadline = time.monotonic() + 10
            while s._groups.queued < i + 1:
                assert time.monotonic() < deadline
                time.sleep(0.001)
    for thread in threads:
        thread.join(30)
        assert not thread.is_alive(), "a call never returned"
    return out


def usage(placement, uuid):
    return {rc: n for rc, n in placement.get_provider_usages(uuid)[1].items()
            if n}


def test_queued_requests_are_claimed_in_one_transaction(
        cloud, placement, make):
    uuids = [cloud_mod.add_host(cloud, placement, f"n{i}", memory_mb=8192)
             for i in range(4)]
    s = make()
    s.table.sync()
    out = queued_calls(s, [spec() for _ in range(4)])
    assert s.stats["grouped_decisions"] == 4
    assert s.stats["claim_attempts"] == 1
    # Each request saw the ones before it take RAM: one per host.
    chosen = [sel.compute_node_uuid for _, sel in out]
    assert sorted(chosen) == sorted(uuids)
    for instance, sel in out:
        held = placement.get_allocations(instance).allocations
        assert list(held) == [sel.compute_node_uuid]
    for uuid in uuids:
        assert usage(placement, uuid) == {
            "VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}


def test_a_group_that_does_not_fit_is_decided_again_one_by_one(
        cloud, placement, make):
    # Room for one instance: both requests of the group pick n0, the
    # group's claim fails as a whole, and alone the first gets n0.
    [uuid] = [cloud_mod.add_host(cloud, placement, "n0", vcpus=2)]
    s = make()
    s.table.sync()
    before = {column: int(getattr(s.table, column)[0]) for column in
              ("free_ram_mb", "vcpus_used", "num_instances", "num_io_ops")}
    out = queued_calls(s, [spec(), spec()])
    assert s.stats["grouped_decisions"] == 2
    # The group's claim was lost, then the first alone was claimed; the
    # second found no room left and claimed nothing.
    assert s.stats["group_fallbacks"] == 1
    assert s.stats["claim_attempts"] == 2
    assert s.stats["claims_lost"] == 1
    first, second = out
    assert first[1].compute_node_uuid == uuid
    assert isinstance(second[1], errors.NoValidHost)
    assert placement.get_allocations(second[0]).allocations == {}
    assert list(placement.get_allocations(first[0]).allocations) == [uuid]
    assert usage(placement, uuid) == {"VCPU": 2, "MEMORY_MB": 1024,
                                      "DISK_GB": 10}
    # The host state holds the one instance placed, not the undone picks.
    after = {column: int(getattr(s.table, column)[0]) for column in before}
    assert after == {"free_ram_mb": before["free_ram_mb"] - 1024,
                     "vcpus_used": before["vcpus_used"] + 2,
                     "num_instances": before["num_instances"] + 1,
                     "num_io_ops": before["num_io_ops"] + 1}


def test_a_refused_request_does_not_hold_back_its_group(
        cloud, placement, make):
    uuids = [cloud_mod.add_host(cloud, placement, f"n{i}")
             for i in range(2)]
    cloud.service("n1", enabled=False)
    s = make()
    s.table.sync()
    out = queued_calls(s, [spec(), spec(ignore_hosts=["n0"]), spec()])
    assert s.stats["grouped_decisions"] == 3
    assert s.stats["claim_attempts"] == 1
    assert isinstance(out[1][1], errors.NoValidHost)
    assert placement.get_allocations(out[1][0]).allocations == {}
    for instance, sel in (out[0], out[2]):
        assert sel.compute_node_uuid == uuids[0]
        assert list(placement.get_allocations(instance).allocations) == \
            [uuids[0]]
    assert usage(placement, uuids[0])["VCPU"] == 4


def test_an_instance_that_holds_allocations_is_claimed_beside_them(
        cloud, placement, make):
    """An instance that holds allocations (an evacuation: Nova's
    conductor leaves the source's allocation on the instance) fails its
    group's claim; decided again alone, it is claimed beside what it
    holds, as Nova's scheduler does, and the others are placed."""
    uuids = [cloud_mod.add_host(cloud, placement, f"n{i}")
             for i in range(2)]
    s = make()
    s.table.sync()
    held = str(uuidlib.uuid4())
    placement.put_allocations(held, {uuids[1]: {"VCPU": 1}},
                              project_id="p1", user_id="u1")
    instances = [str(uuidlib.uuid4()), held, str(uuidlib.uuid4())]
    out = queued_calls(s, [spec(), spec(ignore_hosts=["n1"]), spec()],
                       instances)
    assert s.stats["grouped_decisions"] == 3
    assert s.stats["group_fallbacks"] == 1
    for _, sel in out:
        assert not isinstance(sel, Exception), sel
    assert out[1][1].compute_node_uuid == uuids[0]
    for instance, sel in (out[0], out[2]):
        assert list(placement.get_allocations(instance).allocations) == \
            [sel.compute_node_uuid]
    # The held instance keeps its source and holds the new host beside.
    assert {rp: a.resources for rp, a in
            placement.get_allocations(held).allocations.items()} == {
        uuids[1]: {"VCPU": 1},
        uuids[0]: {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}}


def test_one_instance_asked_twice_in_a_group_is_placed_once(
        cloud, placement, make):
    # A retry that arrives while the first call still waits.
    [cloud_mod.add_host(cloud, placement, f"n{i}") for i in range(2)]
    s = make()
    s.table.sync()
    twice, other = str(uuidlib.uuid4()), str(uuidlib.uuid4())
    out = queued_calls(s, [spec(), spec(), spec()], [twice, other, twice])
    assert s.stats["group_fallbacks"] == 1
    assert out[0][1].compute_node_uuid in placement.get_allocations(
        twice).allocations
    assert list(placement.get_allocations(other).allocations) == \
        [out[1][1].compute_node_uuid]
    # Decided again alone, the retry finds the instance holding the
    # first claim and is claimed beside it, as Nova's scheduler claims an
    # instance that holds allocations; a host it holds already adds
    # nothing.
    held = placement.get_allocations(twice).allocations
    assert set(held) == {out[0][1].compute_node_uuid,
                         out[2][1].compute_node_uuid}
    assert sum(usage(placement, p.uuid).get("VCPU", 0)
               for p in placement.list_providers()) == 2 * (1 + len(held))


def test_claim_group_size_one_claims_each_request_alone(
        cloud, placement, make):
    [cloud_mod.add_host(cloud, placement, f"n{i}") for i in range(3)]
    s = make({("scheduler", "claim_group_size"): 1})
    s.table.sync()
    out = queued_calls(s, [spec() for _ in range(3)])
    assert all(not isinstance(sel, Exception) for _, sel in out)
    assert s.stats["grouped_decisions"] == 0
    assert s.stats["claim_attempts"] == 3
    assert s.stats["decisions"] == 3
