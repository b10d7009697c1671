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

from placement.db import store as store_mod
from placement.objects import (
    aggregates,
    allocations,
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


def as_inventory(resource_class, value):
    """An Inventory from an Inventory, a dict of its fields, or a total."""
    if isinstance(value, inventories.Inventory):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return inventories.Inventory(resource_class, total=value)
    return inventories.Inventory(resource_class, **value)


def as_resources(allocation):
    """{rc: amount} from either that or the REST form {"resources": ...}."""
    if set(allocation) == {"resources"}:
        return dict(allocation["resources"])
    return dict(allocation)


class PlacementDirect:
    """Placement operations on one store."""

    def __init__(self, store):
        self.store = store

    @classmethod
    def open(cls, conf):
        return cls(store_mod.Store.open(conf))

    def close(self):
        self.store.dispose()

    # resource providers

    def create_provider(self, name, uuid=None, parent_uuid=None):
        return providers.create(self.store, name, uuid=uuid,
                                parent_uuid=parent_uuid)

    def get_provider(self, uuid):
        return providers.get(self.store, uuid)

    def list_providers(self, uuid=None, name=None, in_tree=None):
        return providers.list_all(self.store, uuid=uuid, name=name,
                                  in_tree=in_tree)

    def provider_tree(self, uuid):
        return providers.tree(self.store, uuid)

    def update_provider(self, uuid, name=None, parent_uuid=KEEP,
                        allow_reparenting=True):
        return providers.update(self.store, uuid, name=name,
                                parent_uuid=parent_uuid,
                                allow_reparenting=allow_reparenting)

    def delete_provider(self, uuid):
        providers.delete(self.store, uuid)

    # inventories

    def get_inventories(self, uuid):
        """(generation, {rc: Inventory})."""
        provider, invs = inventories.get_all(self.store, uuid)
        return provider.generation, invs

    def set_inventories(self, uuid, inventory_map, generation=None):
        """Replace the provider's inventory with ``inventory_map``
        ({rc: Inventory, dict of fields, or total}). ``generation`` None
        skips the generation check. Returns (generation, {rc: Inventory}).
        """
        invs = [as_inventory(rc, v) for rc, v in inventory_map.items()]
        return inventories.replace_all(self.store, uuid, generation, invs)

    def update_inventory(self, uuid, resource_class, value,
                         generation=None):
        return inventories.update(self.store, uuid,
                                  as_inventory(resource_class, value),
                                  generation=generation)

    def delete_inventory(self, uuid, resource_class, generation=None):
        return inventories.delete(self.store, uuid, resource_class,
                                  generation=generation)

    # traits

    def list_traits(self, name_in=None, prefix=None, associated=None):
        return traits.list_names(self.store, name_in=name_in, prefix=prefix,
                                 associated=associated)

    def ensure_trait(self, name):
        return traits.ensure(self.store, name)

    def delete_trait(self, name):
        traits.delete(self.store, name)

    def get_provider_traits(self, uuid):
        """(generation, sorted names)."""
        provider, names = traits.for_provider(self.store, uuid)
        return provider.generation, names

    def set_provider_traits(self, uuid, names, generation=None):
        return traits.set_for_provider(self.store, uuid, generation, names)

    # aggregates

    def get_provider_aggregates(self, uuid):
        """(generation, sorted aggregate uuids)."""
        provider, aggs = aggregates.for_provider(self.store, uuid)
        return provider.generation, aggs

    def set_provider_aggregates(self, uuid, aggregate_uuids,
                                generation=None):
        return aggregates.set_for_provider(
            self.store, uuid, aggregate_uuids, generation=generation,
            bump_generation=True)

    # resource classes

    def list_resource_classes(self):
        return resource_classes.list_all(self.store)

    def ensure_resource_class(self, name):
        return resource_classes.ensure(self.store, name)

    def delete_resource_class(self, name):
        resource_classes.delete(self.store, name)

    # allocations

    def put_allocations(self, consumer_uuid, allocation_map, project_id,
                        user_id, consumer_generation=UNCHECKED,
                        consumer_type=None):
        """Replace the consumer's allocations ({provider uuid: {rc: n}};
        empty removes them). Returns the new consumer generation."""
        write = allocations.ConsumerAllocations(
            consumer_uuid,
            {rp: as_resources(a) for rp, a in allocation_map.items()},
            project_id=project_id, user_id=user_id,
            consumer_generation=consumer_generation,
            consumer_type=consumer_type)
        result = allocations.replace(self.store, [write])
        return result[providers.canonical_uuid(consumer_uuid)]

    def post_allocations(self, writes):
        """Several consumers at once (ConsumerAllocations), atomically."""
        return allocations.replace(self.store, list(writes))

    def get_allocations(self, consumer_uuid):
        return allocations.for_consumer(self.store, consumer_uuid)

    def delete_allocations(self, consumer_uuid):
        allocations.delete_for_consumer(self.store, consumer_uuid)

    def get_provider_allocations(self, uuid):
        return allocations.for_provider(self.store, uuid)

    def get_consumer(self, consumer_uuid):
        return consumers.get(self.store, consumer_uuid)

    # usages

    def get_provider_usages(self, uuid):
        """(generation, {rc: used})."""
        provider, used = usages.for_provider(self.store, uuid)
        return provider.generation, used

    def get_project_usages(self, project_id, user_id=None):
        return usages.for_project(self.store, project_id, user_id=user_id)

    def get_project_usages_by_consumer_type(self, project_id, user_id=None,
                                            consumer_type=None):
        return usages.for_project_by_consumer_type(
            self.store, project_id, user_id=user_id,
            consumer_type=consumer_type)

    # reshaper

    def reshape(self, inventory_maps, writes):
        """``inventory_maps``: {provider uuid: (generation, {rc: value})};
        ``writes``: ConsumerAllocations for every consumer that moves."""
        new = {uuid: (gen, [as_inventory(rc, v) for rc, v in invs.items()])
               for uuid, (gen, invs) in inventory_maps.items()}
        reshaper.reshape(self.store, new, list(writes))
