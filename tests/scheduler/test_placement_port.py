"""The placement port: one object the scheduler finds candidates and
claims through, over the embedded placement (the HTTP writer behind it
is tested with the REST API in tests/rpc/test_cell_retry.py)."""

import uuid as uuidlib

import pytest

from placement import direct
from placement.candidates import engine as engine_mod
from placement.candidates import request as rq
from placement.candidates import result as result_mod
from scheduler import claims, placement_port
from tests.scheduler import cloud as cloud_mod

PROJECT, USER = "p1", "u1"


@pytest.fixture
def world(cloud):
    placement = direct.PlacementDirect(cloud.store)
    uuids = [cloud_mod.add_host(cloud, placement, f"n{i}", vcpus=4)
             for i in range(2)]
    engine = engine_mod.CandidatesEngine(cloud.store, cloud.conf)
    yield placement_port.PlacementPort(placement, engine), placement, uuids
    engine.close()


def vcpus(n, rp):
    return result_mod.AllocationRequest(allocations={rp: {"VCPU": n}},
                                        mappings={})


def used(placement, rp):
    return placement.get_provider_usages(rp)[1].get("VCPU", 0)


def new_id():
    return str(uuidlib.uuid4())


def test_find_gives_lean_candidates(world):
    port, _, uuids = world
    found = port.find(rq.CandidatesRequest(
        groups=(rq.RequestGroup(resources={"VCPU": 3}),)))
    assert sorted(found.anchor_uuids()) == sorted(uuids)
    wanted = found.allocation_request(0)
    assert list(wanted.allocations.values()) == [{"VCPU": 3}]


def test_claim_then_no_room_then_unclaim(world):
    port, placement, uuids = world
    first, second = new_id(), new_id()
    assert port.claim(first, vcpus(3, uuids[0]), PROJECT,
                      USER) is claims.Outcome.CLAIMED
    assert port.claim(second, vcpus(3, uuids[0]), PROJECT,
                      USER) is claims.Outcome.NO_ROOM
    assert port.claim(second, vcpus(1, new_id()), PROJECT,
                      USER) is claims.Outcome.GONE
    port.unclaim(first)
    port.unclaim(first)  # nothing held: nothing to do
    assert used(placement, uuids[0]) == 0


def test_claim_all_is_all_or_nothing(world):
    port, placement, uuids = world
    a, b, c = new_id(), new_id(), new_id()
    assert port.claim_all([(a, vcpus(3, uuids[0])),
                           (b, vcpus(3, uuids[0]))],
                          PROJECT, USER) is claims.Outcome.NO_ROOM
    assert used(placement, uuids[0]) == 0
    assert port.claim_all([(a, vcpus(3, uuids[0])),
                           (c, vcpus(3, uuids[1]))],
                          PROJECT, USER) is claims.Outcome.CLAIMED
    assert [used(placement, u) for u in uuids] == [3, 3]


def test_a_claim_only_port_finds_nothing(world):
    _, placement, _ = world
    port = placement_port.for_writer(placement)
    assert placement_port.for_writer(port) is port
    with pytest.raises(NotImplementedError, match="claims only"):
        port.find(rq.CandidatesRequest(groups=()))
