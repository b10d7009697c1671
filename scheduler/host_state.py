"""The host state table: one row per compute node, in numpy columns.

Filters build boolean masks over all rows at once and weighers float
arrays (docs/architecture.md). Columns: free RAM and disk, vCPUs, the
allocation ratios, instance and io-op counts, failed builds, service
state, hypervisor type (a code) and version, cell (a code), availability
zone (a code), aggregate membership (a boolean matrix, a column per
aggregate) and metrics (a float column per metric name). The blobs few
filters read (cpu_info, NUMA topology, PCI pools, stats, supported
instances) stay Python objects: :meth:`HostStateTable.node` of a row.

The table follows the database as placement's provider index does, the
same code doing it (placement.db.follower: load, catch up, own commits,
full reload in doubt), on the ``host_changes`` log:

- :meth:`~HostStateTable.sync` loads everything the first time;
- after each commit of its own store it is told which host records
  changed (the ChangeSet's entries of that log) and reloads just those at
  the next sync;
- each sync reads the ``host_changes`` rows other processes wrote since
  the last one (one indexed query when nothing changed) and reloads only
  the records they name.

Given a source (Nova's databases: scheduler.nova_db.source), the table
follows that instead, and the store's log not at all.

Scheduling changes the table in memory only (:meth:`consume`), as Nova's
HostState does: free RAM, disk and vCPUs go down for the next instance of
the same request, and stay down until the node reports again.

Callers hold ``table.lock`` while they read the arrays: a sync may grow
(replace) them.
"""

import dataclasses
import datetime
import logging
import time

import numpy as np

from placement.db import follower
from scheduler import host_options, host_reads, host_tables
from scheduler import host_records as records

LOG = logging.getLogger(__name__)

# The log of the host records (scheduler.host_tables): (kind, ref) entries.
HOST_LOG = follower.FollowedLog.registered(host_tables.LOG)

_EPOCH = datetime.datetime(1970, 1, 1)

# Column name -> (dtype, value of an empty row).
_COLUMNS = {
    "alive": (bool, False),
    "free_ram_mb": (np.int64, 0),
    "free_disk_mb": (np.int64, 0),
    "total_usable_ram_mb": (np.int64, 0),
    "total_usable_disk_gb": (np.int64, 0),
    "disk_mb_used": (np.int64, 0),
    "vcpus_total": (np.int64, 0),
    "vcpus_used": (np.int64, 0),
    "cpu_allocation_ratio": (np.float64, 0.0),
    "ram_allocation_ratio": (np.float64, 0.0),
    "disk_allocation_ratio": (np.float64, 0.0),
    "num_instances": (np.int64, 0),
    "num_io_ops": (np.int64, 0),
    "failed_builds": (np.int64, 0),
    # Free PCI devices: the sum of the node's pool counts.
    "pci_devices": (np.int64, 0),
    "enabled": (bool, False),
    "forced_down": (bool, False),
    # Epoch seconds of the last heartbeat; NaN: none yet.
    "last_seen_up": (np.float64, np.nan),
    "hypervisor_type": (np.int32, -1),  # code in hypervisor_types
    "hypervisor_version": (np.int64, 0),
    "cell": (np.int32, -1),  # code in cells
    "az": (np.int32, -1),  # code in availability_zones
    # The node's report count, and the one consumption was applied to.
    "generation": (np.int64, -1),
    "consumed_generation": (np.int64, -1),
}

# What consume() changes; kept across reloads until the node reports.
_CONSUMED = ("free_ram_mb", "free_disk_mb", "vcpus_used", "num_instances",
             "num_io_ops")


class Categories:
    """Names and the small integer codes that stand for them in a column.
    Codes are never reused, so a code read earlier keeps its meaning."""

    def __init__(self):
        self.names = []
        self._codes = {}

    def code(self, name):
        """The code of ``name``, given one when new; -1 for None."""
        if name is None:
            return -1
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = len(self.names)
            self.names.append(name)
        return code

    def find(self, name):
        """The code of ``name``; -1 when no row ever had it."""
        return self._codes.get(name, -1)

    def name(self, code):
        return self.names[code] if code >= 0 else None


def _epoch(at):
    return np.nan if at is None else (at - _EPOCH).total_seconds()


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _pci_count(node):
    """Devices in a node record's PCI pools."""
    return sum(_int(pool.get("count")) for pool in node.pci_device_pools or ())


def _float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return np.nan


class HostStateTable(follower.Follower):
    """Columnar host state for one store, following its host records'
    log (placement.db.follower.Follower: sync, sync_in, reload, loaded,
    follows_store; ``dirty`` holds the (kind, ref) this process wrote).
    ``conf``: a ConfigOpts (the options of scheduler.host_options are
    registered on it). ``clock``: epoch seconds, what heartbeats are
    judged against.

    ``source``: None for gantt's own host records in ``store``;
    otherwise an object with refresh(table) and close()
    (scheduler.nova_db.source.NovaHostSource) that feeds the table
    through replace_all() and apply()."""

    what = "host state"
    logger = LOG

    def __init__(self, store, conf, clock=time.time, source=None):
        host_options.register_opts(conf)
        self.conf = conf
        self._clock = clock
        self.full_loads = 0
        self.version = 0
        # Moves when a row is given to or taken from a node.
        self.layout_version = 0
        # Moves when aggregate records or memberships may have changed.
        self.aggregate_version = 0
        self._agg_number_cache = {}
        self._agg_number_version = -1
        super().__init__(store, HOST_LOG, source=source)

    # -- state -----------------------------------------------------------

    def _clear(self):
        super()._clear()
        self.size = 0  # rows ever used: columns are valid up to here
        self.free_rows = []
        self.row_of_uuid = {}
        self.rows_by_host = {}  # host -> set of rows
        self.uuids = []
        self.hosts = []
        self.nodenames = []
        self.nodes = []  # row -> host_reads.ComputeNode
        for name, (dtype, _fill) in _COLUMNS.items():
            setattr(self, name, np.zeros(0, dtype))
        self.services = {}  # host -> host_reads.Service
        self.instances = {}  # host -> {instance uuid: host_reads.Instance}
        # instance uuid -> host, kept with ``instances``: group filters
        # look members up without a pass over every host.
        self.instance_host = {}
        # Aggregates: a column each in ``aggregates`` (rows x columns).
        self.agg_col = {}  # aggregate uuid -> column
        self.agg_records = []  # column -> host_reads.Aggregate or None
        self.free_agg_cols = []
        self.host_aggs = {}  # host -> set of columns
        self.aggregates = np.zeros((0, 0), bool)
        self.metrics = {}  # metric name -> float64 column (NaN: absent)
        self.hypervisor_types = Categories()
        self.cells = Categories()
        self.availability_zones = Categories()
        self.version += 1
        self.layout_version = getattr(self, "layout_version", 0) + 1
        self.aggregate_version = getattr(self, "aggregate_version", 0) + 1

    def _grow(self, need):
        capacity = len(self.alive)
        if need <= capacity:
            return
        extra = max(need, int(capacity * 1.5) + 64) - capacity

        def pad(array, fill):
            shape = (extra,) + array.shape[1:]
            return np.concatenate([array, np.full(shape, fill, array.dtype)])

        for name, (_dtype, fill) in _COLUMNS.items():
            setattr(self, name, pad(getattr(self, name), fill))
        self.aggregates = pad(self.aggregates, False)
        self.metrics = {k: pad(v, np.nan) for k, v in self.metrics.items()}
        for names in (self.uuids, self.hosts, self.nodenames, self.nodes):
            names.extend([None] * extra)

    def _new_row(self):
        self.layout_version += 1
        if self.free_rows:
            return self.free_rows.pop()
        row = self.size
        self._grow(row + 1)
        self.size += 1
        return row

    def _agg_column(self, uuid):
        if self.free_agg_cols:
            col = self.free_agg_cols.pop()
        else:
            col = len(self.agg_records)
            self.agg_records.append(None)
            extra = np.zeros((self.aggregates.shape[0], 1), bool)
            self.aggregates = np.concatenate([self.aggregates, extra], axis=1)
        self.agg_col[uuid] = col
        return col

    def _metric(self, name):
        column = self.metrics.get(name)
        if column is None:
            column = self.metrics[name] = np.full(len(self.alive), np.nan)
        return column

    # -- following the database -------------------------------------------

    def _load_all(self, txn):
        self.replace_all(host_reads.aggregates(txn),
                         host_reads.services(txn),
                         host_reads.instances(txn),
                         host_reads.compute_nodes(txn))

    def replace_all(self, aggregates, services, instances, nodes):
        """Hold exactly these records: {aggregate uuid: Aggregate},
        {host: Service}, {host: {instance uuid: Instance}} and compute
        nodes (host_reads records). A source's full load."""
        with self.lock:
            self._clear()
            self._apply_aggregates(aggregates, aggregates.keys())
            self.services = dict(services)
            self.instances = {host: dict(held)
                              for host, held in instances.items() if held}
            self.instance_host = {uuid: host
                                  for host, held in self.instances.items()
                                  for uuid in held}
            for node in nodes:
                self._set_node(node)
            self.loaded = True
            self.full_loads += 1
            self.version += 1

    def _refresh(self, txn, entries):
        """Reload the records the log ``entries`` and ``dirty`` name."""
        todo = set(self.dirty)
        todo.update(entries)
        self._load(txn, todo)

    def _apply_commit(self, changes):
        """A commit of this process: what it touched is reloaded at the
        next sync."""
        self.dirty.update(changes.entries(host_tables.LOG))

    def _load(self, txn, todo):
        """Reload the records named by (kind, ref) pairs."""
        refs = {}
        for kind, ref in todo:
            refs.setdefault(kind, set()).add(ref)
        changed = {}
        readers = ((records.AGGREGATE, "aggregates", host_reads.aggregates),
                   (records.SERVICE, "services", host_reads.services),
                   (records.INSTANCES, "instances", host_reads.instances),
                   (records.NODE, "nodes", host_reads.compute_nodes))
        for kind, name, read in readers:
            wanted = refs.get(kind)
            if wanted:
                changed[name] = (read(txn, wanted), wanted)
        self.apply(**changed)

    def apply(self, aggregates=None, services=None, instances=None,
              nodes=None):
        """Records that may have changed, each kind as (found, wanted):
        ``wanted`` names what was looked for (aggregate uuids, hosts,
        hosts, compute node uuids), ``found`` what exists of it now
        ({uuid: Aggregate}, {host: Service}, {host: {uuid: Instance}},
        a list of ComputeNode); what was wanted and not found is gone."""
        with self.lock:
            hosts = set()
            if aggregates is not None:
                hosts |= self._apply_aggregates(*aggregates)
            if services is not None:
                found, wanted = services
                for host in wanted:
                    if host in found:
                        self.services[host] = found[host]
                    else:
                        self.services.pop(host, None)
                hosts |= set(wanted)
            if instances is not None:
                found, wanted = instances
                for host in wanted:
                    self._set_instances(host, found.get(host))
            if nodes is not None:
                found, wanted = nodes
                for uuid in set(wanted) - {n.uuid for n in found}:
                    self._drop(uuid)
                for node in found:
                    self._set_node(node)
            for host in hosts:
                for row in self.rows_by_host.get(host, ()):
                    self._set_host_columns(row)
            self.version += 1

    def _apply_aggregates(self, found, wanted):
        """Aggregates ``wanted`` are now ``found`` (missing: deleted);
        returns the hosts whose membership or zone may have changed."""
        hosts = set()
        self.aggregate_version += 1
        for uuid in wanted:
            col = self.agg_col.get(uuid)
            old = self.agg_records[col] if col is not None else None
            new = found.get(uuid)
            if old is not None:
                hosts |= old.hosts
                for host in old.hosts:
                    self.host_aggs.get(host, set()).discard(col)
            if new is None:
                if col is not None:
                    del self.agg_col[uuid]
                    self.agg_records[col] = None
                    self.aggregates[:, col] = False
                    self.free_agg_cols.append(col)
                continue
            if col is None:
                col = self._agg_column(uuid)
            self.agg_records[col] = new
            hosts |= new.hosts
            for host in new.hosts:
                self.host_aggs.setdefault(host, set()).add(col)
        return hosts

    def _set_node(self, node):
        row = self.row_of_uuid.get(node.uuid)
        if row is None:
            row = self._new_row()
            self.row_of_uuid[node.uuid] = row
            self.consumed_generation[row] = -1
        elif self.hosts[row] != node.host:
            self._leave_host(row)
        keep = self.consumed_generation[row] == node.generation
        held = self.nodes[row] if keep else None
        if held is not None and held.generation == node.generation:
            # The same report (reloaded for a build failure, say): keep
            # the NUMA cells and PCI pools the scheduler took instances
            # out of (replace_node).
            node = dataclasses.replace(
                node, numa_topology=held.numa_topology,
                pci_device_pools=held.pci_device_pools)
        if not keep:
            self.consumed_generation[row] = -1
            self.free_ram_mb[row] = node.free_ram_mb
            # Nova's HostState: the lower of the two, when the node
            # reports disk_available_least at all.
            least = node.disk_available_least
            self.free_disk_mb[row] = 1024 * (
                node.free_disk_gb if least is None
                else min(least, node.free_disk_gb))
            self.vcpus_used[row] = node.vcpus_used
            stats = node.stats or {}
            self.num_instances[row] = _int(stats.get("num_instances"))
            self.num_io_ops[row] = _int(stats.get("io_workload"))
        self.alive[row] = True
        self.uuids[row] = node.uuid
        self.hosts[row] = node.host
        self.nodenames[row] = node.nodename
        self.nodes[row] = node
        self.rows_by_host.setdefault(node.host, set()).add(row)
        self.total_usable_ram_mb[row] = node.memory_mb
        self.total_usable_disk_gb[row] = node.local_gb
        self.disk_mb_used[row] = 1024 * node.local_gb_used
        self.vcpus_total[row] = node.vcpus
        self.cpu_allocation_ratio[row] = node.cpu_allocation_ratio
        self.ram_allocation_ratio[row] = node.ram_allocation_ratio
        self.disk_allocation_ratio[row] = node.disk_allocation_ratio
        self.failed_builds[row] = node.failed_builds
        self.pci_devices[row] = _pci_count(node)
        self.hypervisor_type[row] = self.hypervisor_types.code(
            node.hypervisor_type)
        self.hypervisor_version[row] = node.hypervisor_version or 0
        self.cell[row] = self.cells.code(node.cell_uuid)
        self.generation[row] = node.generation
        for column in self.metrics.values():
            column[row] = np.nan
        for metric in node.metrics or ():
            self._metric(metric["name"])[row] = _float(metric.get("value"))
        self._set_host_columns(row)

    def _set_host_columns(self, row):
        """Service state, aggregates and zone: what a row gets from its
        host."""
        self.aggregate_version += 1
        host = self.hosts[row]
        service = self.services.get(host)
        if service is None:
            service = host_reads.Service(host)
        self.enabled[row] = not service.disabled
        self.forced_down[row] = service.forced_down
        self.last_seen_up[row] = _epoch(service.last_seen_up)
        cols = sorted(self.host_aggs.get(host, ()))
        self.aggregates[row] = False
        self.aggregates[row, cols] = True
        zones = sorted({self.agg_records[c].metadata.get("availability_zone")
                        for c in cols} - {None, ""})
        self.az[row] = self.availability_zones.code(
            ",".join(zones) or self.conf.default_availability_zone)

    def _set_instances(self, host, held):
        """``host`` holds the instances of ``held`` ({uuid: Instance};
        None or empty: none)."""
        for uuid in self.instances.pop(host, {}):
            if self.instance_host.get(uuid) == host:
                del self.instance_host[uuid]
        if held:
            self.instances[host] = held
            for uuid in held:
                self.instance_host[uuid] = host

    def _leave_host(self, row):
        rows = self.rows_by_host.get(self.hosts[row])
        if rows is not None:
            rows.discard(row)
            if not rows:
                del self.rows_by_host[self.hosts[row]]

    def _drop(self, uuid):
        row = self.row_of_uuid.pop(uuid, None)
        if row is None:
            return
        self.layout_version += 1
        self.aggregate_version += 1
        self._leave_host(row)
        for name, (_dtype, fill) in _COLUMNS.items():
            getattr(self, name)[row] = fill
        self.aggregates[row] = False
        for column in self.metrics.values():
            column[row] = np.nan
        self.uuids[row] = self.hosts[row] = self.nodenames[row] = None
        self.nodes[row] = None
        self.free_rows.append(row)

    # -- rows --------------------------------------------------------------

    def row_of(self, uuid):
        """Row of the compute node ``uuid`` (its root provider); None
        when unknown."""
        return self.row_of_uuid.get(uuid)

    def rows_for_uuids(self, uuids):
        """Rows of these compute node uuids, as an int64 array; -1 for
        uuids the table does not know."""
        get = self.row_of_uuid.get
        return np.fromiter((get(u, -1) for u in uuids), np.int64,
                           count=len(uuids))

    def rows_of_host(self, host):
        """Rows of the nodes of ``host``, in order."""
        return sorted(self.rows_by_host.get(host, ()))

    def row_for_node(self, host, nodename):
        for row in self.rows_by_host.get(host, ()):
            if self.nodenames[row] == nodename:
                return row
        return None

    def live_rows(self):
        return np.flatnonzero(self.alive[:self.size])

    def node(self, row):
        """The compute node record of ``row``: cpu_info, numa_topology,
        pci_device_pools, supported_instances, stats, metrics, host_ip."""
        return self.nodes[row]

    def service(self, row):
        """The service record of ``row``'s host (disabled_reason, ...)."""
        host = self.hosts[row]
        return self.services.get(host) or host_reads.Service(host)

    def instances_on(self, row):
        """{instance uuid: Instance} on ``row``'s host."""
        return self.instances.get(self.hosts[row], {})

    # -- columns computed on use ------------------------------------------

    def service_up(self, now=None, rows=None):
        """Which rows have their compute service up: not forced down, and
        a heartbeat within [DEFAULT] service_down_time of ``now`` (epoch
        seconds; default: the clock), or none yet. A mask over every row,
        or over ``rows`` (an index array) when given."""
        now = self._clock() if now is None else now
        at = slice(0, self.size) if rows is None else rows
        seen = self.last_seen_up[at]
        with np.errstate(invalid="ignore"):
            recent = (np.abs(now - seen)
                      <= self.conf.service_down_time)
        return ((np.isnan(seen) | recent) & ~self.forced_down[at]
                & self.alive[at])

    def in_zone(self, zone):
        """Rows whose host is in availability zone ``zone`` (a host in
        several zones is in each of them)."""
        codes = [code for code, name in
                 enumerate(self.availability_zones.names)
                 if zone in name.split(",")]
        return np.isin(self.az[:self.size], codes) & self.alive[:self.size]

    def hypervisor_type_code(self, name):
        """Code of hypervisor type ``name`` in the hypervisor_type column;
        -1 when no node has it."""
        return self.hypervisor_types.find(name)

    def cell_code(self, cell_uuid):
        """Code of a cell in the cell column; -1 when no node is in it."""
        return self.cells.find(cell_uuid)

    def min_compute_service_version(self):
        """The lowest Nova service version among the compute services
        that are not forced down, as Nova's owner_nova request filter
        asks it; None when no service reports one (gantt's own
        records)."""
        if self.source is not None:
            return self.source.min_compute_service_version()
        versions = [s.version for s in self.services.values()
                    if s.version and not s.forced_down]
        return min(versions) if versions else None

    def zone(self, row):
        return self.availability_zones.name(int(self.az[row]))

    def in_aggregates(self, uuids):
        """Rows whose host is in at least one of these aggregates."""
        cols = [self.agg_col[u] for u in uuids if u in self.agg_col]
        return self.aggregates[:self.size, cols].any(axis=1)

    def aggregates_of(self, row):
        """Aggregate records of ``row``'s host."""
        return [self.agg_records[c]
                for c in np.flatnonzero(self.aggregates[row])]

    def aggregate_number(self, key, how="min"):
        """Per row, the ``how`` (min or max) of the numeric values of
        metadata ``key`` over the row's aggregates; NaN where none of them
        sets it, and, as Nova's get_weight_multiplier, where one of them
        sets it to something that is not a number (the weigher
        multipliers read their per-aggregate overrides so)."""
        cache_key = (key, how, self.size)
        if self._agg_number_version != self.aggregate_version:
            self._agg_number_cache = {}
            self._agg_number_version = self.aggregate_version
        cached = self._agg_number_cache.get(cache_key)
        if cached is not None:
            return cached
        given = np.array([r is not None and key in r.metadata
                          for r in self.agg_records], bool)
        values = np.array([_float(r.metadata[key]) if g else np.nan
                           for r, g in zip(self.agg_records, given,
                                           strict=True)], np.float64)
        n = self.size
        if not len(values):
            out = np.full(n, np.nan)
            out.flags.writeable = False
            self._agg_number_cache[cache_key] = out
            return out
        member = self.aggregates[:n] & ~np.isnan(values)
        fill = np.inf if how == "min" else -np.inf
        picked = np.where(member, values, fill)
        out = picked.min(axis=1) if how == "min" else picked.max(axis=1)
        # A value that is not a number spoils the row's others (NaN
        # itself included: Nova's answer would hang on set order).
        spoiled = (self.aggregates[:n] & given & np.isnan(values)).any(
            axis=1)
        out[~member.any(axis=1) | spoiled] = np.nan
        out.flags.writeable = False
        self._agg_number_cache[cache_key] = out
        return out

    def aggregate_sets(self, key):
        """Whether the metadata of any host's aggregate sets ``key`` to a
        number (cached with aggregate_number)."""
        found = self.aggregate_number(key)  # also resets the cache
        cache_key = (key, "sets", self.size)
        sets = self._agg_number_cache.get(cache_key)
        if sets is None:
            sets = self._agg_number_cache[cache_key] = bool(
                len(found) and not np.isnan(found).all())
        return sets

    def aggregate_number_or(self, key, default, how="min"):
        """aggregate_number with ``default`` where no aggregate of the row
        sets ``key``; cached the same way (the weighers ask for it on
        every request)."""
        cache_key = (key, how, self.size, "or", default)
        found = self.aggregate_number(key, how)  # also resets the cache
        cached = self._agg_number_cache.get(cache_key)
        if cached is None:
            cached = np.where(np.isnan(found), default, found)
            cached.flags.writeable = False
            self._agg_number_cache[cache_key] = cached
        return cached

    def metric(self, name):
        """Column of metric ``name``; NaN where a node does not report
        it."""
        column = self.metrics.get(name)
        if column is None:
            return np.full(self.size, np.nan)
        return column[:self.size]

    # -- scheduling --------------------------------------------------------

    def consume(self, rows, ram_mb=0, disk_mb=0, vcpus=0, instances=1,
                io_ops=1):
        """An instance was placed on each of ``rows`` (a row or an array;
        a row may repeat): take its resources from the rows, so that the
        next instance of the same request sees them gone. Stands until
        the node reports again."""
        if isinstance(rows, (int, np.integer)):
            # One row (every decision's case): plain item updates, a
            # twentieth of ufunc.at's cost.
            row = int(rows)
            self.free_ram_mb[row] -= ram_mb
            self.free_disk_mb[row] -= disk_mb
            self.vcpus_used[row] += vcpus
            self.num_instances[row] += instances
            self.num_io_ops[row] += io_ops
            self.consumed_generation[row] = self.generation[row]
            self.version += 1
            return
        rows = np.atleast_1d(np.asarray(rows, np.int64))
        np.subtract.at(self.free_ram_mb, rows, ram_mb)
        np.subtract.at(self.free_disk_mb, rows, disk_mb)
        np.add.at(self.vcpus_used, rows, vcpus)
        np.add.at(self.num_instances, rows, instances)
        np.add.at(self.num_io_ops, rows, io_ops)
        self.consumed_generation[rows] = self.generation[rows]
        self.version += 1

    def replace_node(self, row, node):
        """``row``'s node record becomes ``node``: the same report with
        a placed instance's NUMA cells and PCI devices taken out
        (scheduler.host_devices), or the record from before that. Stands
        until the node reports again, as consume() does."""
        self.nodes[row] = node
        self.pci_devices[row] = _pci_count(node)
        self.consumed_generation[row] = self.generation[row]
        self.version += 1

    def instance_counts(self, uuids, rows):
        """Per row of ``rows``: how many of the instances ``uuids`` its
        host holds (through ``instance_host``: no pass over the hosts)."""
        per_host = {}
        for uuid in set(uuids):
            host = self.instance_host.get(uuid)
            if host is not None:
                per_host[host] = per_host.get(host, 0) + 1
        counts = np.zeros(self.size, np.int64)
        for host, n in per_host.items():
            counts[list(self.rows_by_host.get(host, ()))] = n
        return counts[np.asarray(rows, np.int64)]

    def note_instance(self, host, instance_uuid, present=True,
                      flavor_id=None, project_id=None):
        """Record in memory that ``host`` now holds (or, with
        ``present`` false, no longer holds) an instance, as its next
        instance report would say. For callers that model compute nodes
        (the simulator); a report from the node itself replaces it."""
        held = dict(self.instances.get(host, {}))
        if present:
            held[instance_uuid] = host_reads.Instance(
                instance_uuid, host, flavor_id, project_id)
        else:
            held.pop(instance_uuid, None)
        self._set_instances(host, held)
        self.version += 1
