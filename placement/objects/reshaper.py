"""The reshaper: move inventory and allocations between providers in one
transaction, as a compute node does when it splits a flat inventory into
nested providers (for example VGPU moving from the root to child
providers).

Inventories are first widened to old plus new, so that the allocations
can be rewritten against either; then the allocations are replaced; then
the inventories are narrowed to exactly the new ones. Generations move as
they do in OpenStack Placement for the same steps.
"""

import dataclasses

from placement.db import store
from placement.objects import allocations, inventories, providers


@store.writer(retry_conflicts=True)
def reshape(txn, new_inventories, writes, reserved_can_be_total=True):
    """``new_inventories``: {provider uuid: (generation, [Inventory])};
    ``writes``: a list of allocations.ConsumerAllocations. Any failure
    (a stale generation, inventory still in use, an allocation that does
    not fit) leaves everything as it was."""
    # Locked, not merely read: a claim committing between this check and
    # the inventory writes below would otherwise go unseen. On a Galera
    # cluster the lock holds only on this node; a claim through another
    # node writes the same provider row, so either certification refuses
    # one of the two at COMMIT or the claim's replication aborts this
    # transaction (both error 1213, retried from fresh reads). The first
    # write of each provider with new inventories is moreover a
    # compare-and-set from the generation the caller gave.
    locked = providers.lock_generations(txn, new_inventories)
    checked = {}
    for rp_uuid, (generation, invs) in new_inventories.items():
        provider = providers.get(txn, rp_uuid)
        provider = dataclasses.replace(
            provider, generation=locked.get(provider.uuid,
                                            provider.generation))
        providers.check_generation(provider, generation)
        for inv in invs:
            inv.check(provider.uuid, reserved_can_be_total)
        checked[provider.uuid] = (generation, invs)
    for rp_uuid, (generation, invs) in checked.items():
        if not invs:
            continue
        _, current = inventories.get_all(txn, rp_uuid)
        widened = dict(current)
        widened.update({inv.resource_class: inv for inv in invs})
        inventories.replace_all(txn, rp_uuid, generation,
                                list(widened.values()), reserved_can_be_total)
    allocations.replace(txn, writes)
    for rp_uuid, (_, invs) in checked.items():
        inventories.replace_all(txn, rp_uuid, None, invs,
                                reserved_can_be_total)
