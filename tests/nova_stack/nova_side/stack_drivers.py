"""Compute drivers for the Nova stack test, loaded by nova-compute.

Runs inside Nova's virtualenv: nova-compute imports this module as
``nova.virt.stack_drivers`` (``[DEFAULT] compute_driver =
stack_drivers.<class>``; compute.py puts this folder on nova.virt's
package path). The classes extend Nova's own fake drivers
with two things the test needs and Nova's do not give:

- a node uuid that survives a restart, kept where a real single-node
  driver keeps it (Nova's local node identity file, ``compute_id`` in
  the host's state_path): Nova's fake drivers draw a new one per
  process, and a restarted nova-compute then refuses to start (no
  identity file) or to take over its own compute node record;
- a host that fails the first spawn of chosen instances, so that the
  conductor's reschedule to an alternate can be watched without
  disturbing the other scenarios that land on the same host.
"""

from nova import exception
from nova.virt import fake, node

# Instances whose display name starts with this fail their first spawn
# on a FailFirstSpawnDriver host.
RESCHEDULE_PREFIX = "reschedule-"


class _PersistentNodeIdentity:
    """One node per host, named after the host, whose uuid is the
    host's local node identity (read from, or first written to, its
    state_path)."""

    def get_available_resource(self, nodename):
        resources = super().get_available_resource(nodename)
        if resources:
            resources["uuid"] = node.get_local_node_uuid()
        return resources

    def get_nodenames_by_uuid(self, refresh=False):
        return {node.get_local_node_uuid(): name
                for name in self.get_available_nodes()}


class PlainDriver(_PersistentNodeIdentity, fake.MediumFakeDriver):
    """A small host: 10 vCPUs, 8 GiB of RAM, one provider."""


class NestedDriver(_PersistentNodeIdentity,
                   fake.MediumFakeDriverWithNestedCustomResources):
    """A small host with a child provider holding CUSTOM_MAGIC."""


class FailFirstSpawnDriver(_PersistentNodeIdentity, fake.FakeDriver):
    """A large host (the weighers' favourite) whose first spawn of an
    instance named ``reschedule-...`` fails as if resources had gone.

    ComputeResourcesUnavailable is what makes the compute manager send
    the build back to the conductor with the request's alternates.
    """

    _failed = set()

    def spawn(self, context, instance, image_meta, *args, **kwargs):
        name = instance.display_name or ""
        if (name.startswith(RESCHEDULE_PREFIX)
                and instance.uuid not in self._failed):
            self._failed.add(instance.uuid)
            raise exception.ComputeResourcesUnavailable(
                reason="the Nova stack test fails this first spawn")
        return super().spawn(context, instance, image_meta, *args,
                             **kwargs)
