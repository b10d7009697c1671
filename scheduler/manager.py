"""select_destinations: candidates, filters, weighers, claims, alternates.

One call, for each instance of the request in turn:

1. (once) the request becomes a placement query (scheduler.resource_request)
   answered by the in-memory candidates engine; candidates are grouped by
   the host state row of their root provider;
2. the enabled filters take out rows; the weighers order what is left;
   the pick is random among the best ``host_subset_size``;
3. the pick's candidates are claimed in placement for the instance (a
   lost race is retried on fresh state, then the next candidate, then a
   re-query of that host's tree, then the next host);
4. the claimed resources are taken from the host state table (RAM,
   disk, vCPUs, and the NUMA cells and PCI devices the instance uses), so
   that the next instance of the request sees them gone.

Then each instance gets ``max_attempts - 1`` alternates from the weighed
hosts of its turn: same cell as its pick, never a host picked for this
request, each with its own allocation request (not claimed). A request
that cannot place every instance removes the claims it made and raises
NoValidHost saying where the hosts went. A rebuild (hint
``_nova_check_type`` = rebuild) asks placement nothing and claims nothing:
it runs the filters marked RUN_ON_REBUILD over the requested hosts.
"""

import collections
import dataclasses
import random
import threading
import time

import numpy as np

from placement import direct
from placement import errors as placement_errors
from placement.candidates import engine as engine_mod
from placement.candidates import result as result_mod
from placement.db import store as store_mod
from scheduler import (
    best_first,
    claims,
    errors,
    host_devices,
    host_filtering,
    host_request,
    host_state,
    host_updates,
    request_spec,
    resource_request,
    selection,
)
from scheduler import conf as scheduler_conf
from weighers import combine

# Rows a decision sorts before it looks at any (the rest only when it
# gets that far): enough for the claim, its retries and the alternates.
HEAD_ROWS = 32


class NoValidHost(errors.SchedulerError):
    """No host can take (every instance of) the request."""


@dataclasses.dataclass
class Decision:
    # Per instance: [chosen Selection, alternates...]
    selections: list
    # The explanation, when asked for (see Scheduler.schedule).
    explain: dict | None = None


class Scheduler:
    """The scheduling engine over one store. Thread-safe: requests are
    served one at a time (host state consumption must be ordered)."""

    def __init__(self, conf, store=None, rng=None, clock=time.time):
        scheduler_conf.register_opts(conf)
        self.conf = conf
        self._own_store = store is None
        self.store = store or store_mod.Store.open(conf)
        self.placement = direct.PlacementDirect(self.store)
        self.engine = engine_mod.CandidatesEngine(self.store, conf)
        self.table = host_state.HostStateTable(
            self.store, conf, clock=clock,
            source=host_updates.source_for(conf, clock=clock))
        resource_request.warn_unsupported_options(conf)
        self.filters = host_filtering.FilterChain(host_filtering.load(conf))
        self.weighers = combine.load(conf)
        self.rng = rng or random.Random()
        self.clock = clock
        self._lock = threading.Lock()
        self._host_row_map = (None, None)
        self._watches = self.store.open_watches()
        # The connection this scheduler's decisions run on (made on the
        # first): see Store.pinned.
        self._conn = None
        # Claim attempts and lost claims (capacity taken by another
        # writer since the view was read), with the time the lost ones
        # took: what the simulator reports as conflicts and waste.
        self.stats = collections.Counter()

    def host_rows_of(self, index_rows):
        """Host table rows of provider index rows (-1: not a compute
        node), through a map rebuilt only when either side's rows are
        reassigned."""
        index, table = self.engine.index, self.table
        key = (index.structure_version, index.size, table.layout_version)
        cached_key, mapping = self._host_row_map
        if cached_key != key:
            mapping = table.rows_for_uuids(index.uuids[:index.size])
            self._host_row_map = (key, mapping)
        return mapping[index_rows]

    def close(self):
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        self.table.close()
        self.engine.close()
        if self._own_store:
            self.store.dispose()

    # -- the Nova-shaped entry point -------------------------------------

    def select_destinations(self, context, spec, instance_uuids=None,
                            return_objects=True, return_alternates=True):
        """Nova's call: a list per instance of Selections (the chosen host
        first, then alternates when ``return_alternates``); with
        ``return_objects`` false, the old form: one host dict per
        instance. ``spec``: a RequestSpec or its dict form."""
        decision = self.schedule(
            spec, instance_uuids, context=context,
            alternates=return_objects and return_alternates)
        if not return_objects:
            return [s[0].host_dict() for s in decision.selections]
        return decision.selections

    def schedule(self, spec, instance_uuids=None, context=None,
                 explain=False, refresh=True, alternates=True):
        """A Decision for ``spec``. Claims are made for ``instance_uuids``
        (one per instance); without them nothing is claimed, as Nova does
        for callers that send none. ``explain``: also return why.
        ``refresh=False`` decides on the view of the last sync (the
        simulator's schedulers racing on stale views); a lost claim still
        re-reads the host's tree. ``alternates=False``: each instance
        gets its chosen host only."""
        if isinstance(spec, dict):
            spec = request_spec.RequestSpec.from_dict(spec)
        uuids = list(instance_uuids or ())
        count = len(uuids) or spec.num_instances
        if uuids and len(uuids) != spec.num_instances and \
                spec.num_instances != 1:
            raise errors.InvalidRequestSpec(
                f"instance_uuids: {len(uuids)} given for num_instances "
                f"{spec.num_instances}")
        project, user = _owner(spec, context)
        with self._lock, self.table.lock, self._pinned():
            if refresh:
                self.sync()
            run = _Run(self, spec, uuids, count, project, user, explain)
            return run.go(alternates)

    def _pinned(self):
        if self._conn is None or self._conn.closed:
            self._conn = self.store.engine.connect()
        return self.store.pinned(self._conn)

    def sync(self):
        """Bring the host state table and the provider index up to date
        in one read transaction (one round trip instead of two); skipped
        when the store's watches (Store.open_watches: SQLite's
        data_version, a change feed) all say nobody else committed since
        the last read. A table fed by a host state source (Nova's
        databases) follows that source at its own pace instead."""
        table, index = self.table, self.engine.index
        own_records = table.follows_store
        if not own_records:
            table.sync()

        def both(txn):
            if own_records:
                table.sync_in(txn)
            index.sync_in(txn)
        watches = self._watches
        with table.lock, index.lock:
            # Every watch is asked: each counts what it saw as read.
            must = [watch.begin_read() for watch in watches]
            quiet = bool(watches) and not any(must)
            # This process's own writes that were not applied at commit
            # (table.dirty, index.dirty) are read back whatever the
            # watches say.
            table_current = not own_records or (table.loaded
                                                and not table.dirty)
            if (quiet and table_current and index.loaded
                    and not index.dirty):
                self.stats["syncs_skipped"] += 1
                return
            try:
                self.store.read(both, snapshot=True)
            except BaseException:
                for watch in watches:
                    watch.read_failed()
                raise


def _owner(spec, context):
    context = context or {}
    get = context.get if isinstance(context, dict) else (
        lambda k: getattr(context, k, None))
    project = get("project_id") or spec.project_id
    user = get("user_id") or spec.user_id
    return project, user


class _CandidatesByRow:
    """Candidate indices per host row, found when asked (only the rows
    that are claimed or returned as alternates ever are)."""

    def __init__(self, host_rows=None):
        self.host_rows = host_rows

    def get(self, row, default=()):
        if self.host_rows is None:
            return default
        found = np.flatnonzero(self.host_rows == row)
        return found.tolist() if len(found) else default


class _Run:
    """One schedule() call."""

    def __init__(self, scheduler, spec, uuids, count, project, user,
                 explain):
        self.s = scheduler
        self.conf = scheduler.conf
        self.table = scheduler.table
        self.spec = spec
        self.uuids = uuids
        self.count = count
        self.project = project
        self.user = user
        self.explain = {} if explain else None
        self.rebuild = spec.hint("_nova_check_type") == "rebuild"
        self.request = host_request.HostRequest(
            spec=spec, table=self.table, conf=self.conf,
            now=scheduler.clock(), rebuild=self.rebuild)
        self.claimed = []  # consumer uuids claimed so far
        self.consumed = []  # rows consumed so far
        self.allocation = {}  # instance -> AllocationRequest claimed
        self.nodes_before = {}  # row -> node record before consume_devices

    # -- candidates -----------------------------------------------------

    def candidates(self):
        """(rows, {row: [candidate indices]}, result); rows sorted."""
        if self.rebuild:
            rows = self.table.live_rows()
            return self.restrict(rows, None), _CandidatesByRow(), None
        try:
            rr = resource_request.from_spec(self.spec, self.conf, self.table)
        except resource_request.NoHostsPossible as exc:
            # A zone, tenant or destination no host can match: for the
            # caller that is no valid host (Nova says the same).
            raise NoValidHost(f"no valid host: {exc.message}") from None
        self.rr = rr
        # Scheduler.sync has just brought the index up to date.
        result = self.find(rr)
        if not len(result) and rr.fallback is not None:
            rr = self.rr = rr.fallback
            result = self.find(rr)
        if self.explain is not None:
            self.explain["query"] = rr.query()
            self.explain["candidates"] = len(result)
        host_rows = self.s.host_rows_of(result.anchors)
        # Sorted distinct rows by marking: cheaper than np.unique.
        rows = result_mod.distinct_rows(host_rows, self.table.size)
        return self.restrict(rows, rr), _CandidatesByRow(host_rows), result

    def find(self, rr):
        """The candidates of ``rr``. A resource class or trait placement
        does not know is no valid host: placement refuses the query and
        Nova's scheduler then has no candidate either."""
        try:
            return self.s.engine.find(rr.candidates_request(), lean=True,
                                      sync=False)
        except (placement_errors.ResourceClassNotFound,
                placement_errors.TraitNotFound) as exc:
            raise NoValidHost(f"no valid host: {exc}") from None

    def restrict(self, rows, rr):
        table = self.table
        hosts = table.hosts
        if rr is not None and rr.hosts is not None:
            rows = rows[[hosts[r] in rr.hosts for r in rows]]
        dest = self.spec.requested_destination
        cell = (rr.cell if rr is not None else None) or (
            dest.cell if dest is not None else None)
        if cell:
            rows = rows[table.cell[rows] == table.cell_code(cell)]
        if self.rebuild and dest is not None and (dest.host or dest.node):
            rows = rows[[(not dest.host or hosts[r] == dest.host) and
                         (not dest.node or table.nodenames[r] == dest.node)
                         for r in rows]]
        if self.spec.ignore_hosts:
            ignore = set(self.spec.ignore_hosts)
            rows = rows[[hosts[r] not in ignore for r in rows]]
        return rows

    def forced(self, rows):
        """Rows of the forced hosts/nodes, or None when nothing is forced
        (forced hosts skip the filters, as in Nova)."""
        force_hosts = set(self.spec.force_hosts)
        force_nodes = set(self.spec.force_nodes)
        if not force_hosts and not force_nodes:
            return None
        return rows[[(not force_hosts or self.table.hosts[r] in force_hosts)
                     and (not force_nodes
                          or self.table.nodenames[r] in force_nodes)
                     for r in rows]]

    # -- the run --------------------------------------------------------

    def go(self, alternates=True):
        rows, by_row, result = self.candidates()
        self.by_row, self.result = by_row, result
        turns = None
        try:
            if len(self.uuids) > 1 and not self.rebuild:
                turns = self.place_together(rows)
            if turns is None:
                self.s.filters.start_request()
                turns = [self.place(i, rows) for i in range(self.count)]
        except BaseException:
            self.roll_back()
            raise
        if not alternates:
            return Decision([[self.selection(chosen, self.allocation.get(i))]
                             for i, (chosen, _) in enumerate(turns)],
                            self.explain)
        picked = {t[0] for t in turns}
        selections = [self.with_alternates(i, chosen, ordered, picked)
                      for i, (chosen, ordered) in enumerate(turns)]
        return Decision(selections, self.explain)

    def rank(self, i, rows):
        """Filter and weigh for instance ``i``: (weighed rows best first,
        filter runs, rows that passed)."""
        request = self.request
        forced = self.forced(rows)
        if forced is not None:
            passed, runs = forced, []
        else:
            passed, runs = self.s.filters.run(
                request, rows, first=(i == 0),
                explain=self.explain is not None)
        weights, weigh_explain = combine.weigh(
            request, passed, self.s.weighers,
            explain=self.explain is not None)
        ordered = self.order(passed, weights)
        if self.explain is not None:
            self.record(i, rows, runs, passed, weights, weigh_explain)
        return ordered, runs, passed

    def no_valid_host(self, i, rows, runs, passed):
        why = host_filtering.summary(runs, len(rows))
        if len(passed):
            why += f"; {len(passed)} passed the filters but none could " \
                   "be claimed"
        return NoValidHost(
            f"no valid host for instance {i + 1} of {self.count}: {why}")

    def place(self, i, rows):
        """Place and claim instance ``i``: (chosen row, weighed rows best
        first)."""
        ordered, runs, passed = self.rank(i, rows)
        for row in ordered:
            if self.claim(i, row):
                self.request.chosen_rows.append(row)
                return row, ordered
        raise self.no_valid_host(i, rows, runs, passed)

    def place_together(self, rows):
        """Pick a host for every instance, then claim them all in one
        transaction: one commit instead of one per instance, and
        all-or-nothing by construction. None when that claim fails (a
        host filled up meanwhile, or two picks did not fit one host):
        the caller then places the instances one claim at a time."""
        self.s.filters.start_request()
        turns, writes = [], []
        for i in range(self.count):
            ordered, runs, passed = self.rank(i, rows)
            row = next((r for r in ordered if self.by_row.get(r)), None)
            if row is None:
                raise self.no_valid_host(i, rows, runs, passed)
            wanted = self.first_request(row)
            writes.append((self.uuids[i], wanted))
            self.consume(row)
            self.request.chosen_rows.append(row)
            turns.append((row, ordered))
        outcome = self.timed_claim(
            claims.claim_all, self.s.placement, writes, self.project,
            self.user)
        if outcome is claims.Outcome.CLAIMED:
            self.claimed = [consumer for consumer, _ in writes]
            self.allocation = {i: w for i, (_, w) in enumerate(writes)}
            return turns
        self.roll_back()
        self.consumed, self.claimed = [], []
        self.request.chosen_rows.clear()
        if self.explain is not None:
            self.explain["instances"] = []
        return None

    def order(self, rows, weights):
        """Rows best first: shuffled among equal best weights when asked,
        then a random pick of the best host_subset_size moved first."""
        if not len(rows):
            return []
        fs = self.conf.filter_scheduler
        # Sorted up front: the claim's pick and the alternates, from a
        # host subset that large, and for the shuffle every row tied
        # with the last.
        ordered = best_first.best_first(
            rows, weights, max(fs.host_subset_size, HEAD_ROWS),
            ties=fs.shuffle_best_same_weighed_hosts)
        head = ordered.head
        if fs.shuffle_best_same_weighed_hosts:
            # The rows tied with the best (NaN weights sort last and tie
            # with nothing) are all in the head.
            numbers = weights[~np.isnan(weights)]
            ties = (int(np.count_nonzero(weights == numbers.max()))
                    if len(numbers) else 0)
            tied = head[:ties]
            self.s.rng.shuffle(tied)
            head[:ties] = tied
        subset = min(fs.host_subset_size, len(head))
        if subset > 1:
            pick = head.pop(self.s.rng.randrange(subset))
            head.insert(0, pick)
        return ordered

    def claim(self, i, row):
        """Claim instance ``i`` on ``row``; whether it worked."""
        if self.rebuild or not self.uuids:
            self.consume(row)
            self.allocation[i] = self.first_request(row)
            return True
        consumer = self.uuids[i]
        stale = [(self.result, index) for index in self.by_row.get(row, ())]
        for tries in (stale, None):
            if tries is None:
                # Fresh state for this host's tree, then the next host.
                tries = self.requery(row)
            for result, index in tries:
                wanted = result.allocation_request(index)
                outcome = self.timed_claim(
                    claims.claim, self.s.placement, consumer, wanted,
                    self.project, self.user)
                if outcome is claims.Outcome.CLAIMED:
                    self.claimed.append(consumer)
                    self.allocation[i] = wanted
                    self.consume(row)
                    return True
                if outcome is claims.Outcome.GONE:
                    break
        return False

    def timed_claim(self, claim, *args):
        stats = self.s.stats
        start = time.perf_counter()
        outcome = claim(*args)
        stats["claim_attempts"] += 1
        if outcome is not claims.Outcome.CLAIMED:
            stats["claims_lost"] += 1
            stats["claims_lost_s"] += time.perf_counter() - start
        return outcome

    def requery(self, row):
        rr = dataclasses.replace(self.rr, limit=None)
        rr.groups = dict(rr.groups)
        rr.groups[""] = dataclasses.replace(
            rr.unsuffixed, in_tree=self.table.uuids[row])
        fresh = self.s.engine.find(rr.candidates_request(), lean=True)
        return [(fresh, i) for i in range(len(fresh))]

    def first_request(self, row):
        indices = self.by_row.get(row)
        if not indices or self.result is None:
            return None
        return self.result.allocation_request(indices[0])

    def consume(self, row):
        flavor = self.spec.flavor
        disk_gb = flavor.ephemeral_gb + flavor.swap / 1024 + (
            0 if self.spec.is_bfv else flavor.root_gb)
        self.table.consume(row, ram_mb=flavor.memory_mb,
                           disk_mb=int(disk_gb * 1024), vcpus=flavor.vcpus)
        self.consumed.append(row)
        if self.spec.numa_topology is not None or self.spec.pci_requests:
            self.consume_devices(row)

    def consume_devices(self, row):
        """Take the instance's NUMA cells and PCI devices out of the
        row's node record (the record from before is kept for
        roll_back)."""
        table = self.table
        node = table.node(row)
        if node is None:
            return
        self.nodes_before.setdefault(row, node)
        table.replace_node(row, host_devices.after_instance(
            self.request, node, float(table.cpu_allocation_ratio[row]),
            float(table.ram_allocation_ratio[row])))

    def roll_back(self):
        for consumer in self.claimed:
            claims.unclaim(self.s.placement, consumer)
        flavor = self.spec.flavor
        disk_gb = flavor.ephemeral_gb + flavor.swap / 1024 + (
            0 if self.spec.is_bfv else flavor.root_gb)
        if self.consumed:
            self.table.consume(
                self.consumed, ram_mb=-flavor.memory_mb,
                disk_mb=-int(disk_gb * 1024), vcpus=-flavor.vcpus,
                instances=-1, io_ops=-1)
        for row, node in self.nodes_before.items():
            self.table.replace_node(row, node)
        self.nodes_before = {}

    # -- output ---------------------------------------------------------

    def with_alternates(self, i, chosen, ordered, picked):
        out = [self.selection(chosen, self.allocation.get(i))]
        want = self.conf.scheduler.max_attempts - 1
        cell = self.table.cell[chosen]
        for row in ordered:
            if len(out) > want:
                break
            if row in picked or self.table.cell[row] != cell:
                continue
            out.append(self.selection(row, self.first_request(row)))
        return out

    def selection(self, row, allocation_request):
        table = self.table
        return selection.Selection(
            compute_node_uuid=table.uuids[row],
            service_host=table.hosts[row],
            nodename=table.nodenames[row],
            cell_uuid=table.cells.name(int(table.cell[row])),
            availability_zone=table.zone(row),
            allocation_request=(
                None if allocation_request is None
                else selection.allocation_request_json(allocation_request)),
            allocation_request_version=(
                None if allocation_request is None
                else selection.ALLOCATION_REQUEST_VERSION))

    def record(self, i, rows, runs, passed, weights, weigh_explain):
        names = self.table.nodenames
        self.explain.setdefault("instances", []).append({
            "candidate_hosts": len(rows),
            "filters": [{"name": r.name, "before": r.before,
                         "after": r.after,
                         "rejected": {names[row]: why
                                      for row, why in r.reasons.items()}}
                        for r in runs],
            "passed": [names[r] for r in passed],
            "weights": {names[r]: float(w) for r, w in zip(
                passed.tolist(), weights.tolist(), strict=True)},
            "weighers": weigh_explain and {
                w: {k: dict(zip([names[r] for r in passed.tolist()],
                                np.asarray(v, float).tolist(), strict=True))
                    for k, v in parts.items()}
                for w, parts in weigh_explain.items()},
        })
