"""``gantt-simulate replay``: a decision of the decision log
(scheduler.decision_log) decided again under another config, and what
would change: the chosen hosts and alternates, each filter's count, the
best weighed hosts, or the outcome.

The replay decides the logged request spec, for as many instances as
the decision placed, on the cloud as it is now (the database of the
config, or a cloud file), never on the cloud as it was when the
decision was made: hosts added, filled or removed since count as they
are, and the instance itself, if it still holds its allocation, takes
up room on its host. Nothing is claimed: the scheduler decides without
instance uuids, as it does for a caller that sends none.
"""

import dataclasses
import json
import os
import uuid as uuidlib

from scheduler import decision_listing, decision_log, errors
from scheduler import request_spec as request_spec_mod


class ReplayError(Exception):
    """The decision to replay cannot be found or read."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


def logged(decision, directory):
    """The record ``decision`` names: an instance uuid (the newest
    decision about it in ``directory``) or a JSON file holding a record
    (or a list of them, as 'gantt-manage decisions show --format json'
    prints: the last one); (record, how many were logged for it)."""
    try:
        instance = str(uuidlib.UUID(decision))
    except ValueError:
        instance = None
    if instance is not None:
        try:
            found = decision_listing.of_instance(directory, instance)
        except decision_log.LogReadError as exc:
            raise ReplayError(exc.message) from None
        if not found:
            raise ReplayError(f"no decision logged about instance "
                              f"{instance} in {directory}")
        return found[-1], len(found)
    try:
        with open(decision) as f:
            data = json.load(f)
    except OSError as exc:
        raise ReplayError(f"{decision}: neither an instance uuid nor a "
                          f"record file ({exc.strerror})") from None
    except ValueError as exc:
        raise ReplayError(f"{decision}: not JSON: {exc}") from None
    if isinstance(data, list) and data:
        return _checked(data[-1], decision), len(data)
    return _checked(data, decision), 1


def _checked(record, path):
    if not isinstance(record, dict) or not isinstance(
            record.get("spec"), dict) or "placements" not in record:
        raise ReplayError(f"{path}: not a decision log record (it has no "
                          "spec or placements)")
    return record


def replay(scheduler, record):
    """The record of ``record``'s request decided again by
    ``scheduler`` (which decides on its own store and config), nothing
    claimed."""
    try:
        spec = request_spec_mod.RequestSpec.from_dict(record["spec"])
    except errors.InvalidRequestSpec as exc:
        raise ReplayError(f"the logged spec: {exc.message}") from None
    count = record.get("count") or spec.num_instances
    if count != spec.num_instances:
        spec = dataclasses.replace(spec, num_instances=count)
    top = max([len(p.get("top") or ()) for p in record["placements"]]
              + [5])
    capture = decision_log.Capture(top_hosts=top)
    before = scheduler.decisions
    scheduler.decisions = capture
    try:
        scheduler.schedule(spec, None)
    except errors.NoValidHost:
        pass  # the capture has its record
    finally:
        scheduler.decisions = before
    found = capture.records[-1]
    # As the log would write it (plain JSON types).
    return json.loads(json.dumps(found, default=_plain))


def _plain(value):
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    return str(value)


def changes(then, now):
    """What differs, one phrase each, most telling first: the outcome,
    each instance's chosen host, alternates, candidates, the filters'
    counts, the best weighed host."""
    out = []
    if then.get("result") != now.get("result"):
        out.append(f"result: {_result(then)} -> {_result(now)}")
    if then.get("candidates") != now.get("candidates"):
        out.append(f"placement candidates: {then.get('candidates')} -> "
                   f"{now.get('candidates')}")
    for i, (a, b) in enumerate(_pairs(then, now), 1):
        for label, told in (("chosen", _chosen), ("alternates", _alternates),
                            ("best weighed", _best)):
            if told(a) != told(b):
                out.append(f"instance {i}: {label} {told(a)} -> {told(b)}")
        for name, x, y in _filter_rows(a, b):
            if x != y:
                out.append(f"instance {i}: {name}: {_count(x)} then, "
                           f"{_count(y)} now")
    return out


def _result(record):
    if record.get("result") == "placed":
        return "placed"
    cause = (record.get("error") or {}).get("cause", "?")
    return f"{record.get('result', '?').replace('_', ' ')} ({cause})"


def _pairs(then, now):
    a = {p.get("index", 0): p for p in then.get("placements") or ()}
    b = {p.get("index", 0): p for p in now.get("placements") or ()}
    return [(a.get(i), b.get(i)) for i in sorted(set(a) | set(b))]


def _chosen(placement):
    chosen = (placement or {}).get("chosen")
    return chosen["node"] if chosen else "none"


def _alternates(placement):
    return ", ".join(a["node"] for a in (placement or {}).get(
        "alternates") or ()) or "none"


def _best(placement):
    top = (placement or {}).get("top") or ()
    return top[0]["node"] if top else "none"


def _filter_rows(a, b):
    """(filter name, (before, after) then or None, now or None) for the
    filters of either side, in the order they ran."""
    runs_a = {r["name"]: (r["before"], r["after"])
              for r in (a or {}).get("filters") or ()}
    runs_b = {r["name"]: (r["before"], r["after"])
              for r in (b or {}).get("filters") or ()}
    names = list(dict.fromkeys([*runs_a, *runs_b]))
    return [(name, runs_a.get(name), runs_b.get(name)) for name in names]


def _count(run):
    return "not run" if run is None else f"{run[0]} -> {run[1]}"


def where(conf, cloud_path):
    """What the replay decides on, in words (its output says it
    plainly)."""
    if cloud_path:
        return (f"the cloud file {cloud_path}, as it is now, not the "
                "cloud as it was when the decision was made")
    url = conf.placement_database.connection or os.path.join(
        os.path.expanduser(conf.state_path), "placement.sqlite")
    return (f"the cloud in the database ({_masked(url)}) as it is now, "
            "not as it was when the decision was made: hosts added, "
            "filled or removed since count as they are, and the instance "
            "itself, if it still holds its allocation, takes room on its "
            "host")


def _masked(url):
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    credentials, host = rest.rsplit("@", 1)
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials \
        else url


def render(then, now, config_path, on, logged_count):
    lines = [f"replay of the decision logged at "
             f"{decision_log.iso(then['time'])} (request "
             f"{then.get('request') or '-'}; instances "
             f"{', '.join(then.get('instances') or []) or 'none claimed'})"]
    if logged_count > 1:
        lines.append(f"  the newest of {logged_count} decisions logged "
                     "about it")
    lines.append(f"config: {config_path or '(defaults)'}")
    lines.append(f"decided on: {on}; nothing was claimed")
    lines.append(f"result: {_result(then)} -> {_result(now)}")
    lines.append(f"placement candidates: {then.get('candidates')} -> "
                 f"{now.get('candidates')}")
    for i, (a, b) in enumerate(_pairs(then, now), 1):
        lines.append(f"instance {i}:")
        lines.append(f"  chosen: {_chosen(a)} -> {_chosen(b)}")
        lines.append(f"  alternates: {_alternates(a)} -> {_alternates(b)}")
        rows = _filter_rows(a, b)
        if rows and not any(run and run[0] for _, *runs in rows
                            for run in runs):
            lines.append("  filters: no candidate host to run on, then "
                         "or now")
        elif rows:
            width = max(len(str(name)) for name, _, _ in rows)
            lines.append("  filters (hosts before -> after), then | now:")
            for name, x, y in rows:
                lines.append(f"    {str(name).ljust(width)}  "
                             f"{_count(x):>14} | {_count(y)}")
        for label, p in (("then", a), ("now", b)):
            top = (p or {}).get("top") or ()
            lines.append(f"  best weighed {label}: " + (", ".join(
                f"{t['node']} {t['weight']:.4f}" for t in top) or "none"))
    found = changes(then, now)
    if found:
        lines.append("would change:")
        lines.extend(f"  {line}" for line in found)
    else:
        lines.append("would change: nothing (the same outcome, hosts, "
                     "filter counts and best weighed host)")
    return "\n".join(lines)
