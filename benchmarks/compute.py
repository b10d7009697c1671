"""The report client: reporting an unchanged provider tree, and a
reshape of a 16-provider tree with 50 allocations.

    .venv/bin/python -m benchmarks.compute [--engines sqlite,postgresql]
        [--ports direct,http] [--repeats 5] [--unchanged-calls 2000]

unchanged: a compute node's tree (a root and 15 GPU children, each with
inventories, traits and an aggregate) reported again and again after the
first report; the client's cache answers, so the figure is the diff of
two trees and the count of placement calls it made (target: none, under
1 ms).

reshape: the root's flat VGPU=60 split into 15 children of 4 VGPU, with
the 50 instances that hold one VGPU each moved by first-fit, in one POST
/reshaper (the tree read, the plan, 15 provider creations, the reshape
and the read-back are all inside the timing). Each repeat starts from a
fresh database. Prints JSON: inputs, CPU count, medians over the repeats.
"""

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import time
import uuid

from compute.placement_port import DirectPort, HttpPort
from compute.provider_tree import ProviderTree
from compute.report_client import ReportClient
from compute.reshape import Move
from placement import direct
from placement.db import migration
from placement.db import store as store_mod
from tests import databases
from tests.functional.api_helpers import serve_http

CHILDREN = 15
VGPU_PER_CHILD = 4
INSTANCES = 50


class _CountingPort:
    def __init__(self, port):
        self.port, self.calls = port, 0

    def __getattr__(self, name):
        real = getattr(self.port, name)

        def call(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)
        return call


def _flat(root):
    tree = ProviderTree()
    tree.new_root("bench-cn", uuid=root, inventories={
        "VCPU": 64, "MEMORY_MB": 262144,
        "VGPU": CHILDREN * VGPU_PER_CHILD},
        traits={"HW_CPU_X86_AVX2"}, aggregates={str(uuid.UUID(int=7))})
    return tree


def _nested(root):
    tree = ProviderTree()
    tree.new_root("bench-cn", uuid=root, inventories={
        "VCPU": 64, "MEMORY_MB": 262144},
        traits={"HW_CPU_X86_AVX2"}, aggregates={str(uuid.UUID(int=7))})
    moves = []
    for i in range(CHILDREN):
        child = tree.new_child(f"bench-cn-gpu{i}", root,
                               inventories={"VGPU": VGPU_PER_CHILD},
                               traits={"CUSTOM_GPU_A"},
                               aggregates={str(uuid.UUID(int=7))})
        moves.append(Move(root, child, {"VGPU": VGPU_PER_CHILD}))
    return tree, moves


def _open(engine, tmpdir):
    if engine == "sqlite":
        url = f"sqlite:///{tmpdir}/compute-{uuid.uuid4().hex[:8]}.sqlite"
    else:
        url = databases.create_scratch(engine)
    store = store_mod.Store(databases.make_conf(url))
    migration.sync(store.engine)
    return url, store


def _port(kind, store):
    if kind == "direct":
        return DirectPort(direct.PlacementDirect(store)), lambda: None
    url, _, stop = serve_http(store)
    return HttpPort(url), stop


def _with_store(engine, tmpdir, body):
    url, store = _open(engine, tmpdir)
    try:
        return body(store)
    finally:
        store.dispose()
        if engine != "sqlite":
            databases.drop_scratch(engine, url)


def unchanged_once(kind, store, calls):
    port, stop = _port(kind, store)
    try:
        root = str(uuid.uuid4())
        tree, _ = _nested(root)
        counting = _CountingPort(port)
        client = ReportClient(counting)
        client.update_from_provider_tree(tree)
        counting.calls = 0
        timings = []
        for _ in range(calls):
            began = time.perf_counter()
            client.update_from_provider_tree(tree)
            timings.append(time.perf_counter() - began)
        return {"median_us": round(statistics.median(timings) * 1e6, 1),
                "max_us": round(max(timings) * 1e6, 1),
                "placement_calls": counting.calls}
    finally:
        stop()


def reshape_once(kind, store):
    port, stop = _port(kind, store)
    try:
        root = str(uuid.uuid4())
        client = ReportClient(port)
        client.update_from_provider_tree(_flat(root))
        placement = direct.PlacementDirect(store)
        for _ in range(INSTANCES):
            placement.put_allocations(
                str(uuid.uuid4()), {root: {"VCPU": 1, "VGPU": 1}},
                "bench", "bench", consumer_generation=None,
                consumer_type="INSTANCE")
        tree, moves = _nested(root)
        began = time.perf_counter()
        client.update_from_provider_tree(tree, moves=moves)
        elapsed = time.perf_counter() - began
        used = sum(placement.get_provider_usages(p.uuid)[1].get("VGPU", 0)
                   for p in placement.provider_tree(root))
        assert used == INSTANCES and len(placement.provider_tree(root)) == (
            CHILDREN + 1)
        return round(elapsed * 1000, 2)
    finally:
        stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument("--ports", default="direct,http")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--unchanged-calls", type=int, default=2000)
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for engine in args.engines.split(","):
            for kind in args.ports.split(","):
                unchanged = [_with_store(engine, tmpdir, functools.partial(
                    unchanged_once, kind, calls=args.unchanged_calls))
                    for _ in range(args.repeats)]
                reshapes = [_with_store(engine, tmpdir, functools.partial(
                    reshape_once, kind)) for _ in range(args.repeats)]
                results.append({
                    "engine": engine, "port": kind,
                    "unchanged_report_median_us": statistics.median(
                        r["median_us"] for r in unchanged),
                    "unchanged_report_placement_calls": max(
                        r["placement_calls"] for r in unchanged),
                    "reshape_median_ms": statistics.median(reshapes),
                    "unchanged_runs": unchanged, "reshape_runs_ms": reshapes})
    print(json.dumps({
        "benchmark": "compute",
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "inputs": {"providers": CHILDREN + 1, "allocations": INSTANCES,
                   "vgpu_per_child": VGPU_PER_CHILD,
                   "unchanged_calls_per_run": args.unchanged_calls,
                   "repeats": args.repeats},
        "results": results,
    }, indent=2))


if __name__ == "__main__":
    main()
