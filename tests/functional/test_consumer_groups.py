"""Consumer groups: a write that adds a member keeps its group's rule
(spread over roots, or together under one), in its own transaction, on
every engine; racing writers cannot both break it."""

import threading

from placement import direct, errors
from placement.db import store as store_mod
from placement.db import tables
from placement.objects import allocations, consumer_groups
from tests import databases
from tests.functional import alloc_helpers as h

Rule = consumer_groups.GroupRule
Conflict = consumer_groups.ConsumerGroupConflict
GROUP = "9a7c0b8e-5f55-4d4a-9d0c-6c1f0c6c0001"


def _hosts(store, count, vcpu=8):
    return [h.provider(store, f"host{i}", VCPU=vcpu) for i in range(count)]


def _join(store, consumer, root, policy=consumer_groups.SPREAD, limit=1,
          known=None, allocs=None, group=GROUP):
    rule = Rule(group, policy, root, max_per_root=limit,
                known=known or {})
    allocations.replace(store, [allocations.ConsumerAllocations(
        consumer, allocs or {root: {"VCPU": 1}}, project_id=h.PROJECT,
        user_id=h.USER, consumer_generation=None, group=rule)])


def test_spread_refuses_a_second_member_on_one_root(store):
    a, b = _hosts(store, 2)
    first, second = h.new_uuid(), h.new_uuid()
    _join(store, first, a)
    exc = h.raises_unchanged(store, Conflict, _join, second, a)
    assert exc.placed == {first: frozenset({a})}
    assert f"root provider {a} holds 1 member(s), at most 1" in str(exc)
    _join(store, second, b)
    assert consumer_groups.placed(store, GROUP) == {
        first: frozenset({a}), second: frozenset({b})}


def test_spread_with_two_per_root(store):
    (a,) = _hosts(store, 1)
    members = [h.new_uuid() for _ in range(3)]
    _join(store, members[0], a, limit=2)
    _join(store, members[1], a, limit=2)
    h.raises_unchanged(store, Conflict, _join, members[2], a,
                       limit=2)


def test_together_keeps_every_member_under_one_root(store):
    a, b = _hosts(store, 2)
    first, second = h.new_uuid(), h.new_uuid()
    _join(store, first, a, policy=consumer_groups.TOGETHER)
    exc = h.raises_unchanged(store, Conflict, _join, second, b,
                             policy=consumer_groups.TOGETHER)
    assert f"members are under {a}" in str(exc)
    _join(store, second, a, policy=consumer_groups.TOGETHER)


def test_a_deleted_member_stops_counting_and_is_forgotten(store):
    (a,) = _hosts(store, 1)
    first, second = h.new_uuid(), h.new_uuid()
    _join(store, first, a)
    allocations.delete_for_consumer(store, first)
    _join(store, second, a)
    assert consumer_groups.placed(store, GROUP) == {second: frozenset({a})}
    assert h.count_rows(store, tables.consumer_group_members) == 1


def test_what_the_writer_knows_counts_too(store):
    """An instance placement cannot see (its allocation moved to another
    consumer) still holds its root when the writer says so."""
    a, b = _hosts(store, 2)
    exc = h.raises_unchanged(store, Conflict, _join, h.new_uuid(),
                             a, known={"elsewhere": frozenset({a})})
    assert exc.placed == {"elsewhere": frozenset({a})}
    _join(store, h.new_uuid(), b, known={"elsewhere": frozenset({a})})


def test_a_sharing_provider_places_nobody(store):
    a, b = _hosts(store, 2)
    disk = h.provider(store, "shared-disk", DISK_GB=100)
    direct.PlacementDirect(store).set_provider_traits(
        disk, ["MISC_SHARES_VIA_AGGREGATE"])
    first = h.new_uuid()
    _join(store, first, a, allocs={a: {"VCPU": 1}, disk: {"DISK_GB": 1}})
    _join(store, h.new_uuid(), b,
          allocs={b: {"VCPU": 1}, disk: {"DISK_GB": 1}})
    assert consumer_groups.placed(store, GROUP)[first] == frozenset({a})


def test_members_of_one_write_count_against_each_other(store):
    (a,) = _hosts(store, 1)
    rule = Rule(GROUP, consumer_groups.SPREAD, a)
    writes = [allocations.ConsumerAllocations(
        h.new_uuid(), {a: {"VCPU": 1}}, project_id=h.PROJECT,
        user_id=h.USER, consumer_generation=None, group=rule)
        for _ in range(2)]
    h.raises_unchanged(store, Conflict, allocations.replace, writes)


def test_a_member_moving_does_not_count_against_itself(store):
    """An evacuation claims beside what the instance holds: the instance
    itself is not another member."""
    a, b = _hosts(store, 2)
    member = h.new_uuid()
    _join(store, member, a)
    rule = Rule(GROUP, consumer_groups.SPREAD, b)
    view = allocations.for_consumer(store, member)
    allocations.replace(store, [allocations.ConsumerAllocations(
        member, {a: {"VCPU": 1}, b: {"VCPU": 1}}, project_id=h.PROJECT,
        user_id=h.USER, consumer_generation=view.consumer.generation,
        group=rule)])
    assert consumer_groups.placed(store, GROUP) == {member: frozenset({a, b})}


def test_racing_writers_never_share_a_root(db_url, engine_name):
    """Eight threads, each with its own store, claim members of one
    spread group on two roots at once: at most one member per root ever
    commits, whatever the interleaving."""
    conf = databases.make_conf(
        db_url, {("placement_database", "sync_on_startup"): False})
    setup = store_mod.Store.open(conf)
    databases.wipe(setup.engine)
    roots = _hosts(setup, 2)
    stores = [store_mod.Store.open(conf) for _ in range(8)]
    start = threading.Barrier(len(stores))
    outcomes = []

    def race(store, root):
        start.wait()
        try:
            _join(store, h.new_uuid(), root)
            outcomes.append("joined")
        except Conflict:
            outcomes.append("refused")
        except errors.ConcurrentUpdate:
            outcomes.append("lost")

    threads = [threading.Thread(target=race, args=(s, roots[i % 2]))
               for i, s in enumerate(stores)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        placed = consumer_groups.placed(setup, GROUP)
        assert outcomes.count("joined") == 2, outcomes
        assert sorted(r for roots_ in placed.values() for r in roots_) == \
            sorted(roots)
    finally:
        for s in stores:
            s.dispose()
        databases.wipe(setup.engine)
        setup.dispose()


def test_an_unknown_policy_is_a_bad_request(store):
    (a,) = _hosts(store, 1)
    h.raises_unchanged(store, errors.BadRequest, _join, h.new_uuid(), a,
                       policy="sideways")
