"""benchmarks.rpc's runs in rounds: gantt-scheduler against the messaging
floor (``--floor-rounds``) and the decision log off and on
(``--decision-log-rounds``), each pair in alternating order so that the
machine's drift falls on both sides. ``run`` is benchmarks.rpc.run: one
service run and its figures."""

import os
import statistics
import sys

from benchmarks import rpc_floor
from benchmarks import scheduler as scheduler_bench


def floor_rounds(run, args, url, workers, placed, workdir, n, reply, runs):
    """gantt-scheduler against the messaging floor over
    ``--floor-rounds`` rounds of ``workers`` processes: round 1 is the
    pair already in ``runs`` (the floor ran first), each later round
    runs both again (into ``runs`` too, keys "P/roundK" and
    "P/floor/roundK"), gantt-scheduler first in even rounds, so that the
    machine's drift falls on both sides; rpc_floor.over_rounds of them,
    and the instances the later rounds placed."""
    rounds = [{"floor": runs[f"{workers}/floor"],
               "gantt": runs[str(workers)]}]
    instances = 0
    for k in range(2, args.floor_rounds + 1):
        pair = {}
        for side in (("gantt", "floor") if k % 2 == 0
                     else ("floor", "gantt")):
            what = ("the messaging floor" if side == "floor"
                    else "gantt-scheduler")
            print(f"{n} hosts, {workers} process(es), {what}, round {k}",
                  file=sys.stderr)
            rundir = os.path.join(workdir, f"p{workers}-{side}-{k}")
            os.makedirs(rundir, exist_ok=True)
            if side == "gantt":
                scheduler_bench.vacuum(url)
                pair[side] = runs[f"{workers}/round{k}"] = run(
                    args, url, workers, placed + instances, rundir)
                instances += pair[side].get("instances_placed", 0)
            else:
                pair[side] = runs[f"{workers}/floor/round{k}"] = run(
                    args, url, workers, placed + instances, rundir,
                    floor_reply=reply)
        rounds.append(pair)
    out = rpc_floor.over_rounds(rounds)
    out["instances_placed"] = instances
    return out


def decision_log_rounds(run, args, url, workers, placed, workdir, n):
    """What the decision log costs a call: ``--decision-log-rounds``
    rounds of two closed-loop runs of ``workers`` processes, the log off
    and on, in alternating order (off-on, on-off, ...), so that the
    machine's drift falls on both; medians of each side's figures, and
    the on runs' own count of the CPU their records took
    (``cpu_split_ms_per_call`` ``decision_log``)."""
    figures = {"off": [], "on": []}
    instances = 0
    for k in range(args.decision_log_rounds):
        for side in (("off", "on") if k % 2 == 0 else ("on", "off")):
            print(f"{n} hosts, {workers} scheduler process(es), decision "
                  f"log {side}, round {k + 1}", file=sys.stderr)
            rundir = os.path.join(workdir, f"p{workers}-log-{side}-{k}")
            os.makedirs(rundir, exist_ok=True)
            scheduler_bench.vacuum(url)
            got = run(args, url, workers, placed + instances, rundir,
                      decision_log=side == "on")
            instances += got.get("instances_placed", 0)
            figures[side].append({
                key: got.get(key) for key in (
                    "calls_per_s", "p50_ms", "scheduler_cpu_ms_per_call",
                    "total_cpu_ms_per_call", "cpu_split_ms_per_call",
                    "failures", "exit_code")})
    out = {"rounds": args.decision_log_rounds, "runs": figures,
           "instances_placed": instances}
    for key in ("calls_per_s", "scheduler_cpu_ms_per_call",
                "total_cpu_ms_per_call"):
        off = statistics.median(f[key] for f in figures["off"])
        on = statistics.median(f[key] for f in figures["on"])
        out[key] = {"off": off, "on": on,
                    "change_percent": round(100 * (on / off - 1), 2)}
    # The records' own CPU, counted by each worker (around one record
    # in LOG_CPU_SAMPLE), against the worker's whole CPU a call.
    own = statistics.median(
        (f["cpu_split_ms_per_call"] or {}).get("decision_log", 0.0)
        for f in figures["on"])
    out["record_cpu_ms_per_call"] = own
    out["record_percent_of_scheduler_cpu"] = round(
        100 * own / out["scheduler_cpu_ms_per_call"]["on"], 2)
    return out
