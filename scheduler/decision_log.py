"""The decision log ([decision_log]): for every select_destinations a
gantt-scheduler process decides, what was decided and why, one JSON
object a line, for `gantt-manage decisions` to show and `gantt-simulate
replay` to decide again (docs/scheduling.md, "The decision log").

A record, as :func:`decode` reads it back, holds:

- ``time`` (seconds since the epoch), ``request`` (the caller's request
  id), ``instances`` (their uuids; empty when the caller sent none, and
  nothing was claimed), ``count``, ``result`` (``placed``,
  ``no_valid_host`` or ``claim_failed``), ``error`` (``cause`` and
  ``message``, when it failed);
- ``query`` (the GET /allocation_candidates query string that asks the
  same; None for a rebuild), ``candidates`` (what placement returned),
  ``hosts`` (the compute hosts they are on, as the request narrowed
  them), ``requery`` (when a limited candidate list was all filtered out
  and placement was asked again);
- ``placements``, per instance placed (or the one no host was found
  for): ``filters`` (each filter's name, hosts before and after, and the
  first ``removed_hosts`` nodes it removed), ``passed``, ``top`` (the
  first ``top_hosts`` of the order the scheduler tried, each with its
  weight and every weigher's share of it: the shares add up to the
  weight), ``chosen`` and ``alternates`` (host, node, weight and rank by
  weight among the hosts that passed: 1 is the best weighed);
- ``claims``: ``attempts`` and ``conflicts`` ({host, reason}: a claim
  refused, or a pick that could not stand; host None: the request's
  picks claimed as a whole);
- ``spec``: the request spec in gantt's JSON form, as the caller gave
  it (request_spec.RequestSpec.as_given: fields left out take their
  defaults), or whole when gantt changed it.

Cheap by design (it never asks for explain's reasons, a call per
removed host): the filter runs keep a few removed rows, the weighers'
normalised values are kept by reference; one orjson call, and the line
queued to be written with others (placement.rotating_file's add). The
file holds what repeats in columns, worked out into the form above when
a record is read (:func:`decode`), not for every decision (format 3):

- ``filters``: the filters' names, hosts before and after, as lists
  (and ``removed``, a list beside them, when a filter removed any);
- ``top``: the top hosts, nodes and weights as lists, and each weigher's
  normalised values of them with what it was normalised by and its
  multiplier (the weighers' shares are worked out when read);
- ``chosen`` and ``alternates``: a host among the top hosts by its place
  there (its weight and rank are read from them), any other in full.

:func:`encode` and :func:`decode` are the two directions; records of
formats 1 (the top hosts as a list, with their shares) and 2 (the
filters and picks in full) read as they were written. Files and their
bounds: placement.rotating_file, one file a process
(decisions.<pid>.jsonl) in ``directory``; the age sweep covers every
decision file there, those of processes long gone too.
"""

from __future__ import annotations

import datetime
import glob
import os
import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import orjson
from oslo_log import log as logging

from placement import rotating_file
from scheduler import conf as scheduler_conf
from scheduler import errors

LOG = logging.getLogger(__name__)

FORMAT = 3
GROUP = scheduler_conf.DECISION_LOG_GROUP
# decisions.<pid>.jsonl and its backups, decisions.<pid>.jsonl.<n>
_FILE = re.compile(r"^decisions\.(\d+)\.jsonl(?:\.(\d+))?$")
_OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY
# How a file's header line (not a record) begins.
HEADER_START = b'{"decision_log"'


class Capture:
    """Builds a record for each decision and keeps it in memory (what
    gantt-simulate replay compares with the log); :class:`DecisionLog`
    writes them instead. The Scheduler calls :meth:`prepare` on each
    request's state before deciding and :meth:`decided` after."""

    def __init__(self, top_hosts: int = 5, removed_hosts: int = 10,
                 wall: Any = time.time) -> None:
        self.top_hosts = top_hosts
        self.removed_hosts = removed_hosts
        self._wall = wall
        self.records: list[dict[str, Any]] = []

    def prepare(self, state: Any) -> None:
        state.logged = True
        state.keep_removed = self.removed_hosts

    def decided(self, state: Any, table: Any,
                error: errors.SchedulerError | None = None) -> None:
        self.keep(record(state, table, error, self.top_hosts, self._wall()))

    def keep(self, found: dict[str, Any]) -> None:
        # As the log would read it back.
        self.records.append(decode(encode(found)))

    def close(self) -> None:
        pass


class DecisionLog(Capture):
    """Appends records to ``directory``/decisions.<pid>.jsonl."""

    def __init__(self, directory: str, max_bytes: int = 0,
                 backup_count: int = 0, max_age: float = 0.0,
                 flush_interval: float = 1.0, top_hosts: int = 5,
                 removed_hosts: int = 10, scheduler: str | None = None,
                 wall: Any = time.time) -> None:
        super().__init__(top_hosts, removed_hosts, wall)
        self.directory = os.fspath(directory)
        self.max_age = max_age
        self.path = os.path.join(self.directory,
                                 f"decisions.{os.getpid()}.jsonl")
        header = orjson.dumps({
            "decision_log": FORMAT, "started_at": round(wall(), 3),
            "scheduler": scheduler, "pid": os.getpid()})
        self._out = rotating_file.RotatingFile(
            self.path, header, LOG,
            ("Cannot write the decision log %s (requests are served, "
             "their decisions not logged): %s",
             "Writing the decision log %s again"),
            max_bytes=max_bytes, backup_count=backup_count,
            flush_interval=flush_interval, max_age=max_age,
            on_rotate=self.sweep, wall=wall,
            thread_name="gantt-decisions-flush")
        self.sweep()

    def keep(self, found: dict[str, Any]) -> None:
        # Its time is a read of the clock the file's age is counted by.
        self._out.add(encode(found), found["time"])

    def sweep(self) -> None:
        """Remove the decision files of the directory whose last record
        is older than max_age (this process's current file aside: its
        own age rotates it first)."""
        if not self.max_age:
            return
        limit = self._wall() - self.max_age
        for path in files(self.directory):
            if path == self.path:
                continue
            try:
                if os.path.getmtime(path) < limit:
                    os.remove(path)
            except OSError:
                pass  # gone already, or not ours to remove

    def flush(self) -> None:
        self._out.flush()

    def close(self) -> None:
        self._out.close()


def from_conf(conf: Any) -> DecisionLog | None:
    """The DecisionLog ``conf`` asks for, or None when it is off."""
    scheduler_conf.register_opts(conf)
    opts = conf[GROUP]
    if not opts.enabled:
        return None
    log = DecisionLog(
        os.path.expanduser(opts.directory), max_bytes=opts.max_bytes,
        backup_count=opts.backup_count, max_age=opts.max_age,
        flush_interval=opts.flush_interval, top_hosts=opts.top_hosts,
        removed_hosts=opts.removed_hosts,
        scheduler=conf.host if "host" in conf else None)
    LOG.info("Logging decisions to %s", log.path)
    return log


def encode(found: dict[str, Any]) -> bytes:
    """A record's line in the log."""
    return orjson.dumps(found, default=_default, option=_OPTIONS)


def decode(line: bytes | str) -> dict[str, Any]:
    """A record from its line in the log (raises
    orjson.JSONDecodeError for a line that is not one), its top hosts
    as a list, each with its weighers' shares."""
    found = orjson.loads(line)
    for placement in found.get("placements") or ():
        filters = placement.get("filters")
        if isinstance(filters, dict):
            placement["filters"] = _filter_runs(filters)
        top = placement.get("top")
        if isinstance(top, dict):
            top = placement["top"] = _top_hosts(top)
        chosen = placement.get("chosen")
        if isinstance(chosen, int):
            placement["chosen"] = _pick_read(top, chosen)
        alternates = placement.get("alternates")
        if alternates:
            placement["alternates"] = [
                _pick_read(top, a) if isinstance(a, int) else a
                for a in alternates]
    return found


def _filter_runs(columns: dict[str, Any]) -> list[dict[str, Any]]:
    """The filter runs of a record written in columns, each {name,
    before, after} and ``removed`` when it removed any."""
    names = columns["names"]
    removed = columns.get("removed") or [None] * len(names)
    runs = []
    for name, before, after, gone in zip(
            names, columns["before"], columns["after"], removed,
            strict=True):
        run = {"name": name, "before": before, "after": after}
        if gone is not None:
            run["removed"] = gone
        runs.append(run)
    return runs


def _pick_read(top: list[dict[str, Any]], at: int) -> dict[str, Any]:
    """A pick written as its place among the top hosts: their host,
    node and weight, and its rank by weight (they are in weight order:
    every heavier host is before the first of its weight)."""
    entry = top[at]
    weight = entry["weight"]
    weights = [t["weight"] for t in top]
    return {"host": entry["host"], "node": entry["node"], "weight": weight,
            "rank": 1 + weights.index(weight)}


def _top_hosts(top: dict[str, Any]) -> list[dict[str, Any]]:
    """The top hosts of a record written in columns, each with
    {weigher: its share of the host's weight} (see :func:`shares`)."""
    hosts = [{"host": host, "node": node, "weight": weight, "weighers": {}}
             for host, node, weight in zip(
                 top["hosts"], top["nodes"], top["weights"], strict=True)]
    if top.get("weighing"):
        for entry, found in zip(hosts, shares(top["weighing"]),
                                strict=True):
            entry["weighers"] = found
    return hosts


def shares(columns: dict[str, Any]) -> list[dict[str, float]]:
    """Per row of a weighing's ``columns`` (framework.Weighing.columns,
    as written or read back), {weigher: its share of the row's weight}:
    (value - low) / span * multiplier, the operations the weighing added
    up, in its order, on the same doubles, so that the shares add up to
    the weight to the last bit; a weigher that gave a row 0 is left
    out."""
    values = columns["values"]
    count = len(values[0]) if values else 0
    out: list[dict[str, float]] = [{} for _ in range(count)]
    # Only weighers that told the rows apart are there (span != 0).
    for name, low, span, multiplier, line in zip(
            columns["names"], columns["lows"], columns["spans"],
            columns["multipliers"], values, strict=True):
        factors = ([multiplier] * count if isinstance(multiplier, float)
                   else multiplier)
        for into, value, factor in zip(out, line, factors, strict=True):
            share = (value - low) / span * factor
            if share:
                into[name] = share
    return out


def _default(value: Any) -> Any:
    # Sets (a spec's traits) and anything else orjson does not know.
    if isinstance(value, set | frozenset):
        return sorted(value)
    return str(value)


# -- the record ----------------------------------------------------------


def record(state: Any, table: Any, error: errors.SchedulerError | None,
           top: int, now: float) -> dict[str, Any]:
    """The record of the decision ``state`` holds (see the module's
    doc); ``error``: why it failed."""
    query = state.query
    found: dict[str, Any] = {
        "time": now,
        "request": state.request_id,
        "instances": state.instance_uuids,
        "count": state.count,
        "result": _result(error),
        "query": None if query is None else query.query(),
        "candidates": (None if state.candidates is None
                       else len(state.candidates)),
        "hosts": len(state.rows),
    }
    if state.requery:
        found["requery"] = state.requery
    placements = []
    if error is None:
        turns = state.turns
        # A request of several instances takes its alternates from a
        # ranking made after every pick (scheduler.pipeline.flow).
        last = state.last_ranked
        after = last[1] if last is not None and len(turns) > 1 else None
        alternates = state.alternate_rows
        for i, turn in enumerate(turns):
            placements.append(_placement(
                state, table, i, turn.ranking, top, turn.chosen,
                alternates[i] if i < len(alternates) else (),
                after or turn.ranking))
    else:
        found["error"] = {"cause": getattr(error, "cause", "claim"),
                          "message": error.message}
        if state.last_ranked is not None:
            i, ranking = state.last_ranked
            placements.append(_placement(state, table, i, ranking, top))
    found["placements"] = placements
    hosts = table.hosts
    found["claims"] = {
        "attempts": state.claim_attempts,
        "conflicts": [{"host": None if row is None else hosts[row],
                       "reason": reason}
                      for row, reason in state.conflicts]}
    found["spec"] = state.spec.as_given()
    return found


def _result(error: errors.SchedulerError | None) -> str:
    if error is None:
        return "placed"
    if isinstance(error, errors.NoValidHost):
        return "no_valid_host"
    return "claim_failed"


def _placement(state: Any, table: Any, i: int, ranking: Any, top: int,
               chosen: int | None = None, alternates: Sequence[int] = (),
               alternates_ranking: Any = None) -> dict[str, Any]:
    hosts, nodes = table.hosts, table.nodenames
    uuids = state.instance_uuids
    out: dict[str, Any] = {
        "index": i,
        "instance": uuids[i] if i < len(uuids) else None,
        "filters": _filters(ranking.runs, nodes),
        "passed": len(ranking.passed),
    }
    if state.forced is not None:
        out["forced"] = True
    shown = ranking.ordered.head[:top]
    if shown:
        at, weights = _head_at(ranking, top)
        weighing = ranking.weighing
        out["top"] = {"hosts": [hosts[row] for row in shown],
                      "nodes": [nodes[row] for row in shown],
                      "weights": weights,
                      "weighing": (None if weighing is None
                                   else weighing.columns(at))}
    if chosen is not None:
        if alternates_ranking is ranking:
            picks = _picks(ranking, top, shown, hosts, nodes,
                           [chosen, *alternates])
            out["chosen"], out["alternates"] = picks[0], picks[1:]
        else:
            [out["chosen"]] = _picks(ranking, top, shown, hosts, nodes,
                                     [chosen])
            # Another ranking's order: its picks in full.
            out["alternates"] = _picks(alternates_ranking, top, [], hosts,
                                       nodes, alternates)
    return out


def _picks(ranking: Any, top: int, shown: list[int], hosts: Sequence[str],
           nodes: Sequence[str], rows: Sequence[int]
           ) -> list[int | dict[str, Any]]:
    """The chosen host and alternates of ``ranking`` at ``rows``: each
    by its place among the top hosts the record ``shown`` when it is
    there and they are in weight order (:func:`decode` reads its host,
    node, weight and rank from them), else in full (:meth:`_Head.pick`,
    one _Head for them all)."""
    by_weight = ranking.ordered.by_weight
    head = None
    out: list[int | dict[str, Any]] = []
    for row in rows:
        if by_weight and row in shown:
            out.append(shown.index(row))
            continue
        if head is None:
            head = _Head(ranking, top)
        out.append(head.pick(hosts, nodes, row))
    return out


# A ranking's first rows a record reads: its top hosts, and at least the
# chosen host and two alternates (Nova's default max_attempts of 3).
_PICKS = 3


class _Head:
    """A ranking's first rows (``rows``, the ``top`` a record shows and
    at least _PICKS), their positions among the rows that passed and
    their weights."""

    def __init__(self, ranking: Any, top: int) -> None:
        self.ranking = ranking
        ordered = ranking.ordered
        n = max(top, _PICKS)
        self.rows = ordered.head[:n]
        # In weight order (no host subset pick moved one first): every
        # row that weighs more than one of them is before it.
        self.by_weight = ordered.by_weight
        self.at, self.weights = _head_at(ranking, n)

    def pick(self, hosts: Sequence[str], nodes: Sequence[str],
             row: int) -> dict[str, Any]:
        """A chosen host or alternate: its weight and its rank by
        weight among the hosts that passed (1: the best weighed, ties
        share a rank)."""
        out: dict[str, Any] = {"host": hosts[row], "node": nodes[row]}
        if not self.by_weight or row not in self.rows:
            return self._beyond(out, row)
        weights = self.weights
        weight = out["weight"] = weights[self.rows.index(row)]
        # Heaviest first, and every row heavier than this one is among
        # them: those before its weight's first place.
        out["rank"] = 1 + weights.index(weight)
        return out

    def _beyond(self, out: dict[str, Any], row: int) -> dict[str, Any]:
        """A pick past the rows read (claims lost), or out of weight
        order: ranked against every row that passed."""
        passed = self.ranking.passed
        at = int(passed.searchsorted(row))
        if at < len(passed) and passed[at] == row:
            weights = self.ranking.weights
            found = weights[at]
            out["weight"] = float(found)
            out["rank"] = 1 + int(np.count_nonzero(weights > found))
        return out


def _head_at(ranking: Any, n: int) -> tuple[Any, list[float]]:
    """The positions among the rows that passed of a ranking's first
    ``n`` rows, and their weights."""
    ordered = ranking.ordered
    if ordered.head_at is not None:  # kept as it was ordered
        return ordered.head_at[:n], ordered.head_weights[:n]
    # The arrays' own methods: numpy's functions of the same names wrap
    # them in a dispatch that costs as much again, per record.
    at = ranking.passed.searchsorted(ordered.head[:n])
    return at, ranking.weights.take(at).tolist()


def _filters(runs: Sequence[Any], nodes: Sequence[str]) -> dict[str, Any]:
    """The filter runs in columns (see :func:`_filter_runs`)."""
    names, before, after = [], [], []
    removed: list[list[str] | None] | None = None
    for k, run in enumerate(runs):
        names.append(run.name)
        before.append(run.before)
        after.append(run.after)
        if run.removed is not None:
            if removed is None:
                removed = [None] * len(runs)
            removed[k] = [nodes[row] for row in run.removed.tolist()]
    out: dict[str, Any] = {"names": names, "before": before, "after": after}
    if removed is not None:
        out["removed"] = removed
    return out


# -- reading the log ------------------------------------------------------


class LogReadError(errors.SchedulerError):
    """The decision log's directory cannot be read."""


def files(directory: str) -> list[str]:
    """The decision files of ``directory``: each process's backups oldest
    first, then its current file."""
    found = []
    for path in glob.glob(os.path.join(glob.escape(directory),
                                       "decisions.*.jsonl*")):
        match = _FILE.match(os.path.basename(path))
        if match:
            backup = int(match.group(2) or 0)
            found.append((int(match.group(1)), -backup, path))
    return [path for _, _, path in sorted(found)]


def check_directory(directory: str) -> None:
    """Raises LogReadError when ``directory`` is not there to read."""
    if not os.path.isdir(directory):
        raise LogReadError(f"no decision log at {directory} (see "
                           "[decision_log] directory)")


def read(directory: str) -> Iterator[dict[str, Any]]:
    """Every record in ``directory``'s decision files (a file's order;
    see :func:`ordered`), each with ``scheduler`` and ``pid`` from its
    file's header (scheduler.decision_listing finds a few of them in a
    large log). A line cut short (a crash while it was written) is
    passed over."""
    check_directory(directory)
    for path in files(directory):
        header: dict[str, Any] = {}
        try:
            with open(path, "rb") as f:
                for line in f:
                    try:
                        found = decode(line)
                    except orjson.JSONDecodeError:
                        continue
                    if "decision_log" in found:
                        header = found
                        continue
                    found["scheduler"] = header.get("scheduler")
                    found["pid"] = header.get("pid")
                    yield found
        except FileNotFoundError:
            continue  # rotated or removed while the directory was read


def ordered(records: Iterator[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records oldest first (the files of several processes
    interleave)."""
    return sorted(records, key=lambda r: r.get("time") or 0)


def iso(epoch: float) -> str:
    """A record's time as people read it (UTC, to the millisecond)."""
    return datetime.datetime.fromtimestamp(
        epoch, datetime.timezone.utc).isoformat(timespec="milliseconds")
