"""provider_summaries when ``limit`` trims the allocation candidates, on
OpenStack Placement 16's own answers (fixtures/placement16, written by
its make_fixtures.py).

The nested cloud: r1 with children c1a, c1b (VFs) and c1c (nothing), r2
with c2a (VFs), r3 alone (VFs); one VF asked for. From 1.29 the
summaries of a limited answer hold every provider of the kept
candidates' trees. Before 1.29 Placement holds the providers that any
candidate, kept or not, uses in those trees: keeping c1a alone still
shows c1b, never r1.

Placement keeps a random choice of candidates (or one in hash order);
every choice was recorded, and each gantt answer is compared with the
recorded answer that kept the same candidates.
"""

import dataclasses
import json
import os
import pathlib
import random

import hypothesis
import pytest
from hypothesis import strategies as st

from placement.api import app as app_mod
from placement.candidates import engine as engine_mod
from placement.candidates import request as rq
from placement.db import migration
from placement.db import store as store_mod
from tests import candidates_reference as ref
from tests import databases
from tests.functional import api_helpers
from tests.functional import candidates_helpers as ch

FIXTURE = (pathlib.Path(__file__).parent / "fixtures" / "placement16"
           / "summaries_limit.json")
CLOUDS = {c["name"]: c for c in json.loads(FIXTURE.read_text())["clouds"]}
NESTED = CLOUDS["nested"]
SHARED = CLOUDS["shared"]
NAMES = {uuid: name for c in CLOUDS.values()
         for name, uuid in c["uuids"].items()}
EXAMPLES = int(os.environ.get("GANTT_REFERENCE_EXAMPLES", "700")) // 4

# The engine reads the same index whatever the database.
SQLITE = pytest.mark.parametrize("engine_name", ["sqlite"])


def _canonical(body):
    """An answer with the orders Placement leaves undefined set aside:
    allocation requests, traits, and no request ids."""
    body = json.loads(json.dumps(body))
    for error in body.get("errors", ()):
        error.pop("request_id", None)
    if "allocation_requests" in body:
        body["allocation_requests"] = sorted(
            body["allocation_requests"],
            key=lambda a: json.dumps(a, sort_keys=True))
    for summary in body.get("provider_summaries", {}).values():
        if "traits" in summary:
            summary["traits"] = sorted(summary["traits"])
    return body


def _error_head(body):
    """An error body up to the schema a validation error prints."""
    error = _canonical(body)["errors"][0]
    error["detail"] = error["detail"].partition("Failed validating")[0]
    return error


def _kept(body):
    """The providers of the kept candidates (list or dict form)."""
    out = set()
    for request in body["allocation_requests"]:
        allocations = request["allocations"]
        if isinstance(allocations, list):
            out.update(a["resource_provider"]["uuid"] for a in allocations)
        else:
            out.update(allocations)
    return frozenset(out)


class Gantt:
    """gantt's REST API on ``store``; ``seed``: candidates picked at
    random (randomize_allocation_candidates) from this seed on."""

    def __init__(self, store, seed=None):
        conf = store.conf
        app_mod.register_opts(conf)
        conf.set_override("randomize_allocation_candidates",
                          seed is not None, "placement")
        self.engine = engine_mod.CandidatesEngine(
            store, conf, rng=random.Random(seed))
        self.client = api_helpers.Client(app_mod.make_app(
            conf, store=store, engine=self.engine))

    def get(self, path, version):
        response = self.client.get(path, version=version)
        return response.status_int, response.json

    def close(self):
        self.engine.close()


def _load(store, cloud):
    """The recorded cloud's setup requests, through gantt's API."""
    gantt = Gantt(store)
    try:
        for method, path, version, body in cloud["setup"]:
            response = gantt.client.request(method, path, body,
                                            version=version)
            assert response.status_int < 300, response.body
    finally:
        gantt.close()


def _answer(store, path, version, seed=None):
    gantt = Gantt(store, seed)
    try:
        return gantt.get(path, version)
    finally:
        gantt.close()


@SQLITE
@pytest.mark.parametrize("query", NESTED["queries"],
                         ids=lambda q: q["version"])
def test_whole_answer(store, query):
    """Without a limit the answer is Placement's."""
    _load(store, NESTED)
    status, body = _answer(store, query["path"], query["version"])
    assert status == query["status"]
    assert _canonical(body) == _canonical(query["body"])


def _limited_cases():
    return [pytest.param(query, limited,
                         id=f"{query['version']}-limit{limited['limit']}")
            for query in NESTED["queries"] for limited in query["limited"]]


@SQLITE
@pytest.mark.parametrize("query,limited", _limited_cases())
def test_limited_answer(store, query, limited):
    """With a limit, gantt's answer in its own order, then each of its
    random picks until every choice Placement made has come up, is
    Placement's answer for the same kept candidates."""
    _load(store, NESTED)
    version = query["version"]
    if limited["status"] != 200:
        # Before 1.16 there is no limit: Placement's 400 is the answer.
        status, body = _answer(store, limited["path"], version)
        assert status == limited["status"]
        # (The schema the detail prints goes unchecked: its keys come in
        # another order.)
        assert _error_head(body) == _error_head(limited["answers"][0])
        return
    recorded = {_kept(a): _canonical(a) for a in limited["answers"]}
    status, body = _answer(store, limited["path"], version)
    assert status == 200
    assert _canonical(body) == recorded.get(_kept(body))
    seen = set()
    gantt = Gantt(store, seed=0)
    try:
        for _ in range(200):
            status, body = gantt.get(limited["path"], version)
            assert status == 200
            kept = _kept(body)
            assert kept in recorded, sorted(NAMES[u] for u in kept)
            assert _canonical(body) == recorded[kept]
            seen.add(kept)
            if seen == set(recorded):
                break
    finally:
        gantt.close()
    assert seen == set(recorded)


def test_fixture_shows_the_trimmed_providers():
    """The recorded answers hold what this file is about: before 1.29 a
    summary of a provider that only a trimmed candidate uses; from 1.29
    the whole tree."""
    def summaries(version, kept):
        query = next(q for q in NESTED["queries"]
                     if q["version"] == version)
        for answer in query["limited"][0]["answers"]:
            if {NAMES[u] for u in _kept(answer)} == kept:
                return {NAMES[u] for u in answer["provider_summaries"]}
        raise AssertionError(kept)

    assert summaries("1.28", {"c1a"}) == {"c1a", "c1b"}
    assert summaries("1.16", {"r3"}) == {"r3"}
    assert summaries("1.29", {"c1a"}) == {"r1", "c1a", "c1b", "c1c"}


@SQLITE
@pytest.mark.parametrize("query", SHARED["queries"],
                         ids=lambda q: q["version"])
def test_sharing_providers_of_one_tree(store, query):
    """Sharing providers that are children of one root (hub), each
    serving one compute root: Placement 16 fails (500: it looks for the
    hub's summary among the anchors' trees). gantt answers by the same
    rule, with the first candidates taken in its own order: before 1.29
    every sharing child, since each is used by some candidate in the
    hub's tree, which the kept candidate uses; from 1.29 the hub too."""
    assert query["status"] == 500
    assert {q["status"] for q in query["limited"]} == {500}
    _load(store, SHARED)
    status, body = _answer(store, query["limited"][0]["path"],
                           query["version"])
    assert status == 200
    kept = {NAMES[u] for u in _kept(body)}
    computes = {n for n in kept if n.startswith("a")}
    assert len(computes) == 1 and len(kept) == 2
    expected = computes | {n for n in SHARED["uuids"] if n.startswith("s")}
    if tuple(map(int, query["version"].split("."))) >= (1, 29):
        expected.add("hub")
    assert {NAMES[u] for u in body["provider_summaries"]} == expected


# -- the same rule on random clouds -------------------------------------------

RCS = ["VCPU", "DISK_GB"]


@st.composite
def roomy_clouds(draw):
    """Up to 3 trees of up to 4 providers, with room for one of each
    class wherever there is inventory, some roots sharing theirs through
    one aggregate: many candidates per request, some in one tree."""
    providers = {}
    for r in range(draw(st.integers(1, 3))):
        tree = [f"r{r}"]
        providers[tree[0]] = ref.Provider()
        for c in range(draw(st.integers(0, 3))):
            parent = draw(st.sampled_from(tree))
            tree.append(f"r{r}c{c}")
            providers[tree[-1]] = ref.Provider(parent=parent)
    for p in providers.values():
        p.inventory = {rc: ref.Inv(total=draw(st.integers(1, 3)))
                       for rc in draw(st.lists(st.sampled_from(RCS),
                                               max_size=2, unique=True))}
        if draw(st.booleans()):
            p.aggregates = {"A"}
            if p.parent is None and draw(st.booleans()):
                p.traits = {ref.SHARING}
    return ref.Cloud(providers)


@st.composite
def plain_requests(draw):
    resources = dict.fromkeys(draw(st.lists(
        st.sampled_from(RCS), min_size=1, max_size=2, unique=True)), 1)
    granular = draw(st.booleans())
    return rq.CandidatesRequest(
        groups=(rq.RequestGroup(suffix="1" if granular else "",
                                resources=resources),),
        group_policy="none" if granular else None,
        nested_aware=draw(st.booleans()))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    path = tmp_path_factory.mktemp("summaries") / "placement.sqlite"
    store = store_mod.Store.open(databases.make_conf(f"sqlite:///{path}"))
    yield store
    store.dispose()


@hypothesis.settings(max_examples=EXAMPLES, deadline=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
def test_limited_summaries_on_random_clouds(scratch, data):
    """The rule of the recorded answers, on random clouds: under a limit
    that trims, the summaries hold the providers that the candidates of
    the whole answer use in the kept candidates' trees (before 1.29), or
    those trees whole (from 1.29)."""
    cloud = data.draw(roomy_clouds(), label="cloud")
    request = data.draw(plain_requests(), label="request")
    databases.wipe(scratch.engine)
    migration.seed(scratch.engine)
    scratch.clear_caches()
    uuids = ch.load(scratch, cloud)
    names = {u: n for n, u in uuids.items()}
    engine = engine_mod.CandidatesEngine(scratch)
    try:
        whole = engine.find(request).allocation_requests()
        hypothesis.assume(len(whole) >= 2)
        limit = data.draw(st.integers(1, len(whole) - 1), label="limit")
        result = engine.find(dataclasses.replace(request, limit=limit))
        summaries = result.provider_summaries()
    finally:
        engine.close()

    def used(candidates):
        return {names[u] for c in candidates
                for providers in c.mappings.values() for u in providers}

    kept_roots = {cloud.root(n) for n in used(result.allocation_requests())}
    if request.nested_aware:
        expected = {n for n in cloud.providers
                    if cloud.root(n) in kept_roots}
    else:
        expected = {n for n in used(whole) if cloud.root(n) in kept_roots}
    assert {names[u] for u in summaries} == expected
