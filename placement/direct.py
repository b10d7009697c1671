"""In-process placement: the operations of the REST API as Python calls.

The scheduler and the simulator use this instead of HTTP: values in and
out are Python objects (dataclasses of placement.objects), nothing is
serialised, and each call is one transaction on the store. Failures raise
the typed errors of placement.errors, as the REST API maps them to HTTP.

    placement = PlacementDirect.open(conf)
    rp = placement.create_provider("compute-1")
    placement.set_inventories(rp.uuid, {"VCPU": {"total": 16}})
    placement.put_allocations(consumer, {rp.uuid: {"VCPU": 2}},
                              project_id="p", user_id="u")
"""

import uuid as uuidlib
from collections.abc import Collection, Iterable, Mapping
from typing import Any, TypeAlias, cast

from oslo_config import cfg

from placement.db import store as store_mod
from placement.objects import (
    aggregates,
    allocations,
    consumer_groups,
    consumers,
    inventories,
    providers,
    reshaper,
    resource_classes,
    traits,
    usages,
)

UNCHECKED = allocations.UNCHECKED
KEEP = providers.KEEP

# A provider's or consumer's uuid: text (any case, dashes or not) or a
# uuid.UUID.
Uuid: TypeAlias = str | uuidlib.UUID
# An inventory: an Inventory, a dict of its fields, or just its total.
InventoryValue: TypeAlias = inventories.Inventory | Mapping[str, Any] | int
# One provider's part of an allocation: {rc: amount}, or the REST form
# {"resources": {rc: amount}}.
AllocationValue: TypeAlias = Mapping[str, Any]
# update_provider's parent: a uuid, None (make it a root) or KEEP.
Parent: TypeAlias = Uuid | None | object
# put_allocations' consumer generation: the current one, None (the
# consumer must not exist yet) or UNCHECKED.
ConsumerGeneration: TypeAlias = int | None | object

Provider: TypeAlias = providers.ResourceProvider
Inventory: TypeAlias = inventories.Inventory


def as_inventory(resource_class: str, value: InventoryValue) -> Inventory:
    """An Inventory from an Inventory, a dict of its fields, or a total."""
    if isinstance(value, inventories.Inventory):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return inventories.Inventory(resource_class, total=value)
    return inventories.Inventory(resource_class,
                                 **cast(Mapping[str, Any], value))


def as_resources(allocation: AllocationValue) -> dict[str, int]:
    """{rc: amount} from either that or the REST form {"resources": ...}."""
    if set(allocation) == {"resources"}:
        return dict(allocation["resources"])
    return dict(allocation)


class PlacementDirect:
    """Placement operations on one store."""

    def __init__(self, store: store_mod.Store) -> None:
        self.store = store

    @classmethod
    def open(cls, conf: cfg.ConfigOpts) -> "PlacementDirect":
        return cls(store_mod.Store.open(conf))

    def close(self) -> None:
        self.store.dispose()

    # resource providers

    def create_provider(self, name: str, uuid: Uuid | None = None,
                        parent_uuid: Uuid | None = None) -> Provider:
        return providers.create(self.store, name, uuid=uuid,
                                parent_uuid=parent_uuid)

    def get_provider(self, uuid: Uuid) -> Provider:
        return providers.get(self.store, uuid)

    def list_providers(self, uuid: Uuid | None = None,
                       name: str | None = None,
                       in_tree: Uuid | None = None) -> list[Provider]:
        return providers.list_all(self.store, uuid=uuid, name=name,
                                  in_tree=in_tree)

    def provider_tree(self, uuid: Uuid) -> list[Provider]:
        return providers.tree(self.store, uuid)

    def update_provider(self, uuid: Uuid, name: str | None = None,
                        parent_uuid: Parent = KEEP,
                        allow_reparenting: bool = True) -> Provider:
        return providers.update(self.store, uuid, name=name,
                                parent_uuid=parent_uuid,
                                allow_reparenting=allow_reparenting)

    def delete_provider(self, uuid: Uuid) -> None:
        providers.delete(self.store, uuid)

    # inventories

    def get_inventories(self, uuid: Uuid
                        ) -> tuple[int, dict[str, Inventory]]:
        """(generation, {rc: Inventory})."""
        provider, invs = inventories.get_all(self.store, uuid)
        return provider.generation, invs

    def set_inventories(self, uuid: Uuid,
                        inventory_map: Mapping[str, InventoryValue],
                        generation: int | None = None
                        ) -> tuple[int, dict[str, Inventory]]:
        """Replace the provider's inventory with ``inventory_map``
        ({rc: Inventory, dict of fields, or total}). ``generation`` None
        skips the generation check. Returns (generation, {rc: Inventory}).
        """
        invs = [as_inventory(rc, v) for rc, v in inventory_map.items()]
        return inventories.replace_all(self.store, uuid, generation, invs)

    def update_inventory(self, uuid: Uuid, resource_class: str,
                         value: InventoryValue,
                         generation: int | None = None
                         ) -> tuple[int, Inventory]:
        return inventories.update(self.store, uuid,
                                  as_inventory(resource_class, value),
                                  generation=generation)

    def delete_inventory(self, uuid: Uuid, resource_class: str,
                         generation: int | None = None) -> int:
        return inventories.delete(self.store, uuid, resource_class,
                                  generation=generation)

    # traits

    def list_traits(self, name_in: Iterable[str] | None = None,
                    prefix: str | None = None,
                    associated: bool | None = None) -> list[str]:
        return traits.list_names(self.store, name_in=name_in, prefix=prefix,
                                 associated=associated)

    def ensure_trait(self, name: str) -> bool:
        return traits.ensure(self.store, name)

    def delete_trait(self, name: str) -> None:
        traits.delete(self.store, name)

    def get_provider_traits(self, uuid: Uuid) -> tuple[int, list[str]]:
        """(generation, sorted names)."""
        provider, names = traits.for_provider(self.store, uuid)
        return provider.generation, names

    def set_provider_traits(self, uuid: Uuid, names: Collection[str],
                            generation: int | None = None
                            ) -> tuple[int, list[str]]:
        return traits.set_for_provider(self.store, uuid, generation, names)

    # aggregates

    def get_provider_aggregates(self, uuid: Uuid
                                ) -> tuple[int, list[str]]:
        """(generation, sorted aggregate uuids)."""
        provider, aggs = aggregates.for_provider(self.store, uuid)
        return provider.generation, aggs

    def set_provider_aggregates(self, uuid: Uuid,
                                aggregate_uuids: Collection[Uuid],
                                generation: int | None = None
                                ) -> tuple[int, list[str]]:
        return aggregates.set_for_provider(
            self.store, uuid, aggregate_uuids, generation=generation,
            bump_generation=True)

    # resource classes

    def list_resource_classes(self
                              ) -> list[resource_classes.ResourceClass]:
        return resource_classes.list_all(self.store)

    def ensure_resource_class(self, name: str
                              ) -> tuple[resource_classes.ResourceClass,
                                         bool]:
        return resource_classes.ensure(self.store, name)

    def delete_resource_class(self, name: str) -> None:
        resource_classes.delete(self.store, name)

    # allocations

    def put_allocations(self, consumer_uuid: str,
                        allocation_map: Mapping[Uuid, AllocationValue],
                        project_id: str, user_id: str,
                        consumer_generation: ConsumerGeneration = UNCHECKED,
                        consumer_type: str | None = None,
                        group: consumer_groups.GroupRule | None = None
                        ) -> int | None:
        """Replace the consumer's allocations ({provider uuid: {rc: n}};
        empty removes them). Returns the new consumer generation.
        ``group``: the consumer group it joins, whose rule the write
        keeps (placement.objects.consumer_groups)."""
        write = allocations.ConsumerAllocations(
            consumer_uuid,
            {rp: as_resources(a) for rp, a in allocation_map.items()},
            project_id=project_id, user_id=user_id,
            consumer_generation=consumer_generation,
            consumer_type=consumer_type, group=group)
        result = allocations.replace(self.store, [write])
        return result[providers.canonical_uuid(consumer_uuid)]

    def post_allocations(self,
                         writes: Iterable[allocations.ConsumerAllocations]
                         ) -> dict[str, int | None]:
        """Several consumers at once (ConsumerAllocations), atomically."""
        return allocations.replace(self.store, list(writes))

    def group_members(self, group_uuid: Uuid
                      ) -> dict[str, frozenset[str]]:
        """{member: root providers it is under} of a consumer group."""
        return consumer_groups.placed(self.store, group_uuid)

    def get_allocations(self, consumer_uuid: Uuid
                        ) -> allocations.ConsumerView:
        return allocations.for_consumer(self.store, consumer_uuid)

    def delete_allocations(self, consumer_uuid: Uuid) -> None:
        allocations.delete_for_consumer(self.store, consumer_uuid)

    def get_provider_allocations(self, uuid: Uuid
                                 ) -> allocations.ProviderAllocations:
        return allocations.for_provider(self.store, uuid)

    def get_consumer(self, consumer_uuid: Uuid) -> consumers.Consumer:
        return consumers.get(self.store, consumer_uuid)

    # usages

    def get_provider_usages(self, uuid: Uuid) -> tuple[int, dict[str, int]]:
        """(generation, {rc: used})."""
        provider, used = usages.for_provider(self.store, uuid)
        return provider.generation, used

    def get_project_usages(self, project_id: str,
                           user_id: str | None = None) -> dict[str, int]:
        return usages.for_project(self.store, project_id, user_id=user_id)

    def get_project_usages_by_consumer_type(
            self, project_id: str, user_id: str | None = None,
            consumer_type: str | None = None) -> dict[str, dict[str, Any]]:
        return usages.for_project_by_consumer_type(
            self.store, project_id, user_id=user_id,
            consumer_type=consumer_type)

    # reshaper

    def reshape(self,
                inventory_maps: Mapping[
                    Uuid, tuple[int, Mapping[str, InventoryValue]]],
                writes: Iterable[allocations.ConsumerAllocations]) -> None:
        """``inventory_maps``: {provider uuid: (generation, {rc: value})};
        ``writes``: ConsumerAllocations for every consumer that moves."""
        new = {uuid: (gen, [as_inventory(rc, v) for rc, v in invs.items()])
               for uuid, (gen, invs) in inventory_maps.items()}
        reshaper.reshape(self.store, new, list(writes))
