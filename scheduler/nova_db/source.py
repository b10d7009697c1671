"""Host state from Nova's own databases, read only.

What nova-scheduler's HostManager reads, gantt reads too, but not per
request: once in full when the scheduler starts, then only what changed,
from a thread of its own every ``[scheduler] host_state_poll_interval``
seconds (0: before every decision instead), so that no decision waits on
Nova's databases:

- from the API database, every 5 seconds: the cell mappings (cell0 and
  disabled cells left out; a cell added or enabled later is loaded when
  seen) and the host aggregates with their metadata and hosts (read
  again whenever their row counts or newest timestamps move);
- from each cell database, the compute nodes whose created_at,
  updated_at or deleted_at is no older than the start of the previous
  poll less ``host_state_change_margin``: their ids and stamps first,
  then the rows whose stamps moved or that were read less than the
  margin after their stamp (MySQL's DATETIME keeps whole seconds, so a
  row written twice in a second keeps its stamps);
- the nova-compute services worth a look: disabled, forced down, whose
  heartbeat (last_seen_up, or created_at) could be older than ``[DEFAULT]
  service_down_time`` before the next poll, created or deleted lately.
  Those near or past the limit keep their heartbeat, so that each
  decision judges them against its own clock, as Nova's service group
  driver does; every other service is up until the next poll. Heartbeats
  of healthy services are never read one by one, and the lowest service
  version (Nova's owner_nova filter) is read every 30th poll.
- when a host first appears, its instances.

As in Nova, a compute node counts only once its host has a nova-compute
service and its usage has been reported (free_disk_gb not NULL). After
start-up, a host's instances follow the scheduler's fanout casts
(update_instance_info, delete_instance_info, sync_instance_info) in
memory, and the aggregate casts apply at once; a sync that disagrees
with memory re-reads that host's instances, as Nova does.

A database that cannot be read keeps its last known state (one warning)
and is tried again at the next poll.

Locks: the source's own lock guards what it holds of Nova's rows; the
table's lock guards the table. Where both are held, the table's is
taken first (a decision's first load, an inline poll); the poller thread
and the casts take them one after the other, never one inside the
other.
"""

import datetime
import logging
import threading
import time
import urllib.parse

import sqlalchemy as sa

from placement.db import engine as engine_mod
from scheduler import conf as scheduler_conf
from scheduler import host_reads, host_records, host_updates
from scheduler.nova_db import options, rows
from scheduler.nova_db import schema as s

LOG = logging.getLogger(__name__)

# Engines on Nova's databases: few connections, one poller per process.
_POOL = {"pool_size": 2, "max_overflow": 4, "pool_recycle": 3600}
_EPOCH = datetime.datetime(1970, 1, 1)
_STAMPS = ("created_at", "updated_at", "deleted_at")
_SERVICE_COLUMNS = [s.services.c[n] for n in (
    "id", "host", "disabled", "disabled_reason", "forced_down",
    "last_seen_up", "version", "created_at", "deleted", "deleted_at")]
_CN = s.compute_nodes
_KEY_COLUMNS = [_CN.c.id, _CN.c.uuid, _CN.c.deleted,
                *(_CN.c[n] for n in _STAMPS)]
# The lowest service version is read at one poll in this many (another
# pass over the services table; it moves only with upgrades).
_VERSION_EVERY = 30
# The API database (cells, aggregates; the aggregate casts apply at
# once) is read at most this often by the poller thread.
_API_EVERY = datetime.timedelta(seconds=5)


class NovaSourceError(host_updates.SourceError):
    """Nova's API database cannot be used (unset, unreachable, not a Nova
    API database)."""


def engine_for(url):
    url = engine_mod.with_installed_driver(sa.make_url(url))
    if url.get_backend_name() == "sqlite":
        return sa.create_engine(url)
    return sa.create_engine(url, isolation_level="READ COMMITTED", **_POOL)


def cell_url(template, database_connection):
    """A cell mapping's database_connection with Nova's template fields
    ({username}, {password}, {hostname}, {port}, {scheme}, {path},
    {query}, {fragment}) filled in from [database] connection."""
    if "{" not in template or not database_connection:
        return template
    parts = urllib.parse.urlparse(database_connection)
    return template.format(
        username=parts.username, password=parts.password,
        hostname=parts.hostname, port=parts.port, scheme=parts.scheme,
        query=parts.query, fragment=parts.fragment,
        path=parts.path.lstrip("/"))


class _Window:
    """Which rows a poll of one cell reads: those whose stamps are no
    older than the start of the previous good poll (this host's clock)
    less the margin. A change committed after that poll started carries
    a stamp no older than that, give or take the commit's delay and the
    writer's clock: the margin covers both."""

    def __init__(self, margin):
        self.margin = margin
        self.since = None  # naive UTC

    def start(self, now):
        """A read of the cell begins at ``now``; returns the lower bound
        of this read, to keep once it succeeds."""
        return now - self.margin

    def changed(self, table, columns=_STAMPS):
        return sa.or_(*(table.c[c] >= self.since for c in columns))


class _Cell:
    """What gantt holds of one cell database."""

    def __init__(self, uuid, name, url, margin):
        self.uuid = uuid
        self.name = name
        self.url = url
        self.engine = engine_for(url)
        self.loaded = False
        self.failing = False
        self.nodes = {}  # compute node uuid -> row (dict)
        self.node_keys = {}  # compute node row id -> _key()
        self.generation = {}  # compute node uuid -> int
        self.services = {}  # host -> services row (dict)
        self.records = {}  # host -> the Service record handed out
        self.noted = set()  # hosts whose service was worth a look
        self.window = _Window(margin)
        self.min_version = None
        self.polls = 0

    def close(self):
        self.engine.dispose()

    def hosts_of(self, uuids):
        return {self.nodes[u]["host"] for u in uuids if u in self.nodes}


class NovaHostSource:
    """Feeds a HostStateTable from Nova's databases (see the module
    docstring). ``conf`` has Nova's [api_database] connection; ``clock``
    (epoch seconds) is the time heartbeats are judged against."""

    def __init__(self, conf, clock=time.time):
        options.register_opts(conf)
        scheduler_conf.register_opts(conf)
        url = conf.api_database.connection
        if not url:
            raise NovaSourceError(
                "[scheduler] host_state_source = nova needs [api_database] "
                "connection, the URL of Nova's API database")
        self.conf = conf
        self._clock = clock
        self._margin = datetime.timedelta(
            seconds=conf.scheduler.host_state_change_margin)
        self._api = engine_for(url)
        self._cells = {}  # cell uuid -> _Cell
        self._agg_print = None
        self._agg_known = set()
        self._api_read = None
        self._api_failing = False
        # host -> uuids of its nodes handed to the table (which hosts'
        # instances the table knows already), and uuid -> host.
        self._handed = {}
        self._handed_host = {}
        self._lock = threading.RLock()
        self._table = None
        self._stop = threading.Event()
        self._poller = None
        self.polls = 0
        self.poll_errors = 0
        # time.monotonic() at the start of the last read in which every
        # database answered: what the host state is as fresh as.
        self.read_at = None

    def check(self):
        """Raise NovaSourceError unless Nova's API database can be read."""
        self._read_cell_mappings()

    def check_cells(self):
        """{cell name: None, or why its database cannot be read} for the
        cells to schedule to (NovaSourceError when Nova's API database
        cannot be read)."""
        found = {}
        for name, url in sorted(self._read_cell_mappings().values()):
            try:
                engine = engine_for(url)
            except (sa.exc.SQLAlchemyError, ImportError) as exc:
                found[name] = f"database_connection: {first_line(exc)}"
                continue
            try:
                with engine.connect() as conn:
                    conn.execute(sa.select(sa.func.count()).select_from(
                        s.compute_nodes)).scalar()
                found[name] = None
            except sa.exc.SQLAlchemyError as exc:
                found[name] = first_line(exc)
            finally:
                engine.dispose()
        return found

    def close(self):
        self._stop.set()
        if self._poller is not None:
            self._poller.join(30)
            self._poller = None
        with self._lock:
            for cell in self._cells.values():
                cell.close()
            self._cells = {}
            self._api.dispose()

    # -- following Nova --------------------------------------------------

    @property
    def _interval(self):
        return self.conf.scheduler.host_state_poll_interval

    def refresh(self, table):
        """Called by the table's sync (its lock held): the first time, a
        full read (then the poller thread takes over); with a poll
        interval of 0, a poll."""
        if not table.loaded:
            self.load(table)
            if self._interval > 0 and self._poller is None:
                self._poller = threading.Thread(
                    target=self._poll_forever, args=(table,),
                    name="gantt-nova-host-poller", daemon=True)
                self._poller.start()
        elif self._interval <= 0:
            self.poll(table)

    def _poll_forever(self, table):
        while not self._stop.wait(self._interval):
            try:
                self.poll(table)
            except Exception:  # never let the thread die silently
                self.poll_errors += 1
                LOG.exception("Reading Nova's changes failed; trying again "
                              "in %s s", self._interval)

    def load(self, table):
        """Read everything and make ``table`` hold exactly that."""
        started = time.monotonic()
        failed = False
        with table.lock, self._lock:
            self._table = table
            mappings = self._read_cell_mappings()
            for cell in self._cells.values():
                cell.close()
            self._cells = {}
            try:
                aggregates = self._read_aggregates()
            except sa.exc.SQLAlchemyError as exc:
                raise NovaSourceError(
                    f"cannot read Nova's API database ([api_database] "
                    f"connection): {first_line(exc)}") from None
            self._handed, self._handed_host = {}, {}
            services, instances, nodes = {}, {}, []
            for uuid, (name, url) in mappings.items():
                cell = self._cells[uuid] = _Cell(uuid, name, url,
                                                 self._margin)
                try:
                    found = self._load_cell(cell)
                except sa.exc.SQLAlchemyError as exc:
                    self._cell_failed(cell, exc)
                    failed = True
                    continue
                services.update(found["services"][0])
                instances.update(found["instances"][0])
                nodes.extend(found["nodes"][0])
                self._hand(found["nodes"])
            table.replace_all(aggregates, services, instances, nodes)
            if not failed:
                self.read_at = started
            self.polls += 1
            LOG.info("Loaded %d compute nodes, %d services and %d "
                     "aggregates from %d Nova cells", len(nodes),
                     len(services), len(aggregates), len(self._cells))

    def poll(self, table):
        """Apply to ``table`` what changed in Nova's databases since the
        last read. The reading is done without the table's lock."""
        started = time.monotonic()
        failed = False
        with self._lock:
            self._table = table
            self.polls += 1
            changes = []
            now = self._now()
            if (self._interval <= 0 or self._api_read is None
                    or now - self._api_read >= _API_EVERY):
                try:
                    changes += self._poll_api()
                    self._api_read = now
                except (sa.exc.SQLAlchemyError, NovaSourceError) as exc:
                    self._api_failed(exc)
                    failed = True
            for cell in list(self._cells.values()):
                try:
                    if cell.loaded:
                        found = self._poll_cell(cell, now)
                    else:
                        found = self._load_cell(cell)
                        self._hand(found["nodes"])
                except sa.exc.SQLAlchemyError as exc:
                    self._cell_failed(cell, exc)
                    failed = True
                    continue
                if cell.failing:
                    LOG.info("Nova cell %s readable again", cell.name)
                cell.failing = False
                if found:
                    changes.append(found)
        with table.lock:
            for change in changes:
                table.apply(**change)
        if not failed:
            self.read_at = started

    def min_compute_service_version(self):
        """The lowest version of the nova-compute services not forced
        down, over every cell; None when none reports one."""
        versions = [c.min_version for c in list(self._cells.values())
                    if c.min_version]
        return min(versions) if versions else None

    def _now(self):
        return _EPOCH + datetime.timedelta(seconds=self._clock())

    def _hand(self, nodes):
        """Note a (found, wanted) node change as handed to the table."""
        found, wanted = nodes
        for uuid in wanted:
            host = self._handed_host.pop(uuid, None)
            if host is not None:
                self._handed[host].discard(uuid)
                if not self._handed[host]:
                    del self._handed[host]
        for node in found:
            self._handed_host[node.uuid] = node.host
            self._handed.setdefault(node.host, set()).add(node.uuid)

    def _api_failed(self, exc):
        if not self._api_failing:
            LOG.warning("Nova API database not readable, keeping the last "
                        "cell mappings and aggregates: %s", first_line(exc))
        self._api_failing = True

    def _cell_failed(self, cell, exc):
        if not cell.failing:
            LOG.warning("Nova cell %s (%s) not readable, keeping its last "
                        "known hosts: %s", cell.name, cell.uuid,
                        first_line(exc))
        cell.failing = True

    # -- the API database ------------------------------------------------

    def _read_cell_mappings(self):
        """{uuid: (name, url)} of the cells to schedule to."""
        try:
            with self._api.connect() as conn:
                found = conn.execute(sa.select(
                    s.cell_mappings.c.uuid, s.cell_mappings.c.name,
                    s.cell_mappings.c.database_connection,
                    s.cell_mappings.c.disabled)).all()
        except sa.exc.SQLAlchemyError as exc:
            raise NovaSourceError(
                f"cannot read Nova's API database ([api_database] "
                f"connection): {first_line(exc)}") from None
        template_base = self.conf.database.connection
        return {r.uuid: (r.name or r.uuid,
                         cell_url(r.database_connection, template_base))
                for r in found
                if r.uuid != s.CELL0_UUID and not r.disabled
                and r.database_connection}

    def _aggregates_print(self, conn):
        """Row counts and newest stamps of the three aggregate tables:
        moves whenever a row is added, changed or removed."""
        parts = []
        for table in (s.aggregates, s.aggregate_hosts,
                      s.aggregate_metadata):
            parts += [sa.select(sa.func.count()).select_from(table)
                      .scalar_subquery(),
                      sa.select(sa.func.max(table.c.id)).scalar_subquery(),
                      sa.select(sa.func.max(table.c.updated_at))
                      .scalar_subquery()]
        return tuple(conn.execute(sa.select(*parts)).one())

    def _read_aggregates(self):
        with self._api.connect() as conn:
            self._agg_print = self._aggregates_print(conn)
            found = conn.execute(sa.select(
                s.aggregates.c.id, s.aggregates.c.uuid,
                s.aggregates.c.name)).all()
            hosts, metadata = {}, {}
            for agg_id, host in conn.execute(sa.select(
                    s.aggregate_hosts.c.aggregate_id,
                    s.aggregate_hosts.c.host)):
                hosts.setdefault(agg_id, set()).add(host)
            for agg_id, key, value in conn.execute(sa.select(
                    s.aggregate_metadata.c.aggregate_id,
                    s.aggregate_metadata.c.key,
                    s.aggregate_metadata.c.value)):
                metadata.setdefault(agg_id, {})[key] = value
        out = {r.uuid: host_reads.Aggregate(
                   r.uuid, r.name, metadata.get(r.id, {}),
                   frozenset(hosts.get(r.id, ())))
               for r in found if r.uuid}
        self._agg_known = set(out)
        return out

    def _poll_api(self):
        """Changes from the API database: cells gone, cells new,
        aggregates."""
        changes = []
        mappings = self._read_cell_mappings()
        self._api_failing = False
        for uuid in list(self._cells):
            cell = self._cells[uuid]
            if mappings.get(uuid, (None, None))[1] != cell.url:
                LOG.info("Nova cell %s (%s) is gone or disabled: its hosts "
                         "leave the host state", cell.name, uuid)
                del self._cells[uuid]
                hosts = set(cell.services) | cell.hosts_of(cell.nodes)
                gone = {"services": ({}, set(cell.services)),
                        "instances": ({}, hosts),
                        "nodes": ([], set(cell.nodes))}
                self._hand(gone["nodes"])
                changes.append(gone)
                cell.close()
        for uuid, (name, url) in mappings.items():
            if uuid not in self._cells:
                LOG.info("New Nova cell %s (%s)", name, uuid)
                # Loaded with the other cells' polls.
                self._cells[uuid] = _Cell(uuid, name, url, self._margin)
        with self._api.connect() as conn:
            moved = self._aggregates_print(conn) != self._agg_print
        if moved:
            known = self._agg_known
            found = self._read_aggregates()
            changes.append({"aggregates": (found, known | set(found))})
        return changes

    # -- cell databases --------------------------------------------------

    def _load_cell(self, cell):
        """Read a cell in full; the change that hands it to the table."""
        now = self._now()
        since = cell.window.start(now)
        with cell.engine.connect() as conn:
            node_rows = conn.execute(
                sa.select(_CN).where(_CN.c.deleted == 0)).mappings().all()
            service_rows = conn.execute(
                sa.select(*_SERVICE_COLUMNS)
                .where(s.services.c.binary == s.COMPUTE_BINARY,
                       s.services.c.deleted == 0)).mappings().all()
            cell.min_version = self._min_version(conn)
        cell.nodes, cell.node_keys, cell.generation = {}, {}, {}
        for row in map(dict, node_rows):
            cell.nodes[row["uuid"]] = row
            cell.node_keys[row["id"]] = _key(row, now)
            cell.generation[row["uuid"]] = 0
        cell.services = {}
        for row in map(dict, service_rows):
            cell.services[row["host"]] = row
        cell.records = {h: rows.service(r, self._cutoff(now))
                        for h, r in cell.services.items()}
        cell.noted = {h for h, r in cell.records.items()
                      if r != _healthy(r)}
        cell.loaded = True
        cell.window.since = since
        hosts = self._hosts_with_nodes(cell)
        return {"services": (dict(cell.records), set(cell.records)),
                "instances": (self._read_instances(cell, hosts), hosts),
                "nodes": (self._nodes_of(cell, cell.nodes),
                          set(cell.nodes))}

    def _poll_cell(self, cell, now):
        since = cell.window.start(now)
        with cell.engine.connect() as conn:
            node_rows = self._changed_nodes(cell, conn, now)
            service_rows = conn.execute(
                sa.select(*_SERVICE_COLUMNS)
                .where(s.services.c.binary == s.COMPUTE_BINARY,
                       self._worth_a_look(cell, now))).mappings().all()
            moved = None
            if not self.conf.filter_scheduler.track_instance_changes:
                moved = self._moved_instances(cell, conn)
            cell.polls += 1
            if cell.polls % _VERSION_EVERY == 0:
                cell.min_version = self._min_version(conn)
        cell.window.since = since
        for row, key in node_rows:
            cell.node_keys[row["id"]] = key
        had_service = set(cell.services)
        hosts = self._merge_services(cell, service_rows, now)
        touched = _merge([r for r, _ in node_rows], cell.nodes, "uuid")
        for uuid in touched & cell.nodes.keys():
            cell.generation[uuid] = cell.generation.get(uuid, -1) + 1
        # A host that gains or loses its service brings or takes its
        # nodes; a change of state only moves its service.
        came_or_went = {h for h in hosts
                        if (h in had_service) != (h in cell.services)}
        if came_or_went:
            touched |= {u for u, r in cell.nodes.items()
                        if r["host"] in came_or_went}
        change = {}
        if moved:
            change["instances"] = moved
        if not hosts and not touched:
            return change or None
        if touched:
            found = self._nodes_of(cell, touched)
            arriving = {n.host for n in found} - self._handed.keys()
            change["nodes"] = (found, touched)
            self._hand(change["nodes"])
            if arriving:
                found, wanted = change.get("instances", ({}, set()))
                found = {**found, **self._read_instances(cell, arriving)}
                change["instances"] = (found, wanted | arriving)
        if hosts:
            change["services"] = (
                {h: cell.records[h] for h in hosts if h in cell.records},
                hosts)
        return change

    def _moved_instances(self, cell, conn):
        """With [filter_scheduler] track_instance_changes off, computes
        send no instance casts (Nova's scheduler then reads each host's
        instances per request): the hosts whose instances changed since
        the last poll (instances.updated_at is indexed), re-read; as
        (found, wanted) for HostStateTable.apply."""
        t = s.instances
        hosts = {r.host for r in conn.execute(
            sa.select(t.c.host).distinct().where(
                t.c.updated_at >= cell.window.since,
                t.c.host.is_not(None)))}
        if not hosts:
            return None
        return self._read_instances(cell, hosts, conn), hosts

    def _changed_nodes(self, cell, conn, now):
        """(row, key) of the compute node rows that may have changed
        since the last read: the stamps of the rows in the window first,
        then the rows whose stamps moved, and those read before their
        stamp had settled (MySQL keeps whole seconds: a row written again
        within the second keeps its stamps). Nothing is kept until the
        whole poll has read."""
        found = conn.execute(
            sa.select(*_KEY_COLUMNS)
            .where(cell.window.changed(_CN))).mappings().all()
        wanted = []
        for row in found:
            held = cell.node_keys.get(row["id"])
            stamps = _stamps(row)
            if (held is None or held[:2] != (stamps, row["deleted"])
                    or max(filter(None, stamps)) >= held[2] - self._margin):
                wanted.append(row["id"])
        out = []
        for start in range(0, len(wanted), host_reads.CHUNK):
            chunk = wanted[start:start + host_reads.CHUNK]
            for row in conn.execute(
                    sa.select(_CN).where(_CN.c.id.in_(chunk))).mappings():
                row = dict(row)
                out.append((row, _key(row, now)))
        return out

    def _cutoff(self, now):
        """Heartbeats older than this may be too old before the next
        poll: service_down_time, less the poll interval and the margin.
        Those services are handed out with their heartbeat, so that each
        decision judges them at its own time; younger ones are up until
        the next poll."""
        ahead = max(self._interval, 0.0) + self._margin.total_seconds()
        return now - datetime.timedelta(
            seconds=self.conf.service_down_time - ahead)

    def _worth_a_look(self, cell, now):
        """Services whose state may differ from up and enabled, and
        those created or deleted lately."""
        t = s.services
        heartbeat = sa.func.coalesce(t.c.last_seen_up, t.c.created_at)
        return sa.or_(
            sa.and_(t.c.deleted == 0,
                    sa.or_(t.c.disabled == sa.true(),
                           t.c.forced_down == sa.true(),
                           heartbeat < self._cutoff(now))),
            cell.window.changed(t, ("created_at", "deleted_at")))

    def _merge_services(self, cell, found, now):
        """Fold the services worth a look into the cell; the hosts whose
        record changed. A service that was worth a look and is no longer
        is up and enabled."""
        cutoff = self._cutoff(now)
        seen = set()
        for row in sorted(map(dict, found), key=lambda r: r["deleted"] == 0):
            held = cell.services.get(row["host"])
            if row["deleted"]:
                if held is not None and held["id"] == row["id"]:
                    del cell.services[row["host"]]
            else:
                cell.services[row["host"]] = row
                seen.add(row["host"])
        hosts = set()
        for host in seen | cell.noted | (cell.records.keys()
                                         - cell.services.keys()):
            row = cell.services.get(host)
            if row is None:
                record = None
            elif host in seen:
                record = rows.service(row, cutoff)
            else:
                record = _healthy(cell.records.get(host)
                                  or rows.service(row, cutoff))
            if record != cell.records.get(host):
                hosts.add(host)
                if record is None:
                    cell.records.pop(host, None)
                else:
                    cell.records[host] = record
        cell.noted = {h for h, r in cell.records.items()
                      if h in seen and r != _healthy(r)}
        return hosts

    def _min_version(self, conn):
        t = s.services
        return conn.execute(sa.select(sa.func.min(t.c.version)).where(
            t.c.binary == s.COMPUTE_BINARY, t.c.deleted == 0,
            t.c.forced_down == sa.false(), t.c.version > 0)).scalar()

    def _hosts_with_nodes(self, cell):
        return {r["host"] for r in cell.nodes.values() if r["host"]}

    def _nodes_of(self, cell, uuids):
        """Records of the nodes among ``uuids`` that Nova would schedule
        to: reported, and on a host with a nova-compute service."""
        out = []
        for uuid in uuids:
            row = cell.nodes.get(uuid)
            if (row is not None and rows.schedulable(row)
                    and row["host"] in cell.services):
                out.append(rows.compute_node(
                    row, cell.uuid, cell.generation.get(uuid, 0),
                    self.conf))
        return out

    def _read_instances(self, cell, hosts, conn=None):
        """{host: {uuid: Instance}} of the live instances on ``hosts``."""
        if conn is None:
            with cell.engine.connect() as conn:
                return self._read_instances(cell, hosts, conn)
        out = {}
        t = s.instances
        query = sa.select(t.c.uuid, t.c.host, t.c.project_id).where(
            t.c.deleted == 0)
        chunks = sorted(hosts)
        for start in range(0, len(chunks), host_reads.CHUNK):
            part = chunks[start:start + host_reads.CHUNK]
            for uuid, host, project in conn.execute(
                    query.where(t.c.host.in_(part))):
                out.setdefault(host, {})[uuid] = host_reads.Instance(
                    uuid, host, None, project)
        return out

    def _cell_of_host(self, host):
        for cell in self._cells.values():
            if host in cell.services or host in cell.hosts_of(cell.nodes):
                return cell
        return None

    # -- the fanout casts, applied in memory -----------------------------

    def update_aggregates(self, aggregates):
        """Host aggregates created or changed: (uuid, name, metadata,
        hosts) each, checked."""
        table = self._need_table()
        found = {}
        for uuid, name, metadata, hosts in aggregates:
            found[uuid] = host_reads.Aggregate(uuid, name, dict(metadata),
                                               frozenset(hosts))
        table.apply(aggregates=(found, set(found)))

    def delete_aggregate(self, uuid):
        self._need_table().apply(aggregates=({}, {uuid}))

    def update_instance_info(self, host, instances):
        """Instances (host_reads.Instance) now on ``host``: merged into
        what is known of the host; a single instance from a host gantt
        knows nothing of makes it read the host's instances instead."""
        table = self._need_table()
        with table.lock:
            held = table.instances.get(host)
            if held is not None or len(instances) > 1 or \
                    table.rows_of_host(host):
                held = dict(held or {})
                for instance in instances:
                    held[instance.uuid] = instance
                table.apply(instances=({host: held}, {host}))
                return
        self._reread_instances(table, host)

    def delete_instance_info(self, host, instance_uuid):
        table = self._need_table()
        with table.lock:
            held = dict(table.instances.get(host) or {})
            held.pop(instance_uuid, None)
            table.apply(instances=({host: held}, {host}))

    def sync_instance_info(self, host, instance_uuids):
        """The compute service's list of its instances: when it differs
        from memory, the host's instances are read again."""
        table = self._need_table()
        with table.lock:
            same = set(table.instances.get(host) or ()) == set(
                instance_uuids)
        if not same:
            LOG.info("Instances of host %s out of sync; reading them "
                     "again", host)
            self._reread_instances(table, host)

    def _reread_instances(self, table, host):
        with self._lock:
            cell = self._cell_of_host(host)
            if cell is None:
                LOG.info("Instance report from host %s, which no Nova cell "
                         "knows yet; ignored", host)
                return
            try:
                found = self._read_instances(cell, {host})
            except sa.exc.SQLAlchemyError as exc:
                self._cell_failed(cell, exc)
                return
        table.apply(instances=(found, {host}))

    def _need_table(self):
        if self._table is None:
            raise host_records.HostRecordError(
                "the host state has not been loaded yet")
        return self._table


def _stamps(row):
    return tuple(row[k] for k in _STAMPS)


def _key(row, read_at):
    """What is kept of a compute node row read at ``read_at``: its
    stamps, whether it is deleted, and when it was read."""
    return (_stamps(row), row["deleted"], read_at)


def _healthy(record):
    """``record`` as a service that is up and enabled."""
    return host_reads.Service(record.host, version=record.version)


def _merge(found, held, key):
    """Fold changed rows into ``held`` ({row[key]: row}); the keys whose
    row changed. A soft-deleted row removes the row it was (a host may
    have a deleted row besides its new one)."""
    changed = set()
    for row in sorted(map(dict, found), key=lambda r: r["deleted"] == 0):
        name = row[key]
        current = held.get(name)
        if row["deleted"]:
            if current is not None and current["id"] == row["id"]:
                del held[name]
                changed.add(name)
        elif current != row:
            held[name] = row
            changed.add(name)
    return changed


def first_line(exc):
    return str(exc).strip().splitlines()[0] if str(exc).strip() else \
        type(exc).__name__
