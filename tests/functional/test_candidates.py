"""The allocation candidates engine, one feature at a time (every engine).

Each test builds a small cloud, asks the engine and states the exact
answer: candidates as frozensets of (provider name, class, amount), with
their mappings (suffix -> providers) where groups are suffixed. Unless a
test caps or limits the answer, it is also compared with the brute-force
reference (tests/candidates_reference.py), so a hand-written expectation
and the reference have to agree with the engine.
"""

import collections
import random

import pytest

from placement import errors
from placement.candidates import engine as engine_mod
from placement.candidates import providers_filter, search
from placement.candidates import request as rq
from placement.objects import providers
from tests import candidates_reference as ref
from tests.functional import candidates_helpers as ch

SHARING = ref.SHARING


# -- building clouds and requests ---------------------------------------------


def P(parent=None, inv=None, used=None, traits=(), aggs=()):
    """A provider: ``inv`` is {class: total or ref.Inv}."""
    inventory = {rc: v if isinstance(v, ref.Inv) else ref.Inv(v)
                 for rc, v in (inv or {}).items()}
    return ref.Provider(parent, inventory, dict(used or {}), set(traits),
                        set(aggs))


def _listed(values):
    return (values,) if isinstance(values, str) else tuple(values)


def G(suffix="", resources=None, required=(), member_of=(), in_tree=None):
    """A group written as query parameters: each ``required`` value is
    "A,!B" (each name its own set, ! forbids) or "in:A,B" (one any-of
    set); each ``member_of`` value is "a", "in:a,b", "!a" or "!in:a,b".
    Several values are ANDed, as repeated parameters are."""
    sets, forbidden = [], set()
    for value in _listed(required):
        if value.startswith("in:"):
            sets.append(frozenset(value[3:].split(",")))
            continue
        for name in value.split(","):
            if name.startswith("!"):
                forbidden.add(name[1:])
            else:
                sets.append(frozenset([name]))
    member, forbidden_aggs = [], set()
    for value in _listed(member_of):
        bad = value.startswith("!")
        value = value.lstrip("!")
        aggs = value[3:].split(",") if value.startswith("in:") else [value]
        if bad:
            forbidden_aggs.update(aggs)
        else:
            member.append(frozenset(aggs))
    return rq.RequestGroup(
        suffix=suffix, resources=dict(resources or {}),
        required_traits=tuple(sets), forbidden_traits=frozenset(forbidden),
        member_of=tuple(member), forbidden_aggs=frozenset(forbidden_aggs),
        in_tree=in_tree)


def R(*groups, root_required="", same_subtree=(), **kwargs):
    """A request; ``root_required`` is "A,!B"; each ``same_subtree``
    value is "1,2"."""
    names = [n for n in root_required.split(",") if n]
    return rq.CandidatesRequest(
        groups=groups,
        root_required=frozenset(n for n in names if not n.startswith("!")),
        root_forbidden=frozenset(n[1:] for n in names if n.startswith("!")),
        same_subtrees=tuple(frozenset(s.split(",")) for s in same_subtree),
        **kwargs)


def alloc(*items):
    """Allocations from "provider CLASS amount" strings."""
    out = set()
    for item in items:
        name, rc, amount = item.split()
        out.add((name, rc, int(amount)))
    return frozenset(out)


def maps(mappings):
    """Mappings from {suffix: "provider provider ..."}."""
    return frozenset((s, frozenset(p.split())) for s, p in mappings.items())


def cand(allocations, mappings):
    """A candidate: its allocations and mappings."""
    return alloc(*allocations), maps(mappings)


class World:
    """A cloud loaded into the store (in one transaction) and an engine
    over it."""

    def __init__(self, store, members, rng=None):
        self.cloud = ref.Cloud(members)
        self.uuids = store.write(ch.load, self.cloud)
        self.name_of = {u: n for n, u in self.uuids.items()}
        self.store = store
        self.engine = engine_mod.CandidatesEngine(store, rng=rng)

    def find(self, request):
        return self.engine.find(ch.with_uuids(request, self.uuids))

    def keys(self, request, reference=True):
        """The candidates as a set of (allocations, mappings); none may
        repeat. With ``reference``, the reference must agree."""
        got = ch.engine_keys(self.find(request), self.uuids)
        assert len(got) == len(set(got)), "duplicate candidates"
        if reference:
            assert set(got) == ref.candidates(self.cloud, request)
        return set(got)

    def allocs(self, request, reference=True):
        """The candidates' allocations only."""
        return {a for a, _ in self.keys(request, reference)}

    def summaries(self, result):
        """{name: (parent, root, {class: (capacity, used)}, traits)}."""
        name = self.name_of
        return {name[u]: (name.get(s.parent_provider_uuid),
                          name[s.root_provider_uuid], s.resources,
                          set(s.traits))
                for u, s in result.provider_summaries().items()}


@pytest.fixture
def world(store):
    """world(name=P(...), ...) -> World; conf overrides as
    conf={option: value} ([placement] group)."""
    made = []

    def make(conf=None, rng=None, **members):
        for option, value in (conf or {}).items():
            store.conf.set_override(option, value, "placement")
        made.append(World(store, members, rng=rng))
        return made[-1]

    yield make
    for w in made:
        w.engine.close()


# -- the unsuffixed group -----------------------------------------------------


def _tree_and_share(world):
    """cn (root, with a NUMA child) and a sharing disk in its aggregate;
    cn2 has no way to disk."""
    return world(
        cn=P(inv={"VCPU": 4, "MEMORY_MB": 4096},
             traits={"HW_CPU_X86_AVX2"}, aggs={"a"}),
        numa=P("cn", inv={"VCPU": 8}, traits={"HW_NUMA_ROOT"}),
        ss=P(inv={"DISK_GB": 100}, traits={SHARING, "STORAGE_DISK_SSD"},
             aggs={"a"}),
        cn2=P(inv={"VCPU": 8, "MEMORY_MB": 4096}))


def test_unsuffixed_spread_over_tree_and_sharing(world):
    """One provider per class: VCPU from the root or its child, memory
    from the root, disk from the sharing provider; never a class split."""
    w = _tree_and_share(world)
    request = R(G(resources={"VCPU": 2, "MEMORY_MB": 512, "DISK_GB": 10}))
    assert w.keys(request) == {
        cand(["cn VCPU 2", "cn MEMORY_MB 512", "ss DISK_GB 10"],
             {"": "cn ss"}),
        cand(["numa VCPU 2", "cn MEMORY_MB 512", "ss DISK_GB 10"],
             {"": "numa cn ss"}),
    }
    # More VCPU than any one provider has is not split over two.
    assert w.keys(R(G(resources={"VCPU": 10}))) == set()


def test_unsuffixed_required_traits_on_the_union(world):
    """Required traits may come from any provider of the group, the
    sharing one included; forbidden traits rule out each provider that
    has them, and only those."""
    w = _tree_and_share(world)
    vcpu_mem = {"VCPU": 2, "MEMORY_MB": 512}
    # numa lacks AVX2 but cn serves memory: both ways are good.
    assert w.allocs(R(G(resources=vcpu_mem,
                        required="HW_CPU_X86_AVX2"))) == {
        alloc("cn VCPU 2", "cn MEMORY_MB 512"),
        alloc("numa VCPU 2", "cn MEMORY_MB 512")}
    # VCPU alone: numa by itself has no AVX2; cn2 neither.
    assert w.allocs(R(G(resources={"VCPU": 2},
                        required="HW_CPU_X86_AVX2"))) == {
        alloc("cn VCPU 2")}
    # The disk's trait counts once the disk takes part.
    assert w.allocs(R(G(resources={"VCPU": 2, "DISK_GB": 10},
                        required="STORAGE_DISK_SSD"))) == {
        alloc("cn VCPU 2", "ss DISK_GB 10"),
        alloc("numa VCPU 2", "ss DISK_GB 10")}
    assert w.allocs(R(G(resources={"VCPU": 2},
                        required="STORAGE_DISK_SSD"))) == set()
    # Forbidding the root's trait leaves its child serving alone.
    assert w.allocs(R(G(resources={"VCPU": 2},
                        required="!HW_CPU_X86_AVX2"))) == {
        alloc("numa VCPU 2"), alloc("cn2 VCPU 2")}
    assert w.allocs(R(G(resources={"VCPU": 2, "DISK_GB": 10},
                        required="!HW_NUMA_ROOT"))) == {
        alloc("cn VCPU 2", "ss DISK_GB 10")}


# -- suffixed groups and group_policy ----------------------------------------


def _two_pfs(world, vfs=2):
    return world(
        cn=P(inv={"VCPU": 4}),
        pf0=P("cn", inv={"SRIOV_NET_VF": vfs,
                         "NET_BW_EGR_KILOBIT_PER_SEC": 1000}),
        pf1=P("cn", inv={"SRIOV_NET_VF": vfs,
                         "NET_BW_EGR_KILOBIT_PER_SEC": 1000}))


def test_suffixed_group_comes_from_one_provider(world):
    w = _two_pfs(world)
    both = {"SRIOV_NET_VF": 1, "NET_BW_EGR_KILOBIT_PER_SEC": 500}
    assert w.keys(R(G("1", both))) == {
        cand(["pf0 SRIOV_NET_VF 1", "pf0 NET_BW_EGR_KILOBIT_PER_SEC 500"],
             {"1": "pf0"}),
        cand(["pf1 SRIOV_NET_VF 1", "pf1 NET_BW_EGR_KILOBIT_PER_SEC 500"],
             {"1": "pf1"})}
    # Unsuffixed, the two classes may come from different PFs.
    assert len(w.keys(R(G(resources=both)))) == 4


def test_group_policy_none_and_isolate(world):
    w = _two_pfs(world)
    groups = (G("1", {"SRIOV_NET_VF": 1}), G("2", {"SRIOV_NET_VF": 1}))
    assert w.keys(R(*groups, group_policy="none")) == {
        cand(["pf0 SRIOV_NET_VF 2"], {"1": "pf0", "2": "pf0"}),
        cand(["pf1 SRIOV_NET_VF 2"], {"1": "pf1", "2": "pf1"}),
        cand(["pf0 SRIOV_NET_VF 1", "pf1 SRIOV_NET_VF 1"],
             {"1": "pf0", "2": "pf1"}),
        cand(["pf0 SRIOV_NET_VF 1", "pf1 SRIOV_NET_VF 1"],
             {"1": "pf1", "2": "pf0"})}
    assert w.keys(R(*groups, group_policy="isolate")) == {
        cand(["pf0 SRIOV_NET_VF 1", "pf1 SRIOV_NET_VF 1"],
             {"1": "pf0", "2": "pf1"}),
        cand(["pf0 SRIOV_NET_VF 1", "pf1 SRIOV_NET_VF 1"],
             {"1": "pf1", "2": "pf0"})}
    # isolate concerns suffixed groups only: the unsuffixed group may
    # share a provider with one of them.
    assert w.keys(R(G(resources={"NET_BW_EGR_KILOBIT_PER_SEC": 10}),
                    G("1", {"SRIOV_NET_VF": 1}),
                    group_policy="isolate")) == {
        cand([f"{a} NET_BW_EGR_KILOBIT_PER_SEC 10", f"{b} SRIOV_NET_VF 1"],
             {"": a, "1": b})
        for a in ("pf0", "pf1") for b in ("pf0", "pf1")}


def test_candidates_differing_only_in_mappings(world):
    """Two identical single-VF providers and two one-VF groups: one
    allocation, two mappings, two candidates."""
    w = _two_pfs(world, vfs=1)
    got = w.keys(R(G("1", {"SRIOV_NET_VF": 1}), G("2", {"SRIOV_NET_VF": 1}),
                   group_policy="none"))
    assert {a for a, _ in got} == {
        alloc("pf0 SRIOV_NET_VF 1", "pf1 SRIOV_NET_VF 1")}
    assert {m for _, m in got} == {maps({"1": "pf0", "2": "pf1"}),
                                   maps({"1": "pf1", "2": "pf0"})}


# -- traits ------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["", "1"])
def test_required_forbidden_and_any_of_traits(world, suffix):
    w = world(r1=P(inv={"VCPU": 1}, traits={"CUSTOM_T1"}),
              r2=P(inv={"VCPU": 1}, traits={"CUSTOM_T2"}),
              r13=P(inv={"VCPU": 1}, traits={"CUSTOM_T1", "CUSTOM_T3"}),
              r23=P(inv={"VCPU": 1}, traits={"CUSTOM_T2", "CUSTOM_T3"}),
              bare=P(inv={"VCPU": 1}))

    def hosts(*required):
        return {next(iter(a))[0] for a in w.allocs(R(
            G(suffix, {"VCPU": 1}, required=required)))}

    assert hosts("CUSTOM_T1") == {"r1", "r13"}
    assert hosts("CUSTOM_T1,CUSTOM_T3") == {"r13"}
    assert hosts("in:CUSTOM_T1,CUSTOM_T2") == {"r1", "r2", "r13", "r23"}
    # Repeated values are ANDed.
    assert hosts("in:CUSTOM_T1,CUSTOM_T2", "CUSTOM_T3") == {"r13", "r23"}
    assert hosts("CUSTOM_T3,!CUSTOM_T1") == {"r23"}
    assert hosts("!CUSTOM_T3") == {"r1", "r2", "bare"}
    assert hosts("in:CUSTOM_T1,CUSTOM_T2", "!CUSTOM_T3") == {"r1", "r2"}


# -- aggregates --------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["", "1"])
def test_member_of(world, suffix):
    w = world(ra=P(inv={"VCPU": 1}, aggs={"a"}),
              rb=P(inv={"VCPU": 1}, aggs={"b"}),
              rab=P(inv={"VCPU": 1}, aggs={"a", "b"}),
              rc=P(inv={"VCPU": 1}, aggs={"c"}),
              none=P(inv={"VCPU": 1}))

    def hosts(*member_of):
        return {next(iter(a))[0] for a in w.allocs(R(
            G(suffix, {"VCPU": 1}, member_of=member_of)))}

    assert hosts("in:a,b") == {"ra", "rb", "rab"}
    assert hosts("a", "b") == {"rab"}
    assert hosts("in:a,c", "!b") == {"ra", "rc"}
    assert hosts("!a") == {"rb", "rc", "none"}
    assert hosts("!in:a,b") == {"rc", "none"}
    # An aggregate nobody is in matches nobody (it is not an error).
    assert hosts("zzz") == set()


def test_member_of_through_root_and_sharing_anchor(world):
    """Unsuffixed: a nested provider matches through its root's
    aggregates; a sharing provider must be in the aggregates itself, and
    the tree it serves matches through its anchor."""
    w = world(cn=P(aggs={"a", "s"}),
              numa=P("cn", inv={"VCPU": 4}),
              cn2=P(inv={"VCPU": 4}, aggs={"s"}),
              ss=P(inv={"DISK_GB": 100}, traits={SHARING}, aggs={"s"}))
    assert w.allocs(R(G(resources={"VCPU": 1}, member_of="a"))) == {
        alloc("numa VCPU 1")}
    both = {"VCPU": 1, "DISK_GB": 10}
    assert w.allocs(R(G(resources=both, member_of="s"))) == {
        alloc("numa VCPU 1", "ss DISK_GB 10"),
        alloc("cn2 VCPU 1", "ss DISK_GB 10")}
    # The disk is not in a: cn's tree cannot use it then.
    assert w.allocs(R(G(resources=both, member_of="a"))) == set()
    # Forbidding the anchor's aggregate rules its whole tree out.
    assert w.allocs(R(G(resources={"VCPU": 1}, member_of="!a"))) == {
        alloc("cn2 VCPU 1")}
    # A suffixed group may take the sharing provider's disk.
    assert w.allocs(R(G("1", {"DISK_GB": 10}, member_of="s"),
                      G(resources={"VCPU": 1}))) == {
        alloc("numa VCPU 1", "ss DISK_GB 10"),
        alloc("cn2 VCPU 1", "ss DISK_GB 10")}


# -- trees: in_tree, root_required, same_subtree ------------------------------


def _two_trees_and_share(world):
    return world(cn1=P(inv={"VCPU": 4}, traits={"CUSTOM_T1"}, aggs={"a"}),
                 pf1=P("cn1", inv={"SRIOV_NET_VF": 2},
                       traits={"CUSTOM_T2"}),
                 cn2=P(inv={"VCPU": 4}, aggs={"a"}),
                 pf2=P("cn2", inv={"SRIOV_NET_VF": 2}),
                 ss=P(inv={"DISK_GB": 100}, traits={SHARING}, aggs={"a"}))


def test_in_tree(world):
    w = _two_trees_and_share(world)
    vcpu = {"VCPU": 1}
    assert w.allocs(R(G(resources=vcpu, in_tree="cn1"))) == {
        alloc("cn1 VCPU 1")}
    # Naming any provider of a tree names the tree.
    assert w.allocs(R(G(resources=vcpu, in_tree="pf2"))) == {
        alloc("cn2 VCPU 1")}
    # The unsuffixed group with in_tree takes nothing from sharing
    # providers outside that tree.
    assert w.allocs(R(G(resources={"VCPU": 1, "DISK_GB": 10},
                        in_tree="cn1"))) == set()
    # Per group: the VF from cn2's tree pins the unsuffixed VCPU there.
    assert w.keys(R(G(resources=vcpu),
                    G("1", {"SRIOV_NET_VF": 1}, in_tree="cn2"))) == {
        cand(["cn2 VCPU 1", "pf2 SRIOV_NET_VF 1"], {"": "cn2", "1": "pf2"})}
    # Two groups pinned to different trees cannot meet.
    assert w.allocs(R(G("1", vcpu, in_tree="cn1"),
                      G("2", {"SRIOV_NET_VF": 1}, in_tree="cn2"),
                      group_policy="none")) == set()
    # A suffixed group pinned to the sharing provider serves both trees.
    assert w.allocs(R(G(resources=vcpu),
                      G("1", {"DISK_GB": 10}, in_tree="ss"))) == {
        alloc("cn1 VCPU 1", "ss DISK_GB 10"),
        alloc("cn2 VCPU 1", "ss DISK_GB 10")}
    # An unknown provider: no tree, no candidates.
    assert w.allocs(R(G(resources=vcpu, in_tree="nope")),
                    reference=False) == set()


def test_root_required_and_forbidden(world):
    w = _two_trees_and_share(world)
    vf = {"SRIOV_NET_VF": 1}
    assert w.allocs(R(G(resources=vf), root_required="CUSTOM_T1")) == {
        alloc("pf1 SRIOV_NET_VF 1")}
    assert w.allocs(R(G(resources=vf), root_required="!CUSTOM_T1")) == {
        alloc("pf2 SRIOV_NET_VF 1")}
    # Judged on the root only, not on the providers used.
    assert w.allocs(R(G(resources=vf), root_required="CUSTOM_T2")) == set()
    # ... nor on the sharing provider, which is not an anchor here.
    assert w.allocs(R(G(resources={"SRIOV_NET_VF": 1, "DISK_GB": 10}),
                      root_required="CUSTOM_T1")) == {
        alloc("pf1 SRIOV_NET_VF 1", "ss DISK_GB 10")}


def _numa_network(world, **more):
    """A compute node with two NUMA nodes, each with a PF under it on a
    different physnet; and a flat compute node without VFs."""
    numa = {"VCPU": 4, "MEMORY_MB": 2048}
    pf = {"SRIOV_NET_VF": 8, "NET_BW_EGR_KILOBIT_PER_SEC": 10000}
    return world(
        cn1=P(inv={"DISK_GB": 1000}),
        numa0=P("cn1", inv=numa, traits={"HW_NUMA_ROOT"}),
        numa1=P("cn1", inv=numa, traits={"HW_NUMA_ROOT"}),
        pf0=P("numa0", inv=pf, traits={"CUSTOM_PHYSNET_PUBLIC"}),
        pf1=P("numa1", inv=pf, traits={"CUSTOM_PHYSNET_PRIVATE"}),
        cn2=P(inv={"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 1000}),
        **more)


CPU = {"VCPU": 2, "MEMORY_MB": 512}
NET = {"SRIOV_NET_VF": 1, "NET_BW_EGR_KILOBIT_PER_SEC": 1000}


def test_same_subtree(world):
    w = _numa_network(world)
    groups = (G("1", CPU), G("2", NET, required="CUSTOM_PHYSNET_PUBLIC"))
    net = ["pf0 SRIOV_NET_VF 1", "pf0 NET_BW_EGR_KILOBIT_PER_SEC 1000"]
    assert w.keys(R(*groups, group_policy="none")) == {
        cand([f"{n} VCPU 2", f"{n} MEMORY_MB 512", *net],
             {"1": n, "2": "pf0"}) for n in ("numa0", "numa1")}
    assert w.keys(R(*groups, group_policy="none",
                    same_subtree=["1,2"])) == {
        cand(["numa0 VCPU 2", "numa0 MEMORY_MB 512", *net],
             {"1": "numa0", "2": "pf0"})}
    # Two PFs are not under one another.
    assert w.keys(R(G("1", {"SRIOV_NET_VF": 1}),
                    G("2", {"SRIOV_NET_VF": 1}),
                    group_policy="isolate", same_subtree=["1,2"])) == set()


def test_same_subtree_with_a_resourceless_subtree_root(world):
    """A resourceless group names the NUMA node by trait; the CPU and
    the VF must both come from under it."""
    w = _numa_network(world)
    numa = G("_NUMA", required="HW_NUMA_ROOT")
    cpu = G("_CPU", {"VCPU": 2})
    net = G("_NET", {"SRIOV_NET_VF": 1}, required="CUSTOM_PHYSNET_PRIVATE")
    assert w.keys(R(numa, cpu, net, group_policy="none",
                    same_subtree=["_NUMA,_CPU,_NET"])) == {
        cand(["numa1 VCPU 2", "pf1 SRIOV_NET_VF 1"],
             {"_NUMA": "numa1", "_CPU": "numa1", "_NET": "pf1"})}
    # Only the VF tied to the NUMA node: the CPU may come from either.
    assert w.keys(R(numa, cpu, net, group_policy="none",
                    same_subtree=["_NUMA,_NET"])) == {
        cand([f"{n} VCPU 2", "pf1 SRIOV_NET_VF 1"],
             {"_NUMA": "numa1", "_CPU": n, "_NET": "pf1"})
        for n in ("numa0", "numa1")}


def test_resourceless_suffixed_groups(world):
    w = world(cn1=P(inv={"VCPU": 4}, traits={"CUSTOM_T1"}),
              child=P("cn1", traits={"CUSTOM_T2"}),
              cn2=P(inv={"VCPU": 4}, aggs={"b"}))
    vcpu = G(resources={"VCPU": 1})
    # Matched by any provider of the tree, the one serving nothing too;
    # it is in the mappings but allocates nothing.
    assert w.keys(R(vcpu, G("1", required="CUSTOM_T2"))) == {
        cand(["cn1 VCPU 1"], {"": "cn1", "1": "child"})}
    assert w.keys(R(vcpu, G("1", member_of="b"))) == {
        cand(["cn2 VCPU 1"], {"": "cn2", "1": "cn2"})}
    # Two of them may land on the same provider.
    assert w.keys(R(vcpu, G("1", required="CUSTOM_T1"),
                    G("2", required="in:CUSTOM_T1,CUSTOM_T2"),
                    group_policy="none")) == {
        cand(["cn1 VCPU 1"], {"": "cn1", "1": "cn1", "2": p})
        for p in ("cn1", "child")}
    # With only a forbidden trait it selects nothing (as upstream).
    assert w.keys(R(vcpu, G("1", required="!CUSTOM_T1"))) == set()


# -- capacity ----------------------------------------------------------------


def test_capacity_math(world):
    w = world(
        cn=P(inv={
            # capacity (10 - 2) * 1.5 = 12, 5 used: 7 free
            "VCPU": ref.Inv(10, reserved=2, allocation_ratio=1.5),
            "MEMORY_MB": ref.Inv(1000, min_unit=100, max_unit=400,
                                 step_size=50),
            # 3 * 1.5 = 4.5: 4 fit
            "DISK_GB": ref.Inv(3, allocation_ratio=1.5),
        }, used={"VCPU": 5}))

    def fits(rc, amount):
        return bool(w.allocs(R(G(resources={rc: amount}))))

    assert fits("VCPU", 7) and not fits("VCPU", 8)
    assert not fits("MEMORY_MB", 50)  # below min_unit
    assert fits("MEMORY_MB", 100) and fits("MEMORY_MB", 400)
    assert not fits("MEMORY_MB", 125)  # not a step
    assert not fits("MEMORY_MB", 450)  # above max_unit
    assert fits("DISK_GB", 4) and not fits("DISK_GB", 5)
    summary = w.summaries(w.find(R(G(resources={"VCPU": 1}))))
    assert summary["cn"][2] == {"VCPU": (12, 5), "MEMORY_MB": (1000, 0),
                                "DISK_GB": (4, 0)}


def test_amounts_add_up_per_provider(world):
    """Several groups on one provider must fit together: capacity and
    max_unit are checked on the sum."""
    w = world(a=P(inv={"VCPU": ref.Inv(8, max_unit=5)}, used={"VCPU": 1}),
              b=P("a", inv={"VCPU": 8}),
              c=P(inv={"DISK_GB": 8}, used={"DISK_GB": 1}))
    request = R(G("1", {"VCPU": 3}), G("2", {"VCPU": 3}),
                group_policy="none")
    # a+a: 6 > max_unit 5; b+b: 6 <= 8.
    assert w.keys(request) == {
        cand(["b VCPU 6"], {"1": "b", "2": "b"}),
        cand(["a VCPU 3", "b VCPU 3"], {"1": "a", "2": "b"}),
        cand(["a VCPU 3", "b VCPU 3"], {"1": "b", "2": "a"})}
    # The unsuffixed group and a suffixed one add up too: 1 + 4 + 4 > 8.
    assert w.keys(R(G(resources={"DISK_GB": 4}), G("1", {"DISK_GB": 4}))) \
        == set()
    assert len(w.keys(R(G(resources={"DISK_GB": 3}),
                         G("1", {"DISK_GB": 4})))) == 1


# -- limit, randomize, the cap ------------------------------------------------


def _hosts(world, n_roots, n_children, **kwargs):
    """Roots r0.. each with children holding one VF each."""
    providers = {}
    for r in range(n_roots):
        providers[f"r{r}"] = P()
        for c in range(n_children):
            providers[f"r{r}c{c}"] = P(f"r{r}", inv={"SRIOV_NET_VF": 1})
    return world(**providers, **kwargs)


VF1 = R(G("1", {"SRIOV_NET_VF": 1}))


def test_limit(world):
    w = _hosts(world, 6, 1)
    everything = w.allocs(VF1)
    assert len(everything) == 6
    limited = w.allocs(R(*VF1.groups, limit=2), reference=False)
    assert len(limited) == 2 and limited <= everything
    assert w.allocs(R(*VF1.groups, limit=10), reference=False) == everything


def test_randomize(world):
    w = _hosts(world, 10, 1, rng=random.Random(1),
               conf={"randomize_allocation_candidates": True})
    everything = w.allocs(VF1)
    seen = set()
    for _ in range(20):
        got = w.allocs(R(*VF1.groups, limit=2), reference=False)
        assert len(got) == 2 and got <= everything
        seen |= got
    # Unshuffled, a limit of 2 would always give the same two.
    assert len(seen) > 2


@pytest.mark.parametrize("walk", [False, True],
                         ids=["vectorised", "depth-first-walk"])
def test_cap_breadth_first_reaches_every_root(world, monkeypatch, walk):
    """5 roots with 4 candidates each, capped at 10: breadth first gives
    each root 2; depth first may fill the cap from the first roots."""
    if walk:
        monkeypatch.setattr(search, "VECTOR_LIMIT", 0)
    w = _hosts(world, 5, 4, conf={"max_allocation_candidates": 10})

    def roots():
        result = w.find(VF1)
        return collections.Counter(
            w.name_of[u][:2] for ar in result.allocation_requests()
            for u in ar.allocations)

    assert roots() == {f"r{r}": 2 for r in range(5)}
    w.engine.options.breadth_first = False
    depth = roots()
    assert sum(depth.values()) == 10 and len(depth) < 5
    # limit applies after the cap.
    w.engine.options.breadth_first = True
    assert len(w.find(R(*VF1.groups, limit=3))) == 3


def test_bounded_work_on_a_wide_tree(world):
    """8 single-VF children, 8 one-VF groups: 8! mapping orders of one
    allocation. With a cap of 1000 exactly 1000 distinct ones come back,
    without enumerating all of them."""
    w = _hosts(world, 1, 8, conf={"max_allocation_candidates": 1000})
    request = R(*(G(str(i), {"SRIOV_NET_VF": 1}) for i in range(8)),
                group_policy="none")
    result = w.find(request)
    keys = w.keys(request, reference=False)
    assert len(result) == len(keys) == 1000
    children = {f"r0c{c}" for c in range(8)}
    assert {a for a, _ in keys} == {
        frozenset((c, "SRIOV_NET_VF", 1) for c in children)}
    for _, mappings in keys:
        assert sorted(p for _, ps in mappings for p in ps) == sorted(children)


# -- microversion 1.29 and provider summaries ---------------------------------


def test_not_nested_aware_excludes_trees(world):
    """Before 1.29 two providers of one tree never serve one candidate; a
    single provider of a tree still may, sharing providers too."""
    w = world(cn1=P(inv={"VCPU": 4}, aggs={"a"}),
              numa=P("cn1", inv={"MEMORY_MB": 1024}),
              cn2=P(inv={"VCPU": 4, "MEMORY_MB": 1024}, aggs={"a"}),
              ss=P(inv={"DISK_GB": 100}, traits={SHARING}, aggs={"a"}))
    vcpu_mem = {"VCPU": 1, "MEMORY_MB": 256}
    assert w.allocs(R(G(resources=vcpu_mem))) == {
        alloc("cn1 VCPU 1", "numa MEMORY_MB 256"),
        alloc("cn2 VCPU 1", "cn2 MEMORY_MB 256")}
    assert w.allocs(R(G(resources=vcpu_mem), nested_aware=False)) == {
        alloc("cn2 VCPU 1", "cn2 MEMORY_MB 256")}
    assert w.allocs(R(G(resources={"VCPU": 1, "DISK_GB": 5}),
                      nested_aware=False)) == {
        alloc("cn1 VCPU 1", "ss DISK_GB 5"),
        alloc("cn2 VCPU 1", "ss DISK_GB 5")}
    # Summaries then name only the providers used.
    result = w.find(R(G(resources={"VCPU": 1}), nested_aware=False))
    assert set(w.summaries(result)) == {"cn1", "cn2"}


def test_provider_summaries(world):
    """Every provider of each contributing tree, with all its classes,
    traits and tree links; the sharing provider when it takes part; no
    other tree."""
    w = _numa_network(
        world, ss=P(inv={"IPV4_ADDRESS": 10}, used={"IPV4_ADDRESS": 3},
                    traits={SHARING}, aggs={"a"}),
        cn3=P(inv={"VCPU": 1}, aggs={"a"}))
    result = w.find(R(G("1", NET, required="CUSTOM_PHYSNET_PUBLIC")))
    pf = {"SRIOV_NET_VF": (8, 0), "NET_BW_EGR_KILOBIT_PER_SEC": (10000, 0)}
    numa = {"VCPU": (4, 0), "MEMORY_MB": (2048, 0)}
    assert w.summaries(result) == {
        "cn1": (None, "cn1", {"DISK_GB": (1000, 0)}, set()),
        "numa0": ("cn1", "cn1", numa, {"HW_NUMA_ROOT"}),
        "numa1": ("cn1", "cn1", numa, {"HW_NUMA_ROOT"}),
        "pf0": ("numa0", "cn1", pf, {"CUSTOM_PHYSNET_PUBLIC"}),
        "pf1": ("numa1", "cn1", pf, {"CUSTOM_PHYSNET_PRIVATE"})}
    [request] = result.allocation_requests()
    assert request.mappings == {"1": [w.uuids["pf0"]]}
    assert request.allocations == {w.uuids["pf0"]: NET}
    result = w.find(R(G(resources={"VCPU": 1, "IPV4_ADDRESS": 2})))
    assert w.summaries(result) == {
        "cn3": (None, "cn3", {"VCPU": (1, 0)}, set()),
        "ss": (None, "ss", {"IPV4_ADDRESS": (10, 3)}, {SHARING})}


# -- GET /resource_providers filters -----------------------------------------


def test_provider_ids(world):
    """Filters judge each provider on its own (no trees, no sharing)."""
    w = world(cn1=P(inv={"VCPU": 4}, traits={"CUSTOM_T1"}, aggs={"a"}),
              numa=P("cn1", inv={"VCPU": 2}),
              cn2=P(inv={"VCPU": 8}, traits={"CUSTOM_T2"}, aggs={"b"}),
              ss=P(inv={"DISK_GB": 10}, traits={SHARING}, aggs={"a"}))

    def names(**kwargs):
        ids = w.engine.provider_ids(providers_filter.ProviderFilters(
            **kwargs))
        return {p.name for p in providers.get_by_ids(w.store, ids).values()}

    everyone = {"cn1", "numa", "cn2", "ss"}
    assert names() == everyone
    assert names(resources={"VCPU": 3}) == {"cn1", "cn2"}
    assert names(resources={"VCPU": 1, "DISK_GB": 1}) == set()
    assert names(required_traits=(frozenset(["CUSTOM_T1"]),)) == {"cn1"}
    assert names(required_traits=(frozenset(["CUSTOM_T1", "CUSTOM_T2"]),)) \
        == {"cn1", "cn2"}
    assert names(resources={"VCPU": 1},
                 forbidden_traits=frozenset(["CUSTOM_T1"])) == {"numa",
                                                                "cn2"}
    assert names(member_of=(frozenset([ch.agg_uuid("a")]),)) == {"cn1", "ss"}
    assert names(forbidden_aggs=frozenset([ch.agg_uuid("a")])) == {
        "numa", "cn2"}
    assert names(in_tree=w.uuids["numa"]) == {"cn1", "numa"}
    assert names(name="cn2") == {"cn2"}
    assert names(uuid=w.uuids["ss"]) == {"ss"}
    assert names(in_tree=ch.agg_uuid("nope")) == set()


# -- errors ------------------------------------------------------------------


def test_unknown_resource_class_or_trait(world):
    w = world(cn=P(inv={"VCPU": 1}))
    with pytest.raises(errors.ResourceClassNotFound):
        w.find(R(G(resources={"CUSTOM_NOPE": 1})))
    for request in (R(G(resources={"VCPU": 1}), root_required="CUSTOM_NO"),
                    R(G(resources={"VCPU": 1}, required="CUSTOM_NO")),
                    R(G(resources={"VCPU": 1}, required="!CUSTOM_NO")),
                    R(G(resources={"VCPU": 1},
                        required="in:CUSTOM_T1,CUSTOM_NO"))):
        with pytest.raises(errors.TraitNotFound):
            w.find(request)
    # A known class nobody has: no candidates, no error.
    assert w.allocs(R(G(resources={"VGPU": 1}))) == set()


# -- clouds shaped like OpenStack Placement's gabbi fixtures ------------------


def _shared_storage(world, disk_used=0):
    """Two compute nodes and a shared disk in one aggregate."""
    compute = {"VCPU": ref.Inv(24, allocation_ratio=16.0),
               "MEMORY_MB": ref.Inv(128 * 1024, allocation_ratio=1.5)}
    return world(
        cn1=P(inv=compute, aggs={"agg"}),
        cn2=P(inv=compute, aggs={"agg"}),
        ss=P(inv={"DISK_GB": ref.Inv(2000, reserved=100, min_unit=10,
                                     max_unit=1000, step_size=10)},
             used={"DISK_GB": disk_used},
             traits={SHARING, "STORAGE_DISK_SSD"}, aggs={"agg"}))


def test_shared_storage_cloud(world):
    w = _shared_storage(world)
    full = {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 100}
    assert w.allocs(R(G(resources=full))) == {
        alloc(f"{cn} VCPU 1", f"{cn} MEMORY_MB 1024", "ss DISK_GB 100")
        for cn in ("cn1", "cn2")}
    assert w.allocs(R(G(resources=full, required="STORAGE_DISK_SSD"),
                      G("1", member_of="agg"))) == {
        alloc(f"{cn} VCPU 1", f"{cn} MEMORY_MB 1024", "ss DISK_GB 100")
        for cn in ("cn1", "cn2")}
    assert w.allocs(R(G(resources=full, member_of="other"))) == set()
    # Disk alone: the sharing provider is reachable from three anchors
    # (itself, cn1, cn2); the candidate is returned once.
    assert w.keys(R(G(resources={"DISK_GB": 100}))) == {
        cand(["ss DISK_GB 100"], {"": "ss"})}
    assert w.allocs(R(G(resources={"DISK_GB": 105}))) == set()  # step
    assert w.allocs(R(G(resources={"DISK_GB": 1010}))) == set()  # max_unit
    result = w.find(R(G(resources=full)))
    compute = {"VCPU": (384, 0), "MEMORY_MB": (196608, 0)}
    assert w.summaries(result) == {
        "cn1": (None, "cn1", compute, set()),
        "cn2": (None, "cn2", compute, set()),
        "ss": (None, "ss", {"DISK_GB": (1900, 0)},
               {SHARING, "STORAGE_DISK_SSD"})}


def test_shared_storage_cloud_full_disk(world):
    w = _shared_storage(world, disk_used=1850)
    assert w.allocs(R(G(resources={"VCPU": 1, "DISK_GB": 100}))) == set()
    assert len(w.allocs(R(G(resources={"VCPU": 1, "DISK_GB": 50})))) == 2


def test_numa_network_cloud(world):
    w = _numa_network(world)
    # Unsuffixed: VCPU and memory each from either NUMA node, or cn2.
    assert w.allocs(R(G(resources=CPU))) == {
        alloc(f"{a} VCPU 2", f"{b} MEMORY_MB 512")
        for a in ("numa0", "numa1") for b in ("numa0", "numa1")} | {
        alloc("cn2 VCPU 2", "cn2 MEMORY_MB 512")}
    assert w.allocs(R(G("1", CPU))) == {
        alloc(f"{n} VCPU 2", f"{n} MEMORY_MB 512")
        for n in ("numa0", "numa1", "cn2")}
    # Disk from the root, CPU from a NUMA node, a VF on a named physnet.
    public = ["pf0 SRIOV_NET_VF 1", "pf0 NET_BW_EGR_KILOBIT_PER_SEC 1000"]
    assert w.keys(R(G(resources={"DISK_GB": 10}), G("1", CPU),
                    G("2", NET, required="CUSTOM_PHYSNET_PUBLIC"),
                    group_policy="isolate")) == {
        cand(["cn1 DISK_GB 10", f"{n} VCPU 2", f"{n} MEMORY_MB 512",
              *public], {"": "cn1", "1": n, "2": "pf0"})
        for n in ("numa0", "numa1")}
    # One VF on each physnet.
    assert w.allocs(R(G("1", NET, required="CUSTOM_PHYSNET_PUBLIC"),
                      G("2", NET, required="CUSTOM_PHYSNET_PRIVATE"),
                      group_policy="isolate")) == {
        alloc(*public, "pf1 SRIOV_NET_VF 1",
              "pf1 NET_BW_EGR_KILOBIT_PER_SEC 1000")}
    # Both physnets on one PF: nobody.
    assert w.allocs(R(G("1", NET, required="CUSTOM_PHYSNET_PUBLIC,"
                                            "CUSTOM_PHYSNET_PRIVATE"))) \
        == set()


def _granular_cloud(world):
    """Three compute nodes with different CPU traits and aggregates, two
    sharing disks and a sharing network provider."""
    compute = {"VCPU": 8, "MEMORY_MB": 4096}
    return world(
        cn_left=P(inv={**compute, "DISK_GB": 500},
                  traits={"HW_CPU_X86_AVX2", "STORAGE_DISK_SSD"},
                  aggs={"a"}),
        cn_middle=P(inv=compute, traits={"HW_CPU_X86_SSE"},
                    aggs={"a", "b"}),
        cn_right=P(inv={**compute, "DISK_GB": 500},
                   traits={"HW_CPU_X86_AVX2", "HW_CPU_X86_SSE"},
                   aggs={"b"}),
        shr_disk_1=P(inv={"DISK_GB": 1000},
                     traits={SHARING, "STORAGE_DISK_SSD"}, aggs={"a"}),
        shr_disk_2=P(inv={"DISK_GB": 1000}, traits={SHARING}, aggs={"b"}),
        shr_net=P(inv={"SRIOV_NET_VF": 16,
                       "NET_BW_EGR_KILOBIT_PER_SEC": 100000},
                  traits={SHARING, "CUSTOM_PHYSNET_PUBLIC"},
                  aggs={"a", "b"}))


def test_granular_cloud(world):
    w = _granular_cloud(world)
    cpu = {"VCPU": 1, "MEMORY_MB": 1024}
    disk = {"DISK_GB": 100}

    def on(host, disk_from):
        return alloc(f"{host} VCPU 1", f"{host} MEMORY_MB 1024",
                     f"{disk_from} DISK_GB 100")

    assert w.allocs(R(G(resources={**cpu, **disk}))) == {
        on("cn_left", "cn_left"), on("cn_left", "shr_disk_1"),
        on("cn_middle", "shr_disk_1"), on("cn_middle", "shr_disk_2"),
        on("cn_right", "cn_right"), on("cn_right", "shr_disk_2")}
    assert w.allocs(R(G(resources={**cpu, **disk},
                        required="STORAGE_DISK_SSD"))) == {
        on("cn_left", "cn_left"), on("cn_left", "shr_disk_1"),
        on("cn_middle", "shr_disk_1")}
    granular = (G("1", cpu, required="HW_CPU_X86_AVX2"),
                G("2", disk, required="STORAGE_DISK_SSD"))
    assert w.allocs(R(*granular, group_policy="none")) == {
        on("cn_left", "cn_left"), on("cn_left", "shr_disk_1")}
    assert w.allocs(R(*granular, group_policy="isolate")) == {
        on("cn_left", "shr_disk_1")}
    # A VF from the sharing network provider for every compute node.
    net = G("2", {"SRIOV_NET_VF": 1}, required="CUSTOM_PHYSNET_PUBLIC")
    assert {next(p for p, _, _ in a if p.startswith("cn"))
            for a in w.allocs(R(G("1", cpu), net, group_policy="isolate"))} \
        == {"cn_left", "cn_middle", "cn_right"}
    assert len(w.allocs(R(G("1", cpu, member_of="b"), net,
                          group_policy="isolate"))) == 2
    assert len(w.allocs(R(G("1", cpu, required="in:HW_CPU_X86_SSE,"
                                                "HW_CPU_X86_AVX2"),
                          G("2", disk, required="!STORAGE_DISK_SSD"),
                          group_policy="isolate",
                          root_required="!HW_CPU_X86_AVX2"))) == 1
