"""A first end-to-end pass over the store on every engine."""

from placement import errors
from placement.objects import allocations, inventories, providers


def test_claim_and_capacity(store):
    rp = providers.create(store, "cn1")
    inventories.replace_all(store, rp.uuid, 0, [
        inventories.Inventory("VCPU", 4)])
    gens = allocations.replace(store, [allocations.ConsumerAllocations(
        "11111111-1111-1111-1111-111111111111", {rp.uuid: {"VCPU": 3}},
        "p", "u", None)])
    assert gens == {"11111111-1111-1111-1111-111111111111": 1}
    try:
        allocations.replace(store, [allocations.ConsumerAllocations(
            "22222222-2222-2222-2222-222222222222", {rp.uuid: {"VCPU": 2}},
            "p", "u", None)])
    except errors.CapacityExceeded as exc:
        assert exc.provider_uuid == rp.uuid
    else:
        raise AssertionError("over-commit accepted")
