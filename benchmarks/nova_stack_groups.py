"""Server-group races on the real Nova stack: a burst of concurrent
creates into many anti-affinity and affinity groups, deletes
interleaved, with nova-scheduler or gantt-scheduler at N workers; the
policy violations, late-check reschedules and failed creates, counted
from Nova's own records (tests/nova_stack/group_burst.py says how).

    python -m benchmarks.nova_stack_groups --scheduler nova --workers 2
    python -m benchmarks.nova_stack_groups --scheduler gantt --workers 2

Needs what the Nova stack test needs (tests/nova_stack/README.md):
MariaDB and RabbitMQ on loopback, root for rabbitmqctl, Nova 34's
virtualenv (installed on first use). Prints one JSON document; the
stack's logs stay in the work directory it names.
"""

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

from tests.nova_stack import group_burst, install, services
from tests.nova_stack import stack as stack_mod


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", choices=stack_mod.SCHEDULERS,
                        default="gantt")
    parser.add_argument("--workers", type=int, default=2,
                        help="scheduler processes (default 2)")
    parser.add_argument("--groups", type=int, default=30,
                        help="server groups (default 30: 12 anti-affinity, "
                             "6 with max_server_per_host=2, 12 affinity)")
    parser.add_argument("--cycles", type=int, default=2,
                        help="delete-and-replace rounds per group after "
                             "the first fill (default 2)")
    parser.add_argument("--threads", type=int, default=8,
                        help="groups driven at once (default 8); each "
                             "sends its requests together")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--host-subset-size", type=int, default=1,
                        help="[filter_scheduler] host_subset_size for both "
                             "schedulers (default 1, Nova's: the best "
                             "weighed host)")
    parser.add_argument("--no-late-check", action="store_true",
                        help="[workarounds] disable_group_policy_check_"
                             "upcall = True: the computes do not check the "
                             "group policy, so what the scheduler decided "
                             "stays (default: Nova's late check on)")
    parser.add_argument("--work", help="directory for the stack's configs "
                                       "and logs (default: a new one "
                                       "under /tmp)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    for why in (services.mysql_unreachable(), services.rabbit_unreachable()):
        if why:
            sys.exit(f"nova_stack_groups: {why}")
    work = pathlib.Path(args.work or tempfile.mkdtemp(
        prefix="nova-stack-groups-"))
    work.mkdir(parents=True, exist_ok=True)
    extra = {}
    if args.host_subset_size != 1:
        extra["filter_scheduler"] = {
            "host_subset_size": args.host_subset_size}
    if args.no_late_check:
        extra["workarounds"] = {"disable_group_policy_check_upcall": True}
    stack = stack_mod.Stack(work, install.nova_venv(), args.scheduler,
                            scheduler_workers=args.workers,
                            nova_conf_extra=extra)
    began = time.monotonic()
    try:
        stack.start()
        burst = group_burst.Burst(
            stack, group_burst.plan(args.groups, args.cycles, args.seed),
            threads=args.threads, seed=args.seed)
        burst.prepare()
        burst.run()
        result = {
            "scheduler": f"{args.scheduler}-scheduler",
            "workers": args.workers,
            "nova": install.VERSION,
            "cpus": os.cpu_count(),
            "threads": args.threads,
            "cycles": args.cycles,
            "seed": args.seed,
            "host_subset_size": args.host_subset_size,
            "late_check_enabled": not args.no_late_check,
            **burst.report(),
            "stack_start_s": round(stack.timings["start"], 1),
            "logs": str(stack.logs),
        }
    finally:
        stack.stop()
    result["total_s"] = round(time.monotonic() - began, 1)
    print(json.dumps(result, indent=2), flush=True)


if __name__ == "__main__":
    main()
