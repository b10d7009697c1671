"""gantt-simulate replay speed: events per second on a large cloud.

    .venv/bin/python -m benchmarks.simulate [--hosts 10000]
        [--events 20000] [--schedulers 1] [--repeat 1]

The cloud is a template of ``--hosts`` flat compute hosts (VCPU 64 at
ratio 4, MEMORY_MB 262144, DISK_GB 4000) in 4 availability zones and 2
cells. The workload is synthetic: ``--events / 2`` creates from a mix of
four flavors, Poisson arrivals at 20 a second, exponential lifetimes of
1,000 s on average, one create in ten in an anti-affinity group of
three, every instance deleted in the end: half the events are creates,
half deletes, with about 20,000 instances alive once the cloud reaches
its steady state. Default filters, every weigher, one scheduler unless
``--schedulers`` says otherwise, as ``gantt-simulate run`` does it.

Prints one JSON document: inputs, CPU count, the time to build and load
the cloud, and per repeat the replay's wall time, events/s and decision
p50/p99, with the median events/s next to the targets (>= 2,000 events/s
on 10,000 hosts; 1,000,000 events within 10 minutes).
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

from simulation import cloud as cloud_mod
from simulation import config, runner
from simulation import workload as workload_mod

FLAVORS = {
    "small": {"vcpus": 1, "memory_mb": 2048, "root_gb": 20},
    "medium": {"vcpus": 2, "memory_mb": 4096, "root_gb": 40},
    "large": {"vcpus": 4, "memory_mb": 8192, "root_gb": 80},
    "xlarge": {"vcpus": 8, "memory_mb": 32768, "root_gb": 160},
}
EVENTS_PER_S = 2000.0
MILLION_IN_S = 600.0


def cloud_doc(hosts):
    return {"template": {"hosts": [{
        "count": hosts, "zones": 4, "cells": 2, "prefix": "cn",
        "shape": {"inventories": {
            "VCPU": {"total": 64, "allocation_ratio": 4.0},
            "MEMORY_MB": 262144, "DISK_GB": 4000}}}]}}


def workload_doc(events, seed):
    return {"flavors": FLAVORS, "synthetic": {
        "seed": seed, "creates": max(1, events // 2),
        "mix": {"small": 4, "medium": 3, "large": 2, "xlarge": 1},
        "arrival": {"process": "poisson", "rate_per_s": 20.0},
        "lifetime": {"distribution": "exponential", "mean_s": 1000.0},
        "server_groups": {"fraction": 0.1, "size": 3,
                          "policies": {"anti-affinity": 1}}}}


class _Timed(runner.Simulation):
    """A Simulation that reports how long loading the cloud took."""

    def open_cloud(self):
        start = time.perf_counter()
        super().open_cloud()
        self.load_s = time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--schedulers", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--progress", action="store_true",
                        help="a progress bar on standard error")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    cloud = cloud_mod.parse(cloud_doc(args.hosts), "benchmark cloud")
    parse_s = time.perf_counter() - start
    start = time.perf_counter()
    workload = workload_mod.parse(workload_doc(args.events, args.seed),
                                  "benchmark workload")
    generate_s = time.perf_counter() - start
    runs = []
    for n in range(args.repeat):
        print(f"run {n + 1}/{args.repeat}: {args.hosts} hosts, "
              f"{len(workload.events)} events", file=sys.stderr)
        sim = _Timed(config.load(None), cloud, workload,
                     runner.Options(schedulers=args.schedulers,
                                    seed=args.seed,
                                    progress=args.progress))
        report = sim.run()
        timing, figures = report["timing"], report["figures"]
        runs.append({
            "load_s": round(sim.load_s, 1),
            "replay_s": round(timing["wall_s"], 1),
            "events_per_s": round(timing["events_per_s"], 1),
            "decision_p50_ms": round(timing["decision_ms"]["p50"], 3),
            "decision_p99_ms": round(timing["decision_ms"]["p99"], 3),
            "placed": figures["placed"],
            "no_valid_host": figures["no_valid_host"],
            "conflicts": figures["conflicts"],
        })
    rate = statistics.median(r["events_per_s"] for r in runs)
    million_s = 1_000_000 / rate if rate else float("inf")
    print(json.dumps({
        "benchmark": "gantt-simulate replay",
        "inputs": {"hosts": args.hosts, "events": len(workload.events),
                   "schedulers": args.schedulers, "repeat": args.repeat,
                   "seed": args.seed, "flavors": FLAVORS,
                   "filters": "default", "weighers": "all",
                   "database": "sqlite in memory"},
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "parse_cloud_s": round(parse_s, 2),
        "generate_workload_s": round(generate_s, 2),
        "runs": runs,
        "events_per_s_median": rate,
        "targets": {
            "events_per_s": {"bar": EVENTS_PER_S, "value": rate,
                             "met": rate >= EVENTS_PER_S},
            "million_events_s": {
                "bar": MILLION_IN_S,
                "value": round(million_s, 1),
                "met": million_s <= MILLION_IN_S,
                "measured": len(workload.events) >= 1_000_000},
        },
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
