"""The fault soak, longer: gantt under load while its servers fail.

    .venv/bin/python -m benchmarks.soak [--engine postgresql|mysql]
        [--seconds 120] [--hosts 100] [--workers 4] [--clients 4]
        [--rounds 2]

gantt-scheduler (``--workers``) and gantt-placement-api on a scratch
database of the local server, RabbitMQ, ``--clients`` conductor threads
creating and deleting instances and an HTTP client (tests/soak_harness.py).
Each round strikes, spread over the run: a broker restart, a database
server restart (3 s down) and a SIGKILL of a busy scheduler worker.
Restarts the machine's servers: run it as root on a machine of its own.

Prints JSON: calls by kind and outcome, per fault the time it took, the
recovery (first successful create begun after it ended) and the
failures of calls begun during it; over-commits, lost claims, and the
allocations the audit found and healed.
"""

import argparse
import json
import os
import sys
import tempfile

from tests import soak_harness


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=["postgresql", "mysql"],
                        default="postgresql")
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    step = args.seconds / (3 * args.rounds + 1)
    names = ("broker", "database", "kill_worker")
    schedule = [(step * (1 + 3 * r + i), name)
                for r in range(args.rounds) for i, name in enumerate(names)]
    soak = soak_harness.Soak(tempfile.mkdtemp(prefix="gantt-soak-"),
                             engine=args.engine, hosts=args.hosts,
                             workers=args.workers, clients=args.clients)
    try:
        soak.start()
        soak.run(schedule, args.seconds)
        figures = soak.figures()
    finally:
        soak.close()
    print(json.dumps({"benchmark": "fault soak", "inputs": vars(args),
                      "cpu_count": os.cpu_count(), "results": figures},
                     indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
