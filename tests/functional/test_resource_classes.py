"""Resource classes: standard and custom (every engine)."""

import os_resource_classes as orc
import pytest

from placement import errors
from placement.db import store as store_mod
from placement.db import tables
from placement.objects import inventories, providers, resource_classes
from tests import databases
from tests.functional import objects_helpers as h

FIRST_CUSTOM = tables.MIN_CUSTOM_RESOURCE_CLASS_ID


def test_standard_classes(store):
    """The 21 standard classes come first, ids 0..20 in os-resource-classes
    order, all standard."""
    classes = resource_classes.list_all(store)
    assert len(orc.STANDARDS) == 21
    assert [(rc.id, rc.name) for rc in classes] == list(
        enumerate(orc.STANDARDS))
    assert all(rc.standard for rc in classes)
    assert all(rc.created_at is not None for rc in classes)
    vcpu = resource_classes.get(store, "VCPU")
    assert (vcpu.id, vcpu.standard) == (0, True)
    assert vcpu.last_modified == vcpu.created_at


def test_custom_classes_listed_after_standard(store):
    """Custom classes get ids from 10000 up, in creation order, and
    follow the standard ones."""
    b = resource_classes.create(store, "CUSTOM_B")
    a = resource_classes.create(store, "CUSTOM_A")
    assert (b.id, a.id) == (FIRST_CUSTOM, FIRST_CUSTOM + 1)
    assert not b.standard and not a.standard
    classes = resource_classes.list_all(store)
    assert [rc.name for rc in classes] == list(orc.STANDARDS) + [
        "CUSTOM_B", "CUSTOM_A"]
    assert classes[-2:] == [b, a]


def test_get_unknown(store):
    with pytest.raises(errors.ResourceClassNotFound) as info:
        resource_classes.get(store, "CUSTOM_NOPE")
    assert info.value.name == "CUSTOM_NOPE"
    assert info.value.http_status == 404


def test_create(store):
    """A created class can be read back and used by inventories."""
    rc = resource_classes.create(store, "CUSTOM_GPU")
    assert rc.name == "CUSTOM_GPU"
    assert rc.created_at is not None and rc.updated_at is None
    assert resource_classes.get(store, "CUSTOM_GPU") == rc
    rp = providers.create(store, "cn1")
    h.add_inventory(store, rp.uuid, CUSTOM_GPU=2)
    assert inventories.get_one(store, rp.uuid, "CUSTOM_GPU")[1].total == 2


@pytest.mark.parametrize("name", ["VCPU", "MEMORY_MB", orc.STANDARDS[-1]])
def test_create_standard_name(store, name):
    """A standard name exists already."""
    exc = h.raises_unchanged(store, errors.ResourceClassExists,
                             resource_classes.create, name)
    assert exc.name == name
    assert exc.http_status == 409


@pytest.mark.parametrize("name", ["GPU", "custom_gpu", "", None])
def test_create_non_custom(store, name):
    """A new name must start with CUSTOM_."""
    exc = h.raises_unchanged(store, errors.InvalidName,
                             resource_classes.create, name)
    assert "CUSTOM_" in exc.message


def test_create_name_length(store):
    """255 characters fit, 256 do not."""
    longest = "CUSTOM_" + "X" * (resource_classes.MAX_NAME_LENGTH - 7)
    assert resource_classes.create(store, longest).name == longest
    h.raises_unchanged(store, errors.InvalidName, resource_classes.create,
                       longest + "Y")


def test_create_duplicate(store):
    resource_classes.create(store, "CUSTOM_GPU")
    exc = h.raises_unchanged(store, errors.ResourceClassExists,
                             resource_classes.create, "CUSTOM_GPU")
    assert exc.name == "CUSTOM_GPU"


def test_ensure(store):
    """ensure() creates once, then finds; standard classes are found."""
    rc, created = resource_classes.ensure(store, "CUSTOM_GPU")
    assert created is True and rc.name == "CUSTOM_GPU"
    again, created = resource_classes.ensure(store, "CUSTOM_GPU")
    assert created is False and again == rc
    vcpu, created = resource_classes.ensure(store, "VCPU")
    assert created is False and vcpu.id == 0
    h.raises_unchanged(store, errors.InvalidName, resource_classes.ensure,
                       "NOT_CUSTOM")


def test_rename(store):
    """A renamed custom class gets a new id and keeps its inventories under
    its new name; the old name is unknown at once."""
    rc = resource_classes.create(store, "CUSTOM_OLD")
    rp = providers.create(store, "cn1")
    h.add_inventory(store, rp.uuid, CUSTOM_OLD=3)
    renamed = resource_classes.rename(store, "CUSTOM_OLD", "CUSTOM_NEW")
    assert renamed.name == "CUSTOM_NEW"
    assert renamed.id > rc.id
    assert renamed.created_at == rc.created_at
    assert renamed.updated_at is not None
    assert renamed.last_modified == renamed.updated_at
    with pytest.raises(errors.ResourceClassNotFound):
        resource_classes.get(store, "CUSTOM_OLD")
    assert set(inventories.get_all(store, rp.uuid)[1]) == {"CUSTOM_NEW"}
    h.raises_unchanged(store, errors.ResourceClassNotFound,
                       inventories.add, rp.uuid,
                       inventories.Inventory("CUSTOM_OLD", 1))


def test_rename_seen_from_another_store(store, db_url):
    """Another process that cached the old name fails cleanly with it,
    never writing under the new name."""
    other = store_mod.Store(databases.make_conf(db_url))
    try:
        resource_classes.create(store, "CUSTOM_OLD")
        rp = providers.create(store, "cn1")
        h.add_inventory(other, rp.uuid, CUSTOM_OLD=3)  # caches the name
        resource_classes.rename(store, "CUSTOM_OLD", "CUSTOM_NEW")
        with pytest.raises((errors.ResourceClassNotFound,
                            errors.InventoryNotFound)):
            inventories.update(other, rp.uuid,
                               inventories.Inventory("CUSTOM_OLD", 5))
        other_rp = providers.create(store, "cn2")
        with pytest.raises(errors.ResourceClassNotFound):
            inventories.add(other, other_rp.uuid,
                            inventories.Inventory("CUSTOM_OLD", 5))
        invs = inventories.get_all(other, rp.uuid)[1]
        assert {rc: inv.total for rc, inv in invs.items()} == {
            "CUSTOM_NEW": 3}
        assert inventories.get_all(other, other_rp.uuid)[1] == {}
    finally:
        other.dispose()


def test_rename_to_same_name(store):
    """Renaming a class to its own name is allowed."""
    rc = resource_classes.create(store, "CUSTOM_A")
    assert resource_classes.rename(store, "CUSTOM_A", "CUSTOM_A").id == rc.id


def test_rename_errors(store):
    """Standard classes cannot change; the new name must be custom and
    free; the class must exist."""
    resource_classes.create(store, "CUSTOM_A")
    resource_classes.create(store, "CUSTOM_B")
    exc = h.raises_unchanged(store, errors.ResourceClassCannotUpdateStandard,
                             resource_classes.rename, "VCPU", "CUSTOM_CPU")
    assert exc.name == "VCPU"
    assert exc.http_status == 400
    exc = h.raises_unchanged(store, errors.ResourceClassExists,
                             resource_classes.rename, "CUSTOM_A", "VCPU")
    assert exc.name == "VCPU"
    exc = h.raises_unchanged(store, errors.ResourceClassExists,
                             resource_classes.rename, "CUSTOM_A",
                             "CUSTOM_B")
    assert exc.name == "CUSTOM_B"
    h.raises_unchanged(store, errors.InvalidName, resource_classes.rename,
                       "CUSTOM_A", "PLAIN")
    h.raises_unchanged(store, errors.ResourceClassNotFound,
                       resource_classes.rename, "CUSTOM_NOPE", "CUSTOM_C")


def test_delete(store):
    """An unused custom class can be deleted."""
    resource_classes.create(store, "CUSTOM_A")
    resource_classes.delete(store, "CUSTOM_A")
    with pytest.raises(errors.ResourceClassNotFound):
        resource_classes.get(store, "CUSTOM_A")
    assert [rc.name for rc in resource_classes.list_all(store)] == list(
        orc.STANDARDS)


def test_delete_standard(store):
    exc = h.raises_unchanged(store, errors.ResourceClassCannotDeleteStandard,
                             resource_classes.delete, "VCPU")
    assert exc.name == "VCPU"
    assert exc.http_status == 400


def test_delete_unknown(store):
    h.raises_unchanged(store, errors.ResourceClassNotFound,
                       resource_classes.delete, "CUSTOM_NOPE")


def test_delete_in_use(store):
    """A class some inventory uses cannot be deleted; once the inventory
    is gone it can."""
    resource_classes.create(store, "CUSTOM_GPU")
    rp = providers.create(store, "cn1")
    h.add_inventory(store, rp.uuid, CUSTOM_GPU=1, VCPU=2)
    exc = h.raises_unchanged(store, errors.ResourceClassInUse,
                             resource_classes.delete, "CUSTOM_GPU")
    assert exc.name == "CUSTOM_GPU"
    assert exc.http_status == 409
    inventories.delete(store, rp.uuid, "CUSTOM_GPU")
    resource_classes.delete(store, "CUSTOM_GPU")
    with pytest.raises(errors.ResourceClassNotFound):
        resource_classes.get(store, "CUSTOM_GPU")


def test_ids_never_reused(store):
    """Deleting the highest custom class does not free its id, nor does
    a failed create consume one."""
    resource_classes.create(store, "CUSTOM_A")
    b = resource_classes.create(store, "CUSTOM_B")
    resource_classes.delete(store, "CUSTOM_B")
    h.raises_unchanged(store, errors.ResourceClassExists,
                       resource_classes.create, "CUSTOM_A")
    c = resource_classes.create(store, "CUSTOM_C")
    assert c.id == b.id + 1 == FIRST_CUSTOM + 2
    again = resource_classes.create(store, "CUSTOM_B")
    assert again.id == FIRST_CUSTOM + 3


def test_deleted_class_unusable_at_once(store):
    """A class deleted after an inventory write cached it is unknown to
    the next inventory write."""
    resource_classes.create(store, "CUSTOM_A")
    rp = providers.create(store, "cn1")
    h.add_inventory(store, rp.uuid, CUSTOM_A=1)
    inventories.delete_all(store, rp.uuid)
    resource_classes.delete(store, "CUSTOM_A")
    exc = h.raises_unchanged(store, errors.ResourceClassNotFound,
                             inventories.add, rp.uuid,
                             inventories.Inventory("CUSTOM_A", 1))
    assert exc.name == "CUSTOM_A"
