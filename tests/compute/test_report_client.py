"""The report client: a tree flushed to placement with only the writes
that differ, parents created first and children deleted first,
generation conflicts refreshed and retried (embedded placement and the
REST API at 1.39, every engine)."""

import uuid

import pytest

from compute.provider_tree import ProviderTree
from compute.report_client import (
    GenerationConflictError,
    ReportClient,
    ReportError,
)
from tests.compute import report_fixtures
from tests.compute.report_fixtures import (
    CountingPort,
    allocate,
    totals,
)

AGG = str(uuid.uuid4())

# The shared fixtures: the embedded placement and a port on it (two kinds).
placement = report_fixtures.placement
port = report_fixtures.port


def _tree():
    tree = ProviderTree()
    root = tree.new_root("cn1", inventories={"VCPU": 16, "MEMORY_MB": 8192},
                         traits={"HW_CPU_X86_AVX2", "CUSTOM_RACK_A"},
                         aggregates={AGG})
    gpu = tree.new_child("cn1-gpu0", root,
                         inventories={"VGPU": 4, "CUSTOM_GPU_MEM": 16})
    tree.new_child("cn1-gpu0-fn", gpu, inventories={"VGPU": 1})
    return tree, root


def _without_generations(tree):
    copy = tree.copy()
    for provider in copy:
        provider.generation = None
    return copy


def _assert_holds(port, root, tree):
    assert _without_generations(port.read_tree(root)) == tree


def test_a_new_tree_is_created(port):
    tree, root = _tree()
    ReportClient(port).update_from_provider_tree(tree)
    _assert_holds(port, root, tree)


def test_an_unchanged_tree_costs_no_call(port):
    tree, _ = _tree()
    counting = CountingPort(port)
    client = ReportClient(counting)
    client.update_from_provider_tree(tree)
    counting.calls.clear()
    client.update_from_provider_tree(tree.copy())
    assert counting.calls == []


def test_one_change_is_one_write(port):
    tree, root = _tree()
    counting = CountingPort(port)
    client = ReportClient(counting)
    client.update_from_provider_tree(tree)
    counting.calls.clear()
    tree.update_inventories(root, {"VCPU": 32, "MEMORY_MB": 8192})
    client.update_from_provider_tree(tree)
    assert counting.calls == ["set_inventories"]
    _assert_holds(port, root, tree)


def test_children_are_deleted_first(port, placement):
    # Placement refuses to delete a parent before its children: a
    # subtree removed in one report proves the order.
    tree, root = _tree()
    client = ReportClient(port)
    client.update_from_provider_tree(tree)
    tree.remove("cn1-gpu0")
    client.update_from_provider_tree(tree)
    assert [p.name for p in placement.provider_tree(root)] == ["cn1"]


def test_a_new_client_reads_then_writes_only_the_difference(port):
    tree, root = _tree()
    ReportClient(port).update_from_provider_tree(tree)
    counting = CountingPort(port)
    tree.update_traits("cn1-gpu0", {"CUSTOM_GPU_A100"})
    ReportClient(counting).update_from_provider_tree(tree)
    assert counting.writes() == ["ensure_trait", "set_traits"]
    _assert_holds(port, root, tree)


def test_a_concurrent_writer_is_refreshed_and_retried(port, placement):
    tree, root = _tree()
    counting = CountingPort(port)
    client = ReportClient(counting)
    client.update_from_provider_tree(tree)

    def other_writer():
        # Between the client's read and its write, once.
        placement.ensure_trait("CUSTOM_OTHER")
        placement.set_provider_traits(root, {"CUSTOM_OTHER"})
        del counting.before["set_inventories"]
    counting.before["set_inventories"] = other_writer
    counting.calls.clear()
    tree.update_inventories(root, {"VCPU": 8, "MEMORY_MB": 8192})
    client.update_from_provider_tree(tree)
    # The conflict, a fresh read, then the write again; the other
    # writer's traits are replaced by the ones the node wants.
    assert counting.calls.count("set_inventories") == 2
    assert "read_tree" in counting.calls
    _assert_holds(port, root, tree)


def test_a_stale_cache_is_refreshed(port, placement):
    tree, root = _tree()
    client = ReportClient(port)
    client.update_from_provider_tree(tree)
    placement.set_provider_aggregates(root, [])  # behind the client's back
    tree.update_inventories(root, {"VCPU": 8, "MEMORY_MB": 8192})
    client.update_from_provider_tree(tree)
    _assert_holds(port, root, tree)


def test_conflicts_without_end_give_up_after_the_bound(port, placement):
    tree, root = _tree()
    counting = CountingPort(port)
    client = ReportClient(counting, attempts=3)
    client.update_from_provider_tree(tree)
    placement.ensure_trait("CUSTOM_OTHER")

    def other_writer():
        # Every time: a new generation, whatever the traits.
        placement.set_provider_aggregates(root, [str(uuid.uuid4())])
    counting.before["set_inventories"] = other_writer
    counting.calls.clear()
    tree.update_inventories(root, {"VCPU": 8, "MEMORY_MB": 8192})
    with pytest.raises(GenerationConflictError,
                       match=f"tree {root}: .* under 3 attempts"):
        client.update_from_provider_tree(tree)
    assert counting.calls.count("set_inventories") == 3
    assert totals(placement, root)["VCPU"] == 16


def test_a_refusal_names_the_provider(port, placement):
    tree, root = _tree()
    client = ReportClient(port)
    client.update_from_provider_tree(tree)
    gpu = tree["cn1-gpu0"].uuid
    vm = allocate(placement, {gpu: {"VGPU": 2}})
    tree.update_inventories(gpu, {"CUSTOM_GPU_MEM": 16})
    with pytest.raises(ReportError,
                       match=f"provider {gpu} \\(cn1-gpu0\\): set "
                             f"inventories refused"):
        client.update_from_provider_tree(tree)
    assert totals(placement, gpu) == {"VGPU": 4, "CUSTOM_GPU_MEM": 16}
    # The cached copy went with the error: the next report reads again.
    counting = CountingPort(port)
    client.port = counting
    placement.delete_allocations(vm)
    client.update_from_provider_tree(tree)
    assert counting.calls == ["read_tree", "set_inventories"]
    _assert_holds(port, root, tree)


def test_a_rename_and_a_reparent(port, placement):
    tree, root = _tree()
    client = ReportClient(port)
    client.update_from_provider_tree(tree)
    fn = tree["cn1-gpu0-fn"]
    wanted = ProviderTree(p.copy() for p in tree if p.uuid != fn.uuid)
    moved = fn.copy()
    moved.name, moved.parent_uuid = "cn1-fn", root
    wanted.add(moved)
    client.update_from_provider_tree(wanted)
    _assert_holds(port, root, wanted)
