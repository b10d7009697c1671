"""A small host cloud for scheduler tests: compute nodes, services,
aggregates and instances written through scheduler.host_records, a
HostStateTable over them, and HostRequests to run filters and weighers
against.

    cloud = Cloud(sqlite_store)
    cloud.node("n1", vcpus=8, memory_mb=4096, local_gb=100)
    cloud.aggregate("agg1", ["n1"], availability_zone="az1")
    request = cloud.request({"flavor": {...}})
    mask = SomeFilter(cloud.conf).mask(request, cloud.rows("n1", "n2"))
"""

import uuid as uuidlib

import numpy as np

from scheduler import conf as scheduler_conf
from scheduler import host_records as hr
from scheduler import host_request, host_state
from scheduler import request_spec as rs

NOW = 1_900_000_000.0

FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}


def uuid_of(name):
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, name))


class Cloud:
    def __init__(self, store):
        self.store = store
        self.conf = store.conf
        scheduler_conf.register_opts(self.conf)
        self._table = None

    def set(self, group, name, value):
        """Override a config option for this test."""
        self.conf.set_override(name, value, group=group)

    # -- writes --------------------------------------------------------

    def node(self, name, host=None, **report):
        """A compute node (nodename ``name``, host ``host`` or ``name``);
        ``report`` as host_records.upsert_compute_node takes it."""
        report.setdefault("vcpus", 8)
        report.setdefault("memory_mb", 8192)
        report.setdefault("local_gb", 100)
        uuid = uuid_of(name)
        hr.upsert_compute_node(self.store, uuid, host or name, name,
                               **report)
        return uuid

    def service(self, host, **state):
        """enabled, disabled_reason, forced_down (set_service_state)."""
        hr.set_service_state(self.store, host, **state)

    def heartbeat(self, host, at):
        hr.heartbeat(self.store, host, at)

    def aggregate(self, name, hosts, **metadata):
        uuid = uuid_of("agg-" + name)
        hr.update_aggregate(self.store, uuid, name,
                            {k: str(v) for k, v in metadata.items()}, hosts)
        return uuid

    def instances(self, host, instances):
        """Instances on ``host``: uuids or {uuid, flavor_id, project_id}."""
        hr.update_instance_info(self.store, host, instances)

    # -- reads ---------------------------------------------------------

    @property
    def table(self):
        if self._table is None:
            self._table = host_state.HostStateTable(
                self.store, self.conf, clock=lambda: NOW)
        self._table.sync()
        return self._table

    def rows(self, *names):
        """Rows of these nodenames (every node when none is named)."""
        table = self.table
        if not names:
            return table.live_rows()
        return np.array([table.row_of(uuid_of(n)) for n in names],
                        np.int64)

    def names(self, rows, mask=None):
        """Nodenames of ``rows`` (those where ``mask`` is True)."""
        rows = np.asarray(rows)
        if mask is not None:
            rows = rows[np.asarray(mask, bool)]
        return sorted(self.table.nodenames[r] for r in rows)

    def spec(self, **fields):
        data = {"flavor": dict(FLAVOR)}
        data.update(fields)
        return rs.RequestSpec.from_dict(data)

    def request(self, spec=None, **kw):
        """A HostRequest for ``spec`` (a RequestSpec or its dict form;
        default: a 1 vCPU flavor)."""
        if spec is None:
            spec = self.spec()
        elif isinstance(spec, dict):
            data = {"flavor": dict(FLAVOR)}
            data.update(spec)
            spec = rs.RequestSpec.from_dict(data)
        return host_request.HostRequest(spec=spec, table=self.table,
                                        conf=self.conf, now=NOW, **kw)

    def close(self):
        if self._table is not None:
            self._table.close()


def add_host(cloud, placement, name, host=None, vcpus=8, memory_mb=8192,
             disk_gb=100, cell=None, traits=(), aggregates=(), **report):
    """A compute node both placement and the host table know: a root
    provider with VCPU, MEMORY_MB and DISK_GB inventory (the same uuid)
    and a host record reporting the same totals."""
    uuid = cloud.node(name, host=host, vcpus=vcpus, memory_mb=memory_mb,
                      local_gb=disk_gb, cell_uuid=cell, **report)
    placement.create_provider(name, uuid=uuid)
    placement.set_inventories(uuid, {
        "VCPU": {"total": vcpus, "allocation_ratio": 1.0},
        "MEMORY_MB": vcpus and memory_mb,
        "DISK_GB": disk_gb})
    if traits:
        for trait in traits:
            placement.ensure_trait(trait)
        placement.set_provider_traits(uuid, list(traits))
    if aggregates:
        placement.set_provider_aggregates(uuid, list(aggregates))
    return uuid


def forced_nodename(scheduler, host):
    """The node a scheduler picks for one instance forced onto ``host``
    (it claims there): what a test of a view that must hold ``host``
    asserts."""
    [[chosen]] = scheduler.select_destinations(
        None, {"flavor": FLAVOR, "force_hosts": [host]}, None,
        return_alternates=False)
    return chosen.nodename
