"""What asking placement again costs (scheduler.pipeline.requery): one
select_destinations call, embedded, when the filters leave no host among
the first ``[scheduler] max_placement_results`` (1,000) candidates.

    .venv/bin/python -m benchmarks.requery [--hosts 10000] [--calls 30]

One cloud of ``--hosts`` compute nodes, built as benchmarks.scheduler
builds its clouds, on a fresh SQLite file; default filters and
weighers. Placement answers in provider order, so "the first answer"
is the first 1,000 hosts. Calls
are dry runs (no instance uuids: nothing claimed, the cloud stays as it
is), one instance of 2 vCPUs / 4 GB / 20 GB, on the real clock; down
means a last heartbeat an hour ago (ComputeFilter). Cases, p50 / p99 ms:

- ``first_answer``: every host up, nothing asked again (the usual call);
- ``one_beyond``: every host down but the last: asked again, placed on
  the last host (the issue's case);
- ``rest_up``: the first 1,000 down, the others up: asked again, the
  other hosts ranked and weighed;
- ``none``: every host down: asked again, NoValidHost;
- ``none_without_requery``: the same, the re-query turned off (what a
  NoValidHost cost before it, and costs Nova-like schedulers): the
  difference to ``none`` is the re-query's own cost.
"""

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time

import numpy as np

from benchmarks import scheduler as bench
from placement.db import store as store_mod
from scheduler import errors, host_records, manager
from tests import databases

FLAVOR = bench.FLAVOR
SPEC = {"flavor": FLAVOR, "project_id": "bench", "user_id": "bench"}
LIMIT = 1000


def heartbeats(store, n, up):
    """Each host's heartbeat: now when ``up(i)``, an hour ago if not."""
    now = datetime.datetime.now(datetime.timezone.utc)
    stale = now - datetime.timedelta(hours=1)

    def beat(txn):
        for i in range(n):
            host_records.heartbeat(txn, f"host{i}", now if up(i) else stale)
    store.write(beat)


def calls(scheduler, count, expect):
    """``count`` dry-run calls; seconds each. ``expect``: the host each
    must choose, or None for NoValidHost."""
    samples = []
    for _ in range(count):
        t0 = time.perf_counter()
        try:
            [[chosen, *_]] = scheduler.select_destinations(None, SPEC, None)
            host = chosen.service_host
        except errors.NoValidHost:
            host = None
        samples.append(time.perf_counter() - t0)
        if expect != "any" and host != expect:
            raise AssertionError(f"chose {host}, expected {expect}")
    return bench.stats(samples)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args(argv)
    n = args.hosts
    url = "sqlite:///" + os.path.join(
        tempfile.mkdtemp(prefix="gantt-bench-requery-"), "placement.sqlite")
    store = store_mod.Store.open(databases.make_conf(url))
    t0 = time.perf_counter()
    bench.build(store, n)
    built = time.perf_counter() - t0
    scheduler = manager.Scheduler(store.conf, store=store)
    last = f"host{n - 1}"
    cases = (
        ("first_answer", lambda i: True, "any"),
        ("one_beyond", lambda i: i == n - 1, last),
        ("rest_up", lambda i: i >= LIMIT, "any"),
        ("none", lambda i: False, None),
    )
    results = {}
    for name, up, expect in cases:
        heartbeats(store, n, up)
        calls(scheduler, 2, expect)  # warm: the sync after the writes
        before = scheduler.stats["requeries"]
        results[name] = calls(scheduler, args.calls, expect)
        results[name]["requeries"] = scheduler.stats["requeries"] - before
    # The same NoValidHost with the re-query turned off.
    scheduler.pipeline.requery = lambda state: False
    results["none_without_requery"] = calls(scheduler, args.calls, None)
    results["requery_cost_ms"] = round(
        results["none"]["p50_ms"]
        - results["none_without_requery"]["p50_ms"], 2)
    scheduler.close()
    store.dispose()
    print(json.dumps({
        "benchmark": "re-query after a truncated placement answer, "
                     "select_destinations dry runs, embedded SQLite",
        "inputs": {"hosts": n, "calls": args.calls, "limit": LIMIT,
                   "flavor": FLAVOR, "filters": "default",
                   "weighers": "default"},
        "build_s": round(built, 1),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "results": results,
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
