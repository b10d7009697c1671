"""The calls of benchmarks.rpc: select_destinations for new instances
from several client threads, in a closed loop (each thread sends its
next call when its last one is answered: fire) or an open one (calls
due at a rate whether or not earlier ones were answered:
arrivals, fire_at_rate)."""

import collections
import random
import threading
import time
import uuid

CONTEXT = {"user_id": "bench", "project_id": "bench", "roles": ["member"],
           "is_admin": False, "read_deleted": "no"}


class _Batch:
    """What the calls of one batch gave, recorded from several threads:
    latencies of the successful calls, failures by error type and one
    message per type."""

    def __init__(self, client, spec_of):
        self._client = client
        self._spec_of = spec_of
        self.lock = threading.Lock()
        self.samples = []
        self.failures = collections.Counter()
        self.messages = {}

    def call(self, since, clock=time.perf_counter):
        """One select_destinations for a new instance; on success its
        latency counts from ``since`` (a ``clock`` reading)."""
        instance = str(uuid.uuid4())
        context = dict(CONTEXT, request_id=f"req-{uuid.uuid4()}")
        try:
            answer = self._client.select_destinations(
                context, self._spec_of(instance), [instance])
            if len(answer) != 1 or not answer[0]:
                raise ValueError(f"unexpected answer: {answer!r}")
        except Exception as exc:
            with self.lock:
                name = type(exc).__name__
                self.failures[name] += 1
                self.messages.setdefault(name, str(exc)[:300])
            return
        elapsed = clock() - since
        with self.lock:
            self.samples.append(elapsed)


def _run_threads(work, threads, clock=time.perf_counter, started=None):
    """Run ``work`` in ``threads`` threads; the clock reading at the
    start (after ``started()``, called once every thread is running)
    and the wall seconds until the last one ended."""
    workers = [threading.Thread(target=work) for _ in range(threads)]
    for thread in workers:
        thread.start()
    start = clock()
    if started is not None:
        started(start)
    for thread in workers:
        thread.join()
    return clock() - start


def fire(client, spec_of, count, threads):
    """``count`` one-instance select_destinations calls from ``threads``
    threads, each sending its next call when its last one is answered;
    (wall seconds, latencies of the successful calls, failures by error
    type, one message per type)."""
    todo = iter(range(count))
    batch = _Batch(client, spec_of)

    def work():
        while True:
            with batch.lock:
                if next(todo, None) is None:
                    return
            batch.call(time.perf_counter())

    wall = _run_threads(work, threads)
    return wall, batch.samples, batch.failures, batch.messages


def arrivals(count, rate, seed=0):
    """Offsets in seconds, from the start of a batch, at which ``count``
    calls are due when they arrive at ``rate`` calls/s on average as a
    Poisson process (exponential gaps; the same seed gives the same
    schedule)."""
    rng = random.Random(seed)
    due, t = [], 0.0
    for _ in range(count):
        t += rng.expovariate(rate)
        due.append(t)
    return due


def fire_at_rate(client, spec_of, due, threads, clock=time.perf_counter,
                 sleep=time.sleep):
    """Open loop: one call at each offset of ``due`` (seconds from the
    start), made by the next free thread of ``threads``. A call's latency
    runs from the moment it was due, not from when a thread was free to
    send it, so waiting for a thread counts (no coordinated omission).
    (wall seconds, latencies of the successful calls, failures by error
    type, one message per type, calls that started more than a
    millisecond late)."""
    todo = iter(due)
    batch = _Batch(client, spec_of)
    late = [0]
    # The schedule starts once every thread is there to keep it.
    go = threading.Event()
    start = []

    def work():
        go.wait()
        while True:
            with batch.lock:
                offset = next(todo, None)
            if offset is None:
                return
            at = start[0] + offset
            wait = at - clock()
            if wait > 0:
                sleep(wait)
            elif wait < -0.001:
                with batch.lock:
                    late[0] += 1
            batch.call(at, clock)

    def begin(now):
        start.append(now)
        go.set()

    wall = _run_threads(work, threads, clock, started=begin)
    return wall, batch.samples, batch.failures, batch.messages, late[0]
