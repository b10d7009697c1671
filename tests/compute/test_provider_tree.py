"""The provider tree model and the diff between the tree a node wants
and the one placement holds (no database)."""

import uuid

import pytest

from compute.provider_tree import (
    ProviderData,
    ProviderTree,
    ProviderTreeError,
    diff,
)

AGG = str(uuid.uuid4())


def _tree():
    tree = ProviderTree()
    root = tree.new_root("cn1", inventories={"VCPU": 16, "VGPU": 8},
                         traits={"HW_CPU_X86_AVX2"}, aggregates={AGG})
    tree.new_child("cn1-gpu0", root, inventories={"VGPU": 4})
    return tree, root


def _held(tree):
    """``tree`` as placement would hold it: every provider with a
    generation."""
    held = tree.copy()
    for provider in held:
        provider.generation = 1
    return held


def test_inventories_are_stored_with_defaults():
    tree, root = _tree()
    assert tree[root].inventories["VCPU"] == {
        "total": 16, "reserved": 0, "min_unit": 1, "max_unit": 2147483647,
        "step_size": 1, "allocation_ratio": 1.0}


def test_parents_first_and_subtree():
    tree, root = _tree()
    grandchild = tree.new_child("cn1-gpu0-x", "cn1-gpu0")
    assert [p.name for p in tree] == ["cn1", "cn1-gpu0", "cn1-gpu0-x"]
    assert [p.uuid for p in tree.subtree("cn1-gpu0")][-1] == grandchild
    assert tree.roots() == [root]


def test_bad_edits_are_refused():
    tree, root = _tree()
    with pytest.raises(ProviderTreeError, match="already in the tree"):
        tree.new_root("again", uuid=root)
    with pytest.raises(ProviderTreeError, match="no provider 'nope'"):
        tree.new_child("x", "nope")
    orphan = ProviderData(str(uuid.uuid4()), "orphan", str(uuid.uuid4()))
    with pytest.raises(ProviderTreeError, match="parents come first"):
        ProviderTree([orphan])


def test_remove_takes_the_subtree():
    tree, root = _tree()
    tree.new_child("cn1-gpu0-x", "cn1-gpu0")
    tree.remove("cn1-gpu0")
    assert [p.name for p in tree] == ["cn1"]


def test_no_change_is_an_empty_diff():
    tree, _ = _tree()
    # Generations are placement's business, not a difference.
    assert diff(_held(tree), tree).empty


def test_a_new_tree_is_created_parents_first_with_its_fields():
    tree, root = _tree()
    changes = diff(ProviderTree(), tree)
    assert [p.name for p in changes.create] == ["cn1", "cn1-gpu0"]
    assert set(changes.inventories) == {p.uuid for p in tree}
    assert changes.traits == {root: frozenset({"HW_CPU_X86_AVX2"})}
    assert changes.aggregates == {root: frozenset({AGG})}
    assert changes.delete == []


def test_each_field_change_is_seen_alone():
    tree, root = _tree()
    held = _held(tree)
    tree.update_inventories(root, {"VCPU": 32, "VGPU": 8})
    tree.update_traits("cn1-gpu0", {"CUSTOM_GPU"})
    changes = diff(held, tree)
    assert list(changes.inventories) == [root]
    assert changes.inventories[root]["VCPU"]["total"] == 32
    assert changes.traits == {tree["cn1-gpu0"].uuid: {"CUSTOM_GPU"}}
    assert not (changes.create or changes.delete or changes.update
                or changes.aggregates)


def test_an_inventory_field_other_than_total_is_a_change():
    tree, root = _tree()
    held = _held(tree)
    tree.update_inventories(root, {"VCPU": {"total": 16,
                                            "allocation_ratio": 4.0},
                                   "VGPU": 8})
    assert list(diff(held, tree).inventories) == [root]


def test_deletions_come_children_first():
    tree, root = _tree()
    tree.new_child("cn1-gpu0-x", "cn1-gpu0")
    held = _held(tree)
    wanted = tree.copy()
    wanted.remove("cn1-gpu0")
    changes = diff(held, wanted)
    assert changes.delete == [held["cn1-gpu0-x"].uuid,
                              held["cn1-gpu0"].uuid]
    assert not changes.create


def test_rename_and_reparent():
    tree, root = _tree()
    other = tree.new_child("cn1-pf0", root)
    held = _held(tree)
    gpu = tree["cn1-gpu0"]
    wanted = ProviderTree(p.copy() for p in tree if p.uuid != gpu.uuid)
    wanted.add(ProviderData(gpu.uuid, "gpu-zero", other,
                             gpu.inventories))
    changes = diff(held, wanted)
    assert changes.update == {gpu.uuid: ("gpu-zero", other)}
    assert changes.inventories == {}
