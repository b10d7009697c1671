"""Replay a workload on a modelled cloud with the real scheduler.

The cloud is loaded into a scratch placement database (in memory for one
scheduler; a temporary SQLite file shared by several). Each create event
is a ``Scheduler.schedule`` call that claims in placement, exactly as a
conductor's select_destinations does; each delete removes the instance's
allocations. The simulator plays the compute nodes: after a placement or
a delete it tells each scheduler's host state what the node would report
(resources, the instance list), in memory.

With ``schedulers`` N > 1, creates are dealt out in rounds of N: at the
start of a round every scheduler syncs and learns of the others' last
placements; within a round each decides on that view, so N decisions
race as N concurrent scheduler processes would. A claim refused because
another scheduler took the room is a conflict; the scheduler retries on
fresh state (the host's tree, then the next host), as in production.

Everything but timing is a function of the cloud, the workload, the
config and the seed.
"""

import collections
import dataclasses
import gc
import math
import os
import random
import re
import shutil
import sys
import tempfile
import time
import uuid as uuidlib

import numpy as np
import sqlalchemy as sa
import tqdm

from cloudfile import loader
from placement.db import migration, tables
from placement.db import store as store_mod
from scheduler import claims, errors, manager, request_spec
from simulation import capacity
from simulation import workload as workload_mod

COMPUTE_ACTIONS = workload_mod.COMPUTE_ACTIONS
_NAMESPACE = uuidlib.UUID("0f5e3a1c-7d1b-4c52-9a0e-5b8f6c2d4e17")
PROJECT, USER = "simulation", "simulation"
# Fill histogram bins and latency histogram edges (ms) of the report.
FILL_BINS = 20
LATENCY_EDGES = np.logspace(-2, 4, 61)


# The parts of a report that measure this machine rather than the
# decisions: all the rest is a function of the inputs and the seed.
TIMING_KEYS = ("timing", "latency_ms")


def outcome(report):
    """``report`` without its timing: what the same inputs reproduce."""
    return {k: v for k, v in report.items() if k not in TIMING_KEYS}


class ConservationError(AssertionError):
    """Placement's usage differs from what the live instances hold."""


@dataclasses.dataclass
class Options:
    schedulers: int = 1
    seed: int = 0
    samples: int = 400  # points of the time series
    progress: bool = False
    # Compare placement's usage with the live instances every this many
    # events (0: at the end only). Costs a SQL query each time.
    check_every: int = 0


class Simulation:
    """One run: ``Simulation(conf, cloud, workload, options).run()`` is
    the report dict (simulation.report reads it)."""

    def __init__(self, conf, cloud, workload, options=None, labels=None):
        self.conf = conf
        self.cloud = cloud
        self.workload = workload
        self.options = options or Options()
        self.labels = labels or {}
        self.schedulers = []
        self.stores = []
        self._tmp = None

    # -- setup ------------------------------------------------------------

    def open_cloud(self):
        """Load the cloud into a scratch database and start the
        schedulers on it."""
        n = self.options.schedulers
        if n == 1:
            url = "sqlite://"
        else:
            self._tmp = tempfile.mkdtemp(prefix="gantt-simulate-")
            url = "sqlite:///" + os.path.join(self._tmp, "placement.sqlite")
        self.conf.set_override("connection", url, "placement_database")
        self.conf.set_override("sync_on_startup", False,
                               "placement_database")
        # A scratch database: its commits are nobody else's business
        # (a production config's change feed would announce them).
        self.conf.set_override("change_feed_url", None, "placement_database")
        first = store_mod.Store(self.conf)
        migration.sync(first.engine)
        self.stores = [first] + [store_mod.Store(self.conf)
                                 for _ in range(n - 1)]
        loader.load(first, self.cloud)
        for k, store in enumerate(self.stores):
            self.schedulers.append(manager.Scheduler(
                self.conf, store=store,
                rng=random.Random(self.options.seed * 1009 + k)))
        for scheduler in self.schedulers:
            scheduler.sync()
        # One view per scheduler: a failure is explained on the view of
        # the scheduler that decided it.
        self.views = [capacity.CloudView(s) for s in self.schedulers]
        self.view = self.views[0]
        self.groups = distinct_groups(self.view.groups())
        # Per view: each scheduler's table orders the hosts its own way.
        self.zone_reach = [view.zone_masks() for view in self.views]
        table = self.schedulers[0].table
        flavors = self.workload.flavors if self.workload else {}
        self.flavor_resources = {
            name: capacity.flavor_resources(f.as_spec(), self.conf, table)
            for name, f in flavors.items()}
        self.compute = None
        played = [e for e in (self.workload.events if self.workload
                              else ()) if e.kind in COMPUTE_ACTIONS]
        if played:
            # Imported only for a workload that has such events: the
            # compute client's modules would otherwise sit in every
            # run's heap, and the garbage collector's full passes go
            # through them.
            from simulation import compute_events
            self.compute = compute_events.ComputeNodes(
                self.cloud, self.schedulers[0].placement, first,
                self.options.seed, self.workload.path)
            self.compute.check(played)

    def close(self):
        for scheduler in self.schedulers:
            scheduler.close()
        for store in self.stores:
            store.dispose()
        self.conf.clear_override("connection", "placement_database")
        self.conf.clear_override("sync_on_startup", "placement_database")
        self.conf.clear_override("change_feed_url", "placement_database")
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)

    # -- the run ------------------------------------------------------------

    def run(self):
        self.open_cloud()
        # As a gantt-scheduler worker does once it is ready (rpc.heap):
        # the cloud, the workload's events and the schedulers' state out
        # of the garbage collector's full passes, which would otherwise
        # walk them all in the middle of a decision (60-130 ms each, the
        # run's maximum decision time) where a worker pauses a few ms.
        gc.collect()
        gc.freeze()
        try:
            return self._replay()
        finally:
            gc.unfreeze()
            self.close()

    def _replay(self):
        events = self.workload.events
        total = len(events)
        self._start_counters()
        every = max(1, math.ceil(total / max(1, self.options.samples)))
        check = self.options.check_every
        self._sample(0, 0.0)
        bar = tqdm.tqdm(total=total, unit="event", mininterval=0.5,
                        disable=not self.options.progress, file=sys.stderr,
                        smoothing=0.05)
        wall = time.perf_counter()
        for n, event in enumerate(events, 1):
            kind = event.kind
            if kind == "create":
                self._create(n, event)
            elif kind == "delete":
                self._delete(event)
            else:
                self._compute_event(n, event)
            if n % every == 0 or n == total:
                self._sample(n, event.time)
                bar.update(n - bar.n)
            if check and n % check == 0:
                self.check_conservation()
        bar.close()
        wall = time.perf_counter() - wall
        self.check_conservation()
        return self._report(wall)

    def _start_counters(self):
        self.live = {}  # instance name -> (uuid, node uuid, host, flavor)
        self.members = {}  # group name -> {instance uuid: host}
        self.creates = self.deletes = self.placed = self.failed = 0
        self.skipped_deletes = 0
        self.latencies = []
        self.useful_s = self.wasted_s = 0.0
        self.first_failure = None
        self.groups_at_first_failure = None
        self.failures = FailureCounts()
        self.peak = {}
        self.series = {"event": [], "time_s": [], "utilisation": {},
                       "placed": [], "no_valid_host": [], "live": [],
                       "groups": {label: {} for label in self.groups}}
        self._round = 0
        self._pending = [[] for _ in self.schedulers]
        self._specs = {}
        # Placements, deletes and syncs so far: a failure's arithmetic holds
        # until the next one (a full cloud refuses many in a row).
        self._changes = 0
        self._short = {}  # (scheduler, flavor, zone) -> (changes, class)
        # Schedulers whose capacity view predates a reshape they have
        # not synced yet.
        self._stale_views = set()

    def _turn(self):
        """The scheduler of the next create; at the start of a round,
        every scheduler learns of the last round and syncs."""
        k = self._round
        if k == 0 and len(self.schedulers) > 1:
            for scheduler, pending in zip(self.schedulers, self._pending,
                                          strict=True):
                for args in pending:
                    self._apply(scheduler, *args)
                pending.clear()
                scheduler.sync()
            self._changes += 1  # the schedulers' views moved
            for j in self._stale_views:
                self.views[j] = capacity.CloudView(self.schedulers[j])
            self._stale_views.clear()
        self._round = (k + 1) % len(self.schedulers)
        return k

    def _spec(self, event):
        key = (event.flavor, event.zone)
        spec = self._specs.get(key)
        if spec is None:
            data = {"flavor": self.workload.flavors[event.flavor].as_spec(),
                    "project_id": PROJECT, "user_id": USER}
            if event.zone:
                data["availability_zone"] = event.zone
            spec = self._specs[key] = request_spec.RequestSpec \
                .from_dict(data)
        if event.group is None:
            return spec
        members = self.members.get(event.group, {})
        group = request_spec.InstanceGroup(
            policy=self.workload.groups[event.group],
            uuid=self._uuid("group", event.group),
            members=tuple(members), hosts=tuple(sorted(set(
                members.values()))))
        return dataclasses.replace(spec, instance_group=group)

    def _uuid(self, kind, name):
        return str(uuidlib.uuid5(_NAMESPACE,
                                 f"{self.options.seed}:{kind}:{name}"))

    def _create(self, n, event):
        self.creates += 1
        k = self._turn()
        scheduler = self.schedulers[k]
        instance = self._uuid("instance", event.instance)
        spec = self._spec(event)
        stats = scheduler.stats
        lost_before = stats["claims_lost_s"]
        attempts_before = stats["claim_attempts"]
        self.failures.create(event.flavor, event.zone)
        start = time.perf_counter()
        try:
            # One scheduler alone on its store: every change reaches its
            # index and table through the store's commit listeners, so
            # the per-request sync (for other processes' writes) is moot.
            decision = scheduler.schedule(spec, [instance], refresh=False,
                                          alternates=False)
        except errors.NoValidHost as exc:
            elapsed = time.perf_counter() - start
            self.latencies.append(elapsed)
            self.wasted_s += elapsed
            claimed = stats["claim_attempts"] > attempts_before
            self._failed(n, event, k, spec, exc, claimed)
            return
        elapsed = time.perf_counter() - start
        self.latencies.append(elapsed)
        lost = stats["claims_lost_s"] - lost_before
        self.wasted_s += lost
        self.useful_s += elapsed - lost
        self.placed += 1
        self._changes += 1
        chosen = decision.selections[0][0]
        node, host = chosen.compute_node_uuid, chosen.service_host
        self.live[event.instance] = (instance, node, host, event.flavor,
                                     event.group)
        if event.group is not None:
            self.members.setdefault(event.group, {})[instance] = host
        flavor = spec.flavor
        # The node's report: the build is over (no io op), the instance
        # is on the host. The picking scheduler consumed the resources
        # already; the others learn at the next round.
        table = scheduler.table
        with table.lock:
            table.consume(table.row_of(node), instances=0, io_ops=-1)
            table.note_instance(host, instance, flavor_id=flavor.name,
                                project_id=PROJECT)
        for j, pending in enumerate(self._pending):
            if j != k:
                pending.append((node, host, instance, flavor, 1))

    def _failed(self, n, event, k, spec, exc, claimed):
        """Count a NoValidHost by flavor, zone asked and cause; the
        first one also keeps how full the cloud and its groups were."""
        self.failed += 1
        cause = (CLAIMS_LOST if claimed
                 else self._cause(k, event, spec, exc))
        self.failures.fail(event.flavor, event.zone, cause)
        if self.first_failure is None:
            usage = self.view.host_usage()
            self.first_failure = {
                "event": n, "time_s": event.time,
                "flavor": event.flavor, "zone": event.zone, "cause": cause,
                "utilisation": self.view.utilisation(usage)}
            self.groups_at_first_failure = self.view.group_utilisation(
                self.groups, usage)

    def _cause(self, k, event, spec, exc):
        """Why scheduler ``k`` found no host for ``event``: the resource
        class no host the request can reach has room for (arithmetic
        on the index), else the filter that removed the last hosts
        (the answer says), else what the scheduler explains when asked
        again (placement's candidates, a zone with no hosts, ...)."""
        # A zone no host is in: how the scheduler takes it is its rule.
        zones = self.zone_reach[k]
        if not event.zone or event.zone in zones:
            short = self._out_of_room(k, event.flavor, event.zone)
            if short is not None:
                return short
        # Not asked again when filters did it: explaining every rejected
        # host costs far more than the decision (tens of ms for an
        # anti-affinity group on 250 hosts).
        emptied = filter_that_emptied(exc.message)
        if emptied is not None:
            return emptied
        return explained_cause(self._explain(self.schedulers[k], spec,
                                             exc))

    def _out_of_room(self, k, flavor, zone):
        """CloudView.out_of_room for scheduler ``k``, worked out again
        only after a placement or a delete."""
        key = (k, flavor, zone)
        known = self._short.get(key)
        if known is not None and known[0] == self._changes:
            return known[1]
        short = self.views[k].out_of_room(self.flavor_resources[flavor],
                                          self.zone_reach[k].get(zone))
        self._short[key] = (self._changes, short)
        return short

    def _explain(self, scheduler, spec, exc):
        """The failed decision again, with its explanation. No claim was
        tried (the caller checked): no candidate came back or no host
        passed the filters, and the same view (no sync) gives the same
        answer. No instance is named, so nothing would be claimed; the
        rankings of an empty list draw nothing from the scheduler's
        random numbers, so the run goes on as it would have."""
        try:
            scheduler.schedule(spec, [], refresh=False, alternates=False,
                               explain=True)
        except errors.NoValidHost as again:
            return again
        return exc

    def _delete(self, event):
        self.deletes += 1
        found = self.live.pop(event.instance, None)
        if found is None:
            # Its create failed: nothing to remove.
            self.skipped_deletes += 1
            return
        instance, node, host, flavor_name, group = found
        self._changes += 1
        claims.unclaim(self.schedulers[0].placement, instance)
        if group is not None:
            self.members[group].pop(instance, None)
        flavor = self.workload.flavors[flavor_name]
        for scheduler in self.schedulers:
            self._apply(scheduler, node, host, instance, flavor, -1)

    def _compute_event(self, n, event):
        """A node reshapes its tree or a compute service goes down or
        up (simulation.compute_events). The first scheduler's store is
        written: that scheduler learns at once, the others at their next
        sync, as from any other process."""
        self.compute.play(n, event)
        self._changes += 1
        self.schedulers[0].sync()
        if event.kind == "reshape":
            # New providers: the capacity views are per provider. The
            # other schedulers' views follow when they sync.
            self.views[0] = self.view = capacity.CloudView(
                self.schedulers[0])
            self._stale_views.update(range(1, len(self.schedulers)))

    def _apply(self, scheduler, node, host, instance, flavor, sign):
        """What ``node``'s report tells ``scheduler``: an instance of
        ``flavor`` arrived (sign 1) or left (-1)."""
        table = scheduler.table
        disk_gb = flavor.ephemeral_gb + flavor.swap / 1024 + flavor.root_gb
        with table.lock:
            row = table.row_of(node)
            if row is None:
                return
            table.consume(row, ram_mb=sign * flavor.memory_mb,
                          disk_mb=sign * int(disk_gb * 1024),
                          vcpus=sign * flavor.vcpus, instances=sign,
                          io_ops=0)
            table.note_instance(host, instance, present=sign > 0,
                                flavor_id=flavor.name, project_id=PROJECT)

    # -- figures ------------------------------------------------------------

    def _sample(self, n, at):
        if len(self.schedulers) > 1:
            self.schedulers[0].sync()
        usage = self.view.host_usage()
        used = self.view.utilisation(usage)
        series = self.series
        by_group = self.view.group_utilisation(self.groups, usage)
        for label, shares in by_group.items():
            for rc, value in shares.items():
                series["groups"][label].setdefault(rc, []).append(value)
        series["event"].append(n)
        series["time_s"].append(float(at))
        for rc, value in used.items():
            series["utilisation"].setdefault(rc, []).append(value)
            self.peak[rc] = max(self.peak.get(rc, 0.0), value)
        series["placed"].append(self.placed)
        series["no_valid_host"].append(self.failed)
        series["live"].append(len(self.live))

    def check_conservation(self):
        """Placement's usage per resource class equals the initial usage
        plus what the live instances hold; ConservationError if not."""
        store = self.stores[0]
        used = store.read(_usage_by_class)
        expected = dict(self._initial_usage())
        for _, _, _, flavor, _ in self.live.values():
            for rc, amount in self.flavor_resources[flavor].items():
                expected[rc] = expected.get(rc, 0) + amount
        expected = {rc: v for rc, v in expected.items() if v}
        if used != expected:
            raise ConservationError(
                f"placement holds {used}, the live instances "
                f"{expected}")

    def _initial_usage(self):
        out = {}
        for alloc in self.cloud.allocations:
            for resources in alloc.resources.values():
                for rc, amount in resources.items():
                    out[rc] = out.get(rc, 0) + amount
        return out

    def _report(self, wall):
        view = self.view
        if len(self.schedulers) > 1:
            self.schedulers[0].sync()
        stats = collections.Counter()
        for scheduler in self.schedulers:
            stats.update(scheduler.stats)
        attempts = stats["claim_attempts"]
        lost = stats["claims_lost"]
        flavors = list(self.flavor_resources.values())
        stranded = {}
        totals = view.totals()
        for rc, (free, stuck) in view.stranded(flavors).items():
            cap = totals[rc][0]
            stranded[rc] = {"capacity": cap, "free": free,
                            "stranded": stuck,
                            "fraction_of_capacity": stuck / cap if cap
                            else 0.0}
        fits = {name: view.group_fit(res).fits
                for name, res in self.flavor_resources.items()}
        edges = np.linspace(0.0, 1.0, FILL_BINS + 1)
        host_fill = {rc: {"edges": edges.tolist(),
                          "counts": np.histogram(np.clip(v, 0, 1),
                                                 edges)[0].tolist()}
                     for rc, v in view.fill().items()}
        ms = np.asarray(self.latencies) * 1000.0
        hist = np.histogram(np.clip(ms, LATENCY_EDGES[0], LATENCY_EDGES[-1]),
                            LATENCY_EDGES)[0]
        events = len(self.workload.events)
        return {
            "format": 1,
            "inputs": {
                **self.labels,
                "seed": self.options.seed,
                "schedulers": len(self.schedulers),
                "hosts": view.size,
                "events": events,
                "flavors": {n: f.as_spec()
                            for n, f in self.workload.flavors.items()},
            },
            "figures": {
                "creates": self.creates, "deletes": self.deletes,
                "deletes_of_failed": self.skipped_deletes,
                "placed": self.placed, "no_valid_host": self.failed,
                "claim_attempts": attempts,
                "retries": max(0, attempts - self.placed),
                "conflicts": lost,
                "first_failure": self.first_failure,
                "utilisation_end": view.utilisation(),
                "utilisation_peak": self.peak,
                "stranded": stranded,
                "fits_at_end": fits,
                "live_instances_end": len(self.live),
                **self.failures.figures(),
                "groups": self._group_figures(),
                **({"compute_events": {**self.compute.counts,
                                       "hosts_down_end": len(
                                           self.compute.down),
                                       "log": self.compute.log}}
                   if self.compute else {}),
            },
            "timing": {
                "wall_s": wall,
                "events_per_s": events / wall if wall else 0.0,
                "decision_ms": _percentiles(ms),
                "scheduler_s": {"useful": self.useful_s,
                                "wasted": self.wasted_s},
            },
            "series": self.series,
            "host_fill": host_fill,
            "latency_ms": {"edges": LATENCY_EDGES.tolist(),
                           "counts": hist.tolist()},
        }

    def _group_figures(self):
        """Per zone, aggregate and cell: hosts, utilisation at the first
        failure, peak and end, live instances at the end, and for a
        zone the creates that asked it and their NoValidHost."""
        view = self.view
        end = view.group_utilisation(self.groups)
        first = self.groups_at_first_failure or {}
        live = self._live_per_host()
        asked = self.failures.by_zone
        out = {}
        for label, mask in self.groups.items():
            kind, _, name = label.partition(" ")
            zone = asked.get(name, {"creates": 0, "no_valid_host": 0})
            out[label] = {
                "kind": kind, "name": name, "hosts": int(mask.sum()),
                "utilisation_at_first_failure": first.get(label),
                "utilisation_peak": {
                    rc: max(values) for rc, values in
                    self.series["groups"][label].items()},
                "utilisation_end": end[label],
                "live_instances_end": int(live[mask].sum()),
                # A request names a zone, never an aggregate or a cell.
                "creates": zone["creates"] if kind == "zone" else None,
                "no_valid_host": (zone["no_valid_host"] if kind == "zone"
                                  else None),
            }
        return out

    def _live_per_host(self):
        """Live instances per host of the view, in its host order."""
        table = self.schedulers[0].table
        rows = [table.row_of(node) for _, node, _, _, _ in
                self.live.values()]
        at = np.searchsorted(self.view.host_rows, np.asarray(rows, int))
        return np.bincount(at, minlength=self.view.size)


# A create whose every claim another scheduler's took first.
CLAIMS_LOST = "claims lost"


class FailureCounts:
    """Creates and NoValidHost by flavor, by zone asked (``ANY_ZONE``
    for creates that name none) and by cause."""

    ANY_ZONE = "(no zone asked)"

    def __init__(self):
        self.by_flavor = {}
        self.by_zone = {}
        self.by_cause = collections.Counter()

    def create(self, flavor, zone):
        for entry in (self._flavor(flavor), self._zone(zone)):
            entry["creates"] += 1

    def fail(self, flavor, zone, cause):
        entry = self._flavor(flavor)
        entry["no_valid_host"] += 1
        entry["causes"][cause] = entry["causes"].get(cause, 0) + 1
        self._zone(zone)["no_valid_host"] += 1
        self.by_cause[cause] += 1

    def _flavor(self, flavor):
        entry = self.by_flavor.get(flavor)
        if entry is None:
            entry = self.by_flavor[flavor] = {
                "creates": 0, "no_valid_host": 0, "causes": {}}
        return entry

    def _zone(self, zone):
        key = zone or self.ANY_ZONE
        entry = self.by_zone.get(key)
        if entry is None:
            entry = self.by_zone[key] = {"creates": 0, "no_valid_host": 0}
        return entry

    def figures(self):
        """The report's breakdowns; causes most frequent first."""
        by_flavor = {
            name: {**entry, "causes": _most_first(entry["causes"])}
            for name, entry in sorted(self.by_flavor.items())}
        return {"no_valid_host_by_cause": _most_first(self.by_cause),
                "no_valid_host_by_flavor": by_flavor,
                "no_valid_host_by_zone": dict(sorted(self.by_zone.items()))}


def _most_first(counts):
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


# How a NoValidHost from the filters says where the hosts went
# (scheduler.framework.summary): "250 candidate hosts; ComputeFilter
# removed 2, ServerGroupAntiAffinityFilter removed 248".
_REMOVED = re.compile(r"(\S+) removed \d+")


def filter_that_emptied(message):
    """The filter that removed the last hosts, from a NoValidHost's
    message: with no host left, the last filter that removed any."""
    if "passed the filters" in message:
        return None     # hosts passed; their claims failed
    removed = _REMOVED.findall(message)
    return removed[-1] if removed else None


def explained_cause(exc):
    """The cause a NoValidHost's explanation (Scheduler.schedule's
    ``explain``) names: the class no provider has room for, the filter
    that removed the last hosts, or what ruled every host out before
    placement was asked (an unknown zone...)."""
    explain = exc.explain or {}
    if "candidates" not in explain:
        return exc.message.removeprefix("no valid host: ")
    if not explain["candidates"]:
        short = explain.get("short_of") or ()
        return (short[0].partition(":")[0] if short
                else "no candidates (traits, aggregates or trees)")
    for turn in reversed(explain.get("instances", ())):
        emptied = next((f["name"] for f in turn["filters"]
                        if f["before"] and not f["after"]), None)
        if emptied:
            return emptied
        if not turn["candidate_hosts"]:
            return "no candidate on an allowed host"
    return "unexplained"


def distinct_groups(groups):
    """``groups`` without those whose hosts an earlier one already has
    (the aggregate that makes zone east is zone east)."""
    out, seen = {}, set()
    for label, mask in groups.items():
        key = mask.tobytes()
        if key not in seen:
            seen.add(key)
            out[label] = mask
    return out


def cloud_zones(cloud, default_zone):
    """The availability zones the compute hosts of ``cloud`` (a
    cloudfile Cloud) are in: their aggregates' availability_zone
    metadata, ``default_zone`` for a host in none."""
    zone_of = {a.uuid: a.metadata.get("availability_zone")
               for a in cloud.aggregates
               if a.metadata.get("availability_zone")}
    aggregates_of = {p.uuid: p.aggregates for p in cloud.providers}
    zones = set()
    for host in cloud.hosts:
        found = {zone_of[u] for u in aggregates_of.get(host.uuid, ())
                 if u in zone_of}
        zones |= found or {default_zone}
    return zones


def unknown_zone_warnings(workload, cloud, conf, cloud_label):
    """One line per zone the workload asks that no host is in, to say
    before the run: such creates all fail, or go to any host where
    Nova's rule does that (no aggregate carries the zone, and
    [scheduler] strict_availability_zones is off)."""
    known = cloud_zones(cloud, conf.default_availability_zone)
    carried = {a.metadata.get("availability_zone")
               for a in cloud.aggregates}
    lines = []
    for zone, count in workload_mod.zones_asked(workload).items():
        if zone in known:
            continue
        anywhere = (zone not in carried
                    and not conf.scheduler.strict_availability_zones)
        outcome = ("Nova's rule sends them to any host" if anywhere
                   else "they will fail with NoValidHost")
        creates = "create asks" if count == 1 else "creates ask"
        lines.append(
            f"{workload.path}: {count} {creates} for availability zone "
            f"{zone!r}, which no host of {cloud_label} is in (zones: "
            f"{', '.join(sorted(known)) or 'none'}); {outcome}")
    return lines


def _percentiles(ms):
    if not len(ms):
        return {"p50": 0.0, "p99": 0.0, "mean": 0.0, "max": 0.0,
                "count": 0}
    return {"p50": float(np.percentile(ms, 50)),
            "p99": float(np.percentile(ms, 99)),
            "mean": float(ms.mean()), "max": float(ms.max()),
            "count": int(len(ms))}


def _usage_by_class(txn):
    alloc = tables.allocations
    rows = txn.execute(
        sa.select(alloc.c.resource_class_id, sa.func.sum(alloc.c.used))
        .group_by(alloc.c.resource_class_id)).all()
    return {txn.catalog.rc_name(txn, rc): int(total)
            for rc, total in rows if total}
