"""GET /allocation_candidates beyond the upstream gabbits: the fast body
builder gives the same document as the engine's public results, and the
answer cache never serves an answer the data has moved past (every
engine)."""

import uuid as uuidlib

import pytest

from placement.api import candidates_payload as payload
from placement.candidates import engine as engine_mod
from placement.candidates import request as request_mod
from placement.db import store as store_mod
from placement.objects import (
    aggregates,
    allocations,
    inventories,
    providers,
    traits,
)
from tests.functional import api_helpers

AGG = str(uuidlib.UUID(int=7))


def _cloud(store):
    """Two compute trees (one with NUMA children) and a sharing disk."""
    traits.ensure(store, "CUSTOM_FAST")
    uuids = {}
    for name, parent in (("cn1", None), ("numa0", "cn1"), ("numa1", "cn1"),
                         ("cn2", None), ("disk", None)):
        uuids[name] = providers.create(
            store, name, parent_uuid=uuids.get(parent)).uuid
    for name, invs in (
            ("numa0", [("VCPU", 4), ("MEMORY_MB", 2048)]),
            ("numa1", [("VCPU", 4), ("MEMORY_MB", 2048)]),
            ("cn2", [("VCPU", 8), ("MEMORY_MB", 4096), ("DISK_GB", 100)]),
            ("disk", [("DISK_GB", 1000)])):
        inventories.replace_all(store, uuids[name], None, [
            inventories.Inventory(rc, total) for rc, total in invs])
    traits.set_for_provider(store, uuids["disk"], None,
                            ["MISC_SHARES_VIA_AGGREGATE"])
    traits.set_for_provider(store, uuids["numa1"], None,
                            ["CUSTOM_FAST", "HW_NUMA_ROOT"])
    for name in ("cn1", "cn2", "disk"):
        aggregates.set_for_provider(store, uuids[name], [AGG])
    allocations.replace(store, [allocations.ConsumerAllocations(
        str(uuidlib.uuid4()), {uuids["numa0"]: {"VCPU": 1}}, "p", "u")])
    return uuids


REQUESTS = [
    request_mod.CandidatesRequest(groups=(request_mod.RequestGroup(
        resources={"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 10}),)),
    request_mod.CandidatesRequest(groups=(
        request_mod.RequestGroup(resources={"DISK_GB": 10}),
        request_mod.RequestGroup(suffix="1", resources={"VCPU": 1}),
        request_mod.RequestGroup(suffix="2", resources={"VCPU": 1})),
        group_policy="none"),
    request_mod.CandidatesRequest(groups=(request_mod.RequestGroup(
        resources={"VCPU": 2}),), nested_aware=False),
]


@pytest.mark.parametrize("case", range(len(REQUESTS)))
def test_fast_body_matches_the_engine_results(store, case):
    _cloud(store)
    engine = engine_mod.CandidatesEngine(store)
    result = engine.find(REQUESTS[case])
    engine.close()
    assert len(result) > 0
    assert payload.has_fast_path(result)

    def trait_ids(names):
        return store.read(lambda txn: txn.catalog.trait_ids(txn, names))

    for dict_form, mappings in ((False, False), (True, False), (True, True)):
        assert payload.allocation_requests(result, dict_form, mappings) == (
            payload.allocation_requests(result, dict_form, mappings,
                                        fast=False))
    for requested in (None, {"VCPU"}):
        for with_traits in (False, True):
            for with_tree in (False, True):
                args = (result, requested, with_traits, with_tree,
                        trait_ids)
                assert payload.provider_summaries(*args) == (
                    payload.provider_summaries(*args, fast=False))


QUERY = {"resources": "VCPU:1,MEMORY_MB:512,DISK_GB:10"}


def _used(body, uuid, rc):
    return body["provider_summaries"][uuid]["resources"][rc]["used"]


@pytest.fixture
def cloud_api(store):
    uuids = _cloud(store)
    app, engine = api_helpers.make_app(store)
    yield api_helpers.Client(app), uuids
    engine.close()


def test_a_write_in_this_process_is_seen(store, cloud_api):
    client, uuids = cloud_api
    before = client.get("/allocation_candidates", query=QUERY).json
    assert client.get("/allocation_candidates", query=QUERY).json == before
    allocations.replace(store, [allocations.ConsumerAllocations(
        str(uuidlib.uuid4()), {uuids["cn2"]: {"VCPU": 3}}, "p", "u")])
    after = client.get("/allocation_candidates", query=QUERY).json
    assert _used(after, uuids["cn2"], "VCPU") == (
        _used(before, uuids["cn2"], "VCPU") + 3)


def test_a_write_by_another_process_is_seen(store, cloud_api):
    client, uuids = cloud_api
    before = client.get("/allocation_candidates", query=QUERY).json
    other = store_mod.Store(store.conf)  # as another process would
    inventories.update(other, uuids["cn2"],
                       inventories.Inventory("VCPU", 16))
    other.dispose()
    after = client.get("/allocation_candidates", query=QUERY).json
    summary = after["provider_summaries"][uuids["cn2"]]
    assert summary["resources"]["VCPU"]["capacity"] == 16
    assert before["provider_summaries"][uuids["cn2"]]["resources"][
        "VCPU"]["capacity"] == 8


def test_a_write_during_the_search_is_not_cached(store, cloud_api):
    """The answer is stored with the log position read before the search:
    a write committed during the search makes it stale at once."""
    client, uuids = cloud_api
    engine = _engine_of(client.app)
    original = engine.find

    def find_then_write(request):
        result = original(request)
        allocations.replace(store, [allocations.ConsumerAllocations(
            str(uuidlib.uuid4()), {uuids["cn2"]: {"VCPU": 2}}, "p", "u")])
        return result

    engine.find = find_then_write
    stale = client.get("/allocation_candidates",
                       query={**QUERY, "limit": "50"}).json
    engine.find = original
    fresh = client.get("/allocation_candidates",
                       query={**QUERY, "limit": "50"}).json
    assert _used(fresh, uuids["cn2"], "VCPU") == (
        _used(stale, uuids["cn2"], "VCPU") + 2)


def test_a_deleted_trait_is_unknown_again(store, cloud_api):
    client, _uuids = cloud_api
    traits.ensure(store, "CUSTOM_UNUSED")
    query = {**QUERY, "required": "CUSTOM_UNUSED"}
    assert client.get("/allocation_candidates", query=query).json[
        "allocation_requests"] == []
    traits.delete(store, "CUSTOM_UNUSED")
    gone = client.get("/allocation_candidates", query=query)
    assert gone.status_int == 400
    assert "No such trait(s): CUSTOM_UNUSED" in gone.text


def test_versions_are_cached_apart(cloud_api):
    client, uuids = cloud_api
    new = client.get("/allocation_candidates", query=QUERY).json
    old = client.get("/allocation_candidates", query=QUERY,
                     version="1.10").json
    assert "mappings" in new["allocation_requests"][0]
    assert isinstance(old["allocation_requests"][0]["allocations"], list)


def test_cache_is_off_with_random_candidates(store):
    store.conf.set_override("randomize_allocation_candidates", True,
                            group="placement")
    app, engine = api_helpers.make_app(store)
    assert _state(app).answers is None
    engine.close()


def _state(app):
    while not hasattr(app, "state"):
        app = app.application
    return app.state


def _engine_of(app):
    return _state(app).engine
