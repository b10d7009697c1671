"""``gantt-manage decisions``: what the decision log
(scheduler.decision_log) kept of gantt-scheduler's decisions.

    gantt-manage decisions show INSTANCE_UUID [--host HOST]
                 [--format table|json] [--dir DIR]
    gantt-manage decisions list [--since WHEN] [--host HOST]
                 [--no-valid-host] [--limit N] [--format table|json]
                 [--dir DIR]

``show``: every decision logged about the instance, oldest first: why
its host was chosen (what each filter removed, the best weighed hosts
and each weigher's share of their weights, the alternates, the claims)
or why none was; with ``--host``, also why not that host. ``list``: one
line a decision (time, request, instances, where they went or why not),
oldest first. The log is read from ``[decision_log] directory`` (or
``--dir``): every process's files, rotated ones included.

Exit status 2, with one line, when the instance has no logged decision,
the uuid or ``--since`` cannot be read, or there is no log directory.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import time
import uuid as uuidlib
from collections.abc import Iterable
from typing import Any

from scheduler import decision_listing, decision_log, errors


class DecisionsUsageError(errors.SchedulerError):
    """An argument the command cannot use, or nothing to show."""


USAGE_ERRORS = (DecisionsUsageError, decision_log.LogReadError)

_AGE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def add_actions(actions: Any) -> None:
    """gantt-manage decisions' actions: show and list."""
    show = actions.add_parser(
        "show", help="the decisions logged about an instance: why its "
                     "host, why not the others")
    show.add_argument("instance", metavar="INSTANCE_UUID")
    show.add_argument("--host", help="also say why not this host (or "
                                     "node)")
    _common(show)
    show.set_defaults(run=run_show)
    listing = actions.add_parser(
        "list", help="one line a logged decision, oldest first")
    listing.add_argument("--since", metavar="WHEN",
                         help="only decisions made since WHEN: a UTC time "
                              "(2024-05-01, 2024-05-01T10:00) or an age "
                              "(90s, 30m, 12h, 7d)")
    listing.add_argument("--host", help="only decisions that placed an "
                                        "instance on this host (or node)")
    listing.add_argument("--no-valid-host", action="store_true",
                         help="only decisions that found no valid host")
    listing.add_argument("--limit", type=int, default=0, metavar="N",
                         help="only the newest N (default: all)")
    _common(listing)
    listing.set_defaults(run=run_list)


def _common(parser: Any) -> None:
    parser.add_argument("--format", choices=["table", "json"],
                        default="table")
    parser.add_argument("--dir", help="the decision log's directory "
                                      "(default: [decision_log] directory)")


def _directory(conf: Any) -> str:
    return os.path.expanduser(conf.command.dir
                              or conf[decision_log.GROUP].directory)


def _instance(text: str) -> str:
    try:
        return str(uuidlib.UUID(text))
    except ValueError:
        raise DecisionsUsageError(
            f"{text!r} is not an instance uuid") from None


def since(text: str, now: float | None = None) -> float:
    """The epoch time ``text`` means: an age back from now (90s, 30m,
    12h, 7d) or an ISO 8601 date or time (UTC unless it says)."""
    found = _AGE.match(text.strip())
    if found:
        now = time.time() if now is None else now
        return now - float(found.group(1)) * _UNITS[found.group(2)]
    try:
        when = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise DecisionsUsageError(
            f"--since: {text!r} is neither a time (2024-05-01, "
            "2024-05-01T10:00) nor an age (90s, 30m, 12h, 7d)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def run_show(conf: Any) -> int:
    args = conf.command
    instance = _instance(args.instance)
    directory = _directory(conf)
    found = decision_listing.of_instance(directory, instance)
    if not found:
        raise DecisionsUsageError(
            f"no decision logged about instance {instance} in "
            f"{directory}")
    if args.format == "json":
        print(json.dumps(found, indent=2, sort_keys=True))
    else:
        print("\n\n".join(render(r, instance, args.host) for r in found))
    return 0


def run_list(conf: Any) -> int:
    args = conf.command
    if args.limit < 0:
        raise DecisionsUsageError("--limit: expected N >= 0")
    start = since(args.since) if args.since else None
    needles, tests = [], []
    if args.no_valid_host:
        needles.append(b'"result":"no_valid_host"')
        tests.append(lambda r: r.get("result") == "no_valid_host")
    if args.host:
        needles.append(decision_listing.whole(args.host))
        tests.append(lambda r: args.host in _chosen_names(r))
    # The tests read records as written: no columns worked out.
    with decision_listing.select(
            _directory(conf), start, needles,
            (lambda r: all(t(r) for t in tests)) if tests else None,
            args.limit, raw=True) as found:
        if args.format == "json":
            _print_json(found)
        else:
            for line in _list_lines(found):
                print(line)
    return 0


def _print_json(records: Iterable[dict[str, Any]]) -> None:
    """A JSON array of ``records``, as json.dumps(list(records),
    indent=2, sort_keys=True) would print it, one record at a time."""
    first = True
    for record in records:
        text = json.dumps(record, indent=2, sort_keys=True)
        print("[" if first else ",")
        print("  " + text.replace("\n", "\n  "), end="")
        first = False
    print("[]" if first else "\n]")


def _chosen_names(record: dict[str, Any]) -> set[str]:
    """The hosts and nodes a record (as written, of any format) chose."""
    names = set()
    for placement in record.get("placements") or ():
        chosen = placement.get("chosen")
        if isinstance(chosen, int):  # its place among the top hosts
            top = placement["top"]
            names.update((top["hosts"][chosen], top["nodes"][chosen]))
        elif chosen:
            names.update((chosen["host"], chosen["node"]))
    return names


def _list_lines(found: Iterable[dict[str, Any]]) -> list[str]:
    rows = [(decision_log.iso(r["time"]), r.get("request") or "-",
             _instances(r), _outcome(r)) for r in found]
    if not rows:
        return []
    head = ("time", "request", "instances", "result")
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(3)]
    return ["  ".join([*(cell.ljust(w) for cell, w in
                         zip(row[:3], widths, strict=True)), row[3]])
            for row in [head, *rows]]


def _instances(record: dict[str, Any]) -> str:
    uuids = record.get("instances") or []
    if not uuids:
        return f"({record.get('count', 1)}, none claimed)"
    more = f" +{len(uuids) - 1}" if len(uuids) > 1 else ""
    return uuids[0] + more


def _outcome(record: dict[str, Any]) -> str:
    result = record.get("result")
    if result == "placed":
        return ", ".join(p["chosen"]["host"]
                         for p in record.get("placements", ())
                         if p.get("chosen"))
    error = record.get("error") or {}
    what = "no valid host" if result == "no_valid_host" else \
        "claim failed"
    return f"{what} ({error.get('cause', '?')})"


# -- show ----------------------------------------------------------------


def render(record: dict[str, Any], instance: str | None = None,
           host: str | None = None) -> str:
    """A decision in words: the request, then per instance its filters,
    best weighed hosts, pick and alternates, then its claims."""
    where = record.get("scheduler")
    lines = [f"decision at {decision_log.iso(record['time'])}, request "
             f"{record.get('request') or '-'}, "
             + (f"scheduler {where}, " if where else "")
             + f"pid {record.get('pid') or '?'}"]
    count = record.get("count", 1)
    uuids = record.get("instances") or []
    lines.append(f"instances: {', '.join(uuids) or '(none claimed)'}"
                 + (f" ({count} in the request)" if count != len(uuids)
                    and uuids else ""))
    if record.get("result") == "placed":
        lines.append("result: placed")
    else:
        error = record.get("error") or {}
        lines.append(f"result: {_outcome(record)}: "
                     f"{error.get('message', '')}")
    lines.append(f"query: {record.get('query') or '(none: a rebuild)'}")
    if record.get("candidates") is not None:
        lines.append(f"placement: {record['candidates']} candidates on "
                     f"{_hosts(record.get('hosts', 0))} the request "
                     "allows")
    else:
        lines.append(f"hosts: {record.get('hosts', 0)}")
    if record.get("requery"):
        lines.append(f"asked placement again: "
                     f"{json.dumps(record['requery'], sort_keys=True)}")
    for placement in record.get("placements", ()):
        lines.extend(_placement_lines(record, placement))
        if host:
            lines.append("  " + why_not(record, placement, host))
    claims = record.get("claims") or {}
    attempts = claims.get("attempts", 0)
    conflicts = claims.get("conflicts") or []
    lines.append(f"claims: {attempts} attempt{'' if attempts == 1 else 's'}"
                 f", {len(conflicts) or 'no'} conflict"
                 f"{'' if len(conflicts) == 1 else 's'}")
    for c in conflicts:
        lines.append(f"  {c['host'] or 'all picks'}: {c['reason']}")
    if host and not record.get("placements"):
        lines.append(f"{host}: the request failed before any host was "
                     "weighed")
    return "\n".join(lines)


def _hosts(n: int) -> str:
    return f"{n} host{'' if n == 1 else 's'}"


def _placement_lines(record: dict[str, Any],
                     placement: dict[str, Any]) -> list[str]:
    who = placement.get("instance") or f"#{placement.get('index', 0) + 1}"
    chosen = placement.get("chosen")
    lines = [f"instance {who}: "
             + (f"{chosen['host']} (node {chosen['node']})" if chosen
                else "no host")]
    if placement.get("forced"):
        lines.append("  forced hosts: the filters were not run")
    runs = placement.get("filters") or []
    if runs and not any(r["before"] for r in runs):
        lines.append("  filters: no candidate host to run on")
    elif runs:
        lines.append("  filters (hosts before -> after):")
        width = max(len(str(r["name"])) for r in runs)
        for r in runs:
            removed = r.get("removed")
            taken = r["before"] - r["after"]
            note = ""
            if removed:
                more = taken - len(removed)
                note = "  removed " + ", ".join(removed) + (
                    f" and {more} more" if more > 0 else "")
            lines.append(f"    {str(r['name']).ljust(width)}  "
                         f"{r['before']:>5} -> {r['after']:<5}{note}".rstrip())
        emptied = next((r["name"] for r in runs
                        if r["before"] and not r["after"]), None)
        if emptied:
            lines.append(f"  {emptied} removed the last hosts")
    lines.append(f"  passed the filters: {_hosts(placement.get('passed', 0))}")
    top = placement.get("top") or []
    if top:
        lines.append("  best weighed, in the order tried (weight = the "
                     "sum of the weighers' shares):")
        width = max(len(t["node"]) for t in top)
        for n, t in enumerate(top, 1):
            shares = ", ".join(f"{name} {value:.4f}" for name, value in
                               t["weighers"].items()) or "(no weigher)"
            lines.append(f"    {n}. {t['node'].ljust(width)}  "
                         f"{t['weight']:9.4f}  {shares}")
    if chosen:
        lines.append("  chosen: " + _why_chosen(record, placement))
        alternates = placement.get("alternates") or []
        lines.append("  alternates: " + (", ".join(
            f"{a['node']} ({_rank(a)})" for a in alternates) or "none"))
    return lines


def _rank(pick: dict[str, Any]) -> str:
    if "rank" not in pick:
        return "not weighed"
    return f"rank {pick['rank']}, weight {pick['weight']:.4f}"


def _why_chosen(record: dict[str, Any], placement: dict[str, Any]) -> str:
    chosen = placement["chosen"]
    passed = placement.get("passed", 0)
    text = f"{chosen['node']}, "
    if placement.get("forced"):
        return text + "a forced host"
    if "rank" not in chosen:
        return text + "not weighed"
    text += f"weight {chosen['weight']:.4f}, "
    if chosen["rank"] == 1:
        return text + f"the best weighed of {_hosts(passed)}"
    lost = [c["host"] for c in (record.get("claims") or {}).get(
        "conflicts", ()) if c.get("host")]
    text += f"rank {chosen['rank']} of {passed}: "
    if lost:
        return text + ("the claims on better weighed hosts were refused "
                       f"({', '.join(lost)})")
    return text + ("picked at random among the best weighed "
                   "([filter_scheduler] host_subset_size), or an "
                   "earlier pick of the request took the better ones")


def why_not(record: dict[str, Any], placement: dict[str, Any],
            host: str) -> str:
    """One line: what the decision kept about ``host`` (a host or node
    name) for this instance."""
    def named(entry: dict[str, Any] | None) -> bool:
        return bool(entry) and host in (entry.get("host"),
                                        entry.get("node"))

    chosen = placement.get("chosen")
    if named(chosen):
        return f"{host}: chosen"
    for a in placement.get("alternates") or ():
        if named(a):
            return f"{host}: an alternate ({_rank(a)})"
    for c in (record.get("claims") or {}).get("conflicts") or ():
        if c.get("host") == host:
            return f"{host}: its claim was refused: {c['reason']}"
    for r in placement.get("filters") or ():
        if host in (r.get("removed") or ()):
            return f"{host}: removed by {r['name']}"
    for n, t in enumerate(placement.get("top") or (), 1):
        if named(t):
            return f"{host}: weighed {t['weight']:.4f}, {n} in the order " \
                   f"tried{_behind(placement, t)}"
    unnamed = [f"{r['name']} removed {r['before'] - r['after']}"
               for r in placement.get("filters") or ()
               if len(r.get("removed") or ()) < r["before"] - r["after"]]
    kept = len(placement.get("top") or ())
    return (f"{host}: not among what the decision kept: placement had no "
            f"candidate on it, or a filter removed it without naming it "
            f"({'; '.join(unnamed) or 'none did'}), or it weighed below "
            f"the best {kept}")


def _behind(placement: dict[str, Any], entry: dict[str, Any]) -> str:
    """How ``entry`` (a top host) compares with the chosen one, weigher
    by weigher."""
    chosen = placement.get("chosen")
    if not chosen:
        return ""
    theirs = next((t for t in placement.get("top") or ()
                   if t["node"] == chosen["node"]), None)
    if theirs is None:
        return ""
    names = list(dict.fromkeys([*theirs["weighers"], *entry["weighers"]]))
    gaps = [(name, entry["weighers"].get(name, 0.0)
             - theirs["weighers"].get(name, 0.0)) for name in names]
    gaps = [(name, gap) for name, gap in gaps if gap]
    if not gaps:
        return f"; the same weight as {chosen['node']}"
    return (f"; against {chosen['node']} ({theirs['weight']:.4f}): "
            + ", ".join(f"{name} {gap:+.4f}" for name, gap in gaps))
