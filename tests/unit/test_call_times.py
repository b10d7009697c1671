"""rpc.call_times: the histograms a gantt-scheduler worker keeps of its
calls' wall time, their percentiles, how several workers' add up, and
how a call's phases are told apart."""

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpc import call_times

_SAMPLES = st.lists(st.floats(min_value=0.02, max_value=5000.0),
                    min_size=1, max_size=300)


def _histogram(samples_ms):
    histogram = {}
    for ms in samples_ms:
        index = call_times.bucket(ms)
        histogram[index] = histogram.get(index, 0) + 1
    return histogram


def _exact(samples_ms, fraction):
    ordered = sorted(samples_ms)
    rank = max(1, -(-fraction * len(ordered) // 1))
    return ordered[int(rank) - 1]


@given(_SAMPLES, st.sampled_from([0.5, 0.9, 0.99]))
def test_a_percentile_is_at_most_one_bucket_above_the_true_one(
        samples, fraction):
    true = _exact(samples, fraction)
    read = call_times.percentile(_histogram(samples), fraction)
    # The bucket's upper edge: never below, at most 2**(1/8) above.
    assert true <= read * (1 + 1e-9)
    assert read <= true * 2 ** (1 / 8) * (1 + 1e-9)


def test_bucket_edges():
    assert call_times.bucket(0.001) == 0
    assert call_times.edge(0) == pytest.approx(0.01)
    for ms in (0.011, 0.5, 1.0, 7.3, 250.0, 9000.0):
        index = call_times.bucket(ms)
        assert call_times.edge(index - 1) < ms <= call_times.edge(index)


def test_an_empty_histogram_has_no_percentile():
    assert call_times.percentile({}, 0.5) is None
    assert call_times.summary({"total": {}}) == {
        "total": {"p50": None, "p99": None}}


def test_workers_add_up_as_if_one():
    rng = random.Random(7)
    one = [rng.lognormvariate(1.5, 0.8) for _ in range(400)]
    two = [rng.lognormvariate(2.5, 0.5) for _ in range(250)]
    # As the stats line carries them: through JSON, string keys.
    reported = [json.loads(json.dumps(_histogram(s))) for s in (one, two)]
    assert call_times.merged(reported) == _histogram(one + two)


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_call_split_into_its_phases():
    clock = _Clock()
    times = call_times.CallTimes(clock=clock)
    received = clock.now
    clock.now += 0.002
    times.started()
    clock.now += 0.001
    with times.in_scheduler():
        clock.now += 0.020
    clock.now += 0.004
    times.ended(received)
    report = times.report()
    assert report["calls_timed"] == 1
    for phase, ms in {"total": 27, "before": 3, "scheduler": 20,
                      "reply": 4}.items():
        p50 = report["call_ms"][phase]["p50"]
        assert ms <= p50 <= ms * 2 ** (1 / 8) + 0.01, phase


def test_only_calls_that_reached_the_scheduler_count():
    clock = _Clock()
    times = call_times.CallTimes(clock=clock)
    # A ping, a cast or a call refused while decoding: never in the
    # Scheduler.
    times.started()
    times.ended(clock.now)
    assert times.calls == 0
    # What a call left on its thread does not leak into the next one.
    times.started()
    with times.in_scheduler():
        clock.now += 0.01
    times.ended(clock.now - 0.01)
    times.started()
    times.ended(clock.now)
    assert times.calls == 1


def test_a_scheduler_error_still_counts():
    clock = _Clock()
    times = call_times.CallTimes(clock=clock)
    times.started()
    with pytest.raises(RuntimeError), times.in_scheduler():
        clock.now += 0.005
        raise RuntimeError("no valid host")
    times.ended(clock.now - 0.005)
    assert times.calls == 1


def test_the_benchmark_adds_the_workers_up():
    """benchmarks.worker_stats.service_times reads the workers' stats
    lines: the histograms of both workers together, the percentiles of
    the whole."""
    from benchmarks import worker_stats

    def worker(samples):
        # As rpc.service logs it: through JSON.
        return json.loads(json.dumps({"call_ms_histograms": {
            phase: _histogram(samples) for phase in call_times.PHASES}}))

    fast, slow = [1.0] * 98, [40.0, 50.0]
    stats = {101: worker(fast), 102: worker(slow)}
    figures = worker_stats.service_times(stats)
    assert figures["calls"] == 100
    assert 1.0 <= figures["total"]["p50"] <= 1.1
    # The 99th of 100 calls is the slow worker's first.
    assert 40.0 <= figures["total"]["p99"] <= 40.0 * 2 ** (1 / 8)
    assert worker_stats.service_times({101: {}}) is None


class _Cpu:
    """A thread and a process CPU clock the test moves."""

    def __init__(self):
        self.thread = 5.0
        self.process = 50.0

    def clocks(self):
        return (lambda: self.thread, lambda: self.process)


def _served(times, clock, cpu, wall_ms, own_ms, others_ms):
    """One call that took ``wall_ms`` from its thread's start, its thread
    running ``own_ms`` and the rest of the process ``others_ms``."""
    received = clock.now
    times.started()
    with times.in_scheduler():
        clock.now += wall_ms / 1000
        cpu.thread += own_ms / 1000
        cpu.process += (own_ms + others_ms) / 1000
    times.ended(received)


def test_the_cpu_spent_while_a_call_was_served_is_kept_by_bucket():
    clock, cpu = _Clock(), _Cpu()
    times = call_times.CallTimes(clock=clock, cpu_clocks=cpu.clocks())
    for _ in range(3):
        _served(times, clock, cpu, wall_ms=4, own_ms=2, others_ms=1)
    _served(times, clock, cpu, wall_ms=30, own_ms=3, others_ms=24)
    # Through JSON, as the stats line carries it.
    report = json.loads(json.dumps(times.report()))
    total = report["call_ms_histograms"]["total"]
    spent = report["call_cpu_by_bucket"]
    fast = call_times.while_served(total, spent,
                                   high=call_times.bucket(4.0))
    slow = call_times.while_served(total, spent,
                                   low=call_times.bucket(30.0))
    assert fast == {"calls": 3, "wall": 4.0, "own_cpu": 2.0,
                    "others_cpu": 1.0}
    assert slow == {"calls": 1, "wall": 30.0, "own_cpu": 3.0,
                    "others_cpu": 24.0}
    assert call_times.while_served(total, spent, low=call_times.bucket(
        100.0)) is None


def test_the_benchmark_tells_what_the_workers_did_during_slow_calls():
    from benchmarks import worker_stats

    def worker(calls):
        clock, cpu = _Clock(), _Cpu()
        times = call_times.CallTimes(clock=clock, cpu_clocks=cpu.clocks())
        for wall, own, others in calls:
            _served(times, clock, cpu, wall, own, others)
        return json.loads(json.dumps(times.report()))

    # 98 calls of 2 ms on one worker; the two slowest, on the other,
    # waited while their process ran 15 ms of other calls.
    stats = {1: worker([(2, 1, 0.5)] * 98), 2: worker([(20, 2, 15)] * 2)}
    figures = worker_stats.service_times(stats)
    assert figures["while_served"] == {
        "p50_and_under": {"calls": 98, "wall": 2.0, "own_cpu": 1.0,
                          "others_cpu": 0.5},
        "p99_and_over": {"calls": 2, "wall": 20.0, "own_cpu": 2.0,
                         "others_cpu": 15.0}}
    # Stats lines of workers from before this was counted.
    del stats[1]["call_cpu_by_bucket"], stats[2]["call_cpu_by_bucket"]
    assert worker_stats.service_times(stats)["while_served"] is None
