"""The host filter protocol.

A filter looks at all candidate hosts at once: ``mask(request, rows)``
gets a scheduler.host_request.HostRequest and an int64 array of rows of
the host state table and returns a boolean array, True for the rows that
pass. Explanations are computed only when asked: ``why(request, row)``
says in one line why a rejected row failed.

Class attributes, as in Nova:

- ``run_filter_once_per_request``: for a multi-instance request, run
  before the first instance only (the answer cannot change in between);
- ``RUN_ON_REBUILD``: run when an instance is rebuilt on its own host.

Third-party filters can be written per host instead: subclass
:class:`PerHostFilter` and implement ``host_passes(host, request)``, where
``host`` is a :class:`HostView` of one row. Register either kind under
the ``gantt.scheduler.filters`` entry point group; ``[filter_scheduler]
enabled_filters`` names them by their ``name``.
"""

import numpy as np


class BaseFilter:
    # The name enabled_filters uses; Nova's class name for ours.
    name = None
    run_filter_once_per_request = False
    RUN_ON_REBUILD = False

    def __init__(self, conf):
        self.conf = conf

    def mask(self, request, rows):
        raise NotImplementedError

    def why(self, request, row):
        """Why ``row`` was rejected, for explain; override for detail."""
        return f"rejected by {self.name}"


def all_pass(rows):
    return np.ones(len(rows), bool)


class HostView:
    """One row of the host state table, read as Nova's HostState reads:
    for per-host plugins, not for built-in filters."""

    def __init__(self, table, row):
        self._table = table
        self.row = int(row)

    @property
    def uuid(self):
        return self._table.uuids[self.row]

    @property
    def host(self):
        return self._table.hosts[self.row]

    @property
    def nodename(self):
        return self._table.nodenames[self.row]

    def __getattr__(self, column):
        # free_ram_mb, free_disk_mb, vcpus_total, vcpus_used,
        # num_instances, num_io_ops, failed_builds, hypervisor_version...
        if column.startswith("_"):
            raise AttributeError(column)
        array = getattr(self._table, column, None)
        if not isinstance(array, np.ndarray) or array.ndim != 1:
            raise AttributeError(column)
        return array[self.row].item()

    @property
    def hypervisor_type(self):
        return self._table.hypervisor_types.name(
            int(self._table.hypervisor_type[self.row]))

    @property
    def cell_uuid(self):
        return self._table.cells.name(int(self._table.cell[self.row]))

    @property
    def availability_zone(self):
        return self._table.zone(self.row)

    @property
    def aggregates(self):
        return self._table.aggregates_of(self.row)

    @property
    def instances(self):
        return self._table.instances_on(self.row)

    @property
    def node(self):
        """The compute node record (cpu_info, numa_topology, stats...)."""
        return self._table.node(self.row)

    @property
    def service(self):
        return self._table.service(self.row)

    @property
    def metrics(self):
        return {m["name"]: m.get("value")
                for m in (self.node.metrics or ())}


class PerHostFilter(BaseFilter):
    """A filter that judges one host at a time (third-party plugins)."""

    def host_passes(self, host, request):
        raise NotImplementedError

    def mask(self, request, rows):
        table = request.table
        return np.fromiter(
            (bool(self.host_passes(HostView(table, r), request))
             for r in rows), bool, count=len(rows))
