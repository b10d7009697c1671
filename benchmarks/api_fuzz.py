"""A long run of the REST API fuzzing of tests/functional/test_api_fuzz.py:
random requests at every route, in process, against the WSGI application
on a fresh seeded database.

    .venv/bin/python -m benchmarks.api_fuzz [--examples 5000]
        [--db URL] [--seed N]

Each request is checked as the test checks it: no 5xx, the placement
error body on every 4xx (when the client takes JSON), and no table
changed by a request that failed. Nothing stops at a finding: every one
is recorded (the first 20 of each kind with their request).

Prints JSON: the inputs, the CPU count, the requests made, the statuses
by class and by code, the 5xx and the other findings with their
requests, and the time taken.
"""

import argparse
import collections
import json
import os
import sys
import tempfile
import time

from hypothesis import HealthCheck, Phase, given, seed, settings

from benchmarks import db_lock
from placement.db import migration
from placement.db import store as store_mod
from tests import databases
from tests.functional import api_helpers
from tests.functional import test_api_fuzz as fuzz

KEEP = 20


def _shown(request):
    method, path, query, body, headers = request
    if body is not None and len(body) > 300:
        body = body[:300] + b"..."
    return {"method": method, "path": path[:300], "query": query[:300],
            "body": None if body is None else body.decode("latin-1"),
            "headers": headers}


def run(store, examples, random_seed):
    fuzz.seed(store)
    app, engine = api_helpers.make_app(store)
    statuses = collections.Counter()
    classes = collections.Counter()
    server_errors = []
    findings = []

    @settings(max_examples=examples, deadline=None, database=None,
              phases=[Phase.generate],
              derandomize=random_seed is None,
              suppress_health_check=list(HealthCheck))
    @given(request=fuzz.requests())
    def one(request):
        before = api_helpers.snapshot(store)
        response = fuzz.send(app, request)
        status = response.status_int
        statuses[status] += 1
        classes[f"{status // 100}xx"] += 1
        found = fuzz.problems(request, response, before,
                              lambda: api_helpers.snapshot(store))
        if not found:
            return
        kept = server_errors if status >= 500 else findings
        if len(kept) < KEEP:
            kept.append({"request": _shown(request), "status": status,
                         "problems": found})

    if random_seed is not None:
        one = seed(random_seed)(one)
    started = time.monotonic()
    try:
        one()
    finally:
        engine.close()
    elapsed = time.monotonic() - started
    made = sum(statuses.values())
    return {
        "requests": made,
        "statuses_by_class": dict(sorted(classes.items())),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "server_errors": classes.get("5xx", 0),
        "server_error_requests": server_errors,
        "other_findings": findings,
        "seconds": round(elapsed, 2),
        "requests_per_second": round(made / elapsed, 1) if elapsed else None,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.api_fuzz",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=5000,
                        help="requests to make")
    parser.add_argument("--db", help="database URL (default: a new "
                                     "SQLite file); it is wiped first, one "
                                     "run at a time")
    parser.add_argument("--seed", type=int,
                        help="random seed (default: derandomised, the "
                             "same requests every run)")
    args = parser.parse_args(argv)
    # Held until main returns: no other run wipes the database meanwhile.
    _held = args.db and db_lock.hold(parser, args.db, "benchmarks.api_fuzz")
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or f"sqlite:///{tmp}/placement.sqlite"
        store = store_mod.Store.open(databases.make_conf(url))
        if args.db:
            databases.wipe(store.engine)
            migration.seed(store.engine)
        try:
            result = run(store, args.examples, args.seed)
        finally:
            store.dispose()
    print(json.dumps({
        "inputs": {"examples": args.examples,
                   "db": store.engine.url.get_backend_name(),
                   "seed": args.seed},
        "cpu_count": os.cpu_count(),
        **result}, indent=2))
    return 1 if result["server_errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
