"""gantt-scheduler against the messaging floor of the same
benchmarks.rpc run (``versus_floor`` in its JSON, with
``--messaging-floor``), and over several rounds of both
(``versus_floor_rounds``, with ``--floor-rounds``)."""

import statistics


def versus_floor(runs):
    """Per process count run both ways in closed loop, gantt-scheduler
    against the messaging floor of the same run (same clients, broker,
    database and machine, so that its noise falls on both): calls/s and
    their ratio (gantt / floor), and the machine's CPU a call, in all
    and by process (client, scheduler workers, broker, database server,
    the rest), with its ratio; and where the workers' CPU a call goes
    for gantt (cpu_split_ms_per_call: decoding, decision, claim, the
    decision log's record, encoding, messaging)."""
    out = {}
    for key, floor in runs.items():
        if not key.endswith("/floor") or key.count("/") != 1:
            continue
        found = compare(runs.get(key.split("/")[0]), floor)
        if found:
            out[key.split("/")[0]] = found
    return out


def compare(gantt, floor):
    """One closed-loop run of gantt-scheduler against one of the floor
    (see :func:`versus_floor`); None unless both have figures."""
    if not gantt or "calls_per_s" not in gantt \
            or "calls_per_s" not in floor:
        return None
    both = {"gantt": gantt, "floor": floor}
    by_process = {side: _by_process(figures)
                  for side, figures in both.items()}
    return {
        "calls_per_s": {
            "gantt": gantt["calls_per_s"],
            "floor": floor["calls_per_s"],
            "ratio": round(gantt["calls_per_s"]
                           / floor["calls_per_s"], 3)},
        "machine_cpu_ms_per_call": {
            "gantt": gantt["total_cpu_ms_per_call"],
            "floor": floor["total_cpu_ms_per_call"],
            "ratio": round(gantt["total_cpu_ms_per_call"]
                           / floor["total_cpu_ms_per_call"], 3)},
        "machine_cpu_ms_per_call_by_process": by_process,
        "gantt_worker_cpu_split_ms_per_call":
            gantt.get("cpu_split_ms_per_call"),
    }


def _by_process(figures):
    machine = figures["machine_cpu_ms_per_call"]
    return {"client": figures["client_cpu_ms_per_call"],
            "scheduler_workers": figures["scheduler_cpu_ms_per_call"],
            "broker": machine["broker"], "database": machine["database"],
            "other": machine["other"]}


def over_rounds(rounds):
    """``rounds``: per round, {"floor": figures, "gantt": figures} of one
    process count, run in alternating order. Each round's comparison
    (:func:`versus_floor`) and, over the rounds, the median, lowest and
    highest of its two ratios: the day's drift falls on both sides of
    each round, and the median is what one figure should quote."""
    each = [found for found in (compare(pair["gantt"], pair["floor"])
                                for pair in rounds) if found]
    out = {"rounds": each}
    if not each:
        return out
    for name in ("calls_per_s", "machine_cpu_ms_per_call"):
        ratios = sorted(r[name]["ratio"] for r in each)
        out[name + "_ratio"] = {"median": round(
            statistics.median(ratios), 3), "lowest": ratios[0],
            "highest": ratios[-1]}
    return out
