"""The scheduler: select_destinations over one store, one request at a
time.

:class:`Scheduler` holds what outlives a request: the store, the
placement port (scheduler.placement_port), the candidates index and the
host state table (the two caches, brought up to date before each
decision by :meth:`Scheduler.sync`), the filter and weigher chains
(scheduler.framework) and the stages of scheduler.pipeline, built once.
Each call makes a RequestState and runs the stages over it: candidates,
then per instance ranking, pick, claim and what the instance takes from
the host state, then the selections with their alternates (see
scheduler.pipeline.flow).

Requests that arrive while another is being decided wait in a queue and
are served as a group: decided in a row on one sync, claimed in one
transaction (scheduler.request_groups; ``[scheduler] claim_group_size``).

A request that cannot place every instance removes the claims it made
and raises NoValidHost saying where the hosts went. A rebuild (hint
``_nova_check_type`` = rebuild) asks placement nothing and claims
nothing: it runs the filters marked RUN_ON_REBUILD over the requested
hosts.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from placement import direct
from placement import errors as placement_errors
from placement.candidates import engine as engine_mod
from placement.db import follower
from placement.db import store as store_mod
from scheduler import (
    claims,
    decision_log,
    errors,
    framework,
    host_request,
    host_state,
    host_updates,
    placement_port,
    request_groups,
    request_spec,
    resource_request,
    selection,
)
from scheduler import conf as scheduler_conf
from scheduler.pipeline import candidates as candidates_stage
from scheduler.pipeline import consumption as consumption_mod
from scheduler.pipeline import flow
from scheduler.pipeline import placing as placing_stage
from scheduler.pipeline import ranking as ranking_stage
from scheduler.pipeline import selecting as selecting_stage
from scheduler.pipeline import state as state_mod

LOG = logging.getLogger(__name__)

# The failures a decision log records (the others refuse the request).
_LOGGED_ERRORS = (errors.NoValidHost, errors.AllocationUpdateFailed)
# The decision log's records whose CPU is read: one in so many.
LOG_CPU_SAMPLE = 8

# Where callers that hold the engine anyway (the simulator, the demo,
# the tests) have always found it; it lives in scheduler.errors.
NoValidHost = errors.NoValidHost


class Scheduler:
    """The scheduling engine over one store. Thread-safe: requests are
    served one at a time (host state consumption must be ordered).

    ``registry``: the filter and weigher classes to choose from (default:
    the built-in ones and those of the entry point groups).
    ``decisions``: where each decision's record goes
    (scheduler.decision_log; gantt-scheduler's [decision_log]), if
    anywhere; the caller closes it."""

    def __init__(self, conf: Any, store: store_mod.Store | None = None,
                 rng: random.Random | None = None,
                 clock: Callable[[], float] = time.time,
                 registry: framework.Registry | None = None,
                 decisions: decision_log.Capture | None = None) -> None:
        scheduler_conf.register_opts(conf)
        self.conf = conf
        self._own_store = store is None
        self.store = store or store_mod.Store.open(conf)
        self.placement = direct.PlacementDirect(self.store)
        self.engine = engine_mod.CandidatesEngine(self.store, conf)
        self.port = placement_port.PlacementPort(self.placement,
                                                 self.engine)
        self.table = host_state.HostStateTable(
            self.store, conf, clock=clock,
            source=host_updates.source_for(conf, clock=clock))
        resource_request.warn_unsupported_options(conf)
        registry = registry or framework.Registry.discover()
        self.filters = registry.filter_chain(conf)
        self.weighers = registry.weigher_chain(conf)
        self.rng = rng or random.Random()
        self.clock = clock
        self.decisions = decisions
        # Which records' CPU is read (see _log): its own generator, so
        # that the decisions' random picks stay as they were.
        self._sample = random.Random().random
        self._lock = threading.Lock()
        self._watches = self.store.open_watches()
        # The connection this scheduler's decisions run on (made on the
        # first): see Store.pinned.
        self._conn: Any = None
        # Claim attempts and lost claims (capacity taken by another
        # writer since the view was read), with the time the lost ones
        # took: what the simulator reports as conflicts and waste.
        self.stats: dict[str, Any] = collections.Counter()
        self._host_rows = candidates_stage.HostRows(self.engine.index,
                                                    self.table)
        find = candidates_stage.FindCandidates(
            self.port, self.table, conf, self._host_rows)
        rank = ranking_stage.Rank(self.filters, self.weighers, conf,
                                  self.rng, self.table)
        self.pipeline = flow.Pipeline(
            find,
            placing_stage.Place(
                rank, find, self.port,
                consumption_mod.HostConsumption(self.table), self.stats),
            selecting_stage.Select(self.table, conf))
        # Requests that queue for the lock are served in groups.
        self._groups = request_groups.RequestGroups(
            self._lock, conf.scheduler.claim_group_size, self._serve_group)

    def host_rows_of(self, index_rows: npt.NDArray[np.int64]
                     ) -> npt.NDArray[np.int64]:
        """Host table rows of provider index rows (-1: not a compute
        node)."""
        return self._host_rows(index_rows)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        self.table.close()
        self.engine.close()
        if self._own_store:
            self.store.dispose()

    # -- the Nova-shaped entry point -------------------------------------

    def select_destinations(
            self, context: Any,
            spec: request_spec.RequestSpec | dict[str, Any],
            instance_uuids: Iterable[str] | None = None,
            return_objects: bool = True, return_alternates: bool = True
    ) -> list[list[selection.Selection]] | list[dict[str, Any]]:
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

    def schedule(self, spec: request_spec.RequestSpec | dict[str, Any],
                 instance_uuids: Iterable[str] | None = None,
                 context: Any = None, explain: bool = False,
                 refresh: bool = True,
                 alternates: bool = True) -> state_mod.Decision:
        """A Decision for ``spec``. Claims are made for ``instance_uuids``
        (one per instance); without them nothing is claimed, as Nova does
        for callers that send none. ``explain``: also return why.
        ``refresh=False`` decides on the view of the last sync (the
        simulator's schedulers racing on stale views); a lost claim still
        re-reads the host's tree. ``alternates=False``: each instance
        gets its chosen host only."""
        if isinstance(spec, dict):
            spec = _spec_from_dict(spec)
        uuids = list(instance_uuids or ())
        # The instances given, whatever num_instances says: a move of one
        # instance of a multi-create request keeps the request's spec
        # (num_instances 2, one uuid), and Nova counts the uuids too.
        count = len(uuids) or spec.num_instances
        project, user = _owner(spec, context)
        request_id = _context_value(context, "request_id")
        if (len(uuids) == 1 and count == 1 and refresh and not explain
                and not _is_rebuild(spec)):
            decision: state_mod.Decision = self._groups.run(
                _Request(spec, uuids, project, user, alternates,
                         request_id))
            return decision
        with self._lock, self.table.lock, self._pinned():
            cpu, wall = time.thread_time(), time.perf_counter()
            try:
                return self._decide(spec, uuids, count, project, user,
                                    explain, refresh, alternates,
                                    request_id)
            finally:
                self._count_decisions(1, cpu, wall)

    def _serve_group(self, group: list[request_groups.Waiting]) -> None:
        """Single-instance requests that queued for the lock (see
        scheduler.request_groups); the caller holds it."""
        with self.table.lock, self._pinned():
            cpu, wall = time.thread_time(), time.perf_counter()
            try:
                if len(group) == 1:
                    self._answer_alone(group[0])
                else:
                    self._decide_together(group)
            finally:
                self._count_decisions(len(group), cpu, wall)
                if len(group) > 1:
                    self.stats["grouped_decisions"] += len(group)

    def _count_decisions(self, count: int, cpu: float, wall: float) -> None:
        """``count`` decisions made since the thread CPU time ``cpu`` and
        the perf_counter ``wall``: their CPU, claims and sync included
        (the benchmarks split a call's cost with it), and the wall time
        the scheduler was held for them (what a call that arrives
        meanwhile waits on)."""
        self.stats["decisions"] += count
        self.stats["decision_cpu_s"] += time.thread_time() - cpu
        self.stats["decision_wall_s"] += time.perf_counter() - wall

    def _answer_alone(self, waiting: request_groups.Waiting,
                      regrouped: int = 0) -> None:
        r: _Request = waiting.request
        try:
            waiting.answer = self._decide(r.spec, r.uuids, 1, r.project,
                                          r.user, False, True, r.alternates,
                                          r.request_id, regrouped)
        except Exception as exc:
            waiting.error = exc

    def _decide_together(self, group: list[request_groups.Waiting]) -> None:
        """Decide the group's requests in a row on one sync, each seeing
        what the earlier ones took, then claim them all in one
        transaction. When that claim fails, each request is decided again
        alone, on fresh state."""
        self.sync()
        placed: list[state_mod.RequestState] = []
        decisions = []
        states = []
        try:
            for waiting in group:
                r: _Request = waiting.request
                state = self._request_state(r.spec, r.uuids, 1, r.project,
                                            r.user, False, r.request_id)
                states.append((waiting, state))
                state.claim_later = True
                try:
                    decisions.append(
                        (waiting, self.pipeline.run(state, r.alternates)))
                except Exception as exc:
                    waiting.error = exc
                    # What its picks took, if a later stage failed.
                    self.pipeline.place.roll_back(state)
                else:
                    placed.append(state)
        except BaseException:
            for state in reversed(placed):
                self.pipeline.place.roll_back(state)
            raise
        claimed = bool(placed) and self._claim_later(placed)
        if not placed or claimed:
            for waiting, decision in decisions:
                waiting.answer = decision
            for waiting, state in states:
                if claimed and waiting.error is None:
                    state.claim_tried(None, claims.Outcome.CLAIMED)
                self._log(state, waiting.error)
            return
        self.stats["group_fallbacks"] += 1
        for waiting in group:
            waiting.error = None
            self._answer_alone(waiting, regrouped=len(placed))

    def _claim_later(self, placed: list[state_mod.RequestState]) -> bool:
        """Claim the group's picks together; False when they must be
        decided again alone: they did not fit, or one request's own
        fault would fail them all (an instance that holds allocations
        already, or one instance asked for twice)."""
        try:
            return self.pipeline.place.claim_later(placed)
        except (errors.SchedulerError, placement_errors.InvalidAllocation):
            return False

    def _decide(self, spec: request_spec.RequestSpec, uuids: list[str],
                count: int, project: str | None, user: str | None,
                explain: bool, refresh: bool, alternates: bool,
                request_id: str | None = None,
                regrouped: int = 0) -> state_mod.Decision:
        """schedule() under its locks. ``regrouped``: how many requests
        this one was decided with before their claim together failed."""
        if refresh:
            self.sync()
        state = self._request_state(spec, uuids, count, project, user,
                                    explain, request_id)
        if regrouped:
            state.claim_attempts += 1
            state.conflict(None, f"claimed together with the "
                                 f"{regrouped - 1} other requests decided "
                                 "with it: refused; decided again alone")
        try:
            decision = self.pipeline.run(state, alternates)
        except errors.NoValidHost as exc:
            exc.explain = state.explain
            self._log(state, exc)
            raise
        except errors.AllocationUpdateFailed as exc:
            self._log(state, exc)
            raise
        self._log(state)
        return decision

    def _request_state(self, spec: request_spec.RequestSpec,
                       uuids: list[str], count: int, project: str | None,
                       user: str | None, explain: bool,
                       request_id: str | None = None
                       ) -> state_mod.RequestState:
        state = state_mod.RequestState(
            spec=spec, instance_uuids=uuids, count=count,
            project_id=project, user_id=user,
            host_request=host_request.HostRequest(
                spec=spec, table=self.table, conf=self.conf,
                now=self.clock(), rebuild=_is_rebuild(spec)),
            explain={} if explain else None, request_id=request_id)
        if self.decisions is not None:
            self.decisions.prepare(state)
        return state

    def _log(self, state: state_mod.RequestState,
             error: BaseException | None = None) -> None:
        """The decision's record to the decision log, if any: a request
        placed, or failed for want of a host or a claim (not one refused
        as invalid). A record that cannot be made fails nothing."""
        if self.decisions is None or not (
                error is None or isinstance(error, _LOGGED_ERRORS)):
            return
        # What the records cost (within decision_cpu_s; the benchmarks
        # give it as the log's share of a decision), read on a record
        # in LOG_CPU_SAMPLE, at random (a record that follows decisions
        # made with the log off costs more: a fixed stride would pick
        # the same places in a benchmark's batches), and counted for
        # all: reading a thread's CPU clock is a system call, two a
        # record cost as much as the rest of the log's own overhead.
        sampled = self._sample() < 1 / LOG_CPU_SAMPLE
        cpu = time.thread_time() if sampled else 0.0
        try:
            self.decisions.decided(state, self.table, error)
        except Exception:
            LOG.exception("Could not log the decision of request %s",
                          state.request_id)
        if sampled:
            self.stats["decision_log_cpu_s"] += \
                (time.thread_time() - cpu) * LOG_CPU_SAMPLE

    def _pinned(self) -> Any:
        if self._conn is None or self._conn.closed:
            self._conn = self.store.engine.connect()
        return self.store.pinned(self._conn)

    def view(self) -> dict[str, Any]:
        """What this process believes, brought up to date first: the
        usage of each provider by resource class id ({provider uuid:
        {class id: used}}, only what is in use) and the instances of each
        host; for comparing with the database (benchmarks.ha_run)."""
        with self._lock, self.table.lock, self._pinned():
            self.sync()
            index = self.engine.index
            usage: dict[str, dict[int, int]] = {}
            for row in range(index.size):
                if not index.alive[row]:
                    continue
                used = {int(index.col_rc[col]): int(value)
                        for col, value in enumerate(index.used[row])
                        if value}
                if used:
                    usage[index.uuids[row]] = used
            instances = {host: sorted(held)
                         for host, held in self.table.instances.items()
                         if held}
        return {"usage": usage, "instances": instances}

    def host_state_age(self) -> float | None:
        """Seconds since the host state last read its source (Nova's
        databases) completely; None with gantt's own host records, which
        each decision reads up to date."""
        source = self.table.source
        read_at = getattr(source, "read_at", None)
        if read_at is None:
            return None
        return time.monotonic() - read_at

    def sync(self) -> None:
        """Bring the host state table and the provider index up to date
        in one read transaction (one round trip instead of two); skipped
        when the store's watches (Store.open_watches: SQLite's
        data_version, a change feed) all say nobody else committed since
        the last read and neither cache has writes of its own to read
        back. A table fed by a host state source (Nova's databases)
        follows that source at its own pace instead (see
        placement.db.follower.sync_all)."""
        if not follower.sync_all(self.store, (self.table, self.engine.index),
                                 self._watches):
            self.stats["syncs_skipped"] += 1


@dataclasses.dataclass(frozen=True)
class _Request:
    """A single-instance request, as it waits in a group."""

    spec: request_spec.RequestSpec
    uuids: list[str]
    project: str | None
    user: str | None
    alternates: bool
    request_id: str | None = None


def _is_rebuild(spec: request_spec.RequestSpec) -> bool:
    return bool(spec.hint("_nova_check_type") == "rebuild")


def _spec_from_dict(data: dict[str, Any]) -> request_spec.RequestSpec:
    spec: request_spec.RequestSpec = request_spec.RequestSpec.from_dict(
        data)
    return spec


def _owner(spec: request_spec.RequestSpec,
           context: Any) -> tuple[str | None, str | None]:
    project = _context_value(context, "project_id") or spec.project_id
    user = _context_value(context, "user_id") or spec.user_id
    return project, user


def _context_value(context: Any, key: str) -> Any:
    """``key`` of the caller's context (a dict, or an object), or None."""
    if isinstance(context, dict):
        return context.get(key)
    return getattr(context, key, None)
