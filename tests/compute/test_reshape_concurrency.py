"""A reshape running while schedulers claim on the same providers (issue
25, item 4), with real processes on every database engine.

Three compute nodes hold VGPU=8 flat on their root provider. Three
scheduler processes (the real Scheduler, claims included) place VGPU
instances one at a time while a reshaper process (the report client,
as a compute node would run it) moves each root's VGPU to two children
of VGPU=4, letting the client's first-fit place the allocations. Then
each scheduler makes one more decision on the caches it has.

Whatever the interleaving: no provider over its capacity, every
instance a scheduler reported placed (and did not delete again) still
holds VGPU 1 on a child of its node and its VCPU/MEMORY_MB/DISK_GB on
the root, nothing else is allocated, every node reshaped, and the
decisions made after the reshape claimed VGPU on a child (the
schedulers' caches picked the new tree up).
"""

import collections
import multiprocessing
import uuid as uuidlib

import pytest

from compute.placement_port import DirectPort
from compute.report_client import ReportClient
from compute.reshape import Move
from placement import direct
from tests import workers
from tests.compute import concurrency_workers as cw
from tests.functional import alloc_helpers as h
from tests.scheduler import cloud as cloud_mod

NODES = 3
SCHEDULERS = 3
# Per node, ratio 1 everywhere: room for 8 VGPU instances (VGPU is the
# scarce class: VCPU, memory and disk hold 16 or more of the flavor).
VCPUS, MEMORY_MB, DISK_GB, VGPU = 16, 16384, 200, 8
CHILD_VGPU = 4  # two children per node take the root's 8
# Each scheduler holds at most this many instances while the reshape
# runs (deleting its oldest to place another), then places one more:
# 3 x (6 + 1) = 21 of the 24 VGPU, so every request fits.
MAX_LIVE = 6
FLAVOR = cw.VGPU_FLAVOR


def _uuid(name):
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, "reshape-race-" + name))


@pytest.mark.slow
def test_reshape_while_schedulers_claim(store, db_url, engine_name):
    cloud = cloud_mod.Cloud(store)
    placement = direct.PlacementDirect(store)
    roots = {}
    for i in range(NODES):
        name = f"rn{i}"
        root = cloud_mod.add_host(cloud, placement, name, vcpus=VCPUS,
                                  memory_mb=MEMORY_MB, disk_gb=DISK_GB)
        placement.set_inventories(root, {
            "VCPU": {"total": VCPUS, "allocation_ratio": 1.0},
            "MEMORY_MB": {"total": MEMORY_MB, "allocation_ratio": 1.0},
            "DISK_GB": {"total": DISK_GB, "allocation_ratio": 1.0},
            "VGPU": {"total": VGPU, "allocation_ratio": 1.0}})
        roots[root] = [(f"{name}-gpu{j}", _uuid(f"{name}-gpu{j}"),
                        CHILD_VGPU) for j in range(2)]
    children = {c[1]: root for root, cs in roots.items() for c in cs}
    node_of = dict(children, **{root: root for root in roots})

    reshaped = multiprocessing.get_context("spawn").Event()
    sched_job = {"max_live": MAX_LIVE, "max_decisions": 400, "pause": 0.02,
                 "reshape_timeout": 90}
    reshape_job = {"nodes": roots, "delay": 0.3, "between": 0.1,
                   "node_timeout": 30}
    args = [(cw.scheduler_worker, db_url, sched_job, reshaped)
            for _ in range(SCHEDULERS)]
    args.append((cw.reshaper_worker, db_url, reshape_job, reshaped))
    reports = workers.run(_dispatch, args, timeout=150)

    crashes = [r["crash"] for r in reports if r["crash"]]
    assert not crashes, "a worker failed:\n" + "\n".join(crashes)
    scheds = [r for r in reports if r["role"] == "scheduler"]
    [reshaper] = [r for r in reports if r["role"] == "reshaper"]
    assert len(scheds) == SCHEDULERS
    assert [r["failures"] for r in scheds] == [[]] * SCHEDULERS

    placed, placed_at, deleted = {}, {}, {}
    for r in scheds:
        placed.update(r["placed"])
        placed_at.update(r["placed_at"])
        deleted.update(r["deleted"])
    start, end = reshaper["window"]
    during = [i for i, t in placed_at.items() if start <= t <= end]
    print(f"\n{engine_name}: {len(placed)} placed, {len(deleted)} deleted "
          f"({len(during)} placed while the reshape ran, "
          f"{sum(r['refused'] for r in scheds)} refused), reshape "
          f"{end - start:.2f} s, attempts per node "
          f"{sorted(reshaper['attempts'].values())}")

    # (3) Every node reshaped: two children of VGPU 4, no VGPU on the
    # root; the root keeps the rest of its inventory.
    for root, kids in roots.items():
        tree = {p.uuid: p for p in placement.provider_tree(root)}
        assert set(tree) == {root} | {c[1] for c in kids}
        for _name, child, total in kids:
            assert tree[child].parent_provider_uuid == root
            _gen, invs = placement.get_inventories(child)
            assert {rc: inv.total for rc, inv in invs.items()} == {
                "VGPU": total}
        _gen, invs = placement.get_inventories(root)
        assert {rc: inv.total for rc, inv in invs.items()} == {
            "VCPU": VCPUS, "MEMORY_MB": MEMORY_MB, "DISK_GB": DISK_GB}

    # (1) No provider over capacity, from the tables; capacities as set
    # up (ratio 1, nothing reserved).
    state = h.usage_and_capacity(store)
    expected_capacity = {}
    for root, kids in roots.items():
        expected_capacity.update({(root, "VCPU"): VCPUS,
                                  (root, "MEMORY_MB"): MEMORY_MB,
                                  (root, "DISK_GB"): DISK_GB})
        expected_capacity.update({(c[1], "VGPU"): c[2] for c in kids})
    assert {k: cap for k, (_u, cap) in state.items()} == expected_capacity
    for key, (used, capacity) in state.items():
        assert used <= capacity, (key, used, capacity)

    # (2) Nothing lost, nothing extra: every instance reported placed
    # (and not deleted again by its scheduler) holds VGPU 1 on a child of
    # its node and the flavor's VCPU/MEMORY_MB/DISK_GB on its root;
    # deleted ones hold nothing; the usage is their sum.
    for instance in deleted:
        assert not placement.get_allocations(instance).allocations, instance
    expected_usage = collections.Counter()
    for instance, node in placed.items():
        if instance in deleted:
            continue
        held = {rp: dict(a.resources) for rp, a in
                placement.get_allocations(instance).allocations.items()}
        vgpu = {rp: r["VGPU"] for rp, r in held.items() if "VGPU" in r}
        assert list(vgpu.values()) == [1], (instance, held)
        [vgpu_rp] = vgpu
        assert node_of.get(vgpu_rp) == node, (instance, node, held)
        assert vgpu_rp != node, (instance, "VGPU left on the root", held)
        assert held[node] == {"VCPU": FLAVOR["vcpus"],
                              "MEMORY_MB": FLAVOR["memory_mb"],
                              "DISK_GB": FLAVOR["root_gb"]}, (instance, held)
        assert set(held) == {node, vgpu_rp}, (instance, held)
        expected_usage[(vgpu_rp, "VGPU")] += 1
        expected_usage[(node, "VCPU")] += FLAVOR["vcpus"]
        expected_usage[(node, "MEMORY_MB")] += FLAVOR["memory_mb"]
        expected_usage[(node, "DISK_GB")] += FLAVOR["root_gb"]
    assert {k: used for k, (used, _cap) in state.items() if used} == dict(
        expected_usage)

    # (4) The decisions made after the reshape, on the caches each
    # scheduler had: each placed one instance, VGPU on a child.
    after = [i for r in scheds for i in r["after"]]
    assert len(after) == SCHEDULERS, [r["refused"] for r in scheds]
    for instance in after:
        rps = placement.get_allocations(instance).allocations
        assert any(rp in children for rp in rps), (instance, list(rps))

    # The processes really raced: placements landed while the reshape
    # was under way.
    assert during, (start, end, sorted(placed_at.values()))
    cloud.close()


def _dispatch(target, *args):
    """workers.run starts one target for all; each entry names its
    own."""
    target(*args)


class _DeletingPort(DirectPort):
    """A DirectPort that deletes ``victim`` right after the first read of
    a provider's allocations: the interleaving the race test met, where
    an instance goes away between the reshape's two reads."""

    def __init__(self, placement, victim):
        super().__init__(placement)
        self.victim = victim

    def provider_consumers(self, uuid):
        found = super().provider_consumers(uuid)
        if self.victim is not None:
            self.placement.delete_allocations(self.victim)
            self.victim = None
        return found


def test_consumer_deleted_while_the_reshape_reads(sqlite_store):
    """The consumer read after the providers' allocations has none on
    the source any more: the client starts over from a fresh read (it
    used to fail with a KeyError in the plan) and the deleted consumer
    stays deleted."""
    placement = direct.PlacementDirect(sqlite_store)
    root = _uuid("solo")
    placement.create_provider("solo", uuid=root)
    placement.set_inventories(root, {"VCPU": 8, "VGPU": VGPU})
    kept, gone = _uuid("kept"), _uuid("gone")
    for consumer in (kept, gone):
        placement.put_allocations(consumer, {root: {"VGPU": 1, "VCPU": 1}},
                                  project_id="p", user_id="u",
                                  consumer_generation=None)
    kids = [(f"solo-gpu{j}", _uuid(f"solo-gpu{j}"), CHILD_VGPU)
            for j in range(2)]
    port = _DeletingPort(placement, gone)
    tree = cw.wanted_tree(port.read_tree(root), root, kids)
    ReportClient(port).update_from_provider_tree(
        tree, moves=[Move(root, uuid, {"VGPU": total})
                     for _n, uuid, total in kids])
    assert not placement.get_allocations(gone).allocations
    held = {rp: dict(a.resources) for rp, a in
            placement.get_allocations(kept).allocations.items()}
    assert held == {root: {"VCPU": 1}, kids[0][1]: {"VGPU": 1}}


@pytest.mark.parametrize("engine_name", ["postgresql", "mysql"])
def _flat_node_with_a_child(placement, name):
    root = _uuid(name)
    placement.create_provider(name, uuid=root)
    placement.set_inventories(root, {"VCPU": 8, "VGPU": VGPU})
    gpu = _uuid(name + "-gpu0")
    placement.create_provider(name + "-gpu0", uuid=gpu, parent_uuid=root)
    generations = {root: placement.get_inventories(root)[0],
                   gpu: placement.get_inventories(gpu)[0]}
    return root, gpu, generations


def _claim(placement, consumer, root):
    placement.put_allocations(consumer, {root: {"VGPU": 1}},
                              project_id="p", user_id="u",
                              consumer_generation=None)


def test_claim_committed_before_the_reshape_is_a_conflict(store):
    """A claim that committed after the client read the tree makes the
    reshape a generation conflict (the client reads afresh and tries
    again), with nothing changed."""
    from placement import errors

    placement = direct.PlacementDirect(store)
    root, gpu, generations = _flat_node_with_a_child(placement, "before")
    _claim(placement, _uuid("early"), root)
    with pytest.raises(errors.PlacementError) as refused:
        placement.reshape({root: (generations[root], {"VCPU": 8}),
                           gpu: (generations[gpu], {"VGPU": VGPU})}, [])
    assert isinstance(refused.value, errors.ConcurrentUpdate), repr(
        refused.value)
    assert placement.get_inventories(root)[1]["VGPU"].total == VGPU
    assert placement.get_inventories(gpu)[1] == {}


def test_claim_racing_the_reshape_waits_and_is_refused(store, monkeypatch):
    """A claim on the source made while POST /reshaper runs (its own
    connection, after the reshape checked the generations: the
    interleaving the race test meets now and then on PostgreSQL and
    MySQL) must not commit in between and turn the reshape into
    "inventory in use". It waits for the reshape, then finds the root
    without VGPU and is refused; the reshape goes through."""
    import threading
    import time

    from placement import errors
    from placement.objects import inventories

    placement = direct.PlacementDirect(store)
    root, gpu, generations = _flat_node_with_a_child(placement, "during")
    outcome = {}
    real_get_all = inventories.get_all

    def claim_in_another_thread():
        try:
            _claim(placement, _uuid("late"), root)
            outcome["claim"] = "placed"
        except errors.PlacementError as refusal:
            outcome["claim"] = refusal

    claimer = threading.Thread(target=claim_in_another_thread)

    def get_all_while_a_claim_runs(db, uuid):
        if claimer.ident is None:  # once: the first read in the reshape
            claimer.start()
            # Time enough for the claim to commit, were it not held off.
            time.sleep(1.0)
        return real_get_all(db, uuid)

    monkeypatch.setattr(inventories, "get_all", get_all_while_a_claim_runs)
    placement.reshape({root: (generations[root], {"VCPU": 8}),
                       gpu: (generations[gpu], {"VGPU": VGPU})}, [])
    monkeypatch.undo()
    claimer.join(timeout=60)
    assert not claimer.is_alive()
    assert isinstance(outcome["claim"], errors.PlacementError), outcome
    assert "VGPU" not in placement.get_inventories(root)[1]
    assert placement.get_inventories(gpu)[1]["VGPU"].total == VGPU
    assert placement.get_allocations(_uuid("late")).allocations == {}
