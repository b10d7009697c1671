"""Aggregates of providers (every engine)."""

import uuid as uuidlib

import pytest

from placement import errors
from placement.db import store as store_mod
from placement.db import tables
from placement.objects import aggregates, providers
from tests.functional import objects_helpers as h

AGG1 = "11111111-1111-4111-8111-111111111111"
AGG2 = "22222222-2222-4222-8222-222222222222"
AGG3 = "33333333-3333-4333-8333-333333333333"


@pytest.fixture
def rp(store):
    return providers.create(store, "cn1")


def test_for_provider_empty_and_unknown(store, rp):
    assert aggregates.for_provider(store, rp.uuid) == (rp, [])
    with pytest.raises(errors.ResourceProviderNotFound):
        aggregates.for_provider(store, h.new_uuid())


def test_set_without_bump(store, rp):
    """Before microversion 1.19 the generation neither is checked nor
    moves."""
    gen, aggs = aggregates.set_for_provider(store, rp.uuid, [AGG2, AGG1])
    assert (gen, aggs) == (0, [AGG1, AGG2])
    provider, have = aggregates.for_provider(store, rp.uuid)
    assert provider.generation == 0
    assert have == [AGG1, AGG2]


def test_set_with_bump(store, rp):
    """With bump_generation each write moves the generation by one,
    with or without a given generation, even when nothing changes."""
    assert aggregates.set_for_provider(
        store, rp.uuid, [AGG1], generation=0,
        bump_generation=True) == (1, [AGG1])
    assert aggregates.set_for_provider(
        store, rp.uuid, [AGG1], generation=1,
        bump_generation=True) == (2, [AGG1])
    assert aggregates.set_for_provider(
        store, rp.uuid, [AGG1, AGG2], bump_generation=True) == (
        3, [AGG1, AGG2])
    assert h.generation(store, rp.uuid) == 3


@pytest.mark.parametrize("bump", [True, False])
def test_set_stale_generation(store, rp, bump):
    """A stale generation is refused whether or not it would move; the
    previous set stays."""
    aggregates.set_for_provider(store, rp.uuid, [AGG1], generation=0,
                                bump_generation=True)
    exc = h.raises_unchanged(
        store, errors.ResourceProviderGenerationConflict,
        aggregates.set_for_provider, rp.uuid, [AGG2], generation=0,
        bump_generation=bump)
    assert (exc.uuid, exc.expected, exc.given) == (rp.uuid, 1, 0)
    assert aggregates.for_provider(store, rp.uuid)[1] == [AGG1]


def test_set_checked_without_bump(store, rp):
    """A current generation without bump_generation leaves it alone."""
    assert aggregates.set_for_provider(
        store, rp.uuid, [AGG1], generation=0) == (0, [AGG1])
    assert h.generation(store, rp.uuid) == 0


def test_canonical_uuids(store, rp):
    """Aggregate uuids are stored dashed and lower case, duplicates
    collapse."""
    value = uuidlib.UUID(AGG3)
    gen, aggs = aggregates.set_for_provider(
        store, rp.uuid, [AGG1.upper(), AGG1, value.hex, value])
    assert aggs == [AGG1, AGG3]
    assert aggregates.for_provider(store, rp.uuid)[1] == [AGG1, AGG3]
    assert h.count_rows(store, tables.placement_aggregates) == 2
    # the same set in another spelling changes nothing
    recorder = h.Recorder(store)
    aggregates.set_for_provider(store, rp.uuid, [AGG3.upper(), AGG1])
    assert recorder.changes == []


def test_malformed_uuid(store, rp):
    """A malformed aggregate uuid is a BadRequest; nothing is stored."""
    aggregates.set_for_provider(store, rp.uuid, [AGG1])
    h.raises_unchanged(store, errors.BadRequest, aggregates.set_for_provider,
                       rp.uuid, [AGG2, "not-a-uuid"])


def test_set_unknown_provider(store):
    h.raises_unchanged(store, errors.ResourceProviderNotFound,
                       aggregates.set_for_provider, h.new_uuid(), [AGG1])


def test_replace_sets(store, rp):
    """Each set replaces the previous; aggregates are never deleted and
    are shared between providers."""
    other = providers.create(store, "cn2")
    aggregates.set_for_provider(store, rp.uuid, [AGG1, AGG2])
    aggregates.set_for_provider(store, other.uuid, [AGG2])
    assert aggregates.set_for_provider(store, rp.uuid, [AGG2, AGG3])[1] == [
        AGG2, AGG3]
    assert aggregates.for_provider(store, rp.uuid)[1] == [AGG2, AGG3]
    assert aggregates.for_provider(store, other.uuid)[1] == [AGG2]
    assert aggregates.set_for_provider(store, rp.uuid, [])[1] == []
    assert aggregates.for_provider(store, rp.uuid)[1] == []
    assert aggregates.for_provider(store, other.uuid)[1] == [AGG2]
    assert h.count_rows(store, tables.placement_aggregates) == 3
    # a known aggregate is linked again, not created again
    aggregates.set_for_provider(store, rp.uuid, [AGG1])
    assert h.count_rows(store, tables.placement_aggregates) == 3
    assert h.count_rows(store, tables.resource_provider_aggregates) == 2


def test_provider_uuids_in(store, rp):
    """Providers in any of the aggregates, sorted, each once."""
    b = providers.create(store, "b")
    c = providers.create(store, "c")
    aggregates.set_for_provider(store, rp.uuid, [AGG1, AGG2])
    aggregates.set_for_provider(store, b.uuid, [AGG2])
    aggregates.set_for_provider(store, c.uuid, [AGG3])
    assert aggregates.provider_uuids_in(store, [AGG1]) == [rp.uuid]
    assert aggregates.provider_uuids_in(store, [AGG2]) == sorted(
        [rp.uuid, b.uuid])
    assert aggregates.provider_uuids_in(store, [AGG1, AGG2, AGG3]) == sorted(
        [rp.uuid, b.uuid, c.uuid])
    assert aggregates.provider_uuids_in(store, [uuidlib.UUID(AGG3)]) == [
        c.uuid]
    assert aggregates.provider_uuids_in(store, []) == []
    assert aggregates.provider_uuids_in(store, [h.new_uuid()]) == []


def test_by_provider(store, rp):
    """by_provider maps each provider in an aggregate to its sorted
    aggregates."""
    b = providers.create(store, "b")
    providers.create(store, "lonely")
    aggregates.set_for_provider(store, rp.uuid, [AGG3, AGG1])
    aggregates.set_for_provider(store, b.uuid, [AGG2])
    assert aggregates.by_provider(store) == {
        rp.uuid: [AGG1, AGG3], b.uuid: [AGG2]}
    aggregates.set_for_provider(store, b.uuid, [])
    assert aggregates.by_provider(store) == {rp.uuid: [AGG1, AGG3]}


def test_aggregate_cache_survives_rolled_back_write(store, rp):
    """An aggregate id read inside a transaction that then rolled back is
    not trusted afterwards: the next write links a real aggregate."""
    other = providers.create(store, "cn2")

    def fail_after_linking(txn):
        aggregates.set_for_provider(txn, rp.uuid, [AGG1])
        # the second link reads AGG1's (uncommitted) id
        aggregates.set_for_provider(txn, other.uuid, [AGG1])
        raise errors.InvalidName("boom")

    h.raises_unchanged(store, errors.InvalidName, store_mod.Store.write,
                       fail_after_linking)
    assert h.count_rows(store, tables.placement_aggregates) == 0
    # the precondition of this test: the rolled-back id was cached
    assert ("aggregate", AGG1) in store.id_cache
    aggregates.set_for_provider(store, rp.uuid, [AGG1])
    aggregates.set_for_provider(store, other.uuid, [AGG1])
    assert aggregates.provider_uuids_in(store, [AGG1]) == sorted(
        [rp.uuid, other.uuid])
    assert h.count_rows(store, tables.placement_aggregates) == 1
