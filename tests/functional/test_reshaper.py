"""The reshaper: inventory and allocations move together, atomically,
with OpenStack Placement's generation arithmetic (every engine)."""

import pytest

from placement import errors
from placement.objects import (
    allocations,
    consumers,
    inventories,
    providers,
    reshaper,
    resource_classes,
    usages,
)
from tests.functional import alloc_helpers as h

Inventory = inventories.Inventory
Write = allocations.ConsumerAllocations


@pytest.fixture
def host(store):
    """A root with VCPU, MEMORY_MB and 4 VGPU, an empty child, and two
    consumers: c1 (VCPU 2, MEMORY_MB 1024, VGPU 1) and c2 (VGPU 2)."""
    root = h.provider(store, "cn1", VCPU=8, MEMORY_MB=4096, VGPU=4)
    child = h.provider(store, "cn1-pgpu0", parent=root)
    c1, c2 = h.new_uuid(), h.new_uuid()
    h.write(store, c1, {root: {"VCPU": 2, "MEMORY_MB": 1024, "VGPU": 1}},
            generation=None)
    h.write(store, c2, {root: {"VGPU": 2}}, generation=None)
    return root, child, c1, c2


def _invs(store, rp):
    return {rc: inv.total for rc, inv in
            inventories.get_all(store, rp)[1].items()}


def _move_vgpu(store, root, child, c1, c2, vgpu_total=4, c2_vgpu=2):
    """The usual reshape: VGPU from the root to the child."""
    return (
        {root: (h.gen(store, root), [Inventory("VCPU", 8),
                                     Inventory("MEMORY_MB", 4096)]),
         child: (h.gen(store, child), [Inventory("VGPU", vgpu_total)])},
        [Write(c1, {root: {"VCPU": 2, "MEMORY_MB": 1024},
                    child: {"VGPU": 1}}, h.PROJECT, h.USER, 1),
         Write(c2, {child: {"VGPU": c2_vgpu}}, h.PROJECT, h.USER, 1)])


def test_move_vgpu_to_child(store, host):
    """VGPU inventory moves from the root to the child and the VGPU
    allocations move with it in the same call."""
    root, child, c1, c2 = host
    reshaper.reshape(store, *_move_vgpu(store, *host))
    assert _invs(store, root) == {"VCPU": 8, "MEMORY_MB": 4096}
    assert _invs(store, child) == {"VGPU": 4}
    assert h.resources_of(store, c1) == {
        root: {"VCPU": 2, "MEMORY_MB": 1024}, child: {"VGPU": 1}}
    assert h.resources_of(store, c2) == {child: {"VGPU": 2}}
    assert usages.for_provider(store, root)[1] == {
        "VCPU": 2, "MEMORY_MB": 1024}
    assert usages.for_provider(store, child)[1] == {"VGPU": 3}
    assert consumers.get(store, c1).generation == 2
    assert consumers.get(store, c2).generation == 2


def test_move_vgpu_generations(store, host):
    """Each provider with a non-empty new inventory moves by two (widen,
    then narrow), plus one when it receives allocations."""
    root, child, _, _ = host
    before = h.gens(store, root, child)
    reshaper.reshape(store, *_move_vgpu(store, *host))
    assert h.gens(store, root, child) == [before[0] + 3, before[1] + 3]


def test_generations_of_every_kind_of_provider(store):
    """OpenStack Placement's arithmetic for every role a provider can
    play: new inventory and no allocations +2; new inventory and
    allocations +3; allocations only +1; an empty new inventory list +1;
    not involved +0. The provider a moved consumer left is not bumped
    for the allocations."""
    resource_classes.create(store, "CUSTOM_SPARE")
    old = h.provider(store, "old", VGPU=2, VCPU=4)
    new = h.provider(store, "new", parent=old)
    disk = h.provider(store, "disk", DISK_GB=100)
    emptied = h.provider(store, "emptied", CUSTOM_SPARE=1)
    idle = h.provider(store, "idle", VCPU=4)
    roles = {"old": old, "new": new, "disk": disk, "emptied": emptied,
             "idle": idle}
    consumer = h.new_uuid()
    h.write(store, consumer, {old: {"VGPU": 2}, disk: {"DISK_GB": 10}})
    before = {k: h.gen(store, v) for k, v in roles.items()}
    reshaper.reshape(store, {
        old: (h.gen(store, old), [Inventory("VCPU", 4)]),
        new: (h.gen(store, new), [Inventory("VGPU", 2)]),
        emptied: (h.gen(store, emptied), []),
    }, [Write(consumer, {new: {"VGPU": 2}, disk: {"DISK_GB": 10}},
              h.PROJECT, h.USER, 1)])
    moved = {k: h.gen(store, v) - before[k] for k, v in roles.items()}
    assert moved == {"old": 2, "new": 3, "disk": 1, "emptied": 1,
                     "idle": 0}
    assert _invs(store, emptied) == {}
    assert _invs(store, old) == {"VCPU": 4}
    assert h.resources_of(store, consumer) == {
        new: {"VGPU": 2}, disk: {"DISK_GB": 10}}


def test_consumer_emptied_by_reshape(store, host):
    """A consumer written with no allocations in a reshape is removed and
    its old providers move, as in an allocation write."""
    root, child, c1, c2 = host
    before = h.gens(store, root, child)
    reshaper.reshape(store, {
        child: (h.gen(store, child), [Inventory("VGPU", 4)])},
        [Write(c2, {}, h.PROJECT, h.USER, 1),
         Write(c1, {root: {"VCPU": 2, "MEMORY_MB": 1024, "VGPU": 1}},
               h.PROJECT, h.USER, 1)])
    # root: allocations of c1 (+1); child: widen, narrow (+2).
    assert h.gens(store, root, child) == [before[0] + 1, before[1] + 2]
    with pytest.raises(errors.ConsumerNotFound):
        consumers.get(store, c2)
    assert usages.for_provider(store, root)[1]["VGPU"] == 1


def test_inventory_only_reshape(store, host):
    """A reshape with no allocations only replaces inventories; classes
    still allocated must stay."""
    root, child, _, _ = host
    reshaper.reshape(store, {
        root: (h.gen(store, root), [Inventory("VCPU", 16),
                                    Inventory("MEMORY_MB", 4096),
                                    Inventory("VGPU", 3)]),
        child: (h.gen(store, child), [Inventory("DISK_GB", 50)])}, [])
    assert _invs(store, root) == {"VCPU": 16, "MEMORY_MB": 4096, "VGPU": 3}
    assert _invs(store, child) == {"DISK_GB": 50}


def test_changeset_of_reshape(store, host):
    """The listener gets the inventory providers and the usage moved."""
    root, child, _, _ = host
    recorder = h.Recorder(store)
    reshaper.reshape(store, *_move_vgpu(store, *host))
    recorder.close()
    [changes] = recorder.changes
    vgpu = h.rc_id(store, "VGPU")
    assert changes.providers == {h.rp_id(store, root),
                                 h.rp_id(store, child)}
    assert changes.usage == {(h.rp_id(store, root), vgpu): -3,
                             (h.rp_id(store, child), vgpu): 3}


# failures: nothing changes


def test_stale_generation(store, host):
    """A stale provider generation: ResourceProviderGenerationConflict
    with the actual and given values, and nothing changed."""
    root, child, c1, c2 = host
    new_invs, writes = _move_vgpu(store, *host)
    stale = h.gen(store, child) - 1
    new_invs[child] = (stale, new_invs[child][1])
    err = h.raises_unchanged(store,
                             errors.ResourceProviderGenerationConflict,
                             reshaper.reshape, new_invs, writes)
    assert (err.uuid, err.expected, err.given) == (
        child, h.gen(store, child), stale)
    assert err.code == errors.CONCURRENT_UPDATE


def test_generation_moved_before_reshape(store, host):
    """Generations read, then moved by another write, make the reshape
    fail as stale."""
    root, _, _, _ = host
    args = _move_vgpu(store, *host)
    h.write(store, h.new_uuid(), {root: {"VCPU": 1}})
    h.raises_unchanged(store, errors.ResourceProviderGenerationConflict,
                       reshaper.reshape, *args)


def test_unknown_provider(store, host):
    """An unknown provider in the inventories: ResourceProviderNotFound."""
    new_invs, writes = _move_vgpu(store, *host)
    new_invs[h.new_uuid()] = (0, [Inventory("VCPU", 1)])
    h.raises_unchanged(store, errors.ResourceProviderNotFound,
                       reshaper.reshape, new_invs, writes)


def test_final_inventory_drops_allocated_class(store, host):
    """A final inventory without a class that is still allocated (c2's
    VGPU was not moved): InventoryInUse, nothing changed."""
    root, child, c1, c2 = host
    new_invs, writes = _move_vgpu(store, *host)
    err = h.raises_unchanged(store, errors.InventoryInUse,
                             reshaper.reshape, new_invs, writes[:1])
    assert (err.resource_classes, err.provider_uuid) == (["VGPU"], root)
    assert err.code == errors.INVENTORY_INUSE


def test_allocations_do_not_fit(store, host):
    """Moved allocations that exceed the new inventory: CapacityExceeded,
    nothing changed."""
    root, child, c1, c2 = host
    err = h.raises_unchanged(
        store, errors.CapacityExceeded, reshaper.reshape,
        *_move_vgpu(store, *host, vgpu_total=2))
    assert (err.resource_class, err.provider_uuid) == ("VGPU", child)


def test_allocation_on_provider_without_inventory(store, host):
    """Allocations moved to a provider that gets no such inventory:
    InvalidInventory, nothing changed."""
    root, child, c1, c2 = host
    new_invs, writes = _move_vgpu(store, *host)
    del new_invs[child]
    h.raises_unchanged(store, errors.InvalidInventory, reshaper.reshape,
                       new_invs, writes)


def test_invalid_inventory_value(store, host):
    """An inventory record out of range: InvalidInventoryValue."""
    new_invs, writes = _move_vgpu(store, *host)
    child = host[1]
    new_invs[child] = (new_invs[child][0], [Inventory("VGPU", 0)])
    h.raises_unchanged(store, errors.InvalidInventoryValue,
                       reshaper.reshape, new_invs, writes)


def test_reserved_equal_total(store, host):
    """reserved == total is refused when reserved_can_be_total is off."""
    root, child, c1, c2 = host
    new_invs = {child: (h.gen(store, child), [
        Inventory("DISK_GB", 5, reserved=5)])}
    h.raises_unchanged(store, errors.InvalidInventoryCapacity,
                       reshaper.reshape, new_invs, [],
                       reserved_can_be_total=False)
    reshaper.reshape(store, new_invs, [])
    assert _invs(store, child) == {"DISK_GB": 5}


def test_consumer_generation_conflict(store, host):
    """A stale consumer generation in the writes fails the reshape."""
    new_invs, writes = _move_vgpu(store, *host)
    writes[1] = Write(writes[1].consumer_uuid, writes[1].allocations,
                      h.PROJECT, h.USER, 5)
    err = h.raises_unchanged(store, errors.ConsumerGenerationConflict,
                             reshaper.reshape, new_invs, writes)
    assert (err.expected, err.given) == (1, 5)


def test_unknown_class_in_inventory(store, host):
    """An inventory of a class that does not exist:
    ResourceClassNotFound."""
    new_invs, writes = _move_vgpu(store, *host)
    child = host[1]
    new_invs[child] = (new_invs[child][0], [Inventory("VGPU", 4),
                                            Inventory("CUSTOM_NOPE", 1)])
    h.raises_unchanged(store, errors.ResourceClassNotFound,
                       reshaper.reshape, new_invs, writes)


def test_reshape_result_matches_provider_reads(store, host):
    """The providers read back after a reshape agree with the usage and
    inventory reads (no stale state is left in caches)."""
    root, child, _, _ = host
    reshaper.reshape(store, *_move_vgpu(store, *host))
    tree = {rp.uuid for rp in providers.tree(store, root)}
    assert tree == {root, child}
    assert usages.by_provider(store) == {
        root: {"VCPU": 2, "MEMORY_MB": 1024}, child: {"VGPU": 3}}
