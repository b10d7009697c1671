"""The checks of an OpenStack Placement database before an import,
on rows made up here (the round trips with Placement itself are in
tests/functional/test_placement_import.py)."""

from placement.adopt import openstack_db


def _snapshot(**tables):
    return openstack_db.Snapshot(tables)


def test_a_clean_snapshot_has_no_problem():
    snap = _snapshot(
        resource_classes=[{"id": 0, "name": "VCPU"},
                          {"id": 10000, "name": "CUSTOM_X"}],
        resource_providers=[{"id": 1, "uuid": "rp", "name": "rp",
                             "parent_provider_id": None,
                             "root_provider_id": 1}],
        inventories=[{"resource_provider_id": 1, "resource_class_id": 10000,
                      "total": 2, "reserved": 0, "allocation_ratio": 1.0}],
        allocations=[{"consumer_id": "c", "resource_provider_id": 1,
                      "resource_class_id": 10000, "used": 2}])
    assert openstack_db.check(snap) == []


def test_a_standard_class_gantt_does_not_know_is_a_problem():
    snap = _snapshot(resource_classes=[{"id": 90, "name": "QUANTUM_BIT"}])
    assert openstack_db.check(snap) == [
        "resource_classes QUANTUM_BIT: a standard class this gantt's "
        "os-resource-classes does not know (upgrade it first)"]


def test_an_allocation_of_an_unknown_class_id_is_a_problem():
    snap = _snapshot(
        resource_providers=[{"id": 1, "uuid": "rp", "name": "rp",
                             "parent_provider_id": None,
                             "root_provider_id": 1}],
        allocations=[{"consumer_id": "c", "resource_provider_id": 1,
                      "resource_class_id": 12345, "used": 1}])
    assert openstack_db.check(snap) == [
        "allocations c rp 12345: unknown resource class id 12345"]
