"""How long gantt-scheduler takes over each select_destinations call, in
wall time and by phase, so that a slow call can be placed: in the
service or on the way to and from it.

A call's time in the service runs from the listener's receipt of its
message (the RabbitMQ listener stamps it; on other transports, from when
a thread took it) to the end of its reply, in three phases:

- ``before``: waiting for a free thread, acknowledging and decoding;
- ``scheduler``: in the Scheduler, the wait for the decision lock (a
  group ahead being served) included;
- ``reply``: encoding the Selections and publishing the reply.

Each phase keeps a histogram of log-spaced buckets (eight a doubling,
so a percentile read off it is within 9 % above the true value);
histograms of several workers add up, which percentiles would not.

What the worker's CPU did meanwhile tells why a call was slow: per
bucket of ``total``, the calls' wall time from when a thread took them,
the CPU of that thread (the call's own work) and the CPU of the whole
process over the same span. A slow call during which the process was
busy with other calls waited for the interpreter (one thread runs
Python at a time); one during which it was idle waited on something
outside (the database, the broker, the machine's other processes).
"""

import contextlib
import math
import threading
import time

PHASES = ("total", "before", "scheduler", "reply")

# Per bucket of total: [calls' wall s, own thread CPU s, process CPU s],
# from when a thread took each call to its end.
_SPENT = 3

# Buckets per doubling, and the smallest bucket's upper edge (ms): all
# shorter times fall into it.
_PER_DOUBLING = 8
_SMALLEST_MS = 0.01


def bucket(ms):
    """The bucket of a time in ms: its upper edge is edge(bucket)."""
    if ms <= _SMALLEST_MS:
        return 0
    return math.ceil(_PER_DOUBLING * math.log2(ms / _SMALLEST_MS))


def edge(index):
    """The upper edge, in ms, of bucket ``index``."""
    return _SMALLEST_MS * 2 ** (index / _PER_DOUBLING)


def percentile(histogram, fraction):
    """The upper edge (ms) of the bucket that holds the ``fraction``
    quantile of ``histogram`` ({bucket: count}); None when it is
    empty."""
    index = bucket_at(histogram, fraction)
    return None if index is None else edge(index)


def bucket_at(histogram, fraction):
    """The bucket that holds the ``fraction`` quantile of ``histogram``
    ({bucket: count}, int keys); None when it is empty."""
    total = sum(histogram.values())
    if not total:
        return None
    rank = max(1, math.ceil(fraction * total))
    seen = 0
    for index in sorted(histogram):
        seen += histogram[index]
        if seen >= rank:
            return index
    return max(histogram)


def merged(histograms):
    """One histogram of several ({bucket: count} each; JSON's string
    keys accepted)."""
    out = {}
    for histogram in histograms:
        for index, count in histogram.items():
            out[int(index)] = out.get(int(index), 0) + count
    return out


def summary(histograms):
    """{phase: {"p50": ms, "p99": ms}} of {phase: histogram}."""
    return {phase: {"p50": _rounded(percentile(h, 0.5)),
                    "p99": _rounded(percentile(h, 0.99))}
            for phase, h in histograms.items()}


def _rounded(ms):
    return None if ms is None else round(ms, 2)


class CallTimes:
    """The histograms of one worker. The endpoint brackets its Scheduler
    call with :meth:`in_scheduler`; the server reports each call as it
    ends (:meth:`ended`), on the same thread."""

    def __init__(self, clock=time.monotonic,
                 cpu_clocks=(time.thread_time, time.process_time)):
        self._clock = clock
        self._thread_cpu, self._process_cpu = cpu_clocks
        self._lock = threading.Lock()
        self._current = threading.local()
        self.histograms = {phase: {} for phase in PHASES}
        # {bucket of total: [wall s, own CPU s, process CPU s]}
        self.spent = {}

    @property
    def calls(self):
        return sum(self.histograms["total"].values())

    @contextlib.contextmanager
    def in_scheduler(self):
        started = self._clock()
        try:
            yield
        finally:
            self._current.scheduler = (started, self._clock())

    def started(self):
        """A call's message was taken by a thread: clears what an earlier
        call on this thread left."""
        self._current.scheduler = None
        now = self._clock()
        self._current.took = (now, self._thread_cpu(), self._process_cpu())
        return now

    def ended(self, received):
        """The call taken at ``received`` (a clock reading) has replied;
        counted only if it went to the Scheduler (not a cast, a ping or a
        call refused before it)."""
        spent = getattr(self._current, "scheduler", None)
        if spent is None:
            return
        self._current.scheduler = None
        now = self._clock()
        took, own_cpu, process_cpu = self._current.took
        used = (now - took, self._thread_cpu() - own_cpu,
                self._process_cpu() - process_cpu)
        entered, left = spent
        phases = {"total": now - received, "before": entered - received,
                  "scheduler": left - entered, "reply": now - left}
        indexes = {phase: bucket(1000 * seconds)
                   for phase, seconds in phases.items()}
        with self._lock:
            for phase, index in indexes.items():
                histogram = self.histograms[phase]
                histogram[index] = histogram.get(index, 0) + 1
            sums = self.spent.setdefault(indexes["total"], [0.0] * _SPENT)
            for i, seconds in enumerate(used):
                sums[i] += seconds

    def report(self):
        """What the stats line says: calls timed, p50/p99 per phase (ms)
        and the histograms (bucket: count), and per bucket of total the
        calls' wall, own CPU and process CPU seconds, for adding workers
        up."""
        with self._lock:
            histograms = {p: dict(h) for p, h in self.histograms.items()}
            spent = {index: [round(v, 6) for v in sums]
                     for index, sums in self.spent.items()}
        return {"calls_timed": sum(histograms["total"].values()),
                "call_ms": summary(histograms),
                "call_ms_histograms": histograms,
                "call_cpu_by_bucket": spent}


def merged_spent(reports):
    """One call_cpu_by_bucket of several workers' (report()'s; JSON's
    string keys accepted): the sums of each bucket added up."""
    out = {}
    for spent in reports:
        for index, sums in spent.items():
            into = out.setdefault(int(index), [0.0] * _SPENT)
            for i, seconds in enumerate(sums):
                into[i] += seconds
    return out


def while_served(histogram, spent, low=None, high=None):
    """Mean ms a call of the calls whose total falls in buckets
    ``low``..``high`` (None: open): wall time from when a thread took
    it (``wall``), its own thread's CPU (``own_cpu``) and the rest of
    the process's CPU over the same spans (``others_cpu``). None when
    no call falls there. ``histogram``: total's; ``spent``: the
    call_cpu_by_bucket of report() (JSON's string keys accepted)."""
    spent = merged_spent([spent])
    calls = 0
    sums = [0.0] * _SPENT
    for index, count in histogram.items():
        index = int(index)
        if (low is not None and index < low) or \
                (high is not None and index > high):
            continue
        calls += count
        for i, seconds in enumerate(spent.get(index, ())):
            sums[i] += seconds
    if not calls:
        return None
    wall, own, process = (1000 * v / calls for v in sums)
    return {"calls": calls, "wall": round(wall, 2), "own_cpu": round(own, 2),
            "others_cpu": round(process - own, 2)}
