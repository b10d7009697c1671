"""The provider tree a discovered host reports: provider_tree_data's
providers with uuids that stay the same from one start to the next (so
that a restarted node finds its tree, and its allocations, again)."""

import uuid as uuidlib

from compute.discovery import (
    DiscoveryConfig,
    HostDescription,
    provider_tree_data,
)
from compute.provider_tree import ProviderTree

# Fixed: a provider's uuid is derived from the host's and its own name.
NAMESPACE = uuidlib.UUID("5b0c8f3e-2d4a-4f61-9a57-3c6e1d2b7f90")


def provider_uuid(hostname: str, name: str) -> str:
    return str(uuidlib.uuid5(NAMESPACE, f"{hostname}/{name}"))


def provider_tree(host: HostDescription,
                  config: DiscoveryConfig | None = None) -> ProviderTree:
    """The tree ``host`` reports, root first then children."""
    data = provider_tree_data(host, config)
    tree = ProviderTree()
    pending = dict(data)
    while pending:
        # Parents before children, whatever order the mapping has.
        ready = [name for name, p in pending.items()
                 if p["parent"] is None or tree.find(
                     provider_uuid(host.hostname, p["parent"]))]
        if not ready:
            raise ValueError(f"providers without a parent: "
                             f"{', '.join(sorted(pending))}")
        for name in ready:
            p = pending.pop(name)
            uuid = provider_uuid(host.hostname, name)
            fields = {"inventories": p["inventories"],
                      "traits": p["traits"]}
            if p["parent"] is None:
                tree.new_root(name, uuid, **fields)
            else:
                tree.new_child(name, provider_uuid(host.hostname,
                                                   p["parent"]),
                               uuid, **fields)
    return tree
