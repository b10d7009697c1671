"""benchmarks.rpc_floor.versus_floor: gantt-scheduler against the messaging
floor of the same run."""

from benchmarks import rpc_floor


def _run(calls_per_s, client, workers, broker, database, other):
    return {"calls_per_s": calls_per_s, "client_cpu_ms_per_call": client,
            "scheduler_cpu_ms_per_call": workers,
            "machine_cpu_ms_per_call": {"broker": broker,
                                        "database": database,
                                        "other": other},
            "total_cpu_ms_per_call": client + workers + broker + database
            + other}


def test_ratios_per_process_count_and_cpu_by_process():
    runs = {"1/floor": _run(800.0, 0.5, 0.8, 0.9, 0.0, 0.1),
            "1": _run(200.0, 0.5, 3.0, 0.9, 1.5, 0.1),
            "2/floor": _run(880.0, 0.5, 0.9, 0.9, 0.0, 0.1),
            "2": _run(220.0, 0.5, 4.0, 0.9, 2.0, 0.1),
            # Variants and open-loop runs have no floor to stand against.
            "1/g8": _run(300.0, 0.5, 2.0, 0.9, 1.0, 0.1),
            "1/floor/r100": _run(100.0, 0.5, 0.8, 0.9, 0.0, 0.1)}
    runs["1"]["cpu_split_ms_per_call"] = {"decision": 1.0}
    found = rpc_floor.versus_floor(runs)
    assert set(found) == {"1", "2"}
    assert found["1"]["calls_per_s"] == {"gantt": 200.0, "floor": 800.0,
                                         "ratio": 0.25}
    assert found["2"]["machine_cpu_ms_per_call"]["ratio"] == round(
        7.5 / 2.4, 3)
    assert found["1"]["machine_cpu_ms_per_call_by_process"]["gantt"] == {
        "client": 0.5, "scheduler_workers": 3.0, "broker": 0.9,
        "database": 1.5, "other": 0.1}
    assert found["1"]["gantt_worker_cpu_split_ms_per_call"] == {
        "decision": 1.0}
    assert found["2"]["gantt_worker_cpu_split_ms_per_call"] is None


def test_no_floor_no_comparison():
    alone = {"1": _run(200.0, 0.5, 3.0, 0.9, 1.5, 0.1)}
    assert rpc_floor.versus_floor(alone) == {}


def test_rounds_each_compared_and_the_median_of_their_ratios():
    rounds = [{"floor": _run(800.0, 0.5, 0.8, 0.9, 0.0, 0.1),
               "gantt": _run(200.0, 0.5, 3.0, 0.9, 1.5, 0.1)},
              {"floor": _run(600.0, 0.5, 0.8, 0.9, 0.0, 0.1),
               "gantt": _run(300.0, 0.5, 2.0, 0.9, 1.5, 0.1)},
              {"floor": _run(500.0, 0.5, 1.0, 0.9, 0.0, 0.1),
               "gantt": _run(200.0, 0.5, 2.5, 0.9, 1.0, 0.1)}]
    found = rpc_floor.over_rounds(rounds)
    assert [r["calls_per_s"]["ratio"] for r in found["rounds"]] == [
        0.25, 0.5, 0.4]
    assert found["calls_per_s_ratio"] == {"median": 0.4, "lowest": 0.25,
                                          "highest": 0.5}
    cpu = sorted(round(g / f, 3) for g, f in ((6.0, 2.3), (5.0, 2.3),
                                              (5.0, 2.5)))
    assert found["machine_cpu_ms_per_call_ratio"] == {
        "median": cpu[1], "lowest": cpu[0], "highest": cpu[2]}


def test_rounds_without_a_figure_are_left_out():
    failed = {"exit_code": 1}
    found = rpc_floor.over_rounds([
        {"floor": failed, "gantt": _run(200.0, 0.5, 3.0, 0.9, 1.5, 0.1)}])
    assert found == {"rounds": []}
