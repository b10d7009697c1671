"""The provider tree a compute node reports, and the diff between the tree
it wants and the one placement holds.

A tree is a set of providers (uuid, name, parent, inventories, traits,
aggregates, generation) kept parents first. Inventories are stored with
every field filled in (placement's defaults), so that a tree read back
from placement compares equal to the one that was written.

    tree = ProviderTree()
    root = tree.new_root("cn1", inventories={"VCPU": 16})
    tree.new_child("cn1-gpu0", root, inventories={"VGPU": 4})
    changes = diff(held, tree)   # what to write so placement holds ``tree``
"""

import dataclasses
import uuid as uuidlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from placement import direct

# {field: value} for every field of an inventory (placement.objects'
# FIELDS), defaults filled in.
InventoryFields = dict[str, Any]


def normalise_inventories(values: Mapping[str, Any]
                          ) -> dict[str, InventoryFields]:
    """{rc: fields} from {rc: total | dict of fields | Inventory}."""
    return {rc: direct.as_inventory(rc, value).values()
            for rc, value in values.items()}


def canonical_uuid(value: Any) -> str:
    return str(uuidlib.UUID(str(value)))


@dataclasses.dataclass
class ProviderData:
    """One provider as a node reports it. ``generation`` is placement's,
    None while the provider exists only here."""

    uuid: str
    name: str
    parent_uuid: str | None = None
    inventories: dict[str, InventoryFields] = dataclasses.field(
        default_factory=dict)
    traits: frozenset[str] = frozenset()
    aggregates: frozenset[str] = frozenset()
    generation: int | None = None

    def copy(self) -> "ProviderData":
        return dataclasses.replace(
            self, inventories={rc: dict(f)
                               for rc, f in self.inventories.items()})


class ProviderTreeError(ValueError):
    """A tree edit that cannot be made (unknown parent, duplicate uuid)."""


class ProviderTree:
    """Providers by uuid, parents always before their children."""

    def __init__(self, providers: Iterable[ProviderData] = ()) -> None:
        self._providers: dict[str, ProviderData] = {}
        for provider in providers:
            self.add(provider)

    # building

    def new_root(self, name: str, uuid: str | None = None,
                 **fields: Any) -> str:
        return self.add(self._new(name, uuid, None, fields))

    def new_child(self, name: str, parent: str, uuid: str | None = None,
                  **fields: Any) -> str:
        parent_uuid = self[parent].uuid
        return self.add(self._new(name, uuid, parent_uuid, fields))

    def remove(self, uuid_or_name: str) -> None:
        """Remove a provider and its whole subtree."""
        doomed = {p.uuid for p in self.subtree(uuid_or_name)}
        for uuid in doomed:
            del self._providers[uuid]

    def update_inventories(self, uuid_or_name: str,
                           values: Mapping[str, Any]) -> None:
        self[uuid_or_name].inventories = normalise_inventories(values)

    def update_traits(self, uuid_or_name: str, names: Iterable[str]) -> None:
        self[uuid_or_name].traits = frozenset(names)

    def update_aggregates(self, uuid_or_name: str,
                          aggregates: Iterable[str]) -> None:
        self[uuid_or_name].aggregates = frozenset(
            canonical_uuid(a) for a in aggregates)

    # reading

    def __getitem__(self, uuid_or_name: str) -> ProviderData:
        found = self.find(uuid_or_name)
        if found is None:
            raise ProviderTreeError(f"no provider {uuid_or_name!r} in tree")
        return found

    def find(self, uuid_or_name: str) -> ProviderData | None:
        if uuid_or_name in self._providers:
            return self._providers[uuid_or_name]
        for provider in self._providers.values():
            if provider.name == uuid_or_name:
                return provider
        return None

    def __contains__(self, uuid: str) -> bool:
        return uuid in self._providers

    def __iter__(self) -> Iterator[ProviderData]:
        """Parents first."""
        return iter(list(self._providers.values()))

    def __len__(self) -> int:
        return len(self._providers)

    def roots(self) -> list[str]:
        return [p.uuid for p in self if p.parent_uuid is None]

    def subtree(self, uuid_or_name: str) -> list[ProviderData]:
        """The provider and its descendants, parents first."""
        top = self[uuid_or_name].uuid
        inside = {top}
        found = []
        for provider in self:
            if provider.uuid == top or provider.parent_uuid in inside:
                inside.add(provider.uuid)
                found.append(provider)
        return found

    def copy(self) -> "ProviderTree":
        return ProviderTree(p.copy() for p in self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProviderTree):
            return NotImplemented
        return self._providers == other._providers

    # internals

    def _new(self, name: str, uuid: str | None, parent_uuid: str | None,
             fields: Mapping[str, Any]) -> ProviderData:
        return ProviderData(
            uuid=canonical_uuid(uuid or uuidlib.uuid4()), name=name,
            parent_uuid=parent_uuid,
            inventories=normalise_inventories(fields.get("inventories", {})),
            traits=frozenset(fields.get("traits", ())),
            aggregates=frozenset(canonical_uuid(a) for a in
                                 fields.get("aggregates", ())))

    def add(self, provider: ProviderData) -> str:
        """Add ``provider``; its parent must be in the tree already."""
        if provider.uuid in self._providers:
            raise ProviderTreeError(
                f"provider {provider.uuid} ({provider.name}) is already in "
                f"the tree")
        if (provider.parent_uuid is not None
                and provider.parent_uuid not in self._providers):
            raise ProviderTreeError(
                f"provider {provider.uuid} ({provider.name}): parent "
                f"{provider.parent_uuid} is not in the tree (parents come "
                f"first)")
        self._providers[provider.uuid] = provider
        return provider.uuid


@dataclasses.dataclass
class TreeDiff:
    """What to write so placement holds the wanted tree. Every list is in
    the order it must be applied: creations parents first, deletions
    children first."""

    create: list[ProviderData] = dataclasses.field(default_factory=list)
    # uuid -> (name, parent uuid): providers renamed or re-parented
    update: dict[str, tuple[str, str | None]] = dataclasses.field(
        default_factory=dict)
    inventories: dict[str, dict[str, InventoryFields]] = dataclasses.field(
        default_factory=dict)
    traits: dict[str, frozenset[str]] = dataclasses.field(
        default_factory=dict)
    aggregates: dict[str, frozenset[str]] = dataclasses.field(
        default_factory=dict)
    delete: list[str] = dataclasses.field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.create or self.update or self.inventories
                    or self.traits or self.aggregates or self.delete)


def diff(held: ProviderTree, wanted: ProviderTree) -> TreeDiff:
    """The writes that turn ``held`` (placement's tree) into ``wanted``.
    A new provider's inventories, traits and aggregates are in the
    per-field maps too: creating a provider sets none of them."""
    changes = TreeDiff()
    for provider in wanted:
        before = held.find(provider.uuid) if provider.uuid in held else None
        if before is None:
            changes.create.append(provider)
            before = ProviderData(provider.uuid, provider.name,
                                  provider.parent_uuid)
        elif (before.name, before.parent_uuid) != (provider.name,
                                                     provider.parent_uuid):
            changes.update[provider.uuid] = (provider.name,
                                             provider.parent_uuid)
        if provider.inventories != before.inventories:
            changes.inventories[provider.uuid] = provider.inventories
        if provider.traits != before.traits:
            changes.traits[provider.uuid] = provider.traits
        if provider.aggregates != before.aggregates:
            changes.aggregates[provider.uuid] = provider.aggregates
    changes.delete = [p.uuid for p in reversed(list(held))
                      if p.uuid not in wanted]
    return changes

