"""Traits: the catalog and the traits of each provider (every engine)."""

import os_traits
import pytest

from placement import errors
from placement.objects import providers, traits
from tests.functional import objects_helpers as h

AVX = "HW_CPU_X86_AVX"
AVX2 = "HW_CPU_X86_AVX2"
SSD = "STORAGE_DISK_SSD"


# the catalog


def test_standard_traits_are_seeded(store):
    """Every os-traits name is there, sorted, and nothing else."""
    assert traits.list_names(store) == sorted(os_traits.get_traits())


def test_list_names_filters(store):
    """name_in, prefix and associated filter, and combine with AND."""
    rp = providers.create(store, "cn1")
    traits.ensure(store, "CUSTOM_A")
    traits.ensure(store, "CUSTOM_B")
    traits.set_for_provider(store, rp.uuid, 0, ["CUSTOM_A", AVX])
    assert traits.list_names(store, name_in=["CUSTOM_B", AVX, "NOPE",
                                             AVX]) == ["CUSTOM_B", AVX]
    assert traits.list_names(store, name_in=[]) == []
    assert traits.list_names(store, prefix="CUSTOM_") == [
        "CUSTOM_A", "CUSTOM_B"]
    assert traits.list_names(store, prefix="HW_CPU_X86_AVX5") == sorted(
        n for n in os_traits.get_traits()
        if n.startswith("HW_CPU_X86_AVX5"))
    assert traits.list_names(store, prefix="NOPE_") == []
    assert traits.list_names(store, associated=True) == ["CUSTOM_A", AVX]
    unassociated = traits.list_names(store, associated=False)
    assert "CUSTOM_B" in unassociated
    assert "CUSTOM_A" not in unassociated and AVX not in unassociated
    assert len(unassociated) == len(traits.list_names(store)) - 2
    assert traits.list_names(store, prefix="CUSTOM_",
                             associated=False) == ["CUSTOM_B"]
    assert traits.list_names(store, name_in=["CUSTOM_A", "CUSTOM_B"],
                             associated=True) == ["CUSTOM_A"]


def test_list_names_prefix_is_literal(store):
    """'_' and '%' in a prefix are not SQL wildcards."""
    traits.ensure(store, "CUSTOM_A_B")
    traits.ensure(store, "CUSTOM_AXB")
    assert traits.list_names(store, prefix="CUSTOM_A_") == ["CUSTOM_A_B"]
    assert traits.list_names(store, prefix="CUSTOM%") == []


def test_ensure_custom(store):
    """ensure() creates once (True), then finds it (False)."""
    assert not traits.exists(store, "CUSTOM_GOLD")
    assert traits.ensure(store, "CUSTOM_GOLD") is True
    assert traits.exists(store, "CUSTOM_GOLD")
    created = traits.get_last_modified(store, "CUSTOM_GOLD")
    assert created is not None
    assert traits.ensure(store, "CUSTOM_GOLD") is False
    assert traits.get_last_modified(store, "CUSTOM_GOLD") == created
    assert traits.list_names(store, prefix="CUSTOM_") == ["CUSTOM_GOLD"]


def test_ensure_existing_standard(store):
    """ensure() of a standard trait finds it and creates nothing."""
    assert traits.ensure(store, AVX) is False
    assert traits.list_names(store, prefix="CUSTOM_") == []


@pytest.mark.parametrize("name", ["GOLD", "HW_NOT_A_REAL_TRAIT",
                                  "custom_gold", "", None])
def test_ensure_non_custom(store, name):
    """A new name without the CUSTOM_ prefix is InvalidName."""
    exc = h.raises_unchanged(store, errors.InvalidName, traits.ensure, name)
    assert "CUSTOM_" in exc.message
    assert exc.http_status == 400


def test_ensure_name_length(store):
    """255 characters fit; 256 are InvalidName."""
    longest = "CUSTOM_" + "X" * (traits.MAX_NAME_LENGTH - 7)
    assert traits.ensure(store, longest) is True
    assert traits.exists(store, longest)
    h.raises_unchanged(store, errors.InvalidName, traits.ensure,
                       longest + "Y")


def test_get_last_modified_unknown(store):
    with pytest.raises(errors.TraitNotFound) as info:
        traits.get_last_modified(store, "CUSTOM_NOPE")
    assert info.value.names == ["CUSTOM_NOPE"]
    assert traits.get_last_modified(store, AVX) is not None


def test_delete_custom(store):
    """An unused custom trait can be deleted, and made again."""
    traits.ensure(store, "CUSTOM_GOLD")
    traits.delete(store, "CUSTOM_GOLD")
    assert not traits.exists(store, "CUSTOM_GOLD")
    assert traits.list_names(store, prefix="CUSTOM_") == []
    assert traits.ensure(store, "CUSTOM_GOLD") is True


@pytest.mark.parametrize("name", [AVX, "NOT_A_TRAIT"])
def test_delete_standard(store, name):
    """Names without the CUSTOM_ prefix cannot be deleted."""
    exc = h.raises_unchanged(store, errors.TraitCannotDeleteStandard,
                             traits.delete, name)
    assert exc.name == name
    assert exc.http_status == 400


def test_delete_in_use(store):
    """A trait some provider has cannot be deleted."""
    rp = providers.create(store, "cn1")
    traits.ensure(store, "CUSTOM_GOLD")
    traits.set_for_provider(store, rp.uuid, 0, ["CUSTOM_GOLD"])
    exc = h.raises_unchanged(store, errors.TraitInUse, traits.delete,
                             "CUSTOM_GOLD")
    assert exc.name == "CUSTOM_GOLD"
    assert exc.http_status == 409
    traits.delete_for_provider(store, rp.uuid)
    traits.delete(store, "CUSTOM_GOLD")
    assert not traits.exists(store, "CUSTOM_GOLD")


def test_delete_unknown(store):
    exc = h.raises_unchanged(store, errors.TraitNotFound, traits.delete,
                             "CUSTOM_NOPE")
    assert exc.names == ["CUSTOM_NOPE"]
    assert exc.http_status == 404


# traits of providers


def test_for_provider(store):
    """A new provider has no traits; an unknown one is not found."""
    rp = providers.create(store, "cn1")
    assert traits.for_provider(store, rp.uuid) == (rp, [])
    with pytest.raises(errors.ResourceProviderNotFound):
        traits.for_provider(store, h.new_uuid())


def test_set_for_provider(store):
    """Setting replaces the whole set; each change bumps by one."""
    rp = providers.create(store, "cn1")
    traits.ensure(store, "CUSTOM_GOLD")
    gen, names = traits.set_for_provider(store, rp.uuid, 0,
                                         [SSD, AVX, "CUSTOM_GOLD", AVX])
    assert gen == 1
    assert names == sorted([SSD, AVX, "CUSTOM_GOLD"])
    provider, have = traits.for_provider(store, rp.uuid)
    assert provider.generation == 1
    assert have == names
    gen, names = traits.set_for_provider(store, rp.uuid, 1, [AVX2, AVX])
    assert (gen, names) == (2, [AVX, AVX2])
    assert traits.for_provider(store, rp.uuid)[1] == [AVX, AVX2]
    gen, names = traits.set_for_provider(store, rp.uuid, None, [SSD])
    assert (gen, names) == (3, [SSD])
    assert h.generation(store, rp.uuid) == 3


def test_set_for_provider_no_change(store):
    """Setting the same set again moves neither generation nor data."""
    rp = providers.create(store, "cn1")
    traits.set_for_provider(store, rp.uuid, 0, [AVX, SSD])
    before = h.snapshot(store)
    recorder = h.Recorder(store)
    assert traits.set_for_provider(store, rp.uuid, 1,
                                   [SSD, AVX]) == (1, [AVX, SSD])
    assert traits.set_for_provider(store, rp.uuid, None,
                                   [AVX, SSD]) == (1, [AVX, SSD])
    assert recorder.changes == []
    assert h.snapshot(store) == before
    assert h.generation(store, rp.uuid) == 1


def test_set_for_provider_unknown_traits(store):
    """Unknown names are TraitNotFound listing only those, sorted."""
    rp = providers.create(store, "cn1")
    traits.set_for_provider(store, rp.uuid, 0, [AVX])
    exc = h.raises_unchanged(
        store, errors.TraitNotFound, traits.set_for_provider, rp.uuid, 1,
        [SSD, "CUSTOM_ZED", "CUSTOM_ABC", AVX])
    assert exc.names == ["CUSTOM_ABC", "CUSTOM_ZED"]
    assert "CUSTOM_ABC, CUSTOM_ZED" in exc.message


@pytest.mark.parametrize("stale", [0, 2, -1])
def test_set_for_provider_stale_generation(store, stale):
    """A stale generation is refused and nothing is stored."""
    rp = providers.create(store, "cn1")
    traits.set_for_provider(store, rp.uuid, 0, [AVX])
    exc = h.raises_unchanged(
        store, errors.ResourceProviderGenerationConflict,
        traits.set_for_provider, rp.uuid, stale, [SSD])
    assert (exc.uuid, exc.expected, exc.given) == (rp.uuid, 1, stale)
    # even when the set would not change
    h.raises_unchanged(store, errors.ResourceProviderGenerationConflict,
                       traits.set_for_provider, rp.uuid, stale, [AVX])


def test_set_for_unknown_provider(store):
    h.raises_unchanged(store, errors.ResourceProviderNotFound,
                       traits.set_for_provider, h.new_uuid(), 0, [AVX])


def test_delete_for_provider(store):
    """delete_for_provider empties the set and bumps once; on an empty
    set it changes nothing."""
    rp = providers.create(store, "cn1")
    other = providers.create(store, "cn2")
    traits.set_for_provider(store, rp.uuid, 0, [AVX, SSD])
    traits.set_for_provider(store, other.uuid, 0, [AVX])
    assert traits.delete_for_provider(store, rp.uuid, 1) == 2
    assert traits.for_provider(store, rp.uuid)[1] == []
    assert traits.for_provider(store, other.uuid)[1] == [AVX]
    assert traits.delete_for_provider(store, rp.uuid) == 2
    assert h.generation(store, rp.uuid) == 2


def test_delete_for_provider_errors(store):
    rp = providers.create(store, "cn1")
    traits.set_for_provider(store, rp.uuid, 0, [AVX])
    h.raises_unchanged(store, errors.ResourceProviderGenerationConflict,
                       traits.delete_for_provider, rp.uuid, 0)
    h.raises_unchanged(store, errors.ResourceProviderNotFound,
                       traits.delete_for_provider, h.new_uuid())


def test_by_provider(store):
    """by_provider maps each provider with traits to its sorted names."""
    a = providers.create(store, "a")
    b = providers.create(store, "b")
    providers.create(store, "bare")
    traits.ensure(store, "CUSTOM_GOLD")
    traits.set_for_provider(store, a.uuid, 0, [SSD, "CUSTOM_GOLD"])
    traits.set_for_provider(store, b.uuid, 0, [AVX])
    assert traits.by_provider(store) == {
        a.uuid: ["CUSTOM_GOLD", SSD], b.uuid: [AVX]}


def test_trait_created_then_used_in_same_store(store):
    """A trait created after the catalog was cached can be set at once,
    and a deleted one is unknown at once."""
    rp = providers.create(store, "cn1")
    traits.set_for_provider(store, rp.uuid, 0, [AVX])
    traits.ensure(store, "CUSTOM_NEW")
    assert traits.set_for_provider(store, rp.uuid, 1,
                                   ["CUSTOM_NEW"])[1] == ["CUSTOM_NEW"]
    traits.delete_for_provider(store, rp.uuid)
    traits.delete(store, "CUSTOM_NEW")
    exc = h.raises_unchanged(store, errors.TraitNotFound,
                             traits.set_for_provider, rp.uuid, None,
                             ["CUSTOM_NEW"])
    assert exc.names == ["CUSTOM_NEW"]
