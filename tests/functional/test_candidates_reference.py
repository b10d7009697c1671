"""The candidates engine against the brute-force reference, on thousands
of random tiny clouds and requests (SQLite; the engine reads the same
index whatever the database)."""

import dataclasses
import os

import hypothesis
import pytest
from hypothesis import strategies as st

from placement.candidates import engine as engine_mod
from placement.candidates import request as rq
from placement.candidates import search
from placement.db import migration
from placement.db import store as store_mod
from tests import candidates_reference as ref
from tests import databases
from tests.functional import candidates_helpers as ch

RCS = ["VCPU", "MEMORY_MB", "DISK_GB", "SRIOV_NET_VF"]
TRAITS = ["CUSTOM_T1", "CUSTOM_T2", "CUSTOM_T3"]
AGGS = ["A", "B"]
EXAMPLES = int(os.environ.get("GANTT_REFERENCE_EXAMPLES", "700"))


@st.composite
def inventories(draw):
    out = {}
    for rc in draw(st.lists(st.sampled_from(RCS), max_size=2, unique=True)):
        total = draw(st.integers(1, 8))
        out[rc] = ref.Inv(
            total=total,
            reserved=draw(st.integers(0, min(2, total))),
            min_unit=draw(st.integers(1, 2)),
            max_unit=draw(st.integers(1, total)),
            step_size=draw(st.sampled_from([1, 1, 2])),
            allocation_ratio=draw(st.sampled_from([1.0, 1.0, 1.5, 2.0])))
    return out


@st.composite
def clouds(draw, flat=False):
    """Up to 6 providers in up to 3 trees, some sharing; ``flat``: up to
    6 roots, no children, nothing shared."""
    providers = {}
    n_roots = draw(st.integers(1, 6 if flat else 3))
    budget = 6
    for r in range(n_roots):
        names = [f"r{r}"]
        providers[f"r{r}"] = ref.Provider()
        budget -= 1
        for c in range(draw(st.integers(0, 0 if flat else min(2, budget)))):
            parent = draw(st.sampled_from(names))
            name = f"{parent}c{c}"
            providers[name] = ref.Provider(parent=parent)
            names.append(name)
            budget -= 1
        if budget <= 0:
            break
    for p in providers.values():
        p.inventory = draw(inventories())
        p.used = {rc: draw(st.integers(0, inv.total))
                  for rc, inv in p.inventory.items()}
        p.traits = set(draw(st.lists(st.sampled_from(TRAITS), max_size=2,
                                     unique=True)))
        if not flat and p.parent is None and draw(st.integers(0, 3)) == 0:
            p.traits.add(ref.SHARING)
        p.aggregates = set(draw(st.lists(st.sampled_from(AGGS), max_size=2,
                                         unique=True)))
    return ref.Cloud(providers)


def trait_sets(draw):
    return tuple(frozenset(draw(st.lists(st.sampled_from(TRAITS),
                                         min_size=1, max_size=2,
                                         unique=True)))
                 for _ in range(draw(st.integers(0, 2))))


@st.composite
def groups(draw, suffix, names, resourceless_ok):
    rcs = draw(st.lists(st.sampled_from(RCS), min_size=0 if resourceless_ok
                        else 1, max_size=2, unique=True))
    return rq.RequestGroup(
        suffix=suffix,
        resources={rc: draw(st.integers(1, 4)) for rc in rcs},
        required_traits=trait_sets(draw),
        forbidden_traits=frozenset(draw(st.lists(
            st.sampled_from(TRAITS), max_size=1))),
        member_of=tuple(frozenset(draw(st.lists(
            st.sampled_from(AGGS), min_size=1, max_size=2, unique=True)))
            for _ in range(draw(st.integers(0, 1)))),
        forbidden_aggs=frozenset(draw(st.lists(st.sampled_from(AGGS),
                                               max_size=1))),
        in_tree=draw(st.one_of(st.none(), st.none(),
                               st.sampled_from(names))))


@st.composite
def requests(draw, names):
    out = []
    if draw(st.booleans()):
        out.append(draw(groups("", names, resourceless_ok=False)))
    for i in range(draw(st.integers(0 if out else 1, 3))):
        out.append(draw(groups(str(i + 1), names,
                               resourceless_ok=bool(out))))
    suffixes = [g.suffix for g in out if g.suffix]
    subtrees = ()
    if len(suffixes) >= 2 and draw(st.booleans()):
        subtrees = (frozenset(draw(st.lists(st.sampled_from(suffixes),
                                            min_size=2, max_size=3,
                                            unique=True))),)
    return rq.CandidatesRequest(
        groups=tuple(out),
        group_policy=draw(st.sampled_from([None, "none", "isolate"])),
        root_required=frozenset(draw(st.lists(st.sampled_from(TRAITS),
                                              max_size=1))),
        root_forbidden=frozenset(draw(st.lists(st.sampled_from(TRAITS),
                                               max_size=1))),
        same_subtrees=subtrees,
        nested_aware=draw(st.sampled_from([True, True, True, False])))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    path = tmp_path_factory.mktemp("reference") / "placement.sqlite"
    store = store_mod.Store.open(databases.make_conf(f"sqlite:///{path}"))
    yield store
    store.dispose()


def _fresh(store):
    databases.wipe(store.engine)
    migration.seed(store.engine)
    store.clear_caches()


@hypothesis.settings(max_examples=EXAMPLES, deadline=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
def test_engine_matches_reference(scratch, data):
    _compare(scratch, data)


def _compare(scratch, data):
    cloud = data.draw(clouds(), label="cloud")
    request = data.draw(requests(list(cloud.providers)), label="request")
    _fresh(scratch)
    got, want, _result, _ = ch.run_both(scratch, cloud, request)
    assert len(got) == len(set(got)), "duplicate candidates"
    assert set(got) == want


@hypothesis.settings(max_examples=EXAMPLES // 4, deadline=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
def test_depth_first_path_matches_reference(scratch, data, monkeypatch):
    """The same, forcing the enumeration that is used for large
    products."""
    monkeypatch.setattr(search, "VECTOR_LIMIT", 0)
    _compare(scratch, data)


@hypothesis.settings(max_examples=EXAMPLES // 4, deadline=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
def test_summaries_cover_the_trees(scratch, data):
    """Provider summaries: every provider of every tree used (only the
    providers used before 1.29), with capacity and usage."""
    cloud = data.draw(clouds(), label="cloud")
    request = data.draw(requests(list(cloud.providers)), label="request")
    _fresh(scratch)
    got, _want, result, uuids = ch.run_both(scratch, cloud, request)
    used = {name for allocs, mappings in got
            for _suffix, names in mappings for name in names}
    if request.nested_aware:
        roots = {cloud.root(n) for n in used}
        expected = {n for n in cloud.providers if cloud.root(n) in roots}
    else:
        expected = used
    summaries = result.provider_summaries()
    names = {u: n for n, u in uuids.items()}
    assert {names[u] for u in summaries} == expected
    for uuid, summary in summaries.items():
        p = cloud.providers[names[uuid]]
        assert set(summary.resources) == set(p.inventory)
        for rc, (capacity, used_now) in summary.resources.items():
            assert capacity == int(p.inventory[rc].capacity)
            assert used_now == p.used.get(rc, 0)
        assert set(summary.traits) == p.traits
        assert summary.root_provider_uuid == uuids[cloud.root(names[uuid])]


@hypothesis.settings(max_examples=EXAMPLES // 4, deadline=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
def test_limit_keeps_the_first_candidates(scratch, data):
    """Unshuffled, ``limit=k`` answers the first k candidates of the
    unlimited answer, in the same order (the engine may then stop
    generating early: search.Search.enumerate_prefix)."""
    cloud = data.draw(clouds(), label="cloud")
    request = data.draw(requests(list(cloud.providers)), label="request")
    _fresh(scratch)
    uuids = ch.load(scratch, cloud)
    engine = engine_mod.CandidatesEngine(scratch)
    try:
        full = ch.engine_keys(engine.find(ch.with_uuids(request, uuids)),
                              uuids)
        k = data.draw(st.integers(0, len(full) + 1), label="limit")
        limited = dataclasses.replace(request, limit=k)
        got = ch.engine_keys(engine.find(ch.with_uuids(limited, uuids)),
                             uuids)
    finally:
        engine.close()
    assert got == full[:k]


def _find_both_ways(store, cloud, request, monkeypatch):
    """(keys with Search.flat_answer, whether it answered each search it
    was asked, keys of the general path alone). The engine may answer
    without a search (a class no provider has)."""
    uuids = ch.load(store, cloud)
    answered = []
    flat_answer = search.Search.flat_answer

    def spy(self):
        found = flat_answer(self)
        answered.append(found is not None)
        return found

    engine = engine_mod.CandidatesEngine(store)
    # A context of its own: hypothesis runs every example in one test
    # call, with one monkeypatch.
    with monkeypatch.context() as m:
        try:
            m.setattr(search.Search, "flat_answer", spy)
            fast = ch.engine_keys(engine.find(ch.with_uuids(request,
                                                            uuids)), uuids)
            declined = []
            m.setattr(search.Search, "flat_answer",
                      lambda self: declined.append(True))
            general = ch.engine_keys(engine.find(ch.with_uuids(
                request, uuids)), uuids)
        finally:
            engine.close()
    assert len(declined) == len(answered)  # searched again, not cached
    return fast, answered, general


@hypothesis.settings(max_examples=EXAMPLES // 4, deadline=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
def test_flat_answer_matches_reference(scratch, data, monkeypatch):
    """Roots only, nothing shared, one unsuffixed group: the search
    answers from one mask (Search.flat_answer), with the reference's
    candidates in the general path's order, limit included."""
    cloud = data.draw(clouds(flat=True), label="cloud")
    group = data.draw(groups("", list(cloud.providers),
                             resourceless_ok=False), label="group")
    request = rq.CandidatesRequest(
        groups=(group,),
        limit=data.draw(st.one_of(st.none(), st.integers(0, 6))),
        root_required=frozenset(data.draw(st.lists(
            st.sampled_from(TRAITS), max_size=1))),
        root_forbidden=frozenset(data.draw(st.lists(
            st.sampled_from(TRAITS), max_size=1))),
        nested_aware=data.draw(st.booleans()))
    _fresh(scratch)
    fast, answered, general = _find_both_ways(scratch, cloud, request,
                                              monkeypatch)
    assert False not in answered
    assert fast == general
    if request.limit is None:
        assert set(fast) == ref.candidates(cloud, request)


def test_flat_answer_leaves_trees_a_child_can_serve(scratch, monkeypatch):
    # r1's child holds the only VF: a root alone cannot serve the group.
    cloud = ref.Cloud({
        "r0": ref.Provider(inventory={"VCPU": ref.Inv(total=4)}),
        "r1": ref.Provider(inventory={"VCPU": ref.Inv(total=4)}),
        "r1c0": ref.Provider(parent="r1", inventory={
            "SRIOV_NET_VF": ref.Inv(total=2)})})
    request = rq.CandidatesRequest(groups=(rq.RequestGroup(
        resources={"VCPU": 1, "SRIOV_NET_VF": 1}),))
    _fresh(scratch)
    fast, answered, general = _find_both_ways(scratch, cloud, request,
                                              monkeypatch)
    assert answered == [False]
    assert fast == general and len(fast) == 1
    assert set(fast) == ref.candidates(cloud, request)


def test_limit_grows_the_prefix_past_rejected_anchors(scratch):
    # 60 flat roots; two granular groups of 3 VCPU fit together only on
    # every tenth root (8 VCPU, the others 4): a limit of 4 has to look
    # well past the first anchors.
    cloud = ref.Cloud({f"r{i:02d}": ref.Provider(inventory={
        "VCPU": ref.Inv(total=8 if i % 10 == 9 else 4)}) for i in range(60)})
    request = rq.CandidatesRequest(
        groups=(rq.RequestGroup(suffix="1", resources={"VCPU": 3}),
                rq.RequestGroup(suffix="2", resources={"VCPU": 3})),
        group_policy="none")
    _fresh(scratch)
    uuids = ch.load(scratch, cloud)
    engine = engine_mod.CandidatesEngine(scratch)
    try:
        full = ch.engine_keys(engine.find(ch.with_uuids(request, uuids)),
                              uuids)
        limited = ch.engine_keys(engine.find(ch.with_uuids(
            dataclasses.replace(request, limit=4), uuids)), uuids)
    finally:
        engine.close()
    assert set(full) == ref.candidates(cloud, request)
    assert len(full) == 6
    assert limited == full[:4]
