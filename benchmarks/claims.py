"""Atomic claims per second: one consumer's VCPU, MEMORY_MB and DISK_GB on
one compute node, written through placement.objects.allocations.replace
(capacity check + generation compare-and-set, one transaction).

    .venv/bin/python -m benchmarks.claims [--engines sqlite,postgresql]
        [--writers 1,4] [--claims 2000] [--repeats 3] [--hosts 100]

Each writer is a process with its own store; all writers claim against the
same hosts, picked at random. Prints JSON: inputs, CPU count, and per
engine and writer count the median claims/s over the repeats (wall time of
the slowest writer), plus every run.
"""

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
import uuid

from placement import errors
from placement.db import migration
from placement.db import store as store_mod
from placement.objects import allocations, inventories, providers
from tests import databases

CLAIM = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 10}


def _seed(url, hosts):
    store = store_mod.Store(databases.make_conf(url))
    migration.sync(store.engine)
    uuids = []
    for i in range(hosts):
        rp = providers.create(store, f"bench-host-{i}")
        inventories.replace_all(store, rp.uuid, 0, [
            inventories.Inventory("VCPU", 1_000_000),
            inventories.Inventory("MEMORY_MB", 1_000_000_000),
            inventories.Inventory("DISK_GB", 100_000_000)])
        uuids.append(rp.uuid)
    store.dispose()
    return uuids


def _writer(url, hosts, claims, seed, start, out):
    store = store_mod.Store(databases.make_conf(url))
    rng = random.Random(seed)
    work = [(str(uuid.uuid4()), rng.choice(hosts)) for _ in range(claims)]
    # Warm the connection pool and statement caches before the clock.
    providers.get(store, hosts[0])
    start.wait()
    began = time.perf_counter()
    accepted = refused = 0
    for consumer, host in work:
        try:
            allocations.replace(store, [allocations.ConsumerAllocations(
                consumer, {host: CLAIM}, "bench", "bench", None)])
            accepted += 1
        except errors.PlacementError:
            refused += 1
    out.put((began, time.perf_counter(), accepted, refused))
    store.dispose()


def run_once(url, hosts, writers, claims):
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(writers)
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer,
                         args=(url, hosts, claims // writers, i, start, out))
             for i in range(writers)]
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    wall = max(r[1] for r in results) - min(r[0] for r in results)
    accepted = sum(r[2] for r in results)
    return {"wall_s": round(wall, 4), "accepted": accepted,
            "refused": sum(r[3] for r in results),
            "claims_per_s": round(accepted / wall, 1)}


def _url(engine, tmpdir):
    if engine == "sqlite":
        return f"sqlite:///{tmpdir}/claims-{uuid.uuid4().hex[:8]}.sqlite"
    return databases.create_scratch(engine)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument("--writers", default="1,4")
    parser.add_argument("--claims", type=int, default=2000,
                        help="claims per run, split between the writers")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hosts", type=int, default=100)
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for engine in args.engines.split(","):
            for writers in (int(w) for w in args.writers.split(",")):
                runs = []
                for _ in range(args.repeats):
                    url = _url(engine, tmpdir)
                    try:
                        hosts = _seed(url, args.hosts)
                        runs.append(run_once(url, hosts, writers,
                                             args.claims))
                    finally:
                        if engine != "sqlite":
                            databases.drop_scratch(engine, url)
                results.append({
                    "engine": engine, "writers": writers,
                    "claims_per_s_median": statistics.median(
                        r["claims_per_s"] for r in runs),
                    "runs": runs})
    print(json.dumps({
        "benchmark": "claims",
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "inputs": {"claims_per_run": args.claims, "repeats": args.repeats,
                   "hosts": args.hosts, "claim": CLAIM},
        "results": results,
    }, indent=2))


if __name__ == "__main__":
    main()
