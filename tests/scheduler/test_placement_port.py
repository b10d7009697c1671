"""The placement port: one object the scheduler finds candidates and
claims through, over the embedded placement (the HTTP writer behind it
is tested with the REST API in tests/rpc/test_cell_retry.py)."""

import uuid as uuidlib

import pytest

from placement import direct
from placement.candidates import engine as engine_mod
from placement.candidates import request as rq
from placement.candidates import result as result_mod
from scheduler import claims, errors, placement_port
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


def held_by(placement, consumer):
    return {rp: a.resources for rp, a in
            placement.get_allocations(consumer).allocations.items()}


def test_a_claim_beside_a_held_allocation_and_its_release(world):
    """An evacuation's claim: the instance holds its source; the
    destination is written beside it with the consumer's generation
    (Nova's report client does the same), what it held is recorded,
    and the release puts exactly that back."""
    port, placement, (source, dest) = world
    instance = new_id()
    placement.put_allocations(instance, {source: {"VCPU": 2}},
                              project_id=PROJECT, user_id=USER)
    held = {}
    assert port.claim(instance, vcpus(3, dest), PROJECT, USER,
                      held) is claims.Outcome.CLAIMED
    assert held_by(placement, instance) == {source: {"VCPU": 2},
                                            dest: {"VCPU": 3}}
    assert held == {instance: claims.Held({source: {"VCPU": 2}},
                                          PROJECT, USER)}
    port.release(instance, held[instance])
    assert held_by(placement, instance) == {source: {"VCPU": 2}}
    assert used(placement, dest) == 0
    # A provider held already (the source again) keeps its amounts.
    assert port.claim(instance, vcpus(1, source), PROJECT,
                      USER) is claims.Outcome.CLAIMED
    assert held_by(placement, instance) == {source: {"VCPU": 2}}


def test_a_claim_beside_that_does_not_fit_changes_nothing(world):
    port, placement, (source, dest) = world
    instance, other = new_id(), new_id()
    placement.put_allocations(instance, {source: {"VCPU": 2}},
                              project_id=PROJECT, user_id=USER)
    placement.put_allocations(other, {dest: {"VCPU": 3}},
                              project_id=PROJECT, user_id=USER)
    assert port.claim(instance, vcpus(2, dest), PROJECT,
                      USER) is claims.Outcome.NO_ROOM
    assert held_by(placement, instance) == {source: {"VCPU": 2}}


def test_a_consumer_changed_during_a_claim_beside_fails_it(world):
    """Between the read of the consumer and the write beside it another
    writer changed it: Nova's AllocationUpdateFailed, nothing written."""
    port, placement, (source, dest) = world
    instance = new_id()
    placement.put_allocations(instance, {source: {"VCPU": 2}},
                              project_id=PROJECT, user_id=USER)
    real = placement.get_allocations

    def read_then_race(consumer):
        view = real(consumer)
        placement.put_allocations(
            instance, {source: {"VCPU": 1}}, project_id=PROJECT,
            user_id=USER, consumer_generation=view.consumer.generation)
        return view

    placement.get_allocations = read_then_race
    try:
        with pytest.raises(errors.AllocationUpdateFailed,
                           match=f"consumer {instance}. Error: another "
                                 "process changed the consumer"):
            port.claim(instance, vcpus(3, dest), PROJECT, USER)
    finally:
        del placement.get_allocations
    assert held_by(placement, instance) == {source: {"VCPU": 1}}


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
