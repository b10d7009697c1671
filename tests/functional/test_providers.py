"""Resource providers: create, look up, update, delete (every engine)."""

import uuid as uuidlib

import pytest

from placement import errors
from placement.db import tables
from placement.objects import aggregates, inventories, providers, traits
from tests.functional import objects_helpers as h


def _tree(store):
    """root -> child -> grandchild, plus a second child of root."""
    root = providers.create(store, "root")
    child = providers.create(store, "child", parent_uuid=root.uuid)
    grand = providers.create(store, "grand", parent_uuid=child.uuid)
    other = providers.create(store, "other", parent_uuid=root.uuid)
    return root, child, grand, other


def _roots(store):
    """{name: (parent name, root name)} of every provider."""
    by_uuid = {rp.uuid: rp for rp in providers.list_all(store)}
    out = {}
    for rp in by_uuid.values():
        parent = by_uuid.get(rp.parent_provider_uuid)
        out[rp.name] = (parent.name if parent else None,
                        by_uuid[rp.root_provider_uuid].name)
    return out


# create


def test_create_root_generates_uuid(store):
    """A provider made without a uuid gets a fresh canonical one, is its
    own root, has generation 0 and a creation time."""
    rp = providers.create(store, "cn1")
    assert str(uuidlib.UUID(rp.uuid)) == rp.uuid
    assert rp.name == "cn1"
    assert rp.generation == 0
    assert rp.parent_provider_uuid is None
    assert rp.parent_id is None
    assert rp.root_provider_uuid == rp.uuid
    assert rp.root_id == rp.id
    assert rp.created_at is not None
    assert rp.updated_at is None
    assert rp.last_modified == rp.created_at
    assert providers.get(store, rp.uuid) == rp
    other = providers.create(store, "cn2")
    assert other.uuid != rp.uuid


@pytest.mark.parametrize("form", ["upper", "hex", "object"])
def test_create_canonicalises_uuid(store, form):
    """A uuid given in capitals, without dashes or as a UUID object is
    stored dashed and lower case."""
    value = uuidlib.uuid4()
    given = {"upper": str(value).upper(), "hex": value.hex,
             "object": value}[form]
    rp = providers.create(store, "cn1", uuid=given)
    assert rp.uuid == str(value)
    assert providers.get(store, str(value)).name == "cn1"


def test_create_malformed_uuid(store):
    """A uuid that is no uuid is a BadRequest, and nothing is stored."""
    exc = h.raises_unchanged(store, errors.BadRequest, providers.create,
                             "cn1", uuid="not-a-uuid")
    assert exc.http_status == 400
    assert providers.list_all(store) == []


def test_create_child_and_grandchild(store):
    """Children point at their parent and share the root's id."""
    root = providers.create(store, "root")
    child = providers.create(store, "child", parent_uuid=root.uuid)
    grand = providers.create(store, "grand",
                             parent_uuid=child.uuid.upper())
    assert child.parent_provider_uuid == root.uuid
    assert child.parent_id == root.id
    assert child.root_provider_uuid == root.uuid
    assert child.root_id == root.id
    assert grand.parent_provider_uuid == child.uuid
    assert grand.root_provider_uuid == root.uuid
    assert grand.root_id == root.id


def test_create_duplicate_uuid(store):
    """A taken uuid (in any spelling) is DuplicateName naming the uuid."""
    rp = providers.create(store, "cn1")
    exc = h.raises_unchanged(store, errors.DuplicateName, providers.create,
                             "cn2", uuid=rp.uuid.upper())
    assert exc.fields == {"uuid": rp.uuid}
    assert exc.code == errors.DUPLICATE_NAME
    assert exc.http_status == 409
    assert f"uuid: {rp.uuid}" in exc.message


def test_create_duplicate_name(store):
    """A taken name is DuplicateName naming the name."""
    providers.create(store, "cn1")
    exc = h.raises_unchanged(store, errors.DuplicateName, providers.create,
                             "cn1")
    assert exc.fields == {"name": "cn1"}
    assert "name: cn1" in exc.message


def test_create_duplicate_uuid_and_name_same_provider(store):
    """Both fields taken by the same provider: both are reported."""
    rp = providers.create(store, "cn1")
    exc = h.raises_unchanged(store, errors.DuplicateName, providers.create,
                             "cn1", uuid=rp.uuid)
    assert exc.fields == {"uuid": rp.uuid, "name": "cn1"}


def test_create_duplicate_uuid_and_name_two_providers(store):
    """The uuid of one provider and the name of another: both reported."""
    first = providers.create(store, "cn1")
    providers.create(store, "cn2")
    exc = h.raises_unchanged(store, errors.DuplicateName, providers.create,
                             "cn2", uuid=first.uuid)
    assert exc.fields == {"uuid": first.uuid, "name": "cn2"}


def test_create_names_are_case_sensitive(store):
    """Names differing only in case are distinct providers."""
    providers.create(store, "cn1")
    other = providers.create(store, "CN1")
    assert providers.list_all(store, name="CN1") == [other]


def test_create_missing_parent(store):
    """An unknown parent is InvalidParent; nothing is stored."""
    providers.create(store, "root")
    exc = h.raises_unchanged(store, errors.InvalidParent, providers.create,
                             "child", parent_uuid=h.new_uuid())
    assert "does not exist" in exc.message
    assert exc.http_status == 400


def test_create_malformed_parent(store):
    """A parent uuid that is no uuid is a BadRequest."""
    h.raises_unchanged(store, errors.BadRequest, providers.create,
                       "child", parent_uuid="nope")


def test_create_parent_is_self(store):
    """A provider cannot be its own parent, whatever the spelling."""
    value = h.new_uuid()
    exc = h.raises_unchanged(store, errors.InvalidParent, providers.create,
                             "cn1", uuid=value, parent_uuid=value.upper())
    assert "cannot be same as UUID" in exc.message


@pytest.mark.parametrize("name", ["", None, 42])
def test_create_without_name(store, name):
    """An empty or missing name is InvalidName."""
    h.raises_unchanged(store, errors.InvalidName, providers.create, name)


def test_create_name_length(store):
    """200 characters fit; 201 are InvalidName."""
    longest = "x" * providers.MAX_NAME_LENGTH
    assert providers.create(store, longest).name == longest
    exc = h.raises_unchanged(store, errors.InvalidName, providers.create,
                             "y" * (providers.MAX_NAME_LENGTH + 1))
    assert "longer than 200" in exc.message


def test_create_unicode_name(store):
    """Non-ASCII names are stored as given."""
    name = "n\u0153ud-\u00e9t\u00e9-\u2603"
    rp = providers.create(store, name)
    assert providers.get(store, rp.uuid).name == name
    assert providers.list_all(store, name=name) == [rp]


# look-ups


def test_get_unknown(store):
    """get of an unknown uuid is ResourceProviderNotFound with the uuid."""
    value = h.new_uuid()
    with pytest.raises(errors.ResourceProviderNotFound) as info:
        providers.get(store, value)
    assert info.value.uuid == value
    assert info.value.http_status == 404
    assert value in info.value.message


def test_get_many(store):
    """get_many returns the existing ones, keyed by uuid."""
    a = providers.create(store, "a")
    b = providers.create(store, "b")
    providers.create(store, "c")
    found = providers.get_many(store, [a.uuid, b.uuid, h.new_uuid(),
                                       a.uuid])
    assert found == {a.uuid: a, b.uuid: b}
    assert providers.get_many(store, []) == {}
    assert providers.get_many(store, [h.new_uuid()]) == {}


def test_get_by_ids(store):
    """get_by_ids returns the existing ones, keyed by internal id."""
    a = providers.create(store, "a")
    b = providers.create(store, "b", parent_uuid=a.uuid)
    found = providers.get_by_ids(store, [b.id, a.id, b.id, 10 ** 6])
    assert found == {a.id: a, b.id: b}
    assert found[b.id].parent_provider_uuid == a.uuid
    assert providers.get_by_ids(store, []) == {}


def test_list_all_filters(store):
    """list_all filters by uuid, name and tree, oldest first; filters
    combine with AND."""
    root, child, grand, other = _tree(store)
    lone = providers.create(store, "lone")
    assert providers.list_all(store) == [root, child, grand, other, lone]
    assert providers.list_all(store, uuid=child.uuid) == [child]
    assert providers.list_all(store, uuid=h.new_uuid()) == []
    assert providers.list_all(store, name="grand") == [grand]
    assert providers.list_all(store, name="nope") == []
    assert providers.list_all(store, in_tree=grand.uuid) == [
        root, child, grand, other]
    assert providers.list_all(store, in_tree=lone.uuid) == [lone]
    assert providers.list_all(store, in_tree=root.uuid,
                              name="other") == [other]
    assert providers.list_all(store, in_tree=root.uuid,
                              name="lone") == []
    assert providers.list_all(store, uuid=lone.uuid, name="root") == []


def test_list_all_in_unknown_tree(store):
    """in_tree of an unknown provider matches nothing."""
    providers.create(store, "a")
    assert providers.list_all(store, in_tree=h.new_uuid()) == []


def test_tree(store):
    """tree() lists the whole tree from any of its members."""
    root, child, grand, other = _tree(store)
    providers.create(store, "lone")
    for member in (root, child, grand, other):
        assert providers.tree(store, member.uuid) == [
            root, child, grand, other]
    with pytest.raises(errors.ResourceProviderNotFound):
        providers.tree(store, h.new_uuid())


# update


def test_rename(store):
    """A rename changes the name and updated_at, not the generation."""
    rp = providers.create(store, "old")
    h.add_inventory(store, rp.uuid, VCPU=4)
    before = providers.get(store, rp.uuid)
    renamed = providers.update(store, rp.uuid, name="new")
    assert renamed.name == "new"
    assert renamed.generation == before.generation == 1
    assert renamed.updated_at is not None
    assert renamed.last_modified == renamed.updated_at
    assert providers.get(store, rp.uuid) == renamed
    assert providers.list_all(store, name="old") == []


def test_update_nothing(store):
    """An update that changes nothing returns the provider unchanged."""
    rp = providers.create(store, "cn1")
    assert providers.update(store, rp.uuid) == rp
    assert providers.update(store, rp.uuid, name="cn1") == rp
    assert providers.get(store, rp.uuid).updated_at is None


def test_rename_to_taken_name(store):
    """Renaming to another provider's name is DuplicateName."""
    providers.create(store, "a")
    b = providers.create(store, "b")
    exc = h.raises_unchanged(store, errors.DuplicateName, providers.update,
                             b.uuid, name="a")
    assert exc.fields == {"name": "a"}


@pytest.mark.parametrize("name", ["", "z" * 201])
def test_rename_bad_name(store, name):
    """Renaming to an empty or too long name is InvalidName."""
    rp = providers.create(store, "cn1")
    h.raises_unchanged(store, errors.InvalidName, providers.update,
                       rp.uuid, name=name)


def test_update_unknown(store):
    """Updating an unknown provider is ResourceProviderNotFound."""
    h.raises_unchanged(store, errors.ResourceProviderNotFound,
                       providers.update, h.new_uuid(), name="x")


def test_give_parent_to_root(store):
    """A root may get a parent without allow_reparenting; its subtree
    (grandchildren included) moves to the new root."""
    top = providers.create(store, "top")
    root, child, grand, other = _tree(store)
    moved = providers.update(store, root.uuid, parent_uuid=top.uuid)
    assert moved.parent_provider_uuid == top.uuid
    assert moved.root_provider_uuid == top.uuid
    assert moved.generation == root.generation
    assert _roots(store) == {
        "top": (None, "top"), "root": ("top", "top"),
        "child": ("root", "top"), "grand": ("child", "top"),
        "other": ("root", "top")}
    assert [rp.name for rp in providers.tree(store, grand.uuid)] == [
        "top", "root", "child", "grand", "other"]


def test_keep_same_parent(store):
    """Naming the current parent again is allowed and changes nothing."""
    root, child, _grand, _other = _tree(store)
    same = providers.update(store, child.uuid, parent_uuid=root.uuid)
    assert same == child


def test_reparent_refused_without_allow(store):
    """Moving a child to another parent needs allow_reparenting."""
    root, child, _grand, other = _tree(store)
    exc = h.raises_unchanged(store, errors.InvalidParent, providers.update,
                             child.uuid, parent_uuid=other.uuid)
    assert "re-parenting" in exc.message


def test_reparent_within_tree(store):
    """With allow_reparenting a child moves under a sibling; the root
    stays."""
    root, child, _grand, other = _tree(store)
    moved = providers.update(store, child.uuid, parent_uuid=other.uuid,
                             allow_reparenting=True)
    assert moved.parent_provider_uuid == other.uuid
    assert moved.root_provider_uuid == root.uuid
    assert _roots(store)["grand"] == ("child", "root")
    assert _roots(store)["child"] == ("other", "root")


def test_reparent_to_other_tree(store):
    """Moving a subtree into another tree gives it that tree's root."""
    _root, child, grand, _other = _tree(store)
    far = providers.create(store, "far")
    leaf = providers.create(store, "leaf", parent_uuid=far.uuid)
    moved = providers.update(store, child.uuid, parent_uuid=leaf.uuid,
                             allow_reparenting=True)
    assert moved.root_provider_uuid == far.uuid
    assert moved.generation == child.generation
    assert _roots(store) == {
        "root": (None, "root"), "child": ("leaf", "far"),
        "grand": ("child", "far"), "other": ("root", "root"),
        "far": (None, "far"), "leaf": ("far", "far")}
    assert providers.get(store, grand.uuid).root_id == far.id


def test_unparent_refused_without_allow(store):
    """Making a child a root needs allow_reparenting."""
    _root, child, _grand, _other = _tree(store)
    exc = h.raises_unchanged(store, errors.InvalidParent, providers.update,
                             child.uuid, parent_uuid=None)
    assert "un-parenting" in exc.message


def test_unparent(store):
    """An un-parented provider becomes the root of its subtree."""
    _root, child, _grand, _other = _tree(store)
    moved = providers.update(store, child.uuid, parent_uuid=None,
                             allow_reparenting=True)
    assert moved.parent_provider_uuid is None
    assert moved.root_provider_uuid == child.uuid
    assert moved.root_id == child.id
    assert _roots(store) == {
        "root": (None, "root"), "child": (None, "child"),
        "grand": ("child", "child"), "other": ("root", "root")}


def test_unparent_a_root(store):
    """parent None on a root is a no-op, allowed either way."""
    rp = providers.create(store, "cn1")
    assert providers.update(store, rp.uuid, parent_uuid=None) == rp


def test_loop_under_own_descendant(store):
    """A provider cannot move below its own subtree, even when
    re-parenting is allowed."""
    root, child, grand, _other = _tree(store)
    exc = h.raises_unchanged(store, errors.InvalidParent, providers.update,
                             root.uuid, parent_uuid=grand.uuid)
    assert "loop" in exc.message
    exc = h.raises_unchanged(store, errors.InvalidParent, providers.update,
                             child.uuid, parent_uuid=grand.uuid,
                             allow_reparenting=True)
    assert "loop" in exc.message


def test_loop_parent_is_self(store):
    """Being one's own parent is a loop."""
    rp = providers.create(store, "cn1")
    exc = h.raises_unchanged(store, errors.InvalidParent, providers.update,
                             rp.uuid, parent_uuid=rp.uuid)
    assert "loop" in exc.message


def test_update_unknown_parent(store):
    """An unknown new parent is InvalidParent."""
    rp = providers.create(store, "cn1")
    exc = h.raises_unchanged(store, errors.InvalidParent, providers.update,
                             rp.uuid, parent_uuid=h.new_uuid())
    assert "does not exist" in exc.message


def test_rename_and_reparent_fail_together(store):
    """A rename in the same call as a refused re-parenting is not
    stored."""
    _root, child, _grand, other = _tree(store)
    h.raises_unchanged(store, errors.InvalidParent, providers.update,
                       child.uuid, name="renamed", parent_uuid=other.uuid)
    assert providers.get(store, child.uuid).name == "child"


def test_rename_and_reparent(store):
    """Name and parent change in one call."""
    top = providers.create(store, "top")
    rp = providers.create(store, "cn1")
    moved = providers.update(store, rp.uuid, name="cn2",
                             parent_uuid=top.uuid)
    assert (moved.name, moved.parent_provider_uuid) == ("cn2", top.uuid)


# delete


def test_delete(store):
    """A deleted provider is gone; others stay."""
    a = providers.create(store, "a")
    b = providers.create(store, "b")
    assert providers.delete(store, a.uuid) is None
    with pytest.raises(errors.ResourceProviderNotFound):
        providers.get(store, a.uuid)
    assert providers.list_all(store) == [b]
    # the name is free again
    assert providers.create(store, "a").name == "a"


def test_delete_unknown(store):
    """Deleting an unknown provider is ResourceProviderNotFound."""
    h.raises_unchanged(store, errors.ResourceProviderNotFound,
                       providers.delete, h.new_uuid())


def test_delete_parent_refused(store):
    """A provider with children cannot be deleted; leaves first works."""
    root, child, grand, other = _tree(store)
    for parent in (root, child):
        exc = h.raises_unchanged(store, errors.CannotDeleteParent,
                                 providers.delete, parent.uuid)
        assert exc.uuid == parent.uuid
        assert exc.code == errors.PROVIDER_CANNOT_DELETE_PARENT
        assert exc.http_status == 409
    for rp in (grand, child, other, root):
        providers.delete(store, rp.uuid)
    assert providers.list_all(store) == []


def test_delete_in_use_refused(store):
    """A provider with allocations cannot be deleted."""
    rp = providers.create(store, "cn1")
    h.add_inventory(store, rp.uuid, VCPU=4)
    h.allocate(store, rp.uuid, VCPU=1)
    exc = h.raises_unchanged(store, errors.ResourceProviderInUse,
                             providers.delete, rp.uuid)
    assert exc.uuid == rp.uuid
    assert exc.code == errors.PROVIDER_IN_USE


def test_delete_removes_inventory_traits_aggregates(store):
    """Deleting removes the provider's inventories, trait and aggregate
    links, but not the traits or aggregates themselves."""
    rp = providers.create(store, "cn1")
    keep = providers.create(store, "cn2")
    agg = h.new_uuid()
    traits.ensure(store, "CUSTOM_GOLD")
    for target in (rp, keep):
        h.add_inventory(store, target.uuid, VCPU=4, MEMORY_MB=1024)
        traits.set_for_provider(store, target.uuid, None,
                                ["CUSTOM_GOLD", "HW_CPU_X86_AVX"])
        aggregates.set_for_provider(store, target.uuid, [agg])
    providers.delete(store, rp.uuid)
    for table in (tables.inventories, tables.resource_provider_traits,
                  tables.resource_provider_aggregates):
        assert h.count_rows(store, table, resource_provider_id=rp.id) == 0
        assert h.count_rows(store, table,
                            resource_provider_id=keep.id) > 0
    assert traits.exists(store, "CUSTOM_GOLD")
    assert aggregates.provider_uuids_in(store, [agg]) == [keep.uuid]
    assert h.count_rows(store, tables.placement_aggregates, uuid=agg) == 1
    assert set(inventories.by_provider(store)) == {keep.uuid}


def test_delete_child_keeps_parent(store):
    """Deleting a leaf leaves the rest of its tree intact."""
    root, child, grand, other = _tree(store)
    providers.delete(store, grand.uuid)
    assert providers.tree(store, root.uuid) == [root, child, other]
    providers.delete(store, child.uuid)
    assert providers.tree(store, root.uuid) == [root, other]


def test_create_name_with_trailing_space(store):
    """A name that differs only by trailing spaces is a new name on every
    engine (MySQL tables use a no-pad binary collation)."""
    providers.create(store, "cn1")
    assert providers.create(store, "cn1 ").name == "cn1 "
    assert [rp.name for rp in providers.list_all(store)] == ["cn1", "cn1 "]
    assert [rp.name for rp in providers.list_all(store, name="cn1")] == [
        "cn1"]


def test_name_with_nul_is_refused(store):
    """A NUL character is refused alike on every engine."""
    h.raises_unchanged(store, errors.InvalidName, providers.create,
                       "bad\x00name")


def test_rename_adding_trailing_space(store):
    """Renaming a provider to its name plus a trailing space is no clash
    with itself, on every engine."""
    rp = providers.create(store, "cn1")
    assert providers.update(store, rp.uuid, name="cn1 ").name == "cn1 "
    assert providers.get(store, rp.uuid).name == "cn1 "
