"""The stages of select_destinations, one at a time, over a
RequestState: what each fills in, and that a failed request leaves
nothing behind."""

import random
import uuid as uuidlib

import pytest

from filters import base as filters_base
from placement import direct
from scheduler import errors, framework, host_request, manager
from scheduler import request_spec as rs
from scheduler.pipeline import state as state_mod
from tests.scheduler import cloud as cloud_mod

FLAVOR = {"vcpus": 2, "memory_mb": 1024, "root_gb": 10}
USED = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}


@pytest.fixture
def placement(cloud):
    return direct.PlacementDirect(cloud.store)


@pytest.fixture
def scheduler(cloud, placement):
    """Hosts n0 (most free RAM), n1, n2 and a scheduler over them."""
    cloud.set("scheduler", "max_attempts", 3)
    for name, memory in (("n0", 16384), ("n1", 8192), ("n2", 4096)):
        cloud_mod.add_host(cloud, placement, name, memory_mb=memory)
    s = manager.Scheduler(cloud.conf, store=cloud.store,
                          rng=random.Random(7), clock=lambda: cloud_mod.NOW)
    s.sync()
    yield s
    s.close()


def new_state(s, uuids=(), **fields):
    data = {"flavor": dict(FLAVOR), "project_id": "p1", "user_id": "u1"}
    data.update(fields)
    spec = rs.RequestSpec.from_dict(data)
    uuids = list(uuids)
    return state_mod.RequestState(
        spec=spec, instance_uuids=uuids,
        count=len(uuids) or spec.num_instances, project_id="p1",
        user_id="u1",
        host_request=host_request.HostRequest(
            spec=spec, table=s.table, conf=s.conf, now=cloud_mod.NOW,
            rebuild=spec.hint("_nova_check_type") == "rebuild"))


def names(s, rows):
    return sorted(s.table.nodenames[r] for r in rows)


def used(placement, name):
    uuid = cloud_mod.uuid_of(name)
    return {rc: n for rc, n in placement.get_provider_usages(uuid)[1].items()
            if n}


def test_candidates_stage_fills_query_candidates_and_rows(scheduler):
    state = new_state(scheduler, ignore_hosts=["n2"])
    scheduler.pipeline.find(state)
    assert state.query is not None and len(state.candidates) == 3
    assert names(scheduler, state.candidate_hosts) == ["n0", "n1", "n2"]
    # The request's own restrictions narrow the rows, not the candidates.
    assert names(scheduler, state.rows) == ["n0", "n1"]
    assert state.forced is None
    row = int(state.rows[0])
    assert state.first_request(row).allocations == {
        scheduler.table.uuids[row]: USED}


def test_forced_hosts_are_found_once_for_the_request(scheduler):
    state = new_state(scheduler, force_hosts=["n1"])
    scheduler.pipeline.find(state)
    assert names(scheduler, state.forced) == ["n1"]


def test_a_rebuild_asks_placement_nothing(scheduler):
    state = new_state(scheduler, scheduler_hints={
        "_nova_check_type": ["rebuild"]},
        requested_destination={"host": "n2", "node": "n2"})
    scheduler.pipeline.find(state)
    assert state.query is None and state.candidates is None
    assert names(scheduler, state.rows) == ["n2"]
    assert state.candidates_on(int(state.rows[0])) == ()


def test_ranking_stage_orders_by_weight(scheduler):
    state = new_state(scheduler)
    scheduler.pipeline.find(state)
    ranking = scheduler.pipeline.place.rank(state, 0)
    assert names(scheduler, ranking.passed) == ["n0", "n1", "n2"]
    assert len(ranking.weights) == 3
    # host_subset_size 1: the heaviest (most free RAM) first.
    assert [scheduler.table.nodenames[r] for r in ranking.ordered] == [
        "n0", "n1", "n2"]


def test_placing_stage_claims_and_takes_from_host_state(
        scheduler, placement):
    instance = str(uuidlib.uuid4())
    state = new_state(scheduler, [instance])
    scheduler.pipeline.find(state)
    before = int(scheduler.table.free_ram_mb[state.rows[0]])
    scheduler.pipeline.place(state)
    [turn] = state.turns
    assert scheduler.table.nodenames[turn.chosen] == "n0"
    assert state.claimed == [instance]
    assert state.consumed == [turn.chosen]
    assert used(placement, "n0") == USED
    assert int(scheduler.table.free_ram_mb[turn.chosen]) == before - 1024


def test_placing_stage_rolls_back_what_it_did(scheduler, placement):
    # Three instances of 6 vCPUs on two hosts of 8: the request fails
    # at the third, and the claims and host state it took are given
    # back.
    instances = [str(uuidlib.uuid4()) for _ in range(3)]
    state = new_state(scheduler, instances, num_instances=3,
                      flavor=dict(FLAVOR, vcpus=6),
                      force_hosts=["n0", "n1"])
    scheduler.pipeline.find(state)
    free = scheduler.table.free_ram_mb.copy()
    with pytest.raises(errors.NoValidHost, match="instance 3 of 3"):
        scheduler.pipeline.place(state)
    assert len(state.claimed) == 2  # made, then removed
    assert all(not used(placement, n) for n in ("n0", "n1"))
    assert (scheduler.table.free_ram_mb == free).all()


def test_selecting_stage_gives_alternates_from_the_ranking(scheduler):
    state = new_state(scheduler, [str(uuidlib.uuid4())])
    scheduler.pipeline.find(state)
    scheduler.pipeline.place(state)
    scheduler.pipeline.select(state, alternates=True)
    [[chosen, *alternates]] = state.selections
    assert chosen.nodename == "n0" and chosen.allocation_request
    assert [a.nodename for a in alternates] == ["n1", "n2"]
    scheduler.pipeline.select(state, alternates=False)
    assert [[s.nodename for s in per] for per in state.selections] == [
        ["n0"]]


def test_pipeline_runs_the_stages_in_order(scheduler):
    state = new_state(scheduler, [str(uuidlib.uuid4())])
    decision = scheduler.pipeline.run(state)
    assert decision.selections is state.selections
    assert [s.nodename for s in decision.selections[0]] == [
        "n0", "n1", "n2"]


class Refuses(filters_base.BaseFilter):
    name = "Refuses"

    def mask(self, request, rows):
        raise filters_base.RequestError("scheduler_hints.x: refused")


def test_a_filter_that_fails_the_request_leaves_no_claim(cloud, placement):
    for name in ("n0", "n1"):
        cloud_mod.add_host(cloud, placement, name)
    cloud.set("filter_scheduler", "enabled_filters", ["Refuses"])
    registry = framework.Registry({"Refuses": Refuses}, {}, [])
    s = manager.Scheduler(cloud.conf, store=cloud.store, registry=registry,
                          clock=lambda: cloud_mod.NOW)
    try:
        with pytest.raises(errors.InvalidRequestSpec,
                           match="scheduler_hints.x: refused"):
            s.select_destinations(
                None, {"flavor": dict(FLAVOR), "num_instances": 2},
                [str(uuidlib.uuid4()), str(uuidlib.uuid4())])
    finally:
        s.close()
    assert all(not used(placement, n) for n in ("n0", "n1"))
