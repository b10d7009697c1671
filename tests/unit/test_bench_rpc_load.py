"""benchmarks.rpc_load's open loop: the schedule of arrivals, and latencies
that count from when a call was due."""

import statistics
import threading
import time

from benchmarks import rpc_load


def test_arrivals_are_poisson_at_the_rate_and_repeatable():
    due = rpc_load.arrivals(20000, 250.0, seed=7)
    assert due == rpc_load.arrivals(20000, 250.0, seed=7)
    assert due != rpc_load.arrivals(20000, 250.0, seed=8)
    assert due == sorted(due)
    gaps = [b - a for a, b in zip([0.0] + due[:-1], due, strict=True)]
    # Exponential gaps: mean and standard deviation both 1 / rate.
    assert abs(statistics.mean(gaps) - 0.004) < 0.0002
    assert abs(statistics.stdev(gaps) - 0.004) < 0.0003


class FakeTime:
    """A clock that moves only when something sleeps: one thread's
    schedule, exactly."""

    def __init__(self):
        self.now = 100.0

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_a_call_that_waits_for_a_thread_counts_the_wait():
    # One thread, calls due every 10 ms, each taking 50 ms: the second
    # call starts 40 ms late, the third 80 ms late, and each latency
    # counts from its due time.
    fake = FakeTime()

    class Client:
        def select_destinations(self, context, spec, instances):
            fake.sleep(0.05)
            return [[{"host": "h"}]]

    wall, samples, failures, _, late = rpc_load.fire_at_rate(
        Client(), lambda instance: {}, [0.0, 0.01, 0.02], threads=1,
        clock=fake.clock, sleep=fake.sleep)
    assert not failures
    assert late == 2
    assert [round(s, 6) for s in samples] == [0.05, 0.09, 0.13]
    assert round(wall, 6) == 0.15


class AllInFlight:
    """Holds each call until ``calls`` calls are in flight together, then
    answers after ``seconds``: the calls can only all end if none waited
    for another's thread. Records when each began."""

    def __init__(self, calls, seconds, fail_every=0):
        self.seconds = seconds
        self.fail_every = fail_every
        self.started = []
        self.lock = threading.Lock()
        self.together = threading.Barrier(calls, timeout=30)

    def select_destinations(self, context, spec, instances):
        with self.lock:
            self.started.append(time.perf_counter())
            number = len(self.started)
        self.together.wait()
        time.sleep(self.seconds)
        if self.fail_every and number % self.fail_every == 0:
            raise RuntimeError("no host")
        return [[{"host": "h"}]]


def test_enough_threads_keep_to_the_schedule():
    # Wall-clock bounds would fail on a loaded machine; what must hold is
    # that no call starts before it is due and none waits for a thread.
    due = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05]
    client = AllInFlight(len(due), 0.02, fail_every=3)
    t0 = time.perf_counter()
    _, samples, failures, messages, _ = rpc_load.fire_at_rate(
        client, lambda instance: {}, due, threads=8)
    starts = sorted(s - t0 for s in client.started)
    for start, offset in zip(starts, due, strict=True):
        assert start >= offset
    # Failed calls are counted by type, not timed; a broken barrier (a
    # call that waited for a thread) would show here as its own type.
    assert failures == {"RuntimeError": 2}
    assert messages["RuntimeError"] == "no host"
    assert len(samples) == 4
    # Every call ended at least 20 ms after the last was due.
    assert all(s >= 0.02 for s in samples)
