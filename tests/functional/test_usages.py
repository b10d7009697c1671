"""Usages per provider and per project, user and consumer type (every
engine)."""

import pytest

from placement import errors
from placement.objects import allocations, inventories, providers, usages
from tests.functional import alloc_helpers as h

Write = allocations.ConsumerAllocations


@pytest.fixture
def cloud(store):
    """Two providers and consumers of two projects, users and types.

    project p1: c1 (u1, INSTANCE) VCPU 2 + MEMORY_MB 512 on rp1, DISK_GB
    10 on rp2; c2 (u2, INSTANCE) VCPU 1 on rp2; c3 (u1, MIGRATION)
    VCPU 3 on rp1; c4 (u1, no type) MEMORY_MB 256 on rp2.
    project p2: c5 (u1, INSTANCE) VCPU 4 on rp1.
    """
    rp1 = h.provider(store, "cn1", VCPU=16, MEMORY_MB=4096, DISK_GB=100)
    rp2 = h.provider(store, "cn2", VCPU=16, MEMORY_MB=4096, DISK_GB=100)
    c = [h.new_uuid() for _ in range(5)]
    allocations.replace(store, [
        Write(c[0], {rp1: {"VCPU": 2, "MEMORY_MB": 512},
                     rp2: {"DISK_GB": 10}}, "p1", "u1",
              consumer_type="INSTANCE"),
        Write(c[1], {rp2: {"VCPU": 1}}, "p1", "u2",
              consumer_type="INSTANCE"),
        Write(c[2], {rp1: {"VCPU": 3}}, "p1", "u1",
              consumer_type="MIGRATION"),
        Write(c[3], {rp2: {"MEMORY_MB": 256}}, "p1", "u1"),
        Write(c[4], {rp1: {"VCPU": 4}}, "p2", "u1",
              consumer_type="INSTANCE"),
    ])
    return rp1, rp2, c


def _all_ints(mapping):
    return all(type(v) is int for v in mapping.values())


# per provider


def test_for_provider(store, cloud):
    """Usage per class with inventory, summed over consumers."""
    rp1, rp2, _ = cloud
    provider, used = usages.for_provider(store, rp1)
    assert provider == providers.get(store, rp1)
    assert used == {"VCPU": 9, "MEMORY_MB": 512, "DISK_GB": 0}
    assert _all_ints(used)
    assert usages.for_provider(store, rp2)[1] == {
        "VCPU": 1, "MEMORY_MB": 256, "DISK_GB": 10}


def test_for_provider_zero_without_allocations(store):
    """Classes with inventory but no allocations report 0."""
    rp = h.provider(store, "cn", VCPU=4, DISK_GB=10)
    used = usages.for_provider(store, rp)[1]
    assert used == {"VCPU": 0, "DISK_GB": 0}
    assert _all_ints(used)
    inventories.delete(store, rp, "DISK_GB")
    assert usages.for_provider(store, rp)[1] == {"VCPU": 0}


def test_for_provider_without_inventory(store):
    """A provider with no inventory has no usage entries."""
    rp = h.provider(store, "bare")
    assert usages.for_provider(store, rp)[1] == {}


def test_for_provider_unknown(store):
    """An unknown provider: ResourceProviderNotFound."""
    ghost = h.new_uuid()
    with pytest.raises(errors.ResourceProviderNotFound) as info:
        usages.for_provider(store, ghost)
    assert info.value.uuid == ghost


def test_for_provider_follows_rewrites_and_deletes(store, cloud):
    """Usage follows rewrites, emptied consumers and deletions."""
    rp1, _, c = cloud
    h.write(store, c[2], {rp1: {"VCPU": 1}}, project="p1", user="u1")
    assert usages.for_provider(store, rp1)[1]["VCPU"] == 7
    h.write(store, c[2], {})
    assert usages.for_provider(store, rp1)[1]["VCPU"] == 6
    allocations.delete_for_consumer(store, c[4])
    assert usages.for_provider(store, rp1)[1] == {
        "VCPU": 2, "MEMORY_MB": 512, "DISK_GB": 0}


def test_by_provider(store, cloud):
    """by_provider: every provider with allocations, classes allocated."""
    rp1, rp2, _ = cloud
    h.provider(store, "idle", VCPU=8)
    result = usages.by_provider(store)
    assert result == {rp1: {"VCPU": 9, "MEMORY_MB": 512},
                      rp2: {"VCPU": 1, "MEMORY_MB": 256, "DISK_GB": 10}}
    assert all(_all_ints(v) for v in result.values())


def test_by_provider_empty(store):
    """No allocations at all: an empty map."""
    h.provider(store, "idle", VCPU=8)
    assert usages.by_provider(store) == {}


# per project and user


def test_for_project(store, cloud):
    """Usage of every consumer of the project, summed per class."""
    used = usages.for_project(store, "p1")
    assert used == {"VCPU": 6, "MEMORY_MB": 768, "DISK_GB": 10}
    assert _all_ints(used)
    assert usages.for_project(store, "p2") == {"VCPU": 4}


def test_for_project_and_user(store, cloud):
    """With a user, only that user's consumers in the project count."""
    assert usages.for_project(store, "p1", "u1") == {
        "VCPU": 5, "MEMORY_MB": 768, "DISK_GB": 10}
    assert usages.for_project(store, "p1", user_id="u2") == {"VCPU": 1}
    assert usages.for_project(store, "p2", "u2") == {}


def test_for_project_unknown(store, cloud):
    """A project (or user) nobody used: empty."""
    assert usages.for_project(store, "nobody") == {}
    assert usages.for_project(store, "p1", "nobody") == {}


# per consumer type


def test_by_consumer_type_grouped(store, cloud):
    """consumer_type None: one group per type, untyped consumers under
    'unknown'; consumer_count counts consumers, not allocations."""
    assert usages.for_project_by_consumer_type(store, "p1") == {
        "INSTANCE": {"consumer_count": 2,
                     "usages": {"VCPU": 3, "MEMORY_MB": 512,
                                "DISK_GB": 10}},
        "MIGRATION": {"consumer_count": 1, "usages": {"VCPU": 3}},
        "unknown": {"consumer_count": 1, "usages": {"MEMORY_MB": 256}},
    }


def test_by_consumer_type_all(store, cloud):
    """'all': every consumer of the project in one 'all' group."""
    assert usages.for_project_by_consumer_type(
        store, "p1", consumer_type="all") == {
        "all": {"consumer_count": 4,
                "usages": {"VCPU": 6, "MEMORY_MB": 768, "DISK_GB": 10}}}


def test_by_consumer_type_unknown(store, cloud):
    """'unknown': only consumers written without a type."""
    assert usages.for_project_by_consumer_type(
        store, "p1", consumer_type="unknown") == {
        "unknown": {"consumer_count": 1, "usages": {"MEMORY_MB": 256}}}


def test_by_consumer_type_named(store, cloud):
    """A type name keeps only that type."""
    assert usages.for_project_by_consumer_type(
        store, "p1", consumer_type="MIGRATION") == {
        "MIGRATION": {"consumer_count": 1, "usages": {"VCPU": 3}}}
    assert usages.for_project_by_consumer_type(
        store, "p2", consumer_type="INSTANCE") == {
        "INSTANCE": {"consumer_count": 1, "usages": {"VCPU": 4}}}


def test_by_consumer_type_unused_name(store, cloud):
    """A type nobody in the project uses: empty."""
    for name in ("BAREMETAL", "MIGRATION"):
        assert usages.for_project_by_consumer_type(
            store, "p2", consumer_type=name) == {}


@pytest.mark.parametrize("consumer_type,expected", [
    (None, {"INSTANCE": {"consumer_count": 1,
                         "usages": {"VCPU": 2, "MEMORY_MB": 512,
                                    "DISK_GB": 10}},
            "MIGRATION": {"consumer_count": 1, "usages": {"VCPU": 3}},
            "unknown": {"consumer_count": 1,
                        "usages": {"MEMORY_MB": 256}}}),
    ("all", {"all": {"consumer_count": 3,
                     "usages": {"VCPU": 5, "MEMORY_MB": 768,
                                "DISK_GB": 10}}}),
    ("unknown", {"unknown": {"consumer_count": 1,
                             "usages": {"MEMORY_MB": 256}}}),
    ("INSTANCE", {"INSTANCE": {"consumer_count": 1,
                               "usages": {"VCPU": 2, "MEMORY_MB": 512,
                                          "DISK_GB": 10}}}),
])
def test_by_consumer_type_with_user(store, cloud, consumer_type, expected):
    """A user narrows every form to that user's consumers."""
    assert usages.for_project_by_consumer_type(
        store, "p1", "u1", consumer_type=consumer_type) == expected


def test_by_consumer_type_unknown_project(store, cloud):
    """A project nobody used: empty in every form."""
    for form in (None, "all", "unknown", "INSTANCE"):
        assert usages.for_project_by_consumer_type(
            store, "nobody", consumer_type=form) == {}


def test_by_consumer_type_follows_type_changes(store, cloud):
    """A consumer whose type changes moves to the new group."""
    rp1, _, c = cloud
    h.write(store, c[3], {rp1: {"MEMORY_MB": 256}}, project="p1",
            user="u1", consumer_type="MIGRATION")
    result = usages.for_project_by_consumer_type(store, "p1")
    assert set(result) == {"INSTANCE", "MIGRATION"}
    assert result["MIGRATION"] == {
        "consumer_count": 2, "usages": {"VCPU": 3, "MEMORY_MB": 256}}
