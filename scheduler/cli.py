"""``gantt-manage schedule``: one select_destinations call from the
command line, on the cloud in the database: what would the scheduler
pick for this request, and why.

    gantt-manage schedule SPEC.json [--claim] [--explain] [--format json]

SPEC is a request spec in gantt's JSON form (a file, or - for standard
input). Without ``--claim`` nothing is written: the picks are what the
scheduler would do now. With it, the instances get new uuids and their
allocations are claimed in placement, as a conductor's call would.
"""

import json
import sys
import uuid

from placement.db import schema_state
from scheduler import errors, framework, manager
from scheduler.pipeline import requery


class SpecFileError(errors.SchedulerError):
    """The spec file cannot be read or parsed."""


def add_arguments(parser):
    """The arguments of gantt-manage schedule's parser."""
    parser.add_argument("spec", help="request spec file (JSON), - for stdin")
    parser.add_argument("--claim", action="store_true",
                        help="claim the picks in placement for new "
                             "instance uuids (default: a dry run)")
    parser.add_argument("--explain", action="store_true",
                        help="per filter: hosts removed and why; per "
                             "weigher: raw, normalised and final weights")
    parser.add_argument("--format", choices=["table", "json"],
                        default="table")
    parser.set_defaults(run=run)


def _read(path):
    try:
        text = sys.stdin.read() if path == "-" else open(path).read()
    except OSError as exc:
        raise SpecFileError(f"{path}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise SpecFileError(f"{path}: not JSON: {exc}") from None


def read_spec(path):
    """The RequestSpec of the file at ``path`` (- for stdin);
    SpecFileError naming the file and the field at fault."""
    data = _read(path)
    try:
        return manager.request_spec.RequestSpec.from_dict(data)
    except errors.InvalidRequestSpec as exc:
        # The message starts with the field at fault: name the file too.
        raise SpecFileError(f"{path}: {exc.message}") from None


def run(conf):
    args = conf.command
    spec = read_spec(args.spec)
    # A database without gantt's schema (or an older one) is named as
    # such, before the scheduler reads it.
    store = schema_state.open_store(conf)
    scheduler = manager.Scheduler(conf, store=store)
    try:
        ids = ([str(uuid.uuid4()) for _ in range(spec.num_instances)]
               if args.claim else None)
        decision = scheduler.schedule(spec, ids, explain=args.explain)
    except errors.InvalidRequestSpec as exc:
        # Found while building the query (extra specs, image
        # properties): the file's all the same.
        raise SpecFileError(f"{args.spec}: {exc.message}") from None
    except errors.NoValidHost as exc:
        if exc.explain is not None:
            # Why, before the one line the command fails with.
            if args.format == "json":
                print(json.dumps({"instances": [], "explain": exc.explain},
                                 indent=2, sort_keys=True))
            else:
                print(render({"instances": [], "explain": exc.explain}))
        raise
    finally:
        scheduler.close()
        store.dispose()
    out = {"instances": [
        {"instance_uuid": ids[i] if ids else None,
         "selections": [s.to_dict() for s in sels]}
        for i, sels in enumerate(decision.selections)]}
    if decision.explain is not None:
        out["explain"] = decision.explain
    if args.format == "json":
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        print(render(out))


def render(out):
    lines = []
    for i, item in enumerate(out["instances"], 1):
        chosen, *alternates = item["selections"]
        claimed = (f" (claimed for {item['instance_uuid']})"
                   if item["instance_uuid"] else "")
        lines.append(f"instance {i}: {chosen['service_host']} / "
                     f"{chosen['nodename']}{claimed}")
        for alt in alternates:
            lines.append(f"  alternate: {alt['service_host']} / "
                         f"{alt['nodename']}")
    explain = out.get("explain")
    if explain:
        lines.append(f"query: {explain.get('query', '(none: rebuild)')}")
        if "candidates" in explain:
            on = ""
            if explain.get("candidates") and "placement_hosts" in explain:
                on = (" on " + framework.hosts(explain["placement_hosts"],
                                               "host"))
            lines.append(f"placement candidates: {explain['candidates']}"
                         f"{on}")
        if explain.get("requery"):
            lines.append(requery.explain_line(explain["requery"]))
        if explain.get("zone"):
            lines.append(explain["zone"])
        for why in explain.get("narrowed", ()):
            lines.append(f"narrowed by {why}")
        if explain.get("short_of"):
            lines.append("no provider has room for "
                         + ", ".join(explain["short_of"]))
        elif explain.get("candidates") == 0:
            lines.append("each amount fits some provider alone: their "
                         "combination, traits or aggregates leave none")
        for i, turn in enumerate(explain.get("instances", ()), 1):
            lines.append(f"instance {i}: "
                         f"{framework.hosts(turn['candidate_hosts'])}")
            if explain.get("candidates") and not turn["candidate_hosts"]:
                lines.append("  no candidate is on a compute host the "
                             "request allows (forced, ignored or requested "
                             "hosts, cell)")
            for f in turn["filters"]:
                lines.append(f"  {f['name']}: {f['before']} -> "
                             f"{f['after']}")
                for host, why in sorted(f["rejected"].items()):
                    lines.append(f"    {host}: {why}")
            emptied = next((f["name"] for f in turn["filters"]
                            if f["before"] and not f["after"]), None)
            if emptied:
                lines.append(f"  {emptied} removed the last hosts")
            best = sorted(turn["weights"].items(), key=lambda kv: -kv[1])
            for host, weight in best[:10]:
                lines.append(f"  weight {weight:10.4f}  {host}")
    return "\n".join(lines)
