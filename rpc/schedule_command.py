"""``gantt-manage schedule SPEC --rpc``: the request spec sent to a
running gantt-scheduler, as one select_destinations call, instead of
decided by the command's own scheduler.

    gantt-manage schedule SPEC.json --rpc [--claim] [--timeout S]
                 [--topic T] [--format json]

The answer is printed as ``schedule`` prints its own picks: per
instance the chosen host, then its alternates. Without ``--claim`` no
instance uuid is sent and the scheduler claims nothing; with it, new
uuids are sent and the scheduler claims their allocations, as a
conductor's call does. ``--explain`` is the command's own scheduler's
(a running one does not send its reasons back): it cannot be combined.

Exit status: 2 for a spec the command or the scheduler refuses (the
file and the field named), for ``--explain`` with ``--rpc`` and for the
in-process transport; 1 when the scheduler finds no valid host, or when
the broker cannot be reached or no scheduler answers within --timeout
(default 10 s; the broker and the call handled as ``scheduler ping``
handles them).
"""

import json
import uuid

from rpc import ping_command
from scheduler import cli as scheduler_cli
from scheduler import errors

DEFAULT_TIMEOUT = 10.0


class UsageError(errors.SchedulerError):
    """Options that cannot go together."""


USAGE_ERRORS = (UsageError,)


def add_arguments(parser):
    """gantt-manage schedule's arguments: the spec and how to decide it
    here (scheduler.cli), and --rpc with its options."""
    scheduler_cli.add_arguments(parser)
    add_options(parser)


def add_options(parser):
    """``schedule``'s --rpc and the options that go with it."""
    parser.add_argument("--rpc", action="store_true",
                        help="send the request to a running gantt-scheduler "
                             "(the configured transport and topic) instead "
                             "of deciding it here")
    parser.add_argument("--timeout", type=ping_command.seconds,
                        default=DEFAULT_TIMEOUT, metavar="S",
                        help=f"with --rpc: seconds to wait for the answer "
                             f"(default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--topic", default=None,
                        help="with --rpc: the schedulers' topic (default: "
                             "[scheduler] topic)")
    parser.set_defaults(run=run)


def run(conf):
    args = conf.command
    if not args.rpc:
        return scheduler_cli.run(conf)
    if args.explain:
        raise UsageError(
            "schedule: --explain is the command's own scheduler's, a "
            "running gantt-scheduler does not send its reasons: drop "
            "--rpc or --explain")
    from rpc import client as client_mod  # see ping_command.connect

    spec = scheduler_cli.read_spec(args.spec)
    ids = ([str(uuid.uuid4()) for _ in range(spec.num_instances)]
           if args.claim else None)
    client = ping_command.connect(conf, topic=args.topic,
                                  timeout=args.timeout,
                                  call_monitor_timeout=None)
    try:
        answer, _elapsed = ping_command.call_within(
            client, lambda: client.select_destinations(None, spec, ids),
            args.timeout)
    except client_mod.InvalidRequest as exc:
        # The scheduler's words start with the call, then the field.
        message = str(exc).removeprefix("select_destinations: ")
        raise scheduler_cli.SpecFileError(f"{args.spec}: {message}") \
            from None
    out = {"instances": [
        {"instance_uuid": ids[i] if ids else None,
         "selections": [s.to_dict() for s in sels]}
        for i, sels in enumerate(answer)]}
    if args.format == "json":
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        print(scheduler_cli.render(out))
    return 0
