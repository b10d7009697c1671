"""Consumers: look-ups, and their life with their allocations (every
engine)."""

import uuid as uuidlib

import pytest

from placement import errors
from placement.objects import allocations, consumers
from tests.functional import alloc_helpers as h


@pytest.fixture
def rp(store):
    return h.provider(store, "cn1", VCPU=8)


def test_get(store, rp):
    """get returns the consumer with its project, user, type, generation
    and timestamps."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}}, project="p", user="u",
            consumer_type="INSTANCE")
    got = consumers.get(store, consumer)
    assert isinstance(got, consumers.Consumer)
    assert (got.uuid, got.generation, got.project_id, got.user_id,
            got.consumer_type) == (consumer, 1, "p", "u", "INSTANCE")
    assert got.created_at is not None
    assert got.updated_at is None
    assert got.id > 0
    h.write(store, consumer, {rp: {"VCPU": 2}})
    again = consumers.get(store, consumer)
    assert again.generation == 2
    assert again.id == got.id
    assert again.updated_at is not None


def test_get_accepts_uuid_object(store, rp):
    """get takes a UUID object as well as a string."""
    consumer = uuidlib.uuid4()
    h.write(store, str(consumer), {rp: {"VCPU": 1}})
    assert consumers.get(store, consumer).uuid == str(consumer)


def test_get_not_found(store, rp):
    """An unknown consumer: ConsumerNotFound (404) naming it."""
    ghost = h.new_uuid()
    with pytest.raises(errors.ConsumerNotFound) as info:
        consumers.get(store, ghost)
    assert info.value.uuid == ghost
    assert info.value.http_status == 404
    assert ghost in info.value.message


def test_get_after_removal(store, rp):
    """A consumer whose allocations were emptied or deleted is gone."""
    a, b = h.new_uuid(), h.new_uuid()
    h.write(store, a, {rp: {"VCPU": 1}})
    h.write(store, b, {rp: {"VCPU": 1}})
    h.write(store, a, {})
    allocations.delete_for_consumer(store, b)
    for gone in (a, b):
        with pytest.raises(errors.ConsumerNotFound):
            consumers.get(store, gone)


def test_get_many(store, rp):
    """get_many returns those that exist, keyed by uuid; duplicates and
    unknown uuids are fine."""
    a, b, ghost = h.new_uuid(), h.new_uuid(), h.new_uuid()
    h.write(store, a, {rp: {"VCPU": 1}}, project="pa", user="ua")
    h.write(store, b, {rp: {"VCPU": 1}}, project="pb", user="ub",
            consumer_type="MIGRATION")
    got = consumers.get_many(store, [a, b, ghost, a, uuidlib.UUID(b)])
    assert set(got) == {a, b}
    assert got[a] == consumers.get(store, a)
    assert (got[b].project_id, got[b].user_id, got[b].consumer_type) == (
        "pb", "ub", "MIGRATION")


def test_get_many_empty(store, rp):
    """No uuids, or only unknown ones: an empty map."""
    h.write(store, h.new_uuid(), {rp: {"VCPU": 1}})
    assert consumers.get_many(store, []) == {}
    assert consumers.get_many(store, [h.new_uuid()]) == {}


def test_projects_and_users_are_shared(store, rp):
    """Consumers of one project and user share one row of each."""
    for _ in range(3):
        h.write(store, h.new_uuid(), {rp: {"VCPU": 1}}, project="p",
                user="u", consumer_type="INSTANCE")
    assert h.count_rows(store, h.tables.projects) == 1
    assert h.count_rows(store, h.tables.users) == 1
    assert h.count_rows(store, h.tables.consumer_types) == 1
    assert h.count_rows(store, h.tables.consumers) == 3


def test_project_cache_survives_a_rolled_back_insert(store, rp):
    """A project first seen by a failed write is created for real by the
    next write (no id of a rolled-back row is cached)."""
    h.raises_unchanged(store, errors.CapacityExceeded, h.write,
                       h.new_uuid(), {rp: {"VCPU": 9}}, project="fresh",
                       user="fresh-u", consumer_type="FRESH")
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}}, project="fresh",
            user="fresh-u", consumer_type="FRESH")
    got = consumers.get(store, consumer)
    assert (got.project_id, got.user_id, got.consumer_type) == (
        "fresh", "fresh-u", "FRESH")
