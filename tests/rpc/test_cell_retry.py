"""The cell retry on real Selections: the real scheduler picks and claims
a host with alternates, the build "fails" there, and rpc.cell_retry moves
the claim to the next alternate that fits, through the embedded placement
and through the REST API served in a thread. Usages are checked on every
provider after each move: nothing may leak."""

import json
import random
import socket
import uuid as uuidlib

import pytest

from placement import direct
from placement import errors as placement_errors
from placement.candidates import result as result_mod
from rpc import cell_retry
from scheduler import claims, errors, manager, placement_port
from tests.functional import api_helpers
from tests.scheduler import cloud as cloud_mod

FLAVOR = {"vcpus": 2, "memory_mb": 1024, "root_gb": 10}
USED = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}
# Most free RAM first: n0 is picked, then n1, n2, n3 are its alternates.
SIZES = (16384, 12288, 8192, 6144)
PROJECT, USER = "p1", "u1"


def serve(store):
    """The placement REST API on ``store`` at a loopback URL; returns
    (url, stop)."""
    url, _, stop = api_helpers.serve_http(store)
    return url, stop


class World:
    """Four hosts in one cell, a scheduler over them, and the placement
    the cell retry writes through (``via``: direct or http)."""

    def __init__(self, store, via):
        self.cloud = cloud_mod.Cloud(store)
        self.cloud.set("scheduler", "max_attempts", 4)
        self.direct = direct.PlacementDirect(store)
        self.uuids = [cloud_mod.add_host(self.cloud, self.direct, f"n{i}",
                                         memory_mb=m)
                      for i, m in enumerate(SIZES)]
        self.scheduler = manager.Scheduler(
            self.cloud.conf, store=store, rng=random.Random(7),
            clock=lambda: cloud_mod.NOW)
        self._stop = None
        if via == "http":
            url, self._stop = serve(store)
            self.placement = cell_retry.PlacementHttp(url)
        else:
            self.placement = self.direct

    def close(self):
        if self._stop:
            self._stop()
        self.scheduler.close()
        self.cloud.close()

    def select(self, instance):
        spec = {"flavor": dict(FLAVOR), "project_id": PROJECT,
                "user_id": USER}
        [selections] = self.scheduler.select_destinations(
            None, spec, [instance])
        return selections

    def usages(self, *skip):
        """{host name: {class: used}} for every host but ``skip``
        (classes in use)."""
        return {f"n{i}": {rc: n for rc, n in
                          self.direct.get_provider_usages(u)[1].items() if n}
                for i, u in enumerate(self.uuids) if f"n{i}" not in skip}

    def held(self, consumer):
        """{host name: resources} the consumer holds."""
        view = self.direct.get_allocations(consumer)
        return {f"n{self.uuids.index(rp)}": dict(entry.resources)
                for rp, entry in view.allocations.items()}

    def fill(self, name, leave_mb=512):
        """Another consumer takes the host's memory but ``leave_mb``."""
        uuid = self.uuids[int(name[1:])]
        consumer = str(uuidlib.uuid4())
        self.direct.put_allocations(
            consumer, {uuid: {"MEMORY_MB": SIZES[int(name[1:])] - leave_mb}},
            project_id="other", user_id="other")
        return consumer


def new_id():
    return str(uuidlib.uuid4())


@pytest.fixture
def world(sqlite_store, request):
    w = World(sqlite_store, request.param)
    yield w
    w.close()


both = pytest.mark.parametrize("world", ["direct", "http"], indirect=True)


@pytest.mark.parametrize("via", ["direct", "http"])
def test_failed_host_released_and_next_alternate_claimed(store, via):
    w = World(store, via)
    try:
        instance = new_id()
        selections = w.select(instance)
        assert [s.nodename for s in selections] == ["n0", "n1", "n2", "n3"]
        assert w.held(instance) == {"n0": USED}

        chosen = cell_retry.claim_first(w.placement, selections, instance,
                                        PROJECT, USER)

        assert chosen is selections[1]
        assert w.held(instance) == {"n1": USED}
        assert w.usages() == {"n0": {}, "n1": USED, "n2": {}, "n3": {}}
        # The consumer keeps its owner.
        consumer = w.direct.get_consumer(instance)
        assert (consumer.project_id, consumer.user_id) == (PROJECT, USER)
        # The alternate fails too: the claim moves on again.
        later = cell_retry.claim_first(w.placement, selections[1:],
                                       instance, PROJECT, USER)
        assert later is selections[2]
        assert w.usages() == {"n0": {}, "n1": {}, "n2": USED, "n3": {}}
    finally:
        w.close()


@both
def test_alternate_filled_meanwhile_is_skipped(world):
    instance = new_id()
    selections = world.select(instance)
    world.fill("n1")

    chosen = cell_retry.claim_first(world.placement, selections, instance,
                                    PROJECT, USER)

    assert chosen.nodename == "n2"
    assert world.held(instance) == {"n2": USED}
    assert world.usages() == {"n0": {}, "n1": {"MEMORY_MB": 12288 - 512},
                              "n2": USED, "n3": {}}


@both
def test_alternate_gone_meanwhile_is_skipped(world):
    instance = new_id()
    selections = world.select(instance)
    world.direct.delete_provider(world.uuids[1])

    chosen = cell_retry.claim_first(world.placement, selections, instance,
                                    PROJECT, USER)

    assert chosen.nodename == "n2"
    assert world.held(instance) == {"n2": USED}
    assert world.usages("n1") == {"n0": {}, "n2": USED, "n3": {}}


@pytest.mark.parametrize("via", ["direct", "http"])
def test_every_alternate_full_raises_and_leaks_nothing(store, via):
    w = World(store, via)
    try:
        instance = new_id()
        selections = w.select(instance)
        fillers = [w.fill(name) for name in ("n1", "n2", "n3")]

        with pytest.raises(cell_retry.MaxRetriesExceeded) as caught:
            cell_retry.claim_first(w.placement, selections, instance,
                                   PROJECT, USER)

        message = str(caught.value)
        assert instance in message
        assert "build failed on n0" in message
        assert "n1 (no room), n2 (no room), n3 (no room)" in message
        assert caught.value.tried == [("n1", "no room"), ("n2", "no room"),
                                      ("n3", "no room")]
        assert isinstance(caught.value, errors.SchedulerError)
        assert w.held(instance) == {}
        assert w.direct.get_allocations(instance).consumer is None
        assert w.usages() == {
            "n0": {}, "n1": {"MEMORY_MB": 12288 - 512},
            "n2": {"MEMORY_MB": 8192 - 512}, "n3": {"MEMORY_MB": 6144 - 512}}
        assert all(w.held(f) for f in fillers)
    finally:
        w.close()


@both
def test_no_alternates_left(world):
    instance = new_id()
    selections = world.select(instance)
    with pytest.raises(cell_retry.MaxRetriesExceeded,
                       match="no alternate host left"):
        cell_retry.claim_first(world.placement, selections[:1], instance,
                               PROJECT, USER)
    assert world.usages() == {"n0": {}, "n1": {}, "n2": {}, "n3": {}}


@both
def test_failed_host_named_skips_it_wherever_it_is(world):
    """Nova's conductor keeps what is left of the host list; the failed
    host may be named instead of being first."""
    instance = new_id()
    selections = world.select(instance)
    remaining = [selections[2], selections[0], selections[3]]

    chosen = cell_retry.claim_first(world.placement, remaining, instance,
                                    PROJECT, USER, failed_host="n0")

    assert chosen.nodename == "n2"
    assert world.usages() == {"n0": {}, "n1": {}, "n2": USED, "n3": {}}


@both
def test_instance_without_allocations_is_claimed(world):
    """The compute host may have removed the claim already."""
    instance = new_id()
    selections = world.select(instance)
    world.direct.delete_allocations(instance)

    chosen = cell_retry.claim_first(
        world.placement, [s.to_dict() for s in selections], instance,
        PROJECT, USER)

    assert chosen.nodename == "n1"
    assert world.usages() == {"n0": {}, "n1": USED, "n2": {}, "n3": {}}


@both
def test_selection_without_allocation_request_is_taken_as_is(world):
    """Nova sends "no request" as JSON null; such a host is taken without
    a claim, as Nova's conductor does."""
    instance = new_id()
    selections = world.select(instance)
    bare = selections[1].to_dict()
    bare.update(allocation_request="null", allocation_request_version=None)

    chosen = cell_retry.claim_first(world.placement,
                                    [selections[0], bare], instance,
                                    PROJECT, USER)

    assert chosen.nodename == "n1"
    assert chosen.allocation_request == "null"
    assert world.usages() == {"n0": {}, "n1": {}, "n2": {}, "n3": {}}


@pytest.mark.parametrize("request_text, why", [
    ("{not json", "is not JSON"),
    ('{"mappings": {}}', "has no allocations"),
    ('{"allocations": {"x": {"resources": {"VCPU": -1}}}}',
     "positive integer"),
    ('{"allocations": {"x": 3}}', "positive integer"),
], ids=["not-json", "no-allocations", "negative", "not-a-dict"])
def test_malformed_selection_changes_nothing(sqlite_store, request_text,
                                             why):
    w = World(sqlite_store, "direct")
    try:
        instance = new_id()
        selections = w.select(instance)
        broken = selections[2].to_dict()
        broken["allocation_request"] = request_text
        with pytest.raises(cell_retry.InvalidSelection, match=why) as caught:
            cell_retry.claim_first(w.placement,
                                   [selections[0], selections[1], broken],
                                   instance, PROJECT, USER)
        assert "host n2" in str(caught.value)
        assert instance in str(caught.value)
        # The failed host's claim is still there: nothing was changed.
        assert w.held(instance) == {"n0": USED}
        with pytest.raises(cell_retry.InvalidSelection, match="selections"):
            cell_retry.claim_first(w.placement, [selections[0], 42],
                                   instance, PROJECT, USER)
        with pytest.raises(cell_retry.InvalidSelection, match="no sel"):
            cell_retry.claim_first(w.placement, [], instance, PROJECT, USER)
        with pytest.raises(cell_retry.InvalidSelection,
                           match="expected a list, got NoneType"):
            cell_retry.claim_first(w.placement, None, instance, PROJECT,
                                   USER)
        assert w.held(instance) == {"n0": USED}
    finally:
        w.close()


def test_http_errors_keep_their_meaning(sqlite_store):
    """PlacementHttp raises what PlacementDirect raises for the same
    failure, with the server's words."""
    w = World(sqlite_store, "http")
    try:
        http = w.placement
        instance = new_id()
        w.select(instance)
        rp = w.uuids[3]
        # A consumer that exists, written as if new.
        with pytest.raises(placement_errors.ConsumerGenerationConflict,
                           match="consumer generation conflict"):
            http.put_allocations(instance, {rp: {"VCPU": 1}}, PROJECT, USER)
        with pytest.raises(placement_errors.InvalidInventory,
                           match="Unable to allocate"):
            http.put_allocations(new_id(), {rp: {"VCPU": 99}}, PROJECT,
                                 USER)
        with pytest.raises(placement_errors.AllocationProviderNotFound,
                           match="does not exist"):
            http.put_allocations(new_id(), {new_id(): {"VCPU": 1}},
                                 PROJECT, USER)
        with pytest.raises(placement_errors.ResourceClassNotFound,
                           match="CUSTOM_NOPE"):
            http.put_allocations(new_id(), {rp: {"CUSTOM_NOPE": 1}},
                                 PROJECT, USER)
        with pytest.raises(placement_errors.BadRequest,
                           match="placement answered 400"):
            http.put_allocations("not-a-uuid", {rp: {"VCPU": 1}},
                                 PROJECT, USER)
        with pytest.raises(placement_errors.AllocationsNotFound):
            http.delete_allocations(new_id())
        anonymous = cell_retry.PlacementHttp(http.endpoint, token=None)
        with pytest.raises(cell_retry.PlacementUnavailable,
                           match=r"refused the request \(401\)"):
            anonymous.delete_allocations(instance)
        assert w.held(instance)
        # Nothing of the above stuck.
        assert w.usages()["n3"] == {}
    finally:
        w.close()


@both
def test_an_evacuated_instance_keeps_its_source_through_a_retry(world):
    """An evacuation's claim holds the source beside the destination
    (Nova's conductor leaves the source's allocation on the instance).
    When the build fails there, the retry removes the failed host only:
    the source stays, the alternate is claimed beside it; when no
    alternate is left, the instance holds its source alone."""
    w = world
    instance = new_id()
    source = w.uuids[3]
    w.direct.put_allocations(instance, {source: dict(USED)},
                             project_id=PROJECT, user_id=USER)
    spec = {"flavor": dict(FLAVOR), "project_id": PROJECT,
            "user_id": USER, "ignore_hosts": ["n3"]}
    [selections] = w.scheduler.select_destinations(None, spec, [instance])
    assert [s.nodename for s in selections] == ["n0", "n1", "n2"]
    assert w.held(instance) == {"n3": USED, "n0": USED}

    chosen = cell_retry.claim_first(w.placement, selections, instance,
                                    PROJECT, USER)
    assert chosen is selections[1]
    assert w.held(instance) == {"n3": USED, "n1": USED}

    w.fill("n2")
    with pytest.raises(cell_retry.MaxRetriesExceeded,
                       match="the instance holds only what it held before "
                             "the failed claim"):
        cell_retry.claim_first(w.placement, selections[1:], instance,
                               PROJECT, USER)
    assert w.held(instance) == {"n3": USED}


def test_unreachable_placement_is_a_clear_error(sqlite_store):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    http = cell_retry.PlacementHttp(f"http://127.0.0.1:{port}", timeout=2)
    with pytest.raises(cell_retry.PlacementUnavailable,
                       match=f"placement at http://127.0.0.1:{port} did not "
                             "answer DELETE"):
        http.delete_allocations(new_id())


def test_selections_parse_as_their_requests_say(sqlite_store):
    """The alternates' requests are what the claim writes: one provider
    each here, with the flavor's amounts."""
    w = World(sqlite_store, "direct")
    try:
        selections = w.select(new_id())
        for sel in selections:
            request = json.loads(sel.allocation_request)
            assert request["allocations"] == {
                sel.compute_node_uuid: {"resources": USED}}
            parsed = cell_retry._allocation_request(sel, "i")
            assert parsed.allocations == {sel.compute_node_uuid: USED}
    finally:
        w.close()


@both
def test_the_placement_port_claims_several_at_once(world):
    """Behind the scheduler's placement port, either writer claims a
    multi-instance request in one go: all of it, or none."""
    port = placement_port.for_writer(world.placement)
    n0, n1 = world.uuids[0], world.uuids[1]

    def wants(rp, memory_mb):
        return result_mod.AllocationRequest(
            allocations={rp: {"MEMORY_MB": memory_mb}}, mappings={})

    a, b = new_id(), new_id()
    too_much = [(a, wants(n0, 8192)), (b, wants(n0, SIZES[0]))]
    assert port.claim_all(too_much, PROJECT,
                          USER) is claims.Outcome.NO_ROOM
    assert world.usages() == {"n0": {}, "n1": {}, "n2": {}, "n3": {}}
    fits = [(a, wants(n0, 8192)), (b, wants(n1, 1024))]
    assert port.claim_all(fits, PROJECT, USER) is claims.Outcome.CLAIMED
    assert (world.held(a), world.held(b)) == (
        {"n0": {"MEMORY_MB": 8192}}, {"n1": {"MEMORY_MB": 1024}})
    assert world.direct.get_consumer(b).project_id == PROJECT
    # The consumers exist now: claiming them as new is the caller's
    # error, whatever the writer.
    with pytest.raises(errors.SchedulerError,
                       match="holds allocations already"):
        port.claim_all(fits, PROJECT, USER)
    gone = [(new_id(), wants(new_id(), 1))]
    assert port.claim_all(gone, PROJECT, USER) is claims.Outcome.GONE
