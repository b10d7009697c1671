"""Allocations: replace, reads, delete, generations and the change
notifications of every write (every engine)."""

import uuid as uuidlib

import pytest

from placement import errors
from placement.objects import (
    allocations,
    consumers,
    inventories,
    providers,
    resource_classes,
    usages,
)
from tests.functional import alloc_helpers as h

Inventory = inventories.Inventory
Write = allocations.ConsumerAllocations
MAX_INT = inventories.MAX_INT
INCOMPLETE = "00000000-0000-0000-0000-000000000000"


@pytest.fixture
def rp(store):
    """A compute node: 8 VCPU, 4096 MB of memory, 100 GB of disk."""
    return h.provider(store, "cn1", VCPU=8, MEMORY_MB=4096, DISK_GB=100)


@pytest.fixture
def rp2(store):
    return h.provider(store, "cn2", VCPU=8, MEMORY_MB=4096, DISK_GB=100)


# replace: the happy paths


def test_first_write_creates_consumer(store, rp):
    """A first write stores the allocations and creates the consumer at
    generation 1 with its project and user."""
    consumer = h.new_uuid()
    result = allocations.replace(store, [Write(
        consumer, {rp: {"VCPU": 2, "MEMORY_MB": 1024}}, "proj", "usr",
        consumer_generation=None)])
    assert result == {consumer: 1}
    view = allocations.for_consumer(store, consumer)
    assert view.consumer.uuid == consumer
    assert view.consumer.generation == 1
    assert view.consumer.project_id == "proj"
    assert view.consumer.user_id == "usr"
    assert view.consumer.consumer_type is None
    assert list(view.allocations) == [rp]
    assert view.allocations[rp].resources == {"VCPU": 2, "MEMORY_MB": 1024}
    assert view.allocations[rp].generation == h.gen(store, rp)
    assert view.last_modified is not None


@pytest.mark.parametrize("form", ["upper", "hex", "object"])
def test_consumer_uuid_is_canonicalised(store, rp, form):
    """A consumer uuid given in capitals, as hex or as a UUID object is
    stored and returned dashed and lower case."""
    value = uuidlib.uuid4()
    given = {"upper": str(value).upper(), "hex": value.hex,
             "object": value}[form]
    result = allocations.replace(store, [Write(given, {rp: {"VCPU": 1}},
                                               "p", "u")])
    assert result == {str(value): 1}
    assert consumers.get(store, str(value)).uuid == str(value)


def test_malformed_consumer_uuid(store, rp):
    """A consumer uuid that is no uuid is a BadRequest; nothing moves."""
    err = h.raises_unchanged(store, errors.BadRequest, allocations.replace,
                             [Write("not-a-uuid", {rp: {"VCPU": 1}},
                                    "p", "u")])
    assert "not-a-uuid" in err.message


def test_several_consumers_in_one_write(store, rp, rp2):
    """One write creates several consumers over several providers; each
    provider moves once, however many consumers it serves."""
    a, b, c = h.new_uuid(), h.new_uuid(), h.new_uuid()
    before = h.gens(store, rp, rp2)
    result = allocations.replace(store, [
        Write(a, {rp: {"VCPU": 1}}, "p", "u", None),
        Write(b, {rp: {"VCPU": 2}, rp2: {"DISK_GB": 10}}, "p", "u", None),
        Write(c, {rp2: {"MEMORY_MB": 512}}, "p2", "u2", None),
    ])
    assert result == {a: 1, b: 1, c: 1}
    assert h.gens(store, rp, rp2) == [before[0] + 1, before[1] + 1]
    assert h.resources_of(store, a) == {rp: {"VCPU": 1}}
    assert h.resources_of(store, b) == {rp: {"VCPU": 2},
                                        rp2: {"DISK_GB": 10}}
    assert h.resources_of(store, c) == {rp2: {"MEMORY_MB": 512}}
    assert consumers.get(store, c).project_id == "p2"


def test_many_consumers_in_one_write(store):
    """A write of more rows than one INSERT statement carries (several
    chunks) stores every row, and a rewrite replaces them all."""
    rp = h.provider(store, "big", VCPU=8, MEMORY_MB=8192, DISK_GB=1000)
    many = [h.new_uuid() for _ in range(230)]
    result = allocations.replace(store, [
        Write(c, {rp: {"MEMORY_MB": 16, "DISK_GB": 1}}, "p", "u", None)
        for c in many])
    assert result == dict.fromkeys(many, 1)
    assert h.count_rows(store, h.tables.allocations) == 460
    assert usages.for_provider(store, rp)[1] == {
        "VCPU": 0, "MEMORY_MB": 230 * 16, "DISK_GB": 230}
    allocations.replace(store, [Write(c, {rp: {"VCPU": 1}} if i < 8 else {},
                                      "p", "u", 1)
                                for i, c in enumerate(many)])
    assert usages.by_provider(store) == {rp: {"VCPU": 8}}
    assert h.count_rows(store, h.tables.consumers) == 8


def test_empty_list_of_writes(store, rp):
    """Writing no consumers at all changes nothing and returns {}."""
    before = h.snapshot(store)
    assert allocations.replace(store, []) == {}
    assert h.snapshot(store) == before


def test_replace_is_replace_all(store, rp, rp2):
    """A write replaces every allocation of the consumer: classes and
    providers it no longer names are gone."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 2, "MEMORY_MB": 1024},
                              rp2: {"DISK_GB": 10}})
    assert h.write(store, consumer, {rp: {"VCPU": 3}}) == 2
    assert h.resources_of(store, consumer) == {rp: {"VCPU": 3}}
    assert usages.for_provider(store, rp)[1] == {
        "VCPU": 3, "MEMORY_MB": 0, "DISK_GB": 0}
    assert usages.for_provider(store, rp2)[1]["DISK_GB"] == 0
    assert h.write(store, consumer, {rp2: {"VCPU": 1}}) == 3
    assert h.resources_of(store, consumer) == {rp2: {"VCPU": 1}}
    assert usages.by_provider(store) == {rp2: {"VCPU": 1}}


def test_replace_leaves_other_consumers_alone(store, rp):
    """Rewriting one consumer does not touch another's allocations."""
    a, b = h.new_uuid(), h.new_uuid()
    h.write(store, a, {rp: {"VCPU": 2}})
    h.write(store, b, {rp: {"VCPU": 3}})
    h.write(store, a, {rp: {"VCPU": 1}})
    assert h.resources_of(store, b) == {rp: {"VCPU": 3}}
    assert usages.for_provider(store, rp)[1]["VCPU"] == 4


def test_empty_write_removes_consumer(store, rp, rp2):
    """Empty allocations remove the consumer's allocations and the
    consumer; the result says None."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 2}, rp2: {"DISK_GB": 5}})
    assert h.write(store, consumer, {}, generation=1) is None
    with pytest.raises(errors.ConsumerNotFound):
        consumers.get(store, consumer)
    assert allocations.for_consumer(store, consumer) == (
        allocations.ConsumerView(None, {}, None))
    assert usages.by_provider(store) == {}
    assert h.count_rows(store, h.tables.consumers) == 0


def test_empty_write_of_unknown_consumer(store, rp):
    """Empty allocations for a consumer that does not exist create no
    consumer, move nothing and tell no listener (the project and user
    rows may stay, as in OpenStack Placement)."""
    consumer = h.new_uuid()
    before = h.snapshot(store)
    recorder = h.Recorder(store)
    assert h.write(store, consumer, {}, generation=None) is None
    recorder.close()
    assert recorder.changes == []
    after = h.snapshot(store)
    for name in ("projects", "users"):
        del before[name], after[name]
    assert after == before


def test_write_then_rewrite_in_one_write_with_removal(store, rp, rp2):
    """One write can empty one consumer and create another; their shared
    provider moves once."""
    a, b = h.new_uuid(), h.new_uuid()
    h.write(store, a, {rp: {"VCPU": 8}})
    before = h.gen(store, rp)
    result = allocations.replace(store, [
        Write(a, {}, "p", "u", 1),
        Write(b, {rp: {"VCPU": 8}}, "p", "u", None)])
    assert result == {a: None, b: 1}
    assert h.gen(store, rp) == before + 1
    assert h.resources_of(store, b) == {rp: {"VCPU": 8}}
    assert consumers.get_many(store, [a, b]).keys() == {b}


# capacity


@pytest.mark.parametrize("total,reserved,ratio,fits", [
    (4, 0, 1.0, 4),
    (10, 2, 1.0, 8),
    (4, 0, 2.0, 8),
    (3, 0, 1.5, 4),      # 4.5: the fraction does not make a fifth
    (10, 3, 0.5, 3),     # 3.5
    (7, 0, 16.0, 112),
    (5, 5, 1.0, 0),      # everything reserved
])
def test_capacity(store, total, reserved, ratio, fits):
    """Capacity is (total - reserved) * allocation_ratio, fractions
    included: up to it is accepted, one more is refused."""
    rp = h.provider(store, "cn", VCPU=Inventory(
        "VCPU", total, reserved=reserved, allocation_ratio=ratio))
    if fits:
        h.write(store, h.new_uuid(), {rp: {"VCPU": fits}})
    err = h.raises_unchanged(store, errors.CapacityExceeded, h.write,
                             h.new_uuid(), {rp: {"VCPU": 1}})
    assert err.resource_class == "VCPU"
    assert err.provider_uuid == rp
    assert err.requested == 1
    assert err.used == fits
    assert err.capacity == pytest.approx((total - reserved) * ratio)
    assert err.http_status == 409
    assert "would exceed the capacity" in err.message


def test_capacity_in_one_go(store):
    """A single allocation larger than capacity is refused, one of
    exactly the capacity is not."""
    rp = h.provider(store, "cn", VCPU=Inventory("VCPU", 3,
                                                allocation_ratio=1.5))
    err = h.raises_unchanged(store, errors.CapacityExceeded, h.write,
                             h.new_uuid(), {rp: {"VCPU": 5}})
    assert (err.requested, err.used) == (5, 0)
    h.write(store, h.new_uuid(), {rp: {"VCPU": 4}})


def test_capacity_counts_other_consumers(store, rp):
    """Other consumers' usage counts against capacity."""
    h.write(store, h.new_uuid(), {rp: {"VCPU": 6}})
    h.raises_unchanged(store, errors.CapacityExceeded, h.write,
                       h.new_uuid(), {rp: {"VCPU": 3}})
    h.write(store, h.new_uuid(), {rp: {"VCPU": 2}})


def test_rewrite_does_not_count_own_allocations(store, rp):
    """A consumer's current allocations are replaced, not added to: it
    may grow to the whole capacity."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 6}})
    assert h.write(store, consumer, {rp: {"VCPU": 8}}) == 2
    assert h.resources_of(store, consumer) == {rp: {"VCPU": 8}}


def test_two_consumers_in_one_write_exceed_capacity(store, rp):
    """Two consumers that each fit but not together are both refused."""
    a, b = h.new_uuid(), h.new_uuid()
    err = h.raises_unchanged(store, errors.CapacityExceeded,
                             allocations.replace, [
                                 Write(a, {rp: {"VCPU": 5}}, "p", "u"),
                                 Write(b, {rp: {"VCPU": 4}}, "p", "u")])
    assert err.provider_uuid == rp
    assert err.resource_class == "VCPU"
    h.write(store, a, {rp: {"VCPU": 5}})


def test_one_consumer_twice_on_one_provider_class_sums(store, rp, rp2):
    """Amounts of one class on one provider from several consumers of a
    write add up; other providers are checked on their own."""
    a, b = h.new_uuid(), h.new_uuid()
    allocations.replace(store, [
        Write(a, {rp: {"VCPU": 4}, rp2: {"VCPU": 8}}, "p", "u"),
        Write(b, {rp: {"VCPU": 4}}, "p", "u")])
    assert usages.by_provider(store) == {rp: {"VCPU": 8}, rp2: {"VCPU": 8}}


def test_over_capacity_may_keep_or_shrink_not_grow(store):
    """A provider whose inventory was lowered below its usage keeps its
    allocations; they may be rewritten at the same or a smaller size but
    nothing may grow, and new consumers are refused."""
    rp = h.provider(store, "cn", VCPU=8, MEMORY_MB=1000)
    a, b = h.new_uuid(), h.new_uuid()
    h.write(store, a, {rp: {"VCPU": 6, "MEMORY_MB": 100}})
    h.write(store, b, {rp: {"VCPU": 2}})
    inventories.replace_all(store, rp, h.gen(store, rp), [
        Inventory("VCPU", 4), Inventory("MEMORY_MB", 1000)])
    # Same size, and growing another class that has room, are fine.
    assert h.write(store, a, {rp: {"VCPU": 6, "MEMORY_MB": 900}}) == 2
    # Smaller.
    assert h.write(store, a, {rp: {"VCPU": 5, "MEMORY_MB": 900}}) == 3
    # Back up: usage would grow from 7 to 8 over a capacity of 4.
    err = h.raises_unchanged(store, errors.CapacityExceeded, h.write, a,
                             {rp: {"VCPU": 6, "MEMORY_MB": 900}})
    assert (err.resource_class, err.used, err.capacity) == ("VCPU", 2, 4)
    h.raises_unchanged(store, errors.CapacityExceeded, h.write,
                       h.new_uuid(), {rp: {"VCPU": 1}})
    # Moving usage between consumers without growing it is fine.
    allocations.replace(store, [Write(a, {rp: {"VCPU": 4}}, "p", "u"),
                                Write(b, {rp: {"VCPU": 3}}, "p", "u")])
    assert usages.for_provider(store, rp)[1]["VCPU"] == 7
    # Emptying works, and once under capacity the usual rule applies.
    h.write(store, a, {})
    h.write(store, h.new_uuid(), {rp: {"VCPU": 1}})
    h.raises_unchanged(store, errors.CapacityExceeded, h.write,
                       h.new_uuid(), {rp: {"VCPU": 1}})


# min_unit, max_unit, step_size


@pytest.mark.parametrize("field,value,bad,good", [
    ("min_unit", 2, 1, 2),
    ("max_unit", 4, 5, 4),
    ("step_size", 2, 3, 4),
    ("step_size", 3, 4, 6),
])
def test_constraints(store, field, value, bad, good):
    """Amounts below min_unit, above max_unit or off step_size violate the
    inventory's constraints even when capacity would allow them."""
    rp = h.provider(store, "cn", VCPU=Inventory("VCPU", 64,
                                                **{field: value}))
    err = h.raises_unchanged(store, errors.ConstraintsViolated, h.write,
                             h.new_uuid(), {rp: {"VCPU": bad}})
    assert err.resource_class == "VCPU"
    assert err.provider_uuid == rp
    assert "would violate inventory constraints" in err.message
    assert isinstance(err, errors.InvalidInventory)
    h.write(store, h.new_uuid(), {rp: {"VCPU": good}})


def test_amount_beyond_max_int_violates_max_unit(store):
    """An amount larger than any inventory field can hold is refused by
    max_unit even where the capacity is larger still."""
    rp = h.provider(store, "cn", VCPU=Inventory(
        "VCPU", MAX_INT, allocation_ratio=4.0))
    h.raises_unchanged(store, errors.ConstraintsViolated, h.write,
                       h.new_uuid(), {rp: {"VCPU": MAX_INT + 1}})


def test_constraints_checked_per_consumer_not_per_sum(store):
    """Constraints apply to each consumer's amount, not to the sum of a
    write's amounts on a provider."""
    rp = h.provider(store, "cn", VCPU=Inventory("VCPU", 64, max_unit=4))
    allocations.replace(store, [
        Write(h.new_uuid(), {rp: {"VCPU": 4}}, "p", "u"),
        Write(h.new_uuid(), {rp: {"VCPU": 4}}, "p", "u")])
    assert usages.for_provider(store, rp)[1] == {"VCPU": 8}


# inventory missing, unknown provider or class


def test_provider_without_any_requested_class(store, rp):
    """A provider with none of the requested classes: InvalidInventory
    naming every requested class and that provider."""
    bare = h.provider(store, "bare")
    err = h.raises_unchanged(store, errors.InvalidInventory, h.write,
                             h.new_uuid(), {rp: {"VCPU": 1},
                                            bare: {"DISK_GB": 1}})
    assert err.provider_uuid == bare
    assert err.resource_class == "DISK_GB, VCPU"
    assert err.http_status == 409


def test_provider_with_other_classes_only(store):
    """A provider whose inventory holds none of the requested classes is
    reported the same way."""
    rp = h.provider(store, "cn", VCPU=4)
    err = h.raises_unchanged(store, errors.InvalidInventory, h.write,
                             h.new_uuid(), {rp: {"DISK_GB": 1}})
    assert (err.resource_class, err.provider_uuid) == ("DISK_GB", rp)


def test_one_class_missing(store):
    """A provider that has some requested classes but not another:
    InvalidInventory for that one class."""
    rp = h.provider(store, "cn", VCPU=4)
    err = h.raises_unchanged(store, errors.InvalidInventory, h.write,
                             h.new_uuid(), {rp: {"VCPU": 1, "DISK_GB": 1}})
    assert (err.resource_class, err.provider_uuid) == ("DISK_GB", rp)
    assert f"'DISK_GB' on resource provider '{rp}' invalid" in err.message


def test_unknown_provider(store, rp):
    """An allocation against a provider that does not exist:
    AllocationProviderNotFound (400)."""
    ghost = h.new_uuid()
    err = h.raises_unchanged(store, errors.AllocationProviderNotFound,
                             h.write, h.new_uuid(),
                             {rp: {"VCPU": 1}, ghost: {"VCPU": 1}})
    assert err.uuid == ghost
    assert err.http_status == 400
    assert ghost in err.message


def test_unknown_resource_class(store, rp):
    """A class that does not exist: ResourceClassNotFound (404)."""
    err = h.raises_unchanged(store, errors.ResourceClassNotFound, h.write,
                             h.new_uuid(), {rp: {"CUSTOM_NOPE": 1}})
    assert err.name == "CUSTOM_NOPE"
    assert err.http_status == 404


def test_custom_class_created_later(store, rp):
    """A custom class is usable as soon as it exists and has inventory,
    after a write that failed because it did not."""
    h.raises_unchanged(store, errors.ResourceClassNotFound, h.write,
                       h.new_uuid(), {rp: {"CUSTOM_FPGA": 1}})
    resource_classes.create(store, "CUSTOM_FPGA")
    inventories.add(store, rp, Inventory("CUSTOM_FPGA", 2))
    assert h.write(store, h.new_uuid(), {rp: {"CUSTOM_FPGA": 2}}) == 1
    assert usages.for_provider(store, rp)[1]["CUSTOM_FPGA"] == 2


# invalid writes


@pytest.mark.parametrize("amount", [0, -1, 1.5, 2.0, "2", True, None])
def test_invalid_amount(store, rp, amount):
    """Amounts that are not positive integers: InvalidAllocation (400)."""
    err = h.raises_unchanged(store, errors.InvalidAllocation, h.write,
                             h.new_uuid(), {rp: {"VCPU": amount}})
    assert err.http_status == 400
    assert "positive integer" in err.message


def test_no_resources_for_a_provider(store, rp):
    """A provider named with no resources: InvalidAllocation."""
    err = h.raises_unchanged(store, errors.InvalidAllocation, h.write,
                             h.new_uuid(), {rp: {}})
    assert "names no resources" in err.message


def test_invalid_amount_in_second_consumer(store, rp):
    """One invalid consumer fails the whole write: the valid one before
    it is not stored."""
    h.raises_unchanged(store, errors.InvalidAllocation, allocations.replace,
                       [Write(h.new_uuid(), {rp: {"VCPU": 1}}, "p", "u"),
                        Write(h.new_uuid(), {rp: {"VCPU": 0}}, "p", "u")])


@pytest.mark.parametrize("upper", [False, True])
def test_same_consumer_twice(store, rp, upper):
    """A consumer named twice in one write (in any spelling):
    InvalidAllocation."""
    consumer = h.new_uuid()
    again = consumer.upper() if upper else consumer
    err = h.raises_unchanged(store, errors.InvalidAllocation,
                             allocations.replace, [
                                 Write(consumer, {rp: {"VCPU": 1}}, "p", "u"),
                                 Write(again, {rp: {"VCPU": 1}}, "p", "u")])
    assert consumer in err.message


@pytest.mark.parametrize("field,value", [
    ("project_id", ""), ("project_id", "x" * 256), ("user_id", ""),
    ("user_id", 7), ("consumer_type", ""), ("consumer_type", "t" * 256)])
def test_bad_external_ids(store, rp, field, value):
    """Empty, too long or non-string project, user or consumer type:
    BadRequest, nothing stored."""
    fields = {"project_id": "p", "user_id": "u", field: value}
    err = h.raises_unchanged(store, errors.BadRequest, allocations.replace,
                             [Write(h.new_uuid(), {rp: {"VCPU": 1}},
                                    **fields)])
    assert field in err.message


def test_external_ids_of_255_characters(store, rp):
    """255 characters is the longest project, user and type."""
    consumer = h.new_uuid()
    allocations.replace(store, [Write(
        consumer, {rp: {"VCPU": 1}}, "p" * 255, "u" * 255,
        consumer_type="T" * 255)])
    got = consumers.get(store, consumer)
    assert (got.project_id, got.user_id, got.consumer_type) == (
        "p" * 255, "u" * 255, "T" * 255)


# consumers: generations, project, user, type


def test_consumer_generation_moves_on_each_write(store, rp):
    """The consumer starts at generation 1 and moves by one per write."""
    consumer = h.new_uuid()
    assert [h.write(store, consumer, {rp: {"VCPU": n}}, generation=n - 1
                    if n > 1 else None) for n in (1, 2, 3, 4)] == [1, 2, 3, 4]
    assert consumers.get(store, consumer).generation == 4
    view = allocations.for_consumer(store, consumer)
    assert view.consumer.generation == 4


def test_new_consumer_generation_must_be_none(store, rp):
    """A new consumer must be written with generation None (or unchecked);
    an int is a ConsumerGenerationConflict expecting null."""
    consumer = h.new_uuid()
    for given in (0, 1):
        err = h.raises_unchanged(store, errors.ConsumerGenerationConflict,
                                 h.write, consumer, {rp: {"VCPU": 1}},
                                 generation=given)
        assert (err.uuid, err.expected, err.given) == (consumer, None, given)
        assert err.message == (
            f"consumer generation conflict - expected null but got {given}")
        assert err.code == errors.CONCURRENT_UPDATE
        assert err.http_status == 409
    assert h.write(store, consumer, {rp: {"VCPU": 1}}, generation=None) == 1


@pytest.mark.parametrize("given", [None, 0, 2, 5])
def test_existing_consumer_generation_mismatch(store, rp, given):
    """An existing consumer written with another generation than its
    current one (None included): ConsumerGenerationConflict."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}}, generation=None)
    err = h.raises_unchanged(store, errors.ConsumerGenerationConflict,
                             h.write, consumer, {rp: {"VCPU": 2}},
                             generation=given)
    assert (err.expected, err.given) == (1, given)
    assert err.message == (
        f"consumer generation conflict - expected 1 but got {given}")


def test_empty_write_checks_consumer_generation(store, rp):
    """Removing a consumer's allocations checks its generation too."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}})
    h.write(store, consumer, {rp: {"VCPU": 2}})
    h.raises_unchanged(store, errors.ConsumerGenerationConflict, h.write,
                       consumer, {}, generation=1)
    assert h.write(store, consumer, {}, generation=2) is None


def test_generation_conflict_in_second_consumer(store, rp):
    """A conflict on one consumer fails the whole write."""
    a, b = h.new_uuid(), h.new_uuid()
    h.write(store, b, {rp: {"VCPU": 1}})
    h.raises_unchanged(store, errors.ConsumerGenerationConflict,
                       allocations.replace, [
                           Write(a, {rp: {"VCPU": 1}}, "p", "u", None),
                           Write(b, {rp: {"VCPU": 1}}, "p", "u", 7)])


def test_unchecked_generation(store, rp):
    """UNCHECKED skips the check for new and existing consumers."""
    consumer = h.new_uuid()
    assert h.write(store, consumer, {rp: {"VCPU": 1}},
                   generation=h.UNCHECKED) == 1
    assert h.write(store, consumer, {rp: {"VCPU": 2}},
                   generation=h.UNCHECKED) == 2
    assert h.write(store, consumer, {}, generation=h.UNCHECKED) is None


def test_project_and_user_change(store, rp):
    """Rewriting a consumer with another project and user moves it."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}}, project="p1", user="u1")
    first = consumers.get(store, consumer)
    assert first.updated_at is None
    h.write(store, consumer, {rp: {"VCPU": 1}}, project="p2", user="u2")
    got = consumers.get(store, consumer)
    assert (got.project_id, got.user_id) == ("p2", "u2")
    assert got.updated_at is not None
    assert got.created_at == first.created_at
    assert usages.for_project(store, "p1") == {}
    assert usages.for_project(store, "p2", "u2") == {"VCPU": 1}


def test_missing_project_uses_incomplete_consumer_ids(store, rp):
    """No project: the consumer gets the configured incomplete project
    and user (a given user is ignored); a project without a user gets
    the incomplete user."""
    a, b, c = h.new_uuid(), h.new_uuid(), h.new_uuid()
    h.write(store, a, {rp: {"VCPU": 1}}, project=None, user=None)
    h.write(store, b, {rp: {"VCPU": 1}}, project=None, user="alice")
    h.write(store, c, {rp: {"VCPU": 1}}, project="p", user=None)
    got = consumers.get_many(store, [a, b, c])
    assert (got[a].project_id, got[a].user_id) == (INCOMPLETE, INCOMPLETE)
    assert (got[b].project_id, got[b].user_id) == (INCOMPLETE, INCOMPLETE)
    assert (got[c].project_id, got[c].user_id) == ("p", INCOMPLETE)


def test_incomplete_consumer_ids_come_from_config(store, rp):
    """The incomplete project and user are [placement] options."""
    store.conf.set_override("incomplete_consumer_project_id", "lost-p",
                            "placement")
    store.conf.set_override("incomplete_consumer_user_id", "lost-u",
                            "placement")
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}}, project=None, user=None)
    got = consumers.get(store, consumer)
    assert (got.project_id, got.user_id) == ("lost-p", "lost-u")


def test_incomplete_write_moves_existing_consumer(store, rp):
    """An existing consumer rewritten without a project moves to the
    incomplete project, as before microversion 1.8."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}}, project="p", user="u")
    h.write(store, consumer, {rp: {"VCPU": 1}}, project=None, user=None)
    got = consumers.get(store, consumer)
    assert (got.project_id, got.user_id) == (INCOMPLETE, INCOMPLETE)


def test_consumer_type_set_kept_changed(store, rp):
    """consumer_type is set on creation, kept by a write without one and
    changed by a write with another."""
    consumer, untyped = h.new_uuid(), h.new_uuid()
    h.write(store, untyped, {rp: {"VCPU": 1}})
    assert consumers.get(store, untyped).consumer_type is None
    h.write(store, consumer, {rp: {"VCPU": 1}}, consumer_type="INSTANCE")
    assert consumers.get(store, consumer).consumer_type == "INSTANCE"
    h.write(store, consumer, {rp: {"VCPU": 2}})
    assert consumers.get(store, consumer).consumer_type == "INSTANCE"
    h.write(store, consumer, {rp: {"VCPU": 2}}, consumer_type="MIGRATION")
    got = consumers.get(store, consumer)
    assert (got.consumer_type, got.generation) == ("MIGRATION", 3)
    h.write(store, untyped, {rp: {"VCPU": 1}}, consumer_type="INSTANCE")
    assert consumers.get(store, untyped).consumer_type == "INSTANCE"


# provider generations


def test_generations_of_new_allocations(store, rp, rp2):
    """Every provider named in the new allocations moves by one; others
    do not."""
    bystander = h.provider(store, "cn3", VCPU=8)
    before = h.gens(store, rp, rp2, bystander)
    h.write(store, h.new_uuid(), {rp: {"VCPU": 1}, rp2: {"VCPU": 1}})
    assert h.gens(store, rp, rp2, bystander) == [
        before[0] + 1, before[1] + 1, before[2]]


def test_generation_moves_on_identical_rewrite(store, rp):
    """Rewriting the same allocations still moves the provider."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}})
    before = h.gen(store, rp)
    h.write(store, consumer, {rp: {"VCPU": 1}})
    assert h.gen(store, rp) == before + 1


def test_old_providers_of_a_nonempty_replace_do_not_move(store, rp, rp2):
    """Moving a consumer from one provider to another moves only the new
    one, as in OpenStack Placement."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}})
    before = h.gens(store, rp, rp2)
    h.write(store, consumer, {rp2: {"VCPU": 1}})
    assert h.gens(store, rp, rp2) == [before[0], before[1] + 1]


def test_empty_write_moves_old_providers(store, rp, rp2):
    """Emptying a consumer moves every provider it had allocations on."""
    bystander = h.provider(store, "cn3", VCPU=8)
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}, rp2: {"DISK_GB": 1}})
    before = h.gens(store, rp, rp2, bystander)
    h.write(store, consumer, {})
    assert h.gens(store, rp, rp2, bystander) == [
        before[0] + 1, before[1] + 1, before[2]]


def test_mixed_write_generations(store, rp, rp2):
    """Emptying one consumer and moving another in one write: the emptied
    consumer's providers and the new allocations' providers move once
    each; the provider only left behind by the moved consumer does not."""
    rp3 = h.provider(store, "cn3", VCPU=8)
    emptied, moved = h.new_uuid(), h.new_uuid()
    h.write(store, emptied, {rp: {"VCPU": 1}})
    h.write(store, moved, {rp3: {"VCPU": 1}})
    before = h.gens(store, rp, rp2, rp3)
    allocations.replace(store, [Write(emptied, {}, "p", "u"),
                                Write(moved, {rp2: {"VCPU": 1}}, "p", "u")])
    assert h.gens(store, rp, rp2, rp3) == [
        before[0] + 1, before[1] + 1, before[2]]


def test_view_generations_are_current(store, rp, rp2):
    """for_consumer reports each provider's current generation."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}, rp2: {"VCPU": 1}})
    h.write(store, h.new_uuid(), {rp2: {"VCPU": 1}})
    view = allocations.for_consumer(store, consumer)
    assert {u: a.generation for u, a in view.allocations.items()} == {
        rp: h.gen(store, rp), rp2: h.gen(store, rp2)}


# failed writes


def test_failed_rewrite_keeps_previous_state(store, rp, rp2):
    """A failed rewrite of existing consumers leaves their allocations,
    the consumers and every generation as they were."""
    a, b = h.new_uuid(), h.new_uuid()
    h.write(store, a, {rp: {"VCPU": 4}}, consumer_type="INSTANCE")
    h.write(store, b, {rp2: {"VCPU": 2}})
    h.raises_unchanged(store, errors.CapacityExceeded, allocations.replace,
                       [Write(a, {}, "p", "u", 1),
                        Write(b, {rp2: {"VCPU": 9}}, "other", "u", 1,
                              consumer_type="MIGRATION")])
    assert h.resources_of(store, a) == {rp: {"VCPU": 4}}
    assert consumers.get(store, b).project_id == h.PROJECT


# reads


def test_for_consumer_unknown(store):
    """An unknown consumer has an empty view."""
    view = allocations.for_consumer(store, h.new_uuid())
    assert view == allocations.ConsumerView(None, {}, None)


def test_for_consumer_accepts_uuid_object(store, rp):
    """for_consumer takes a UUID object as well as a string."""
    consumer = uuidlib.uuid4()
    h.write(store, str(consumer), {rp: {"VCPU": 1}})
    assert allocations.for_consumer(store, consumer).allocations[
        rp].resources == {"VCPU": 1}


def test_for_consumer_last_modified(store, rp, rp2):
    """last_modified is the newest allocation time, at least the
    consumer's own update time."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}})
    first = allocations.for_consumer(store, consumer).last_modified
    h.write(store, consumer, {rp: {"VCPU": 1}, rp2: {"VCPU": 1}})
    second = allocations.for_consumer(store, consumer)
    assert second.last_modified >= first
    assert second.last_modified == second.consumer.updated_at


def test_for_provider(store, rp, rp2):
    """for_provider lists every consumer's allocations on the provider
    with the consumers' generations."""
    a, b = h.new_uuid(), h.new_uuid()
    h.write(store, a, {rp: {"VCPU": 1, "MEMORY_MB": 256},
                       rp2: {"VCPU": 1}})
    h.write(store, b, {rp: {"DISK_GB": 10}})
    h.write(store, b, {rp: {"DISK_GB": 20}})
    result = allocations.for_provider(store, rp)
    assert result.provider == providers.get(store, rp)
    assert result.allocations == {a: {"VCPU": 1, "MEMORY_MB": 256},
                                  b: {"DISK_GB": 20}}
    assert result.consumer_generations == {a: 1, b: 2}
    assert result.last_modified is not None
    assert allocations.for_provider(store, rp2).allocations == {
        a: {"VCPU": 1}}


def test_for_provider_without_allocations(store, rp):
    """A provider with no allocations: empty maps, no last_modified."""
    result = allocations.for_provider(store, rp)
    assert result.allocations == {}
    assert result.consumer_generations == {}
    assert result.last_modified is None


def test_for_provider_unknown(store):
    """An unknown provider: ResourceProviderNotFound."""
    ghost = h.new_uuid()
    with pytest.raises(errors.ResourceProviderNotFound) as info:
        allocations.for_provider(store, ghost)
    assert info.value.uuid == ghost


# delete_for_consumer


def test_delete_for_consumer(store, rp, rp2):
    """Deleting removes every allocation of the consumer and the consumer,
    moves no generation and leaves other consumers alone."""
    consumer, other = h.new_uuid(), h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 2}, rp2: {"DISK_GB": 5}})
    h.write(store, other, {rp: {"VCPU": 1}})
    before = h.gens(store, rp, rp2)
    allocations.delete_for_consumer(store, consumer)
    assert h.gens(store, rp, rp2) == before
    assert allocations.for_consumer(store, consumer).consumer is None
    with pytest.raises(errors.ConsumerNotFound):
        consumers.get(store, consumer)
    assert usages.by_provider(store) == {rp: {"VCPU": 1}}
    assert h.resources_of(store, other) == {rp: {"VCPU": 1}}


def test_delete_for_consumer_not_found(store, rp):
    """Deleting the allocations of a consumer that has none:
    AllocationsNotFound (404), also after a first delete."""
    consumer = h.new_uuid()
    err = h.raises_unchanged(store, errors.AllocationsNotFound,
                             allocations.delete_for_consumer, consumer)
    assert err.consumer_uuid == consumer
    assert err.http_status == 404
    assert consumer in err.message
    h.write(store, consumer, {rp: {"VCPU": 1}})
    allocations.delete_for_consumer(store, consumer)
    h.raises_unchanged(store, errors.AllocationsNotFound,
                       allocations.delete_for_consumer, consumer)


def test_delete_then_recreate(store, rp):
    """A consumer deleted and written again starts at generation 1."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}})
    h.write(store, consumer, {rp: {"VCPU": 2}})
    allocations.delete_for_consumer(store, consumer)
    assert h.write(store, consumer, {rp: {"VCPU": 1}}, generation=None) == 1


# change notifications


def test_changeset_of_new_allocations(store, rp, rp2):
    """A listener gets the usage added per (provider id, class id)."""
    recorder = h.Recorder(store)
    h.write(store, h.new_uuid(), {rp: {"VCPU": 2, "MEMORY_MB": 512},
                                  rp2: {"VCPU": 1}})
    recorder.close()
    [changes] = recorder.changes
    ids, rcs = h.rp_id, h.rc_id
    assert changes.usage == {
        (ids(store, rp), rcs(store, "VCPU")): 2,
        (ids(store, rp), rcs(store, "MEMORY_MB")): 512,
        (ids(store, rp2), rcs(store, "VCPU")): 1}
    assert changes.providers == set()
    assert changes.deleted == set()
    assert not changes.catalog


def test_changeset_of_rewrites(store, rp, rp2):
    """A rewrite reports net deltas: growth, shrinking, moves between
    providers; unchanged amounts are left out."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 2, "MEMORY_MB": 512,
                                   "DISK_GB": 10}})
    recorder = h.Recorder(store)
    h.write(store, consumer, {rp: {"VCPU": 3, "MEMORY_MB": 512},
                              rp2: {"DISK_GB": 10}})
    h.write(store, consumer, {})
    recorder.close()
    vcpu, disk = h.rc_id(store, "VCPU"), h.rc_id(store, "DISK_GB")
    mem = h.rc_id(store, "MEMORY_MB")
    one, two = h.rp_id(store, rp), h.rp_id(store, rp2)
    assert [c.usage for c in recorder.changes] == [
        {(one, vcpu): 1, (one, disk): -10, (two, disk): 10},
        {(one, vcpu): -3, (one, mem): -512, (two, disk): -10}]


def test_changeset_of_delete(store, rp):
    """delete_for_consumer reports the usage it removed."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 2}})
    recorder = h.Recorder(store)
    allocations.delete_for_consumer(store, consumer)
    recorder.close()
    assert [c.usage for c in recorder.changes] == [
        {(h.rp_id(store, rp), h.rc_id(store, "VCPU")): -2}]


def test_provider_changes_rows(store, rp, rp2):
    """A committed write records the providers whose usage changed."""
    before = h.count_rows(store, h.tables.provider_changes)
    h.write(store, h.new_uuid(), {rp: {"VCPU": 1}, rp2: {"VCPU": 1}})
    assert h.count_rows(store, h.tables.provider_changes) == before + 2
