"""Server-group policies kept at claim time (scheduler.group_policies):
a member another scheduler placed is seen before the pick (read from
placement), and a member placed between that read and the claim makes
placement refuse the claim: the instance is then decided again on what
placement said, inside the same call."""

import uuid as uuidlib

import pytest

from placement.objects import consumer_groups
from scheduler import errors
from tests.scheduler.test_manager import hosts, ids, spec, used


def group_spec(policy, group, count=1, **rules):
    return spec(num_instances=count, instance_group={
        "uuid": group, "policy": policy, "hosts": [], "members": [],
        "rules": rules})


def rival(placement, host, group, policy, limit=1, vcpus=1):
    """A member another scheduler claims on ``host`` (its own process:
    this one's host state does not know it)."""
    member = str(uuidlib.uuid4())
    placement.put_allocations(
        member, {host: {"VCPU": vcpus, "MEMORY_MB": 512}}, project_id="p1",
        user_id="u1", consumer_generation=None,
        group=consumer_groups.GroupRule(group, policy, host,
                                        max_per_root=limit))
    return member


def after_the_read(s, write):
    """Run ``write()`` right after the scheduler read its group's
    members: the claim is the first to know."""
    original = s.port.group_members

    def read_then_write(group_uuid):
        found = original(group_uuid)
        write()
        return found

    s.port.group_members = read_then_write


def test_a_member_placed_elsewhere_is_seen_before_the_pick(
        cloud, placement, make):
    uuids = hosts(cloud, placement, [16384, 8192])
    group = str(uuidlib.uuid4())
    rival(placement, uuids[0], group, consumer_groups.SPREAD)
    s = make()
    [[chosen, *_]] = s.select_destinations(
        None, group_spec("anti-affinity", group), ids(1))
    assert chosen.nodename == "n1"
    assert s.stats["group_conflicts"] == 0


def test_anti_affinity_claim_refused_is_decided_again(cloud, placement,
                                                      make):
    uuids = hosts(cloud, placement, [16384, 8192])
    group = str(uuidlib.uuid4())
    s = make()
    after_the_read(s, lambda: rival(placement, uuids[0], group,
                                    consumer_groups.SPREAD))
    [instance] = ids(1)
    [[chosen, *alternates]] = s.select_destinations(
        None, group_spec("anti-affinity", group), [instance])
    assert chosen.nodename == "n1"
    assert s.stats["group_conflicts"] == 1
    # n0 holds a member now: it is no alternate either.
    assert [a.nodename for a in alternates] == []
    assert list(placement.get_allocations(instance).allocations) == [
        uuids[1]]


def test_max_server_per_host_counts_the_database_members(cloud, placement,
                                                         make):
    uuids = hosts(cloud, placement, [16384, 8192])
    group = str(uuidlib.uuid4())
    rival(placement, uuids[0], group, consumer_groups.SPREAD, limit=2)
    s = make()
    after_the_read(s, lambda: rival(placement, uuids[0], group,
                                    consumer_groups.SPREAD, limit=2))
    [[chosen, *_]] = s.select_destinations(
        None, group_spec("anti-affinity", group, max_server_per_host=2),
        ids(1))
    assert chosen.nodename == "n1"
    assert s.stats["group_conflicts"] == 1


def test_affinity_follows_the_member_placed_meanwhile(cloud, placement,
                                                      make):
    uuids = hosts(cloud, placement, [16384, 8192])
    group = str(uuidlib.uuid4())
    s = make()
    after_the_read(s, lambda: rival(placement, uuids[1], group,
                                    consumer_groups.TOGETHER))
    [[chosen, *_]] = s.select_destinations(
        None, group_spec("affinity", group), ids(1))
    assert chosen.nodename == "n1"
    assert s.stats["group_conflicts"] == 1


def test_affinity_with_its_host_full_is_no_valid_host(cloud, placement,
                                                      make):
    """The member placed meanwhile took n1's last vCPUs: the group's
    only host is full, and nothing is left claimed."""
    uuids = hosts(cloud, placement, [16384, 8192])
    group = str(uuidlib.uuid4())
    s = make()
    after_the_read(s, lambda: rival(placement, uuids[1], group,
                                    consumer_groups.TOGETHER, vcpus=8))
    [instance] = ids(1)
    with pytest.raises(errors.NoValidHost) as info:
        s.select_destinations(None, group_spec("affinity", group),
                              [instance])
    assert info.value.cause in ("filtered", "claims_lost")
    assert placement.get_allocations(instance).allocations == {}
    assert used(placement, uuids[0]) == {}


def test_a_multi_create_refused_as_a_whole_is_placed_one_by_one(
        cloud, placement, make):
    uuids = hosts(cloud, placement, [16384, 12288, 8192])
    group = str(uuidlib.uuid4())
    s = make()
    after_the_read(s, lambda: rival(placement, uuids[0], group,
                                    consumer_groups.SPREAD))
    picks = s.select_destinations(
        None, group_spec("anti-affinity", group, count=2), ids(2))
    assert sorted(one[0].nodename for one in picks) == ["n1", "n2"]
    assert s.stats["group_conflicts"] >= 1


def test_soft_policies_and_groups_without_uuid_keep_no_rule(
        cloud, placement, make):
    """Only hard policies of a named group are kept in placement."""
    hosts(cloud, placement, [16384, 8192])
    s = make()
    s.select_destinations(None, spec(instance_group={
        "policy": "soft-anti-affinity", "uuid": str(uuidlib.uuid4()),
        "hosts": [], "members": []}), ids(1))
    s.select_destinations(None, spec(instance_group={
        "policy": "anti-affinity", "hosts": [], "members": []}), ids(1))
    with cloud.store.engine.connect() as conn:
        assert conn.exec_driver_sql(
            "SELECT count(*) FROM consumer_groups").scalar() == 0
