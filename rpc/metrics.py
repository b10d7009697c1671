"""Prometheus metrics of gantt-scheduler (prometheus-client), served by
the service's parent process at ``http://[scheduler] metrics_bind_host:
metrics_bind_port/metrics`` when the port is set.

- ``gantt_scheduler_calls_total{result}``: select_destinations calls by
  result (``selected``, ``no_valid_host``, ``claim_failed``,
  ``invalid``);
- ``gantt_scheduler_call_seconds``: their latency in the scheduler
  (the broker's and the encoding's time excluded);
- ``gantt_scheduler_instances_total``: instances placed;
- ``gantt_scheduler_no_valid_host_total{cause}``: NoValidHost by cause
  (scheduler.errors.NoValidHost.cause);
- ``gantt_scheduler_claim_attempts_total``,
  ``gantt_scheduler_claim_conflicts_total``: claims tried, and lost to
  another writer and decided again (retries);
- ``gantt_scheduler_host_state_age_seconds``: with host state read from
  Nova's databases, how old the last complete read was at the last
  decision (the largest over the workers): the lag behind Nova.

The workers are separate processes: each writes its figures to the
directory the parent names in ``PROMETHEUS_MULTIPROC_DIR`` and the
parent's endpoint adds them up. prometheus_client chooses where values
live when it is first imported, so this module imports it only once the
parent has named the directory.
"""

import os
import shutil
import tempfile
import threading

MULTIPROC_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1,
                   0.2, 0.5, 1.0, 2.0, 5.0)
# scheduler.stats keys mirrored as counters.
_MIRRORED = {"claim_attempts": "claim_attempts",
             "claims_lost": "claim_conflicts",
             "group_conflicts": "group_conflicts"}


def enabled(conf):
    return bool(conf.scheduler.metrics_bind_port)


def prepare():
    """In the parent, before anything imports prometheus_client: a new
    directory for the workers' figures; returns its path."""
    path = tempfile.mkdtemp(prefix="gantt-scheduler-metrics-")
    os.environ[MULTIPROC_VARIABLE] = path
    return path


class EndpointUnavailable(Exception):
    """The metrics endpoint cannot listen where it is configured."""


def serve(conf):
    """Start the endpoint (a daemon thread of the parent); returns the
    server, whose shutdown() stops it."""
    import prometheus_client as prom
    from prometheus_client import multiprocess

    registry = prom.CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    host = conf.scheduler.metrics_bind_host
    port = conf.scheduler.metrics_bind_port
    try:
        server, _thread = prom.start_http_server(port, addr=host,
                                                 registry=registry)
    except OSError as exc:
        raise EndpointUnavailable(
            f"[scheduler] metrics_bind_host and metrics_bind_port: cannot "
            f"listen on {host}:{port}: {exc.strerror}") from None
    return server


def worker_gone(pid):
    from prometheus_client import multiprocess
    multiprocess.mark_process_dead(pid)


def cleanup(path):
    shutil.rmtree(path, ignore_errors=True)


class SchedulerMetrics:
    """What one worker counts; ``stats``: the scheduler's running totals
    (scheduler.manager.Scheduler.stats) the claim counters follow."""

    def __init__(self, stats, host_state_age=None):
        import prometheus_client as prom

        self._stats = stats
        self._host_state_age = host_state_age
        self._seen = dict.fromkeys(_MIRRORED, 0)
        self._lock = threading.Lock()
        self.calls = prom.Counter(
            "gantt_scheduler_calls", "select_destinations calls by result.",
            ["result"])
        self.latency = prom.Histogram(
            "gantt_scheduler_call_seconds",
            "Time select_destinations spent in the scheduler.",
            buckets=LATENCY_BUCKETS)
        self.instances = prom.Counter(
            "gantt_scheduler_instances", "Instances placed.")
        self.no_valid_host = prom.Counter(
            "gantt_scheduler_no_valid_host",
            "NoValidHost answers by cause.", ["cause"])
        self.mirrored = {
            key: prom.Counter(f"gantt_scheduler_{name}",
                              f"scheduler.stats[{key!r}]")
            for key, name in _MIRRORED.items()}
        self.host_state_age = prom.Gauge(
            "gantt_scheduler_host_state_age_seconds",
            "Age of the last complete read of Nova's databases at the "
            "last decision.", multiprocess_mode="livemax")

    def observe(self, result, seconds, instances=0, cause=None):
        self.calls.labels(result).inc()
        self.latency.observe(seconds)
        if instances:
            self.instances.inc(instances)
        if cause is not None:
            self.no_valid_host.labels(cause).inc()
        with self._lock:
            for key, counter in self.mirrored.items():
                now = self._stats.get(key, 0)
                if now > self._seen[key]:
                    counter.inc(now - self._seen[key])
                    self._seen[key] = now
        if self._host_state_age is not None:
            age = self._host_state_age()
            if age is not None:
                self.host_state_age.set(age)
