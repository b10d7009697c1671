"""The allocation candidates engine, embedded (no HTTP).

    .venv/bin/python -m benchmarks.candidates [--quick] [--queries 50]
        [--only perfload,nested,flat10k,flat100k,wide] [--db URL]

Scenarios (clouds built through placement.objects, in one transaction
per scenario, on a fresh SQLite file unless --db names another database):

- perfload: 1,000 compute nodes (VCPU, MEMORY_MB, DISK_GB) in 10
  aggregates, half with HW_CPU_X86_AVX2; OpenStack Placement's perfload
  query (three classes, member_of one aggregate, required AVX2). Then 99
  claim-then-query cycles: claim the first candidate for a new consumer
  (placement.objects.allocations.replace), query again.
- nested: 1,000 trees of 7 providers (compute node with DISK_GB; two NUMA
  nodes with VCPU and MEMORY_MB; FPGAs and a VGPU below them), granular
  groups with same_subtree, as OpenStack Placement's nested perfload.
- flat10k / flat100k: 10,000 / 100,000 compute nodes, limit=1000.
- wide: one root with 8 children of one SRIOV_NET_VF each, 8 granular
  groups of one VF each, max_allocation_candidates=1000.

For each, "search" is CandidatesEngine.find (index sync included) and
"materialise" the dict form the REST API needs (allocation_requests() and
provider_summaries()). Prints one JSON document: inputs, CPU count,
library versions, and per scenario the median and p95 of each, with the
target and whether the median met it.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid

import numpy as np

from benchmarks import db_lock
from placement.candidates import engine as engine_mod
from placement.candidates import request as rq
from placement.db import store as store_mod
from placement.objects import (
    aggregates,
    allocations,
    inventories,
    providers,
    resource_classes,
    traits,
)
from tests import databases

Inv = inventories.Inventory


def _store(url):
    conf = databases.make_conf(url)
    store = store_mod.Store.open(conf)
    databases.wipe(store.engine)
    store.dispose()
    return store_mod.Store.open(conf)


def _create(txn, name, invs=(), trait_names=(), aggs=(), parent=None):
    rp = providers.create(txn, name, parent_uuid=parent)
    if invs:
        inventories.replace_all(txn, rp.uuid, None, list(invs))
    if trait_names:
        traits.set_for_provider(txn, rp.uuid, None, list(trait_names))
    if aggs:
        aggregates.set_for_provider(txn, rp.uuid, list(aggs))
    return rp.uuid


def _compute_node(txn, i, aggs):
    return _create(
        txn, f"cn{i}",
        [Inv("VCPU", 32, allocation_ratio=16.0),
         Inv("MEMORY_MB", 131072, allocation_ratio=1.5),
         Inv("DISK_GB", 2048)],
        ["HW_CPU_X86_AVX2"] if i % 2 == 0 else [],
        [aggs[i % len(aggs)]])


def build_flat(store, n):
    aggs = [str(uuid.uuid4()) for _ in range(10)]
    uuids = store.write(
        lambda txn: [_compute_node(txn, i, aggs) for i in range(n)])
    return aggs, uuids


def build_nested(store, trees):
    resource_classes.ensure(store, "CUSTOM_FPGA")
    traits.ensure(store, "CUSTOM_FOO")

    def load(txn):
        for t in range(trees):
            cn = _create(txn, f"cn{t}", [Inv("DISK_GB", 20480)],
                         ["COMPUTE_VOLUME_MULTI_ATTACH"])
            numa0 = _create(
                txn, f"cn{t}_numa0",
                [Inv("VCPU", 4, reserved=2),
                 Inv("MEMORY_MB", 2048, min_unit=512, step_size=256)],
                ["HW_NUMA_ROOT"], parent=cn)
            numa1 = _create(
                txn, f"cn{t}_numa1",
                [Inv("VCPU", 4),
                 Inv("MEMORY_MB", 2048, min_unit=256, max_unit=1024)],
                ["HW_NUMA_ROOT", "CUSTOM_FOO"], parent=cn)
            _create(txn, f"cn{t}_fpga0", [Inv("CUSTOM_FPGA", 1)],
                    parent=numa0)
            _create(txn, f"cn{t}_pgpu0", [Inv("VGPU", 8)], parent=numa0)
            for k in range(2):
                _create(txn, f"cn{t}_fpga1_{k}", [Inv("CUSTOM_FPGA", 1)],
                        parent=numa1)
    store.write(load)


def build_wide(store, children=8):
    def load(txn):
        root = _create(txn, "wide-root")
        for k in range(children):
            _create(txn, f"wide-vf{k}", [Inv("SRIOV_NET_VF", 1)],
                    parent=root)
    store.write(load)


def perfload_request(agg):
    return rq.CandidatesRequest(groups=(rq.RequestGroup(
        resources={"VCPU": 1, "DISK_GB": 10, "MEMORY_MB": 256},
        member_of=(frozenset([agg]),),
        required_traits=(frozenset(["HW_CPU_X86_AVX2"]),)),))


def nested_request():
    return rq.CandidatesRequest(
        groups=(
            rq.RequestGroup(
                resources={"DISK_GB": 10},
                required_traits=(frozenset(["COMPUTE_VOLUME_MULTI_ATTACH"]),)),
            rq.RequestGroup(
                suffix="_COMPUTE", resources={"VCPU": 1, "MEMORY_MB": 256},
                required_traits=(frozenset(["CUSTOM_FOO"]),)),
            rq.RequestGroup(suffix="_FPGA", resources={"CUSTOM_FPGA": 1})),
        group_policy="none",
        same_subtrees=(frozenset(["_COMPUTE", "_FPGA"]),))


def flat_request(limit):
    return rq.CandidatesRequest(groups=(rq.RequestGroup(
        resources={"VCPU": 1, "MEMORY_MB": 256, "DISK_GB": 10}),),
        limit=limit)


def wide_request(children=8, policy="none"):
    return rq.CandidatesRequest(groups=tuple(
        rq.RequestGroup(suffix=str(k), resources={"SRIOV_NET_VF": 1})
        for k in range(1, children + 1)), group_policy=policy)


def _stats(samples_s):
    ms = sorted(s * 1000 for s in samples_s)
    return {"median_ms": round(statistics.median(ms), 3),
            "p95_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.95))], 3),
            "count": len(ms)}


def time_queries(engine, request, queries):
    """Search and materialise timings over ``queries`` runs (one warm-up)."""
    engine.find(request).provider_summaries()
    search, material = [], []
    count = 0
    for _ in range(queries):
        t0 = time.perf_counter()
        result = engine.find(request)
        t1 = time.perf_counter()
        count = len(result.allocation_requests())
        result.provider_summaries()
        t2 = time.perf_counter()
        search.append(t1 - t0)
        material.append(t2 - t1)
    total = [a + b for a, b in zip(search, material, strict=True)]
    return {"candidates": count, "search": _stats(search),
            "materialise": _stats(material), "total": _stats(total)}


def _verdict(figures, target_ms):
    figures["target_ms"] = target_ms
    figures["met"] = figures["search"]["median_ms"] <= target_ms
    return figures


def _engine(store, cap=-1):
    conf = store.conf
    conf.set_override("max_allocation_candidates", cap, group="placement")
    return engine_mod.CandidatesEngine(store, conf)


def scenario_perfload(url, queries):
    store = _store(url)
    t0 = time.perf_counter()
    aggs, _ = build_flat(store, 1000)
    setup = time.perf_counter() - t0
    engine = _engine(store)
    request = perfload_request(aggs[0])
    out = _verdict(time_queries(engine, request, queries), 2.0)
    out["setup_s"] = round(setup, 2)
    # 99 claim-then-query cycles: each claim must show in the next answer.
    claims, after = [], []
    for _ in range(99):
        result = engine.find(request)
        chosen = result.allocation_requests()[0].allocations
        rp = next(iter(chosen))
        before = _used(result, rp)
        t0 = time.perf_counter()
        allocations.replace(store, [allocations.ConsumerAllocations(
            str(uuid.uuid4()), {rp: chosen[rp]}, "bench", "bench",
            None)])
        t1 = time.perf_counter()
        again = engine.find(request)
        t2 = time.perf_counter()
        assert _used(again, rp) == before + 1, "claim not seen"
        claims.append(t1 - t0)
        after.append(t2 - t1)
    out["claim_cycles"] = {"cycles": 99, "claim": _stats(claims),
                           "query_after_claim": _stats(after)}
    engine.close()
    store.dispose()
    return out


def _used(result, rp_uuid):
    return result.provider_summaries()[rp_uuid].resources["VCPU"][1]


def scenario_nested(url, queries):
    store = _store(url)
    t0 = time.perf_counter()
    build_nested(store, 1000)
    setup = time.perf_counter() - t0
    engine = _engine(store)
    out = _verdict(time_queries(engine, nested_request(), queries), 20.0)
    out["setup_s"] = round(setup, 2)
    out["providers"] = 7000
    engine.close()
    store.dispose()
    return out


def scenario_flat(url, n, queries, target):
    store = _store(url)
    t0 = time.perf_counter()
    build_flat(store, n)
    setup = time.perf_counter() - t0
    engine = _engine(store)
    out = _verdict(time_queries(engine, flat_request(1000), queries), target)
    out["setup_s"] = round(setup, 2)
    out["providers"] = n
    engine.close()
    store.dispose()
    return out


def scenario_wide(url, queries):
    store = _store(url)
    build_wide(store)
    out = {}
    for policy in ("none", "isolate"):
        engine = _engine(store, cap=1000)
        out[policy] = _verdict(
            time_queries(engine, wide_request(policy=policy), queries), 50.0)
        engine.close()
    out["met"] = all(out[p]["met"] for p in ("none", "isolate"))
    store.dispose()
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--quick", action="store_true",
                        help="skip the 100,000-provider cloud")
    parser.add_argument("--only", default="",
                        help="comma-separated scenario names")
    parser.add_argument("--db", help="database URL, wiped first, one run "
                        "at a time (default: SQLite file)")
    args = parser.parse_args(argv)
    # Held until main returns: no other run wipes the database meanwhile.
    _held = args.db and db_lock.hold(parser, args.db, "benchmarks.candidates")
    url = args.db or "sqlite:///" + os.path.join(
        tempfile.mkdtemp(prefix="gantt-bench-cand-"), "placement.sqlite")
    q = args.queries
    scenarios = {
        "perfload": lambda: scenario_perfload(url, q),
        "nested": lambda: scenario_nested(url, q),
        "flat10k": lambda: scenario_flat(url, 10_000, q, 10.0),
        "flat100k": lambda: scenario_flat(url, 100_000, max(5, q // 5),
                                          100.0),
        "wide": lambda: scenario_wide(url, q),
    }
    chosen = [s for s in args.only.split(",") if s] or list(scenarios)
    if args.quick and "flat100k" in chosen and not args.only:
        chosen.remove("flat100k")
    results = {}
    for name in chosen:
        print(f"running {name}", file=sys.stderr)
        results[name] = scenarios[name]()
    print(json.dumps({
        "benchmark": "allocation candidates, embedded",
        "inputs": {"database": url.split(":", 1)[0],
                   "queries_per_scenario": q, "scenarios": chosen},
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "results": results,
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
