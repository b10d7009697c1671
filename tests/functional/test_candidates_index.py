"""The provider index follows the database (every engine).

Writes through the engine's own store reach the index after commit;
writes by another process (a second Store on the same database, as
another process would have) are found through the change log before the
next search, and only the providers they name are reloaded; a pruned
change log forces a full reload. A result is a snapshot.
"""

import datetime
import threading
import uuid as uuidlib

import pytest
import sqlalchemy as sa

from placement.candidates import engine as engine_mod
from placement.candidates import request as rq
from placement.db import store as store_mod
from placement.db import tables
from placement.objects import (
    aggregates,
    allocations,
    inventories,
    providers,
    reshaper,
    resource_classes,
    traits,
)
from tests import candidates_reference as ref
from tests.functional import candidates_helpers as ch

SHARING = ref.SHARING
AGG = ch.agg_uuid("a")


def _cloud(store, **providers_):
    """Providers from {name: ref.Provider}; {name: uuid}."""
    return store.write(ch.load, ref.Cloud(providers_))


def _vcpu(total):
    return {"VCPU": ref.Inv(total)}


def request(resources, required=(), member_of=()):
    return rq.CandidatesRequest(groups=(rq.RequestGroup(
        resources=resources,
        required_traits=tuple(frozenset([t]) for t in required),
        member_of=tuple(frozenset([a]) for a in member_of)),))


class Loads:
    """Records what the index loads: None for everything, else the
    provider ids; ("usage", ids) for a refresh of usage alone."""

    def __init__(self, index, monkeypatch):
        self.calls = []
        original = index._load
        original_usage = index._load_usage

        def spy(txn, ids):
            self.calls.append(None if ids is None else sorted(ids))
            return original(txn, ids)

        def spy_usage(txn, ids):
            self.calls.append(("usage", sorted(ids)))
            return original_usage(txn, ids)

        monkeypatch.setattr(index, "_load", spy)
        monkeypatch.setattr(index, "_load_usage", spy_usage)

    def take(self):
        calls, self.calls = self.calls, []
        return calls


class Engine:
    """An engine on ``store`` that answers with provider names."""

    def __init__(self, store, uuids, monkeypatch):
        self.store = store
        self.uuids = uuids
        self.engine = engine_mod.CandidatesEngine(store)
        self.loads = Loads(self.engine.index, monkeypatch)

    def find(self, req):
        return self.engine.find(req)

    def hosts(self, req):
        """Each candidate as a sorted tuple of provider names."""
        names = {u: n for n, u in self.uuids.items()}
        return {tuple(sorted(names.get(u, u) for u in ar.allocations))
                for ar in self.find(req).allocation_requests()}

    def summary(self, name, req):
        return self.find(req).provider_summaries()[self.uuids[name]]


@pytest.fixture
def make_engine(store, monkeypatch):
    made = []

    def make(uuids):
        made.append(Engine(store, uuids, monkeypatch))
        return made[-1]

    yield make
    for e in made:
        e.engine.close()


@pytest.fixture
def other(store):
    """A second store on the same database: another process's writes."""
    second = store_mod.Store(store.conf)
    yield second
    second.dispose()


def _id(store, uuid):
    return providers.get(store, uuid).id


def _allocate(db, rp_uuid, **resources):
    consumer = str(uuidlib.uuid4())
    allocations.replace(db, [allocations.ConsumerAllocations(
        consumer, {rp_uuid: resources}, "p", "u")])
    return consumer


VCPU3 = request({"VCPU": 3})


# -- writes in this process ---------------------------------------------------


def test_own_allocation_is_applied_without_reloading(store, make_engine):
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)),
                   cn2=ref.Provider(inventory=_vcpu(4)))
    e = make_engine(uuids)
    assert e.hosts(VCPU3) == {("cn1",), ("cn2",)}
    e.loads.take()
    consumer = _allocate(store, uuids["cn1"], VCPU=2)
    assert e.hosts(VCPU3) == {("cn2",)}
    assert e.summary("cn1", request({"VCPU": 1})).resources == {
        "VCPU": (4, 2)}
    # The usage delta came with the commit: nothing was read again.
    assert e.loads.take() == []
    allocations.replace(store, [allocations.ConsumerAllocations(
        consumer, {}, "p", "u")])
    assert e.hosts(VCPU3) == {("cn1",), ("cn2",)}
    assert e.loads.take() == []


def _fits_from_scratch(index, col, amount):
    """What index.fits must answer, from the inventory columns alone."""
    n = index.size
    return (index.has_inv[:n, col]
            & (index.used[:n, col] + amount <= index.cap[:n, col])
            & (index.min_unit[:n, col] <= amount)
            & (index.max_unit[:n, col] >= amount)
            & (amount % index.step[:n, col] == 0))


def test_fits_follows_usage_units_and_fractional_ratios(store, make_engine):
    # Capacities 7.5 (ratio 1.5), max_unit 3, step 2 with min_unit 2.
    uuids = _cloud(
        store,
        frac=ref.Provider(inventory={"VCPU": ref.Inv(
            5, allocation_ratio=1.5)}),
        capped=ref.Provider(inventory={"VCPU": ref.Inv(16, max_unit=3)}),
        stepped=ref.Provider(inventory={"VCPU": ref.Inv(
            16, min_unit=2, step_size=2)}),
        none=ref.Provider(inventory={"DISK_GB": ref.Inv(10)}))
    e = make_engine(uuids)
    e.find(VCPU3)
    index = e.engine.index

    def check():
        for c in range(len(index.col_rc)):
            for amount in range(1, 10):
                assert (index.fits(c, amount)
                        == _fits_from_scratch(index, c, amount)).all(), (
                    c, amount)

    check()
    assert e.hosts(request({"VCPU": 7})) == {("frac",)}
    assert e.hosts(request({"VCPU": 8})) == {("stepped",)}
    assert e.hosts(request({"VCPU": 3})) == {("frac",), ("capped",)}
    assert e.hosts(request({"VCPU": 2})) == {
        ("frac",), ("capped",), ("stepped",)}
    # Usage from this process's commits moves room with it.
    _allocate(store, uuids["frac"], VCPU=3)
    _allocate(store, uuids["stepped"], VCPU=14)
    check()
    assert e.hosts(request({"VCPU": 4})) == {("frac",)}
    assert e.hosts(request({"VCPU": 5})) == set()
    assert e.hosts(request({"VCPU": 2})) == {
        ("frac",), ("capped",), ("stepped",)}
    assert e.hosts(request({"VCPU": 3})) == {("frac",), ("capped",)}
    # An inventory change reloads the provider: room is computed again.
    inventories.replace_all(store, uuids["stepped"], None, [
        inventories.Inventory("VCPU", 32, min_unit=2, step_size=2)])
    check()
    assert ("stepped",) in e.hosts(request({"VCPU": 18}))
    # A deleted provider has no room left.
    providers.delete(store, uuids["none"])
    check()


def test_own_inventory_trait_and_aggregate_writes(store, make_engine):
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(2)),
                   ss=ref.Provider(inventory={"DISK_GB": ref.Inv(100)},
                                   traits={SHARING}))
    e = make_engine(uuids)
    assert e.hosts(VCPU3) == set()
    inventories.replace_all(store, uuids["cn1"], None, [
        inventories.Inventory("VCPU", 8)])
    assert e.hosts(VCPU3) == {("cn1",)}
    assert e.loads.take() == [None, [_id(store, uuids["cn1"])]]

    traits.set_for_provider(store, uuids["cn1"], None, ["CUSTOM_T1"])
    assert e.hosts(request({"VCPU": 1}, required=["CUSTOM_T1"])) == {
        ("cn1",)}
    traits.set_for_provider(store, uuids["cn1"], None, [])
    assert e.hosts(request({"VCPU": 1}, required=["CUSTOM_T1"])) == set()

    # Sharing needs a common aggregate: the anchors follow.
    both = request({"VCPU": 1, "DISK_GB": 10})
    assert e.hosts(both) == set()
    aggregates.set_for_provider(store, uuids["cn1"], [AGG])
    aggregates.set_for_provider(store, uuids["ss"], [AGG])
    assert e.hosts(both) == {("cn1", "ss")}
    assert e.hosts(request({"VCPU": 1}, member_of=[AGG])) == {("cn1",)}
    # ... and so does the sharing trait.
    traits.set_for_provider(store, uuids["ss"], None, [])
    assert e.hosts(both) == set()


def test_own_provider_create_delete_and_reparent(store, make_engine):
    uuids = _cloud(
        store, cn1=ref.Provider(inventory=_vcpu(4)),
        pf=ref.Provider(parent="cn1",
                        inventory={"SRIOV_NET_VF": ref.Inv(2)}),
        cn2=ref.Provider(inventory=_vcpu(4)))
    e = make_engine(uuids)
    vcpu_vf = request({"VCPU": 1, "SRIOV_NET_VF": 1})
    assert e.hosts(vcpu_vf) == {("cn1", "pf")}

    cn3 = providers.create(store, "cn3")
    uuids["cn3"] = cn3.uuid
    inventories.replace_all(store, cn3.uuid, None,
                            [inventories.Inventory("VCPU", 4)])
    assert e.hosts(VCPU3) == {("cn1",), ("cn2",), ("cn3",)}
    providers.delete(store, uuids["cn2"])
    assert e.hosts(VCPU3) == {("cn1",), ("cn3",)}

    # The PF moves to cn3's tree (microversion 1.37 re-parenting).
    providers.update(store, uuids["pf"], parent_uuid=cn3.uuid,
                     allow_reparenting=True)
    assert e.hosts(vcpu_vf) == {("cn3", "pf")}
    summary = e.summary("pf", vcpu_vf)
    assert (summary.parent_provider_uuid, summary.root_provider_uuid) == (
        cn3.uuid, cn3.uuid)
    # Made a root of its own, it serves alone.
    providers.update(store, uuids["pf"], parent_uuid=None,
                     allow_reparenting=True)
    assert e.hosts(vcpu_vf) == set()
    assert e.hosts(request({"SRIOV_NET_VF": 1})) == {("pf",)}


def test_own_reshape(store, make_engine):
    """VCPU and its allocation move from the root to a new child in one
    reshape."""
    uuids = _cloud(store, cn=ref.Provider(inventory=_vcpu(8)))
    consumer = _allocate(store, uuids["cn"], VCPU=2)
    e = make_engine(uuids)
    assert e.hosts(request({"VCPU": 6})) == {("cn",)}
    numa = providers.create(store, "numa", parent_uuid=uuids["cn"])
    uuids["numa"] = numa.uuid
    reshaper.reshape(
        store,
        {uuids["cn"]: (providers.get(store, uuids["cn"]).generation, []),
         numa.uuid: (numa.generation, [inventories.Inventory("VCPU", 8)])},
        [allocations.ConsumerAllocations(consumer, {numa.uuid: {"VCPU": 2}},
                                         "p", "u")])
    assert e.hosts(request({"VCPU": 6})) == {("numa",)}
    result = e.find(request({"VCPU": 1}))
    summaries = result.provider_summaries()
    assert summaries[uuids["cn"]].resources == {}
    assert summaries[numa.uuid].resources == {"VCPU": (8, 2)}
    assert e.hosts(request({"VCPU": 7})) == set()


# -- writes by another process ------------------------------------------------


def test_other_process_writes_reload_only_their_providers(
        store, other, make_engine):
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)),
                   cn2=ref.Provider(inventory=_vcpu(4)))
    cn1, cn2 = _id(store, uuids["cn1"]), _id(store, uuids["cn2"])
    e = make_engine(uuids)
    assert e.hosts(VCPU3) == {("cn1",), ("cn2",)}
    assert e.loads.take() == [None]  # the first search loads everything
    # Nothing changed: nothing is read again.
    e.hosts(VCPU3)
    assert e.loads.take() == []

    inventories.replace_all(other, uuids["cn2"], None,
                            [inventories.Inventory("VCPU", 2)])
    assert e.hosts(VCPU3) == {("cn1",)}
    assert e.loads.take() == [[cn2]]

    # A claim changes usage only: one query refreshes it.
    _allocate(other, uuids["cn1"], VCPU=2)
    assert e.hosts(VCPU3) == set()
    assert e.summary("cn1", request({"VCPU": 1})).resources == {
        "VCPU": (4, 2)}
    assert e.loads.take() == [("usage", [cn1])]

    traits.set_for_provider(other, uuids["cn2"], None, ["CUSTOM_T1"])
    assert e.hosts(request({"VCPU": 1}, required=["CUSTOM_T1"])) == {
        ("cn2",)}
    assert e.loads.take() == [[cn2]]

    # A new provider, in two transactions: read once, by id.
    cn3 = providers.create(other, "cn3")
    uuids["cn3"] = cn3.uuid
    inventories.replace_all(other, cn3.uuid, None,
                            [inventories.Inventory("VCPU", 8)])
    assert e.hosts(VCPU3) == {("cn3",)}
    assert e.loads.take() == [[cn3.id]]

    providers.delete(other, uuids["cn2"])
    assert e.hosts(request({"VCPU": 1})) == {("cn1",), ("cn3",)}
    assert e.loads.take() == [[cn2]]


def _prune_all(db):
    """Prune every change log row (a retention in the future)."""
    return db.write(store_mod.prune_change_log,
                    retention=datetime.timedelta(hours=-1))


def test_pruned_change_log_forces_a_full_reload(store, other, make_engine):
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)))
    cn1 = _id(store, uuids["cn1"])
    # Earlier tests left holes in the numbers (as rolled-back writes do);
    # pruned, they are no longer in question.
    _prune_all(other)
    e = make_engine(uuids)
    assert e.hosts(VCPU3) == {("cn1",)}
    assert e.loads.take() == [None]
    inventories.replace_all(other, uuids["cn1"], None,
                            [inventories.Inventory("VCPU", 8)])
    assert e.hosts(VCPU3) == {("cn1",)}
    assert e.loads.take() == [[cn1]]
    # Pruning what the index has already read loses nothing.
    assert _prune_all(other) == 1
    assert e.hosts(VCPU3) == {("cn1",)}
    assert e.loads.take() == []

    # A change, then its log row pruned before the index read it.
    inventories.replace_all(other, uuids["cn1"], None,
                            [inventories.Inventory("VCPU", 2)])
    assert _prune_all(other) == 1
    assert e.hosts(VCPU3) == set()
    assert e.loads.take() == [None]
    # Once reloaded, the index follows the log again.
    assert e.hosts(VCPU3) == set()
    assert e.loads.take() == []
    inventories.replace_all(other, uuids["cn1"], None,
                            [inventories.Inventory("VCPU", 3)])
    assert e.hosts(VCPU3) == {("cn1",)}
    assert e.loads.take() == [[cn1]]


def test_index_started_after_pruning_loads_once(store, other, make_engine):
    """A process that starts after old log rows were pruned loads
    everything once and then follows the log, like any other."""
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)),
                   cn2=ref.Provider(inventory=_vcpu(4)))
    pc = tables.provider_changes
    old = store_mod.utcnow() - store_mod.CHANGE_LOG_RETENTION * 2
    with store.engine.begin() as conn:
        conn.execute(pc.update().values(changed_at=old))
    # One recent row stays.
    inventories.replace_all(other, uuids["cn2"], None,
                            [inventories.Inventory("VCPU", 8)])
    assert other.write(store_mod.prune_change_log) > 0
    e = make_engine(uuids)
    assert e.hosts(VCPU3) == {("cn1",), ("cn2",)}
    assert e.loads.take() == [None]
    assert e.hosts(VCPU3) == {("cn1",), ("cn2",)}
    assert e.loads.take() == []
    _allocate(other, uuids["cn1"], VCPU=2)
    assert e.hosts(VCPU3) == {("cn2",)}
    assert e.loads.take() == [("usage", [_id(store, uuids["cn1"])])]


def test_index_started_on_an_empty_change_log(store, other, make_engine):
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)))
    _prune_all(other)
    e = make_engine(uuids)
    assert e.hosts(VCPU3) == {("cn1",)}
    assert e.loads.take() == [None]
    assert e.hosts(VCPU3) == {("cn1",)}
    assert e.loads.take() == []
    _allocate(other, uuids["cn1"], VCPU=2)
    assert e.hosts(VCPU3) == set()
    assert e.loads.take() == [("usage", [_id(store, uuids["cn1"])])]


# -- results ------------------------------------------------------------------


def test_result_is_a_snapshot(store, other, make_engine):
    uuids = _cloud(
        store,
        cn1=ref.Provider(inventory=_vcpu(4), traits={"CUSTOM_T1"}),
        pf=ref.Provider(parent="cn1", inventory={"SRIOV_NET_VF": ref.Inv(2)}),
        cn2=ref.Provider(inventory=_vcpu(4)))
    e = make_engine(uuids)
    req = request({"VCPU": 1})
    result = e.find(req)
    twin = e.find(req)
    expected = (twin.allocation_requests(), twin.provider_summaries())
    # Usage (applied in place in the index), inventory, traits, a deleted
    # provider whose index row a new provider then takes.
    _allocate(store, uuids["cn1"], VCPU=3)
    inventories.replace_all(store, uuids["cn2"], None,
                            [inventories.Inventory("VCPU", 16)])
    traits.set_for_provider(store, uuids["cn1"], None, ["CUSTOM_T2"])
    providers.delete(store, uuids["pf"])
    e.find(req)
    providers.create(store, "newcomer")
    inventories.replace_all(other, uuids["cn2"], None,
                            [inventories.Inventory("VCPU", 32)])
    after = e.find(req)
    assert (result.allocation_requests(), result.provider_summaries()) == (
        expected)
    assert after.provider_summaries() != expected[1]


def test_lean_result_is_a_snapshot(store, make_engine):
    # A lean result shares the index's row -> uuid list until the index
    # changes it: then the index copies, the result keeps what it saw.
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)),
                   cn2=ref.Provider(inventory=_vcpu(4)))
    e = make_engine(uuids)
    req = request({"VCPU": 1})
    lean = e.engine.find(req, lean=True)
    seen = [ar.allocations for ar in lean.allocation_requests()]
    anchors = lean.anchor_uuids()
    # cn2's row is freed, then taken by a new provider.
    providers.delete(store, uuids["cn2"])
    e.find(req)
    newcomer = providers.create(store, "newcomer")
    inventories.replace_all(store, newcomer.uuid, None,
                            [inventories.Inventory("VCPU", 4)])
    e.find(req)
    assert e.engine.index.row_of_uuid[newcomer.uuid] is not None
    assert lean.anchor_uuids() == anchors
    assert [ar.allocations for ar in lean.allocation_requests()] == seen
    assert sorted(anchors) == sorted([uuids["cn1"], uuids["cn2"]])


def test_summaries_after_a_custom_trait_and_class_are_deleted(
        store, make_engine):
    """The index remembers every trait and class it has seen; deleting
    one from the catalog must not break later summaries."""
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)),
                   gone=ref.Provider(traits={"CUSTOM_GONE"}))
    resource_classes.create(store, "CUSTOM_GONE_RC")
    inventories.replace_all(store, uuids["gone"], None,
                            [inventories.Inventory("CUSTOM_GONE_RC", 1)])
    e = make_engine(uuids)
    req = request({"VCPU": 1})
    assert e.summary("cn1", req).resources == {"VCPU": (4, 0)}
    traits.set_for_provider(store, uuids["gone"], None, [])
    traits.delete(store, "CUSTOM_GONE")
    inventories.delete_all(store, uuids["gone"])
    resource_classes.delete(store, "CUSTOM_GONE_RC")
    assert e.summary("cn1", req).resources == {"VCPU": (4, 0)}
    assert e.summary("cn1", req).traits == []


def test_engines_on_one_database_agree(store, other, make_engine):
    """Two engines (two processes) see each other's writes."""
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)))
    mine = make_engine(uuids)
    theirs = engine_mod.CandidatesEngine(other)
    try:
        assert mine.hosts(VCPU3) == {("cn1",)}
        assert len(theirs.find(VCPU3)) == 1
        _allocate(other, uuids["cn1"], VCPU=2)
        assert len(theirs.find(VCPU3)) == 0
        assert mine.hosts(VCPU3) == set()
        _allocate(store, uuids["cn1"], VCPU=2)
        assert len(theirs.find(request({"VCPU": 1}))) == 0
        assert mine.hosts(request({"VCPU": 1})) == set()
    finally:
        theirs.close()


# Only the servers: SQLite runs one writer at a time, so its commits
# cannot overtake each other.
@pytest.mark.parametrize("engine_name", ["postgresql", "mysql"])
def test_change_committed_out_of_order_is_not_missed(store, other,
                                                      make_engine):
    """A write that took its log number first but commits last leaves a
    gap the index asks about again until it shows up."""
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)),
                   cn2=ref.Provider(inventory=_vcpu(4)))
    cn1, cn2 = _id(store, uuids["cn1"]), _id(store, uuids["cn2"])
    e = make_engine(uuids)
    assert e.hosts(VCPU3) == {("cn1",), ("cn2",)}
    e.loads.take()
    # (Earlier tests' wiped rows may be gaps too.)
    old_gaps = set(e.engine.index.gaps)

    # Hold the slow write at its commit, its log row written.
    at_commit, release = threading.Event(), threading.Event()

    def hold(conn):
        if not at_commit.is_set():
            at_commit.set()
            release.wait(10)

    sa.event.listen(other.engine, "commit", hold)
    slow = threading.Thread(target=inventories.replace_all, args=(
        other, uuids["cn1"], None, [inventories.Inventory("VCPU", 2)]))
    slow.start()
    third = store_mod.Store(store.conf)
    try:
        assert at_commit.wait(10)
        inventories.replace_all(third, uuids["cn2"], None,
                                [inventories.Inventory("VCPU", 2)])
        assert e.hosts(VCPU3) == {("cn1",)}
        assert e.loads.take() == [[cn2]]
        [gap] = set(e.engine.index.gaps) - old_gaps
    finally:
        release.set()
        slow.join(10)
        sa.event.remove(other.engine, "commit", hold)
        third.dispose()
    assert e.hosts(VCPU3) == set()
    assert e.loads.take() == [[cn1]]
    assert gap not in e.engine.index.gaps


def test_forbidden_traits_follow_trait_changes(store, other, make_engine):
    # Rows with a forbidden trait are kept between searches (every
    # scheduler request forbids COMPUTE_STATUS_DISABLED): any trait
    # write, own or another process's, must reach them.
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)),
                   cn2=ref.Provider(inventory=_vcpu(4)))
    e = make_engine(uuids)
    for forbid in ("group", "root"):
        def without_t1(forbid=forbid):
            group = rq.RequestGroup(
                resources={"VCPU": 1},
                forbidden_traits=(frozenset(["CUSTOM_T1"])
                                  if forbid == "group" else frozenset()))
            return e.hosts(rq.CandidatesRequest(
                groups=(group,),
                root_forbidden=(frozenset(["CUSTOM_T1"])
                                if forbid == "root" else frozenset())))
        assert without_t1() == {("cn1",), ("cn2",)}
        traits.set_for_provider(store, uuids["cn1"], None, ["CUSTOM_T1"])
        assert without_t1() == {("cn2",)}
        traits.set_for_provider(other, uuids["cn2"], None, ["CUSTOM_T1"])
        assert without_t1() == set()
        traits.set_for_provider(store, uuids["cn1"], None, [])
        traits.set_for_provider(other, uuids["cn2"], None, [])
        assert without_t1() == {("cn1",), ("cn2",)}


def test_other_process_usage_keeps_the_derived_structures(
        store, other, make_engine):
    # Another scheduler's claims reach the index as reloads of their
    # providers; usage alone must not throw away what searches derive from
    # trees, traits, aggregates and inventories (nor the scheduler's host
    # row map keyed on the structure version), while any of those must.
    uuids = _cloud(store, cn1=ref.Provider(inventory=_vcpu(4)),
                   cn2=ref.Provider(inventory=_vcpu(4)))
    e = make_engine(uuids)
    index = e.engine.index
    assert e.hosts(VCPU3) == {("cn1",), ("cn2",)}
    forbidden = index.has_any_trait([1])
    version = index.structure_version

    _allocate(other, uuids["cn1"], VCPU=2)
    assert e.hosts(VCPU3) == {("cn2",)}
    assert e.loads.take()[-1] == ("usage", [_id(store, uuids["cn1"])])
    assert index.structure_version == version
    assert index.has_any_trait([1]) is forbidden

    def changes_structure(write, req, expected):
        before = index.structure_version
        write()
        assert e.hosts(req) == expected
        assert index.structure_version > before

    changes_structure(
        lambda: inventories.replace_all(other, uuids["cn2"], None, [
            inventories.Inventory("VCPU", 4, min_unit=4)]),
        VCPU3, set())
    changes_structure(
        lambda: traits.set_for_provider(other, uuids["cn1"], None,
                                        ["CUSTOM_T1"]),
        request({"VCPU": 1}, required=["CUSTOM_T1"]), {("cn1",)})
    changes_structure(
        lambda: aggregates.set_for_provider(other, uuids["cn2"], [AGG]),
        request({"VCPU": 4}, member_of=[AGG]), {("cn2",)})
    changes_structure(
        lambda: providers.update(other, uuids["cn1"], name="renamed"),
        request({"VCPU": 1}, required=["CUSTOM_T1"]), {("cn1",)})
