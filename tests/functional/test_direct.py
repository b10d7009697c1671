"""PlacementDirect: each group of calls reaches the objects with the
values given (every engine)."""

import pytest

from placement import direct, errors
from placement.objects import (
    aggregates,
    allocations,
    inventories,
    providers,
    traits,
)
from tests import databases
from tests.functional import alloc_helpers as h

Inventory = inventories.Inventory
Write = allocations.ConsumerAllocations


@pytest.fixture
def api(store):
    return direct.PlacementDirect(store)


# helpers of the facade (no database)


def test_as_inventory_forms():
    """An int is a total, a dict gives fields, an Inventory is kept."""
    inv = Inventory("VCPU", 4, reserved=1)
    assert direct.as_inventory("VCPU", inv) is inv
    assert direct.as_inventory("VCPU", 8) == Inventory("VCPU", 8)
    assert direct.as_inventory("VCPU", {
        "total": 8, "allocation_ratio": 2.0, "max_unit": 4}) == Inventory(
        "VCPU", 8, allocation_ratio=2.0, max_unit=4)
    with pytest.raises(TypeError):
        direct.as_inventory("VCPU", True)


def test_as_resources_forms():
    """Plain {rc: n} and the REST form {"resources": {...}} both work."""
    assert direct.as_resources({"VCPU": 1}) == {"VCPU": 1}
    assert direct.as_resources({"resources": {"VCPU": 1}}) == {"VCPU": 1}
    assert direct.as_resources(
        {"resources": {"VCPU": 1}, "generation": 3}) == {
        "resources": {"VCPU": 1}, "generation": 3}


# providers


def test_providers(api, store):
    """create/get/list/tree/update/delete go to the providers module."""
    root = api.create_provider("root")
    uuid = h.new_uuid()
    child = api.create_provider("child", uuid=uuid, parent_uuid=root.uuid)
    assert child.uuid == uuid
    assert child.parent_provider_uuid == root.uuid
    assert api.get_provider(uuid) == providers.get(store, uuid)
    assert [p.name for p in api.list_providers()] == ["root", "child"]
    assert [p.name for p in api.list_providers(name="child")] == ["child"]
    assert [p.uuid for p in api.list_providers(uuid=root.uuid)] == [
        root.uuid]
    assert {p.name for p in api.list_providers(in_tree=uuid)} == {
        "root", "child"}
    assert [p.name for p in api.provider_tree(uuid)] == ["root", "child"]
    renamed = api.update_provider(uuid, name="kid")
    assert renamed.name == "kid"
    assert renamed.parent_provider_uuid == root.uuid
    # Re-parenting is allowed by default through the facade (1.37).
    assert api.update_provider(uuid, parent_uuid=None).parent_provider_uuid \
        is None
    assert api.update_provider(
        uuid, parent_uuid=root.uuid).parent_provider_uuid == root.uuid
    with pytest.raises(errors.InvalidParent):
        api.update_provider(uuid, parent_uuid=None,
                            allow_reparenting=False)
    api.delete_provider(uuid)
    with pytest.raises(errors.ResourceProviderNotFound):
        api.get_provider(uuid)


# inventories


def test_inventories(api, store):
    """set/get/update/delete with Inventory, dict and int values; the
    generation is checked when given."""
    rp = api.create_provider("cn").uuid
    gen, invs = api.set_inventories(rp, {
        "VCPU": {"total": 8, "allocation_ratio": 4.0},
        "MEMORY_MB": 4096,
        "DISK_GB": Inventory("DISK_GB", 100, reserved=10)})
    assert gen == 1
    assert invs["VCPU"].capacity == 32
    assert invs["MEMORY_MB"].total == 4096
    assert invs["DISK_GB"].reserved == 10
    assert api.get_inventories(rp) == (1, invs)
    with pytest.raises(errors.ResourceProviderGenerationConflict):
        api.set_inventories(rp, {"VCPU": 1}, generation=0)
    gen, inv = api.update_inventory(rp, "VCPU", 16, generation=1)
    assert (gen, inv.total, inv.allocation_ratio) == (2, 16, 1.0)
    gen, inv = api.update_inventory(rp, "VCPU", {"total": 4,
                                                 "step_size": 2})
    assert (gen, inv.total, inv.step_size) == (3, 4, 2)
    assert api.delete_inventory(rp, "DISK_GB", generation=3) == 4
    assert set(api.get_inventories(rp)[1]) == {"VCPU", "MEMORY_MB"}
    with pytest.raises(errors.InventoryNotFound):
        api.delete_inventory(rp, "DISK_GB")
    gen, invs = api.set_inventories(rp, {"VCPU": 2}, generation=4)
    assert (gen, set(invs)) == (5, {"VCPU"})


# traits


def test_traits(api, store):
    """ensure/list/set/get/delete traits go to the traits module."""
    rp = api.create_provider("cn").uuid
    assert api.ensure_trait("CUSTOM_GOLD") is True
    assert api.ensure_trait("CUSTOM_GOLD") is False
    assert api.list_traits(prefix="CUSTOM_") == ["CUSTOM_GOLD"]
    assert "HW_CPU_X86_AVX2" in api.list_traits()
    assert api.set_provider_traits(
        rp, ["CUSTOM_GOLD", "HW_CPU_X86_AVX2"], generation=0) == (
        1, ["CUSTOM_GOLD", "HW_CPU_X86_AVX2"])
    assert api.get_provider_traits(rp) == (
        1, ["CUSTOM_GOLD", "HW_CPU_X86_AVX2"])
    assert api.list_traits(associated=True) == [
        "CUSTOM_GOLD", "HW_CPU_X86_AVX2"]
    assert api.list_traits(name_in=["CUSTOM_GOLD", "CUSTOM_NONE"]) == [
        "CUSTOM_GOLD"]
    with pytest.raises(errors.TraitInUse):
        api.delete_trait("CUSTOM_GOLD")
    assert api.set_provider_traits(rp, []) == (2, [])
    api.delete_trait("CUSTOM_GOLD")
    assert not traits.exists(store, "CUSTOM_GOLD")


# aggregates


def test_aggregates(api, store):
    """set/get provider aggregates; the facade's set moves the generation
    (microversion 1.19 and later)."""
    rp = api.create_provider("cn").uuid
    agg1, agg2 = sorted([h.new_uuid(), h.new_uuid()])
    assert api.set_provider_aggregates(rp, [agg2, agg1], generation=0) == (
        1, [agg1, agg2])
    assert api.get_provider_aggregates(rp) == (1, [agg1, agg2])
    assert aggregates.for_provider(store, rp)[1] == [agg1, agg2]
    with pytest.raises(errors.ResourceProviderGenerationConflict):
        api.set_provider_aggregates(rp, [], generation=0)
    assert api.set_provider_aggregates(rp, []) == (2, [])


# resource classes


def test_resource_classes(api, store):
    """ensure/list/delete resource classes."""
    rc, created = api.ensure_resource_class("CUSTOM_FPGA")
    assert (rc.name, created) == ("CUSTOM_FPGA", True)
    assert api.ensure_resource_class("CUSTOM_FPGA")[1] is False
    names = [r.name for r in api.list_resource_classes()]
    assert names[0] == "VCPU"
    assert names[-1] == "CUSTOM_FPGA"
    api.delete_resource_class("CUSTOM_FPGA")
    assert "CUSTOM_FPGA" not in [r.name for r in
                                 api.list_resource_classes()]
    with pytest.raises(errors.ResourceClassCannotDeleteStandard):
        api.delete_resource_class("VCPU")


# allocations


@pytest.fixture
def rp(api):
    rp = api.create_provider("cn").uuid
    api.set_inventories(rp, {"VCPU": 8, "MEMORY_MB": 4096})
    return rp


@pytest.mark.parametrize("rest_form", [False, True])
def test_put_allocations(api, store, rp, rest_form):
    """put_allocations takes {rc: n} or the REST form, returns the
    consumer generation and passes project, user, generation and type."""
    consumer = h.new_uuid()
    resources = {"VCPU": 2, "MEMORY_MB": 512}
    body = {"resources": resources} if rest_form else resources
    assert api.put_allocations(consumer, {rp: body}, "p", "u",
                               consumer_generation=None,
                               consumer_type="INSTANCE") == 1
    view = api.get_allocations(consumer)
    assert view.allocations[rp].resources == resources
    got = api.get_consumer(consumer)
    assert (got.project_id, got.user_id, got.consumer_type) == (
        "p", "u", "INSTANCE")
    with pytest.raises(errors.ConsumerGenerationConflict):
        api.put_allocations(consumer, {rp: body}, "p", "u",
                            consumer_generation=None)
    # Unchecked by default.
    assert api.put_allocations(consumer.upper(), {rp: {"VCPU": 1}},
                               "p", "u") == 2
    assert api.put_allocations(consumer, {}, "p", "u",
                               consumer_generation=2) is None
    with pytest.raises(errors.ConsumerNotFound):
        api.get_consumer(consumer)


def test_post_allocations(api, store, rp):
    """post_allocations writes several consumers atomically."""
    a, b = h.new_uuid(), h.new_uuid()
    assert api.post_allocations(iter([
        Write(a, {rp: {"VCPU": 4}}, "p", "u", None),
        Write(b, {rp: {"VCPU": 4}}, "p", "u", None)])) == {a: 1, b: 1}
    with pytest.raises(errors.CapacityExceeded):
        api.post_allocations([Write(a, {}, "p", "u", 1),
                              Write(b, {rp: {"VCPU": 9}}, "p", "u", 1)])
    assert api.get_provider_allocations(rp).allocations == {
        a: {"VCPU": 4}, b: {"VCPU": 4}}
    assert api.post_allocations([]) == {}


def test_delete_allocations(api, rp):
    """delete_allocations removes them; AllocationsNotFound after."""
    consumer = h.new_uuid()
    api.put_allocations(consumer, {rp: {"VCPU": 1}}, "p", "u")
    api.delete_allocations(consumer)
    assert api.get_allocations(consumer).allocations == {}
    with pytest.raises(errors.AllocationsNotFound):
        api.delete_allocations(consumer)


# usages


def test_usages(api, store, rp):
    """Provider, project and consumer-type usages through the facade."""
    api.put_allocations(h.new_uuid(), {rp: {"VCPU": 2}}, "p", "u1",
                        consumer_type="INSTANCE")
    api.put_allocations(h.new_uuid(), {rp: {"MEMORY_MB": 64}}, "p", "u2")
    assert api.get_provider_usages(rp) == (
        providers.get(store, rp).generation,
        {"VCPU": 2, "MEMORY_MB": 64})
    assert api.get_project_usages("p") == {"VCPU": 2, "MEMORY_MB": 64}
    assert api.get_project_usages("p", user_id="u2") == {"MEMORY_MB": 64}
    assert api.get_project_usages_by_consumer_type("p") == {
        "INSTANCE": {"consumer_count": 1, "usages": {"VCPU": 2}},
        "unknown": {"consumer_count": 1, "usages": {"MEMORY_MB": 64}}}
    assert api.get_project_usages_by_consumer_type(
        "p", user_id="u1", consumer_type="all") == {
        "all": {"consumer_count": 1, "usages": {"VCPU": 2}}}


# reshaper


def test_reshape(api, store):
    """reshape takes {uuid: (generation, {rc: value})} in any inventory
    form and ConsumerAllocations."""
    root = api.create_provider("cn").uuid
    child = api.create_provider("gpu", parent_uuid=root).uuid
    api.set_inventories(root, {"VCPU": 8, "VGPU": 2})
    consumer = h.new_uuid()
    api.put_allocations(consumer, {root: {"VCPU": 1, "VGPU": 1}}, "p", "u")
    api.reshape({
        root: (api.get_inventories(root)[0], {"VCPU": {"total": 8}}),
        child: (api.get_inventories(child)[0],
                {"VGPU": Inventory("VGPU", 2, max_unit=1)})},
        [Write(consumer, {root: {"VCPU": 1}, child: {"VGPU": 1}}, "p", "u",
               1)])
    assert set(api.get_inventories(root)[1]) == {"VCPU"}
    assert api.get_inventories(child)[1]["VGPU"].max_unit == 1
    assert api.get_provider_usages(child)[1] == {"VGPU": 1}
    with pytest.raises(errors.ResourceProviderGenerationConflict):
        api.reshape({root: (0, {"VCPU": 8})}, [])


# open and close


def test_open_and_close(store, db_url):
    """open() builds a store of its own from a config; writes through it
    are seen by other stores on the same database."""
    api = direct.PlacementDirect.open(databases.make_conf(db_url))
    try:
        rp = api.create_provider("opened")
        assert providers.get(store, rp.uuid).name == "opened"
        assert api.store is not store
    finally:
        api.close()
