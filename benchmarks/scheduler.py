"""select_destinations, embedded: candidates, default filters, every
weigher and the claim, on a fresh SQLite file.

    .venv/bin/python -m benchmarks.scheduler [--decisions 200]
        [--sizes 1000,5000,10000,100000] [--db URL] [--workers 1]
        [--change-feed redis://127.0.0.1:6379/0]
        [--decision-log-rounds 10] [--decision-log-floor]

Each cloud has N compute nodes, known to placement (VCPU 64, MEMORY_MB
262144, DISK_GB 4096 root providers, in 10 aggregates) and to the host
state table (a compute node record each, half of them in a second cell),
built in one transaction. On each cloud:

- single: ``--decisions`` one-instance requests (2 vCPUs, 4 GB, 20 GB),
  each a select_destinations call with a new instance uuid, so each
  claims in placement; p50 / p99 per decision and decisions/s over the
  whole run (sustained: the cloud fills as it goes);
- multi: ``--decisions / 10`` ten-instance requests, the same flavor;
  per-request p50 / p99 and instances placed per second;
- decision_log: what the decision log ([decision_log],
  scheduler.decision_log, with gantt-scheduler's default bounds and
  options) costs a decision: ``--decision-log-rounds``
  rounds of two batches of 20 one-instance requests, one with the log
  off and one with it on (in the order off-on, then on-off, and so on,
  so that the cloud filling up weighs on both alike), the CPU per
  decision of each batch measured twice: the deciding thread's (what
  the Scheduler counts, the record and its write into the buffer
  included) and the whole process's (the log's flush thread too);
  medians of the batches, the extra in percent, and the log's bytes per
  decision. 0 rounds: not measured. With ``--decision-log-floor``, a
  third batch a round, ``unbuilt``: the decisions made as for the log
  (the pipeline keeps what a record reads) and a line of a record's
  length queued in a log of the same bounds, but no record built or
  encoded; its extra against the log off is the least any way of
  building records could cost, and the rest of the log's extra is what
  building and encoding them costs where they are made.

With ``--workers N`` (N > 1), N scheduler processes, each with its own
store, host state and index as gantt-scheduler's workers have, run both
phases at once on the same database, each taking its share of the
requests: decisions/s over all of them, p50 / p99 over every call, and
the claims lost to one another.

Default filters ([filter_scheduler] enabled_filters as Nova's), every
weigher (weight_classes = all). Prints one JSON document with inputs,
CPU count and the figures next to the targets: 1,000 hosts <= 2 ms p50;
5,000 hosts >= 1,000 decisions/s; 100,000 hosts <= 100 ms p50.
"""

import argparse
import json
import multiprocessing
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid

import numpy as np
from oslo_config import cfg

from benchmarks import db_lock
from placement.db import engine as engine_mod
from placement.db import store as store_mod
from placement.objects import aggregates, inventories, providers
from scheduler import conf as scheduler_conf
from scheduler import decision_log, host_records, manager
from tests import databases

Inv = inventories.Inventory
CELLS = ("5a0e0a39-0000-4000-8000-000000000001",
         "5a0e0a39-0000-4000-8000-000000000002")
FLAVOR = {"vcpus": 2, "memory_mb": 4096, "root_gb": 20}
TARGETS = {1000: ("p50_ms", 2.0), 5000: ("decisions_per_s", 1000.0),
           100000: ("p50_ms", 100.0)}


def _store(url, change_feed=None, listen=True):
    conf = databases.make_conf(url)
    if change_feed:
        conf.set_override("change_feed_url", change_feed,
                          group="placement_database")
    conf.set_override("postgresql_listen", listen,
                      group="placement_database")
    store = store_mod.Store.open(conf)
    databases.wipe(store.engine)
    _vacuum(store.engine)
    store.dispose()
    return store_mod.Store.open(conf)


def vacuum(url):
    """_vacuum on the database of ``url`` (nothing but on PostgreSQL)."""
    if not url.startswith("postgresql"):
        return
    engine = engine_mod.create_engine(databases.make_conf(url))
    try:
        _vacuum(engine)
    finally:
        engine.dispose()


def _vacuum(engine):
    """On PostgreSQL, VACUUM ANALYZE, as autovacuum does on a database in
    service; where it is off (as on the CI machine), the dead rows of
    every earlier run would stay in the indexes, and the planner would
    have no statistics, or statistics of another size of the tables (it
    then scans the change logs instead of reading their newest rows by
    index, or sums a provider's usage by resource class alone). Run
    after the wipe, after the cloud is built, and before each run of a
    benchmark that runs several on one cloud."""
    if engine.dialect.name != "postgresql":
        return
    with engine.connect().execution_options(
            isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM ANALYZE")


def build(store, n):
    aggs = [str(uuid.uuid4()) for _ in range(10)]

    def load(txn):
        for i in range(n):
            rp = providers.create(txn, f"cn{i}")
            inventories.replace_all(txn, rp.uuid, None, [
                Inv("VCPU", 64), Inv("MEMORY_MB", 262144),
                Inv("DISK_GB", 4096)])
            aggregates.set_for_provider(txn, rp.uuid, [aggs[i % 10]])
            host_records.upsert_compute_node(
                txn, rp.uuid, f"host{i}", f"cn{i}",
                cell_uuid=CELLS[i % 2], hypervisor_type="QEMU",
                hypervisor_version=8002000 + i % 7,
                vcpus=64, memory_mb=262144, local_gb=4096,
                cpu_allocation_ratio=1.0)
    store.write(load)


def stats(samples_s):
    ms = sorted(s * 1000 for s in samples_s)
    return {"p50_ms": round(statistics.median(ms), 3),
            "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 3),
            "count": len(ms)}


def _decide(scheduler, count, instances):
    """Seconds per select_destinations call, ``count`` calls."""
    spec = {"flavor": FLAVOR, "project_id": "bench", "user_id": "bench",
            "num_instances": instances}
    samples = []
    for _ in range(count):
        ids = [str(uuid.uuid4()) for _ in range(instances)]
        t0 = time.perf_counter()
        out = scheduler.select_destinations(None, spec, ids)
        samples.append(time.perf_counter() - t0)
        assert len(out) == instances
    return samples


def _figures(samples, instances, wall):
    figures = stats(samples)
    figures["decisions_per_s"] = round(len(samples) / wall, 1)
    figures["instances_per_s"] = round(len(samples) * instances / wall, 1)
    return figures


def run_requests(scheduler, count, instances):
    start = time.perf_counter()
    samples = _decide(scheduler, count, instances)
    return _figures(samples, instances, time.perf_counter() - start)


def _one_process(store, decisions, log_rounds=0, log_floor=False):
    scheduler = manager.Scheduler(store.conf, store=store)
    t0 = time.perf_counter()
    # Warm-up: loads the provider index and the host state table.
    scheduler.select_destinations(None, {"flavor": FLAVOR}, None)
    out = {"first_call_s": round(time.perf_counter() - t0, 2),
           "single": run_requests(scheduler, decisions, 1),
           "multi10": run_requests(scheduler, max(3, decisions // 10), 10),
           "syncs_skipped": scheduler.stats["syncs_skipped"]}
    if log_rounds:
        out["decision_log"] = decision_log_cost(scheduler, log_rounds,
                                                floor=log_floor)
    scheduler.close()
    return out


def default_log(directory, flush_interval=None):
    """A DecisionLog in ``directory`` as gantt-scheduler builds it from
    its [decision_log] defaults (decision_log.from_conf: size and age
    bounds, top and removed hosts): what a deployment pays."""
    conf = cfg.ConfigOpts()
    scheduler_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override("directory", directory, group=decision_log.GROUP)
    if flush_interval is not None:
        conf.set_override("flush_interval", flush_interval,
                          group=decision_log.GROUP)
    return decision_log.from_conf(conf)


class Unbuilt:
    """Stands for ``log`` but builds no record: the decision is made as
    for the log (prepare), and a line as long as its first record's is
    queued in the log's file, a new bytes object each time as encode's
    are. What the log costs but building and encoding its records."""

    def __init__(self, log):
        self.log = log
        self.line = None

    def prepare(self, state):
        self.log.prepare(state)

    def decided(self, state, table, error=None):
        now = time.time()
        if self.line is None:
            self.line = decision_log.encode(decision_log.record(
                state, table, error, self.log.top_hosts, now))
        # The file itself, as DecisionLog.keep adds to it.
        self.log._out.add(self.line[:-1] + b"\n", now)


def decision_log_cost(scheduler, rounds, per_batch=20, floor=False):
    """CPU per one-instance decision with the decision log off and on,
    in alternating batches (off-on, on-off, ...): medians over the
    batches of the deciding thread's CPU (the Scheduler's own count)
    and of the whole process's, and each round's two batches compared
    (paired_extra); the records' own CPU (the Scheduler's
    count around one record in manager.LOG_CPU_SAMPLE, over all the
    batches) against the decisions' with the log on; and the log's
    bytes per decision. ``floor``: a third batch a round (off-on-
    unbuilt, then unbuilt-on-off: the log's two batches stay side by
    side), with an Unbuilt log, compared with the log off in the same
    way."""
    directory = tempfile.mkdtemp(prefix="gantt-bench-decisions-")
    log = default_log(directory)
    unbuilt = (Unbuilt(default_log(tempfile.mkdtemp(
        prefix="gantt-bench-unbuilt-"))) if floor else None)
    logs = {"off": None, "on": log, "unbuilt": unbuilt}
    order = ("off", "on", "unbuilt") if floor else ("off", "on")
    spent = {state: [] for state in order}
    # The records' CPU is read on one record in
    # manager.LOG_CPU_SAMPLE: summed over every batch, not per batch.
    logged_cpu = logged_decisions = 0
    try:
        for n in range(rounds):
            for state in (order if n % 2 == 0 else order[::-1]):
                scheduler.decisions = logs[state]
                stats = scheduler.stats
                thread, count = stats["decision_cpu_s"], stats["decisions"]
                logged = stats["decision_log_cpu_s"]
                process = time.process_time()
                _decide(scheduler, per_batch, 1)
                made = stats["decisions"] - count
                if state == "on":
                    logged_cpu += stats["decision_log_cpu_s"] - logged
                    logged_decisions += made
                spent[state].append(
                    ((stats["decision_cpu_s"] - thread) / made,
                     (time.process_time() - process) / made))
    finally:
        scheduler.decisions = None
        log.close()
        if unbuilt is not None:
            unbuilt.log.close()
            shutil.rmtree(unbuilt.log.directory, ignore_errors=True)
    size = sum(os.path.getsize(p) for p in decision_log.files(directory))
    shutil.rmtree(directory, ignore_errors=True)
    out = {"rounds": rounds, "decisions_per_batch": per_batch}
    for k, what in enumerate(("thread", "process")):
        off = statistics.median(s[k] for s in spent["off"])
        on = statistics.median(s[k] for s in spent["on"])
        extra, interval = paired_extra([s[k] for s in spent["off"]],
                                       [s[k] for s in spent["on"]])
        out[what] = {"off_cpu_ms_per_decision": round(1000 * off, 4),
                     "on_cpu_ms_per_decision": round(1000 * on, 4),
                     "extra_percent": _percent(on / off),
                     "paired_extra_percent": extra,
                     "paired_interval_95_percent": interval}
        if floor:
            extra, interval = paired_extra(
                [s[k] for s in spent["off"]],
                [s[k] for s in spent["unbuilt"]])
            out[what]["unbuilt"] = {
                "cpu_ms_per_decision": round(1000 * statistics.median(
                    s[k] for s in spent["unbuilt"]), 4),
                "paired_extra_percent": extra,
                "paired_interval_95_percent": interval}
    record = logged_cpu / logged_decisions
    out["record"] = {
        "cpu_ms_per_decision": round(1000 * record, 4),
        "percent_of_decision": round(
            100 * record / statistics.median(s[0] for s in spent["on"]),
            2)}
    out["bytes_per_decision"] = round(size / (rounds * per_batch))
    return out


def paired_extra(off, on, resamples=2000, seed=0):
    """The log's extra in percent as the median of each round's on/off
    ratio, and a 95 % bootstrap interval of that median. A round's two
    batches run back to back, so the machine's drift (on this VM a
    decision's CPU moves by up to 1.8 times from one few seconds to the
    next) mostly cancels within a pair, where it widens the spread of
    each side's median."""
    ratios = np.asarray(on, np.float64) / np.asarray(off, np.float64)
    rng = np.random.default_rng(seed)
    medians = np.median(rng.choice(ratios, (resamples, len(ratios))),
                        axis=1)
    low, high = np.percentile(medians, [2.5, 97.5])
    return (_percent(np.median(ratios)),
            [_percent(low), _percent(high)])


def _percent(ratio):
    return round(100 * (float(ratio) - 1), 2)


def _worker(conf, phases, start, results):
    """One scheduler process, as a gantt-scheduler worker runs: its own
    store, host state and index, following the others' claims through
    the database. Runs each (count, instances) phase when ``start`` lets
    every worker go at once."""
    store = store_mod.Store.open(conf)
    scheduler = manager.Scheduler(conf, store=store)
    scheduler.select_destinations(None, {"flavor": FLAVOR}, None)
    out = []
    for count, instances in phases:
        start.wait()
        out.append(_decide(scheduler, count, instances))
    start.wait()
    results.put((out, dict(scheduler.stats)))
    scheduler.close()
    store.dispose()


def _workers(store, decisions, workers):
    """``workers`` scheduler processes deciding at once on one database:
    decisions/s over all of them, latency over every call."""
    conf = store.conf
    store.dispose()  # no connection crosses the fork
    phases = [(decisions // workers, 1),
              (max(3, decisions // 10) // workers, 10)]
    context = multiprocessing.get_context("fork")
    start = context.Barrier(workers + 1)
    results = context.Queue()
    processes = [context.Process(target=_worker,
                                 args=(conf, phases, start, results))
                 for _ in range(workers)]
    for process in processes:
        process.start()
    walls = []
    for _ in phases:
        start.wait()  # every worker warmed up / done with the last phase
        walls.append(time.perf_counter())
    start.wait()
    walls.append(time.perf_counter())
    done = [results.get() for _ in processes]
    for process in processes:
        process.join()
        if process.exitcode:
            raise RuntimeError(f"a worker exited with {process.exitcode}")
    out = {"workers": workers}
    for i, (name, (_count, instances)) in enumerate(
            zip(("single", "multi10"), phases, strict=True)):
        samples = [s for worker_out, _ in done for s in worker_out[i]]
        out[name] = _figures(samples, instances, walls[i + 1] - walls[i])
    for key in ("syncs_skipped", "claims_lost"):
        out[key] = sum(stats.get(key, 0) for _, stats in done)
    return out


def scenario(url, n, decisions, change_feed=None, workers=1, listen=True,
             log_rounds=0, log_floor=False):
    store = _store(url, change_feed, listen)
    t0 = time.perf_counter()
    build(store, n)
    built = time.perf_counter() - t0
    _vacuum(store.engine)
    out = {"hosts": n, "build_s": round(built, 1)}
    if workers == 1:
        out.update(_one_process(store, decisions, log_rounds, log_floor))
    else:
        out.update(_workers(store, decisions, workers))
    target = TARGETS.get(n)
    if target:
        key, bar = target
        value = out["single"][key]
        out["target"] = {key: bar, "value": value,
                         "met": value <= bar if key == "p50_ms"
                         else value >= bar}
    store.dispose()
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=200)
    parser.add_argument("--sizes", default="1000,5000,10000,100000")
    parser.add_argument("--db", help="database URL, wiped first, one run "
                        "at a time (default: SQLite file)")
    parser.add_argument("--change-feed", metavar="REDIS_URL",
                        help="announce and follow commits through this "
                             "Redis change feed")
    parser.add_argument("--no-postgresql-listen", dest="postgresql_listen",
                        action="store_false",
                        help="[placement_database] postgresql_listen = "
                             "false: read the change logs before every "
                             "decision on PostgreSQL")
    parser.add_argument("--workers", type=int, default=1,
                        help="scheduler processes deciding at once on the "
                             "same database, as [scheduler] workers runs "
                             "them (default 1)")
    parser.add_argument("--decision-log-rounds", type=int, default=10,
                        help="rounds of the decision log's cost (two "
                             "batches each, log off and on; one process "
                             "only); 0: not measured (default 10)")
    parser.add_argument("--decision-log-floor", action="store_true",
                        help="a third batch a round: the decisions made "
                             "as for the log and a record's line written, "
                             "no record built (what building and encoding "
                             "records cost is the rest of the log's extra)")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers: at least 1")
    # Held until main returns: no other run wipes the database meanwhile.
    _held = args.db and db_lock.hold(parser, args.db, "benchmarks.scheduler")
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results = {}
    for n in sizes:
        # A fresh SQLite file per cloud: a file that held a larger cloud
        # before slows the next one down.
        url = args.db or "sqlite:///" + os.path.join(
            tempfile.mkdtemp(prefix="gantt-bench-sched-"),
            "placement.sqlite")
        print(f"running {n} hosts", file=sys.stderr)
        results[str(n)] = scenario(url, n, args.decisions, args.change_feed,
                                   args.workers, args.postgresql_listen,
                                   args.decision_log_rounds,
                                   args.decision_log_floor)
    print(json.dumps({
        "benchmark": "select_destinations, embedded, claims included",
        "inputs": {"database": (args.db or "sqlite").split(":", 1)[0],
                   "decisions": args.decisions, "sizes": sizes,
                   "change_feed": bool(args.change_feed),
                   "postgresql_listen": args.postgresql_listen,
                   "workers": args.workers,
                   "decision_log_rounds": args.decision_log_rounds,
                   "decision_log_floor": args.decision_log_floor,
                   "flavor": FLAVOR, "filters": "default",
                   "weighers": "all"},
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "results": results,
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
