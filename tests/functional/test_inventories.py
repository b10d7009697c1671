"""Inventories: validation, reads and every kind of write (every engine)."""

import logging

import pytest

from placement import errors
from placement.objects import inventories, providers, resource_classes
from tests.functional import objects_helpers as h

Inventory = inventories.Inventory
MAX_INT = inventories.MAX_INT


# Inventory.check (no database)


@pytest.mark.parametrize("field,value", [
    ("total", 0), ("total", -1), ("total", MAX_INT + 1), ("total", 1.0),
    ("total", True), ("total", "4"), ("total", None),
    ("reserved", -1), ("reserved", MAX_INT + 1), ("reserved", 0.5),
    ("reserved", False),
    ("min_unit", 0), ("min_unit", MAX_INT + 1),
    ("max_unit", 0), ("max_unit", MAX_INT + 1),
    ("step_size", 0), ("step_size", -3), ("step_size", MAX_INT + 1),
])
def test_check_integer_fields_out_of_range(field, value):
    """Integer fields outside their range, or not ints, are refused."""
    inv = Inventory("VCPU", **{"total": 10, field: value})
    with pytest.raises(errors.InvalidInventoryValue) as info:
        inv.check("rp-uuid")
    assert field in info.value.message
    assert "rp-uuid" in info.value.message
    assert info.value.http_status == 400


@pytest.mark.parametrize("field,value", [
    ("total", 1), ("total", MAX_INT), ("reserved", 0),
    ("min_unit", 1), ("min_unit", MAX_INT), ("max_unit", 1),
    ("max_unit", MAX_INT), ("step_size", 1), ("step_size", MAX_INT),
])
def test_check_integer_fields_at_bounds(field, value):
    """Both ends of each integer range are accepted."""
    fields = {"total": MAX_INT, field: value}
    Inventory("VCPU", **fields).check("rp-uuid")


@pytest.mark.parametrize("ratio", [
    inventories.MAX_RATIO * 10, 3.4e38, float("inf"), float("-inf"),
    float("nan"), "1.0", None, True])
@pytest.mark.parametrize("reserved", [0, 4])
def test_check_bad_allocation_ratio(ratio, reserved):
    """Ratios that are no number, not finite or above gantt's bound are
    refused as bad values, whatever the capacity would be (negative ones:
    test_inventory_bounds.py)."""
    inv = Inventory("VCPU", 4, reserved=reserved, allocation_ratio=ratio)
    with pytest.raises(errors.InvalidInventoryValue) as info:
        inv.check("rp")
    assert "allocation_ratio" in info.value.message


@pytest.mark.parametrize("ratio", [
    inventories.MAX_RATIO, 16.0, 1, 0.5, 1e-9, 0.0])
def test_check_good_allocation_ratio(ratio):
    """Ints and floats up to gantt's bound are fine."""
    Inventory("VCPU", 4, allocation_ratio=ratio).check("rp")


def test_check_reserved_equal_total():
    """reserved == total is allowed only when reserved_can_be_total."""
    inv = Inventory("VCPU", 4, reserved=4)
    assert inv.capacity == 0
    inv.check("rp", reserved_can_be_total=True)
    with pytest.raises(errors.InvalidInventoryCapacity) as info:
        inv.check("rp", reserved_can_be_total=False)
    assert "greater than or equal to total" in info.value.message
    assert info.value.resource_class == "VCPU"
    assert info.value.provider_uuid == "rp"


@pytest.mark.parametrize("can_be_total", [True, False])
def test_check_reserved_above_total(can_be_total):
    """reserved > total is refused either way."""
    with pytest.raises(errors.InvalidInventoryCapacity) as info:
        Inventory("VCPU", 4, reserved=5).check(
            "rp", reserved_can_be_total=can_be_total)
    relation = ("greater than total" if can_be_total
                else "greater than or equal to total")
    assert relation in info.value.message


def test_check_capacity_counts_ratio():
    """Capacity is (total - reserved) * ratio, rounded down; a ratio that
    leaves no capacity counts as reserved == total."""
    assert Inventory("VCPU", 10, reserved=2,
                     allocation_ratio=1.5).capacity == 12
    assert Inventory("VCPU", 3, allocation_ratio=0.5).capacity == 1
    zero = Inventory("VCPU", 1, allocation_ratio=0.5)
    assert zero.capacity == 0
    zero.check("rp", reserved_can_be_total=True)
    with pytest.raises(errors.InvalidInventoryCapacity):
        zero.check("rp", reserved_can_be_total=False)
    with pytest.raises(errors.InvalidInventoryCapacity):
        Inventory("VCPU", 4, allocation_ratio=-1.0).check("rp")


def test_inventory_defaults():
    """Defaults match OpenStack Placement's."""
    inv = Inventory("VCPU", 8)
    assert inv.values() == {
        "total": 8, "reserved": 0, "min_unit": 1, "max_unit": MAX_INT,
        "step_size": 1, "allocation_ratio": 1.0}
    assert inv.last_modified is None


# reads


@pytest.fixture
def rp(store):
    return providers.create(store, "cn1")


def test_get_all_empty_and_unknown(store, rp):
    """A new provider has no inventory; an unknown one is not found."""
    provider, invs = inventories.get_all(store, rp.uuid)
    assert provider == rp
    assert invs == {}
    with pytest.raises(errors.ResourceProviderNotFound):
        inventories.get_all(store, h.new_uuid())
    with pytest.raises(errors.ResourceProviderNotFound):
        inventories.get_one(store, h.new_uuid(), "VCPU")


def test_round_trip_every_field(store, rp):
    """Every field comes back as written, with its timestamps."""
    written = Inventory("VCPU", 64, reserved=4, min_unit=2, max_unit=16,
                        step_size=2, allocation_ratio=1.5)
    gen, invs = inventories.replace_all(store, rp.uuid, 0, [written])
    assert gen == 1
    provider, inv = inventories.get_one(store, rp.uuid, "VCPU")
    assert provider.generation == 1
    assert inv.values() == written.values()
    assert inv.created_at is not None and inv.updated_at is None
    assert inv.last_modified == inv.created_at
    assert invs == {"VCPU": inv}
    assert isinstance(inv.allocation_ratio, float)


def test_get_one_missing_class(store, rp):
    """A class the provider has no inventory of is InventoryNotFound."""
    h.add_inventory(store, rp.uuid, VCPU=4)
    with pytest.raises(errors.InventoryNotFound) as info:
        inventories.get_one(store, rp.uuid, "DISK_GB")
    assert info.value.resource_class == "DISK_GB"
    assert info.value.provider_uuid == rp.uuid


def test_by_provider(store, rp):
    """by_provider lists only providers that have inventory."""
    other = providers.create(store, "cn2")
    providers.create(store, "empty")
    h.add_inventory(store, rp.uuid, VCPU=4, MEMORY_MB=2048)
    h.add_inventory(store, other.uuid, DISK_GB=100)
    found = inventories.by_provider(store)
    assert set(found) == {rp.uuid, other.uuid}
    assert {rc: inv.total for rc, inv in found[rp.uuid].items()} == {
        "VCPU": 4, "MEMORY_MB": 2048}
    assert found[other.uuid]["DISK_GB"].resource_class == "DISK_GB"


# replace_all


def test_replace_all_adds_updates_deletes(store, rp):
    """One replace adds, changes and removes classes; the generation
    moves by one per write."""
    gen, invs = inventories.replace_all(store, rp.uuid, 0, [
        Inventory("VCPU", 4), Inventory("MEMORY_MB", 1024)])
    assert gen == 1
    assert set(invs) == {"VCPU", "MEMORY_MB"}
    gen, invs = inventories.replace_all(store, rp.uuid, 1, [
        Inventory("VCPU", 8, allocation_ratio=2.0),
        Inventory("DISK_GB", 100)])
    assert gen == 2
    assert {rc: (i.total, i.capacity) for rc, i in invs.items()} == {
        "VCPU": (8, 16), "DISK_GB": (100, 100)}
    assert invs["VCPU"].updated_at is not None
    assert inventories.get_all(store, rp.uuid)[1] == invs
    assert h.generation(store, rp.uuid) == 2


def test_replace_all_same_content_bumps(store, rp):
    """Writing the same inventory again still moves the generation."""
    h.add_inventory(store, rp.uuid, VCPU=4)
    gen, _ = inventories.replace_all(store, rp.uuid, 1,
                                     [Inventory("VCPU", 4)])
    assert gen == 2


def test_replace_all_without_generation(store, rp):
    """No generation: the engine reads it and still bumps by one."""
    gen, _ = inventories.replace_all(store, rp.uuid, None,
                                     [Inventory("VCPU", 4)])
    assert gen == 1
    assert h.generation(store, rp.uuid) == 1


@pytest.mark.parametrize("stale", [1, -1, 3])
def test_replace_all_stale_generation(store, rp, stale):
    """A generation that is not current (older, bogus, ahead) is
    refused; nothing is stored."""
    inventories.replace_all(store, rp.uuid, 0, [Inventory("VCPU", 4)])
    inventories.replace_all(store, rp.uuid, 1, [Inventory("VCPU", 4)])
    exc = h.raises_unchanged(
        store, errors.ResourceProviderGenerationConflict,
        inventories.replace_all, rp.uuid, stale,
        [Inventory("VCPU", 8), Inventory("DISK_GB", 10)])
    assert exc.uuid == rp.uuid
    assert exc.expected == 2
    assert exc.given == stale
    assert exc.code == errors.CONCURRENT_UPDATE
    assert exc.http_status == 409
    assert inventories.get_one(store, rp.uuid, "VCPU")[1].total == 4


def test_replace_all_unknown_provider(store):
    h.raises_unchanged(store, errors.ResourceProviderNotFound,
                       inventories.replace_all, h.new_uuid(), 0,
                       [Inventory("VCPU", 4)])


def test_replace_all_unknown_class(store, rp):
    """An unknown resource class is ResourceClassNotFound; the other
    changes in the same write are not stored."""
    h.add_inventory(store, rp.uuid, VCPU=4)
    exc = h.raises_unchanged(
        store, errors.ResourceClassNotFound, inventories.replace_all,
        rp.uuid, 1, [Inventory("MEMORY_MB", 512),
                     Inventory("CUSTOM_NOPE", 1)])
    assert exc.name == "CUSTOM_NOPE"


def test_replace_all_invalid_record(store, rp):
    """A bad record refuses the whole write."""
    h.add_inventory(store, rp.uuid, VCPU=4)
    h.raises_unchanged(store, errors.InvalidInventoryValue,
                       inventories.replace_all, rp.uuid, 1,
                       [Inventory("VCPU", 8), Inventory("DISK_GB", 0)])
    h.raises_unchanged(store, errors.InvalidInventoryCapacity,
                       inventories.replace_all, rp.uuid, 1,
                       [Inventory("VCPU", 8, reserved=8)],
                       reserved_can_be_total=False)


def test_replace_all_reserved_can_be_total(store, rp):
    """reserved == total is stored by default (microversion 1.26+)."""
    _gen, invs = inventories.replace_all(
        store, rp.uuid, 0, [Inventory("VCPU", 8, reserved=8)])
    assert invs["VCPU"].capacity == 0


def test_replace_all_custom_class(store, rp):
    """Custom classes work once created."""
    resource_classes.create(store, "CUSTOM_GPU")
    _gen, invs = inventories.replace_all(
        store, rp.uuid, 0, [Inventory("CUSTOM_GPU", 2)])
    assert invs["CUSTOM_GPU"].total == 2


def test_replace_all_removing_allocated_class(store, rp):
    """Removing a class still allocated is InventoryInUse naming it."""
    h.add_inventory(store, rp.uuid, VCPU=4, MEMORY_MB=1024, DISK_GB=10)
    h.allocate(store, rp.uuid, VCPU=1, MEMORY_MB=256)
    gen = h.generation(store, rp.uuid)
    exc = h.raises_unchanged(store, errors.InventoryInUse,
                             inventories.replace_all, rp.uuid, gen,
                             [Inventory("DISK_GB", 10)])
    assert exc.resource_classes == ["MEMORY_MB", "VCPU"]
    assert exc.provider_uuid == rp.uuid
    assert exc.code == errors.INVENTORY_INUSE
    # the unallocated class may go
    gen, invs = inventories.replace_all(store, rp.uuid, gen, [
        Inventory("VCPU", 4), Inventory("MEMORY_MB", 1024)])
    assert set(invs) == {"VCPU", "MEMORY_MB"}


def test_lower_total_below_usage(store, rp, caplog):
    """Lowering a total below what is allocated is allowed (with a
    warning); the allocations stay."""
    h.add_inventory(store, rp.uuid, VCPU=8)
    h.allocate(store, rp.uuid, VCPU=6)
    gen = h.generation(store, rp.uuid)
    with caplog.at_level(logging.WARNING, "placement.objects.inventories"):
        new_gen, invs = inventories.replace_all(
            store, rp.uuid, gen, [Inventory("VCPU", 2)])
    assert new_gen == gen + 1
    assert invs["VCPU"].total == 2
    assert "over capacity" in caplog.text
    new_gen, inv = inventories.update(store, rp.uuid, Inventory("VCPU", 3),
                                      generation=new_gen)
    assert inv.total == 3


def test_delete_all(store, rp):
    """delete_all empties the inventory and bumps once."""
    h.add_inventory(store, rp.uuid, VCPU=4, DISK_GB=10)
    assert inventories.delete_all(store, rp.uuid, 1) == 2
    assert inventories.get_all(store, rp.uuid)[1] == {}
    assert inventories.delete_all(store, rp.uuid) == 3


def test_delete_all_in_use(store, rp):
    h.add_inventory(store, rp.uuid, VCPU=4, DISK_GB=10)
    h.allocate(store, rp.uuid, DISK_GB=1)
    exc = h.raises_unchanged(store, errors.InventoryInUse,
                             inventories.delete_all, rp.uuid)
    assert exc.resource_classes == ["DISK_GB"]


def test_delete_all_stale_generation(store, rp):
    h.add_inventory(store, rp.uuid, VCPU=4)
    h.raises_unchanged(store, errors.ResourceProviderGenerationConflict,
                       inventories.delete_all, rp.uuid, 0)


# add


def test_add(store, rp):
    """add() stores a new class and bumps once, with or without a
    generation."""
    inv = inventories.add(store, rp.uuid, Inventory("VCPU", 4, reserved=1))
    assert (inv.resource_class, inv.total, inv.reserved) == ("VCPU", 4, 1)
    assert h.generation(store, rp.uuid) == 1
    inventories.add(store, rp.uuid, Inventory("DISK_GB", 10), generation=1)
    assert h.generation(store, rp.uuid) == 2
    assert set(inventories.get_all(store, rp.uuid)[1]) == {"VCPU", "DISK_GB"}


def test_add_existing_class(store, rp):
    """add() of a class the provider has is ConcurrentUpdate (not a
    generation conflict)."""
    h.add_inventory(store, rp.uuid, VCPU=4)
    exc = h.raises_unchanged(store, errors.ConcurrentUpdate,
                             inventories.add, rp.uuid, Inventory("VCPU", 8))
    assert not isinstance(exc, errors.ResourceProviderGenerationConflict)
    assert exc.code == errors.CONCURRENT_UPDATE


def test_add_errors(store, rp):
    """Stale generation, unknown class, bad values, unknown provider."""
    h.add_inventory(store, rp.uuid, VCPU=4)
    h.raises_unchanged(store, errors.ResourceProviderGenerationConflict,
                       inventories.add, rp.uuid, Inventory("DISK_GB", 1),
                       generation=0)
    h.raises_unchanged(store, errors.ResourceClassNotFound,
                       inventories.add, rp.uuid, Inventory("CUSTOM_X", 1))
    h.raises_unchanged(store, errors.InvalidInventoryValue,
                       inventories.add, rp.uuid,
                       Inventory("DISK_GB", 1, step_size=0))
    h.raises_unchanged(store, errors.InvalidInventoryCapacity,
                       inventories.add, rp.uuid,
                       Inventory("DISK_GB", 1, reserved=1),
                       reserved_can_be_total=False)
    h.raises_unchanged(store, errors.ResourceProviderNotFound,
                       inventories.add, h.new_uuid(),
                       Inventory("DISK_GB", 1))


# update


def test_update(store, rp):
    """update() changes one class, leaves the others, bumps once."""
    h.add_inventory(store, rp.uuid, VCPU=4, DISK_GB=10)
    gen, inv = inventories.update(
        store, rp.uuid, Inventory("VCPU", 16, allocation_ratio=4.0),
        generation=1)
    assert gen == 2
    assert (inv.total, inv.capacity) == (16, 64)
    gen, inv = inventories.update(store, rp.uuid, Inventory("VCPU", 8))
    assert gen == 3
    assert inv.allocation_ratio == 1.0
    invs = inventories.get_all(store, rp.uuid)[1]
    assert {rc: i.total for rc, i in invs.items()} == {
        "VCPU": 8, "DISK_GB": 10}


def test_update_missing_class(store, rp):
    """update() of a class the provider lacks is InventoryNotFound."""
    h.add_inventory(store, rp.uuid, VCPU=4)
    exc = h.raises_unchanged(store, errors.InventoryNotFound,
                             inventories.update, rp.uuid,
                             Inventory("DISK_GB", 10))
    assert exc.resource_class == "DISK_GB"
    assert exc.provider_uuid == rp.uuid


def test_update_errors(store, rp):
    """Stale generation, unknown class, bad values."""
    h.add_inventory(store, rp.uuid, VCPU=4)
    exc = h.raises_unchanged(
        store, errors.ResourceProviderGenerationConflict,
        inventories.update, rp.uuid, Inventory("VCPU", 8), generation=5)
    assert (exc.expected, exc.given) == (1, 5)
    h.raises_unchanged(store, errors.ResourceClassNotFound,
                       inventories.update, rp.uuid, Inventory("CUSTOM_X", 1))
    h.raises_unchanged(store, errors.InvalidInventoryCapacity,
                       inventories.update, rp.uuid,
                       Inventory("VCPU", 4, reserved=5))


# delete


def test_delete_one(store, rp):
    """delete() removes one class and bumps once."""
    h.add_inventory(store, rp.uuid, VCPU=4, DISK_GB=10)
    assert inventories.delete(store, rp.uuid, "DISK_GB", generation=1) == 2
    assert set(inventories.get_all(store, rp.uuid)[1]) == {"VCPU"}
    assert inventories.delete(store, rp.uuid, "VCPU") == 3
    assert inventories.get_all(store, rp.uuid)[1] == {}


def test_delete_one_errors(store, rp):
    """Missing class, unknown class, allocated class, stale
    generation, unknown provider."""
    h.add_inventory(store, rp.uuid, VCPU=4)
    h.allocate(store, rp.uuid, VCPU=2)
    gen = h.generation(store, rp.uuid)
    exc = h.raises_unchanged(store, errors.InventoryNotFound,
                             inventories.delete, rp.uuid, "DISK_GB")
    assert exc.resource_class == "DISK_GB"
    h.raises_unchanged(store, errors.ResourceClassNotFound,
                       inventories.delete, rp.uuid, "CUSTOM_NOPE")
    exc = h.raises_unchanged(store, errors.InventoryInUse,
                             inventories.delete, rp.uuid, "VCPU")
    assert exc.resource_classes == ["VCPU"]
    h.raises_unchanged(store, errors.ResourceProviderGenerationConflict,
                       inventories.delete, rp.uuid, "VCPU",
                       generation=gen - 1)
    h.raises_unchanged(store, errors.ResourceProviderNotFound,
                       inventories.delete, h.new_uuid(), "VCPU")


def test_inventories_are_per_provider(store, rp):
    """Writes to one provider leave another's inventory and generation
    alone."""
    other = providers.create(store, "cn2")
    h.add_inventory(store, other.uuid, VCPU=2)
    h.add_inventory(store, rp.uuid, VCPU=4)
    inventories.delete_all(store, rp.uuid)
    assert inventories.get_one(store, other.uuid, "VCPU")[1].total == 2
    assert h.generation(store, other.uuid) == 1
