"""What the workers of a gantt-scheduler service say about themselves:
the "gantt-scheduler stats:" line each logs as it stops
(rpc.service._stats), read and added up over the workers for
benchmarks.rpc."""

import json
import re

from rpc import call_times


def worker_stats(text):
    """{pid: stats} from the "gantt-scheduler stats:" lines a service's
    workers log as they stop (rpc.service._stats)."""
    found = {}
    for m in re.finditer(r"gantt-scheduler stats: pid=(\d+) (\{.*\})",
                         text):
        found[int(m.group(1))] = json.loads(m.group(2))
    return found


def service_times(stats):
    """Where a call's wall time goes inside the service: p50/p99 (ms) of
    the workers' select_destinations calls from the listener's receipt
    to the end of the reply (``total``), waiting for a thread and
    decoding (``before``), in the Scheduler, queued behind other calls
    included (``scheduler``), and encoding and publishing the reply
    (``reply``); the workers' histograms added up (rpc.call_times), over
    their whole life, the warm-up calls too. None when no worker
    reported any."""
    histograms = {phase: call_times.merged(
        s.get("call_ms_histograms", {}).get(phase, {})
        for s in stats.values()) for phase in call_times.PHASES}
    calls = sum(histograms["total"].values())
    if not calls:
        return None
    return {"calls": calls, **call_times.summary(histograms),
            "while_served": while_served(stats, histograms["total"])}


def while_served(stats, total):
    """What the workers' CPU did while their calls were served, for the
    calls at or under the median (``p50_and_under``) and at or over the
    99th percentile (``p99_and_over``) of ``total`` (the merged
    histogram): mean ms a call of wall time from when a thread took it,
    of its own thread's CPU, and of the CPU of the rest of its process
    over the same span (rpc.call_times.while_served). A slow call whose
    ``others_cpu`` is near its ``wall`` waited for its interpreter,
    busy with other calls."""
    spent = call_times.merged_spent(
        s.get("call_cpu_by_bucket", {}) for s in stats.values())
    if not spent:
        return None
    return {"p50_and_under": call_times.while_served(
                total, spent, high=call_times.bucket_at(total, 0.5)),
            "p99_and_over": call_times.while_served(
                total, spent, low=call_times.bucket_at(total, 0.99))}


def gc_pauses(stats):
    """The workers' garbage collections while they served, per
    generation: how many, and the longest pause (ms) of any worker
    (rpc.heap)."""
    out = {}
    for s in stats.values():
        for gen, figures in s.get("gc", {}).items():
            seen = out.setdefault(gen, {"collections": 0,
                                        "max_pause_ms": 0.0})
            seen["collections"] += figures["collections"]
            seen["max_pause_ms"] = max(seen["max_pause_ms"],
                                       figures["max_pause_ms"])
    return dict(sorted(out.items()))


def cpu_split(stats, scheduler_cpu_ms_per_call):
    """Where a call's scheduler CPU goes, ms per call: decoding the call,
    the decision (claims and its decision log record aside), the claim,
    the record, encoding the reply, and
    messaging, the rest of the worker's CPU (AMQP receive and reply,
    kombu and oslo.messaging, logging). The phase figures are per
    decision over the workers' whole life (the warm-up calls too); the
    total is the measured batch's."""
    decisions = sum(s.get("decisions", 0) for s in stats.values())
    if not decisions:
        return None

    def per_call(key):
        return 1000 * sum(s.get(key, 0.0) for s in stats.values()) / \
            decisions

    decision, claim = per_call("decision_cpu_s"), per_call("claim_cpu_s")
    decoding, encoding = per_call("decode_cpu_s"), per_call("encode_cpu_s")
    logged = per_call("decision_log_cpu_s")
    split = {"decoding": decoding, "decision": decision - claim - logged,
             "claim": claim, "decision_log": logged, "encoding": encoding}
    split["messaging"] = scheduler_cpu_ms_per_call - sum(split.values())
    return {k: round(v, 3) for k, v in split.items()}


def wall_split(stats):
    """Where the scheduler's wall time goes, ms per decision over the
    workers' whole life: held (the decision lock held: what a call that
    arrives meanwhile waits on), of which the claims' round trips and
    commit (``claim``)."""
    decisions = sum(s.get("decisions", 0) for s in stats.values())
    if not decisions:
        return None
    def per_decision(key):
        return round(1000 * sum(s.get(key, 0.0) for s in stats.values())
                     / decisions, 3)
    return {"held": per_decision("decision_wall_s"),
            "claim": per_decision("claim_wall_s")}


def claim_groups(stats):
    """Over the workers' whole life: the share of decisions claimed in a
    group with others, and claim transactions per decision."""
    decisions = sum(s.get("decisions", 0) for s in stats.values())
    if not decisions:
        return None
    grouped = sum(s.get("grouped_decisions", 0) for s in stats.values())
    claims = sum(s.get("claim_attempts", 0) for s in stats.values())
    fallbacks = sum(s.get("group_fallbacks", 0) for s in stats.values())
    return {"grouped_share": round(grouped / decisions, 3),
            "claims_per_decision": round(claims / decisions, 3),
            "groups_decided_again_alone": fallbacks}


def follow(stats):
    """Over the workers' whole life: decisions, syncs that skipped the
    change-log read (nobody else committed), and claims lost to another
    writer's commit since the view was read."""
    return {key: sum(s.get(key, 0) for s in stats.values())
            for key in ("decisions", "syncs_skipped", "claims_lost")}


def figures(text, scheduler_cpu_ms_per_call):
    """The figures of a run from the service's log ``text``: where a
    call's CPU went, the claim groups, the follower, the calls' wall
    time in the service and the collections, keyed as benchmarks.rpc
    reports them."""
    stats = worker_stats(text)
    return {"cpu_split_ms_per_call": cpu_split(
                stats, scheduler_cpu_ms_per_call),
            "wall_split_ms_per_decision": wall_split(stats),
            "claim_groups": claim_groups(stats),
            "follow": follow(stats),
            "service_ms": service_times(stats),
            "gc": gc_pauses(stats)}
