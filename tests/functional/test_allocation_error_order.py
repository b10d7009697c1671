"""Which error a replace of allocations gives when a write is wrong in
several ways at once (every engine).

allocations.replace plans (reads, refusing unknown classes and
providers, then each consumer's generation, project, user and type),
checks (what does not fit, row by row in request order), then applies.
These tests pin the precedence that order gives, and that nothing is
written when any step refuses.
"""

import pytest

from placement import errors
from placement.objects import allocations, inventories, resource_classes
from tests.functional import alloc_helpers as h

Inventory = inventories.Inventory
Write = allocations.ConsumerAllocations


@pytest.fixture
def rp(store):
    """A compute node: 8 VCPU, 4096 MB of memory, 100 GB of disk;
    VCPU in steps of 2."""
    return h.provider(store, "cn1", VCPU=Inventory("VCPU", 8, step_size=2),
                      MEMORY_MB=4096, DISK_GB=100)


@pytest.fixture
def placed(store, rp):
    """A consumer at generation 1 using 2 VCPU of ``rp``."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 2}}, generation=None)
    return consumer


def test_unknown_class_before_unknown_provider(store, rp):
    err = h.raises_unchanged(store, errors.ResourceClassNotFound, h.write,
                             h.new_uuid(), {h.new_uuid(): {"VCPU": 1},
                                            rp: {"CUSTOM_NOPE": 1}})
    assert err.name == "CUSTOM_NOPE"


def test_unknown_provider_before_consumer_generation(store, rp, placed):
    ghost = h.new_uuid()
    err = h.raises_unchanged(store, errors.AllocationProviderNotFound,
                             h.write, placed, {ghost: {"VCPU": 2}},
                             generation=7)
    assert err.uuid == ghost


def test_first_unknown_provider_is_named(store, rp):
    first, second = h.new_uuid(), h.new_uuid()
    err = h.raises_unchanged(store, errors.AllocationProviderNotFound,
                             allocations.replace, [
                                 Write(h.new_uuid(), {rp: {"VCPU": 2},
                                                      first: {"VCPU": 2}}),
                                 Write(h.new_uuid(), {second: {"VCPU": 2}})])
    assert err.uuid == first


def test_consumer_generation_before_capacity(store, rp, placed):
    err = h.raises_unchanged(store, errors.ConsumerGenerationConflict,
                             h.write, placed, {rp: {"VCPU": 64}},
                             generation=7)
    assert (err.expected, err.given) == (1, 7)


def test_consumer_generation_before_missing_inventory(store, rp, placed):
    bare = h.provider(store, "bare")
    h.raises_unchanged(store, errors.ConsumerGenerationConflict, h.write,
                       placed, {bare: {"VCPU": 2}}, generation=7)


def test_bad_project_before_capacity(store, rp):
    err = h.raises_unchanged(store, errors.BadRequest, h.write,
                             h.new_uuid(), {rp: {"VCPU": 64}}, project="")
    assert "project_id" in err.message


@pytest.mark.parametrize("bad_first", [True, False])
def test_consumers_are_planned_in_request_order(store, rp, placed,
                                                bad_first):
    """A bad project on one consumer, a stale generation on another: the
    first in the write names the error."""
    bad_project = Write(h.new_uuid(), {rp: {"VCPU": 2}}, "", "u")
    stale = Write(placed, {rp: {"VCPU": 2}}, "p", "u", 7)
    writes = [bad_project, stale] if bad_first else [stale, bad_project]
    expected = (errors.BadRequest if bad_first
                else errors.ConsumerGenerationConflict)
    h.raises_unchanged(store, expected, allocations.replace, writes)


def test_missing_inventory_before_constraints_and_capacity(store, rp):
    bare = h.provider(store, "bare")
    err = h.raises_unchanged(store, errors.InvalidInventory, h.write,
                             h.new_uuid(), {rp: {"VCPU": 3, "DISK_GB": 999},
                                            bare: {"DISK_GB": 1}})
    assert (err.resource_class, err.provider_uuid) == ("DISK_GB, VCPU",
                                                       bare)


@pytest.mark.parametrize("order, expected", [
    (("VCPU", "DISK_GB"), errors.ConstraintsViolated),
    (("DISK_GB", "VCPU"), errors.CapacityExceeded)])
def test_first_row_that_does_not_fit_names_the_error(store, rp, order,
                                                     expected):
    """VCPU 3 breaks the step size, DISK_GB 999 the capacity: the row
    first in the write is the one refused."""
    amounts = {"VCPU": 3, "DISK_GB": 999}
    err = h.raises_unchanged(store, expected, h.write, h.new_uuid(),
                             {rp: {rc: amounts[rc] for rc in order}})
    assert err.resource_class == order[0]


def test_class_missing_on_a_provider_with_inventory(store, rp):
    """A provider with inventory, but not of one class asked, after a
    row that does fit: InvalidInventory for that class."""
    resource_classes.create(store, "CUSTOM_MAGIC")
    err = h.raises_unchanged(store, errors.InvalidInventory, h.write,
                             h.new_uuid(), {rp: {"VCPU": 2,
                                                 "CUSTOM_MAGIC": 1}})
    assert (err.resource_class, err.provider_uuid) == ("CUSTOM_MAGIC", rp)


def test_capacity_counts_the_rewritten_consumer_as_gone(store, rp,
                                                       placed):
    """The check runs before the old rows are deleted, yet counts them
    as gone: 8 VCPU fit on 8 when the consumer held 2 of them."""
    assert h.write(store, placed, {rp: {"VCPU": 8}}, generation=1) == 2
    assert h.resources_of(store, placed) == {rp: {"VCPU": 8}}

