"""gantt-scheduler: the scheduler RPC service.

    gantt-scheduler [--config-file F]

Serves Nova's scheduler RPC API on ``[scheduler] topic`` (``scheduler``)
of ``[DEFAULT] control_exchange`` (``nova``) on the broker of ``[DEFAULT]
transport_url``, scheduling on the cloud in ``[placement_database]
connection``. Runs ``[scheduler] workers`` processes, each with its own
broker connection, database pool and host state; they share the calls
and each gets every fanout cast.

Before any worker starts, the parent checks what every worker needs, so
that a misstep is one line and one exit instead of workers failing over
and over: the transport driver, the broker's address and login (for up
to ``[scheduler] broker_start_timeout`` seconds while it cannot be
reached), the database and its schema, the host state source. Each
worker tells the parent through a pipe when it is ready, or why it
failed; a worker that fails before it is ready stops the service with
that worker's line. A worker that dies after it was ready is started
again, unless workers keep dying (``MAX_DEATHS`` in ``DEATH_WINDOW``
seconds).

SIGTERM or SIGINT stops it gracefully: no new calls are taken, the calls
in progress finish (for up to ``[DEFAULT] graceful_shutdown_timeout``
seconds), then it exits 0. SIGHUP reopens the log files and applies the
options marked mutable (``[DEFAULT] debug``), in the parent and every
worker, as oslo.service does. When the broker goes away after start,
oslo.messaging reconnects (``[oslo_messaging_rabbit]
rabbit_retry_interval``, ``rabbit_retry_backoff``,
``rabbit_interval_max``) and the service goes on. With ``[scheduler]
metrics_bind_port`` set, the parent serves Prometheus metrics for every
worker (rpc.metrics).

Exit status: 0 after a graceful stop, 2 for a configuration that cannot
be used (a transport driver that does not exist, a login the broker
refuses), 1 for anything else (a broker or database that cannot be
reached, a schema that is not current).
"""

import ctypes
import json
import logging as std_logging
import os
import select
import signal
import sys
import threading
import time

from oslo_config import cfg
from oslo_log import log as logging

from placement import (
    command_errors,
    config_check,
    guru,
    hangup,
    service_notify,
    signal_event,
)
from placement import conf as placement_conf
from placement.db import schema_state
from placement.db import store as store_mod
from rpc import broker_check, heap, recorder
from rpc import conf as rpc_conf
from rpc import metrics as metrics_mod
from rpc import server as server_mod
from scheduler import conf as scheduler_conf
from scheduler import (
    decision_log,
    framework,
    host_options,
    host_updates,
    manager,
)
from scheduler import errors as scheduler_errors

LOG = logging.getLogger("rpc.service")

PROG = "gantt-scheduler"

# What systemctl status says once a stop signal came.
STOPPING = "stopping: finishing the calls in progress"

_PR_SET_PDEATHSIG = 1  # linux/prctl.h

# Seconds between a worker's death and its new start.
RESPAWN_DELAY = 1.0
# More deaths than this of workers that had been ready, within the window
# (seconds), stop the service: something is wrong that a restart of the
# unit (systemd's Restart=on-failure) or an operator must see.
MAX_DEATHS = 5
DEATH_WINDOW = 60.0


def build_conf(argv):
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    host_options.register_opts(conf)
    scheduler_conf.register_opts(conf)
    rpc_conf.register_opts(conf)
    logging.register_options(conf)
    logging.set_defaults(default_log_levels=(
        logging.get_default_log_levels() + ["alembic=WARN"]))
    guru.register_opts(conf)
    config_check.register(conf)
    conf(argv, project="gantt", prog=PROG,
         version=f"{PROG} {placement_conf.version()}")
    return conf


class _Stopped(BaseException):
    """A stop signal arrived before the server was ready (a
    BaseException, as KeyboardInterrupt is, so that no retry loop
    catching Exception swallows it)."""


class _StopSignal:
    """SIGTERM and SIGINT set an event the main thread waits on (a
    placement.signal_event: a handler may run inside that wait). Before the
    server is ready, while the main thread may be blocked (connecting to
    a broker that is down, say), a signal ends the start-up at once.
    SIGHUP asks for ``reload`` (placement.hangup), which the wait loop
    does between two waits."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)
    # Blocked around a fork, so that a child never runs its parent's.
    HANDLED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def __init__(self, reload=None, on_stop=None):
        self.event = signal_event.SignalEvent()
        self.signum = None
        self.ready = False
        # The handler's _Stopped was swallowed: raise it again.
        self._again = False
        self.on_stop = on_stop
        self.hangup = hangup.Hangup(reload or (lambda: None))

    def install(self):
        for signum in self.SIGNALS:
            signal.signal(signum, self._handle)
        self.hangup.install()
        signal_event.on_swallowed(_Stopped, self._swallowed)

    def _swallowed(self):
        # Raised where Python cannot raise (a weakref callback the
        # collector ran): the start-up went on; the same signal again
        # has the handler raise at its next chance.
        self._again = True
        signal_event.send_later(self.signum)

    def reload_if_asked(self):
        self.hangup.reload_if_asked()

    def _handle(self, signum, frame):
        if self.event.is_set():
            if self._again and not self.ready:
                self._again = False
                raise _Stopped()
            return  # already stopping
        self.signum = signum
        self.event.set()
        if self.on_stop is not None:
            self.on_stop()
        if not self.ready:
            raise _Stopped()

    def wait(self):
        self.ready = True
        while not self.event.wait(0.5):
            self.reload_if_asked()


def reload_config(conf):
    """What SIGHUP does (placement.hangup), said first."""
    LOG.info("%s reloading (SIGHUP): config files and log files, pid=%d",
             PROG, os.getpid())
    hangup.reload_config(conf)


def _exit_after(seconds, what):
    """Leave the process if ``what`` has not finished in ``seconds``."""
    def give_up():
        LOG.error("%s did not finish in %s s (graceful_shutdown_timeout); "
                  "exiting", what, seconds)
        logging_shutdown()
        os._exit(1)
    timer = threading.Timer(seconds, give_up)
    timer.daemon = True
    if seconds:
        timer.start()
    return timer


def logging_shutdown():
    std_logging.shutdown()


def serve(conf, stop, ready=None):
    """Run one scheduler server until ``stop`` fires; 0 when it stopped
    gracefully. ``ready()`` is called once it serves."""
    # The schema was brought up to date before the workers started.
    store = store_mod.Store(conf)
    decisions = decision_log.from_conf(conf)
    scheduler = manager.Scheduler(conf, store=store, decisions=decisions)
    metrics = None
    if metrics_mod.enabled(conf):
        metrics = metrics_mod.SchedulerMetrics(scheduler.stats,
                                               scheduler.host_state_age)
    transport = rpc_conf.get_server_transport(conf)
    started = False
    server = None
    pauses = heap.Pauses()
    frozen = 0
    try:
        try:
            # Load the host state and candidates index now, not on the
            # first call.
            scheduler.sync()
            server = server_mod.build_server(conf, scheduler, transport,
                                             metrics)
            # What is loaded by now stays: out of the collector's walks.
            # The pauses counted are those of serving.
            frozen = heap.freeze()
            pauses.install()
            server.start()
            started = True
            LOG.info("%s ready: topic=%s, server=%s, exchange=%s, pid=%d; "
                     "%s", PROG, conf.scheduler.topic, conf.host,
                     conf.control_exchange, os.getpid(),
                     placement_conf.startup_summary(conf))
            if ready is not None:
                ready()
            stop.wait()
        except _Stopped:
            if not started:
                raise
        LOG.info("%s stopping (signal %d): finishing the calls in "
                 "progress", PROG, stop.signum)
        timer = _exit_after(conf.graceful_shutdown_timeout,
                            "the calls in progress")
        server.stop()
        server.wait()
        timer.cancel()
    finally:
        transport.cleanup()
        scheduler.close()
        if decisions is not None:
            decisions.close()
        store.dispose()
        pauses.uninstall()
        # An in-process caller (the tests) gets its collector back whole.
        heap.unfreeze()
    # The whole story at DEBUG, or at INFO when asked for (benchmarks).
    LOG.log(std_logging.INFO if conf.scheduler.log_worker_stats
            else std_logging.DEBUG, "%s stats: pid=%d %s", PROG,
            os.getpid(), _stats(
                scheduler, getattr(server, "call_times", None),
                {"gc_frozen_objects": frozen, "gc": pauses.report()}))
    LOG.info("%s stopped, pid=%d: %s", PROG, os.getpid(),
             _stop_summary(scheduler.stats))
    return 0


def _stop_summary(stats):
    """What a worker did, in a few words, for its stop line."""
    def count(n, what):
        return f"{n} {what}{'' if n == 1 else 's'}"
    return (f"{count(stats.get('decisions', 0), 'decision')}, "
            f"{stats.get('no_valid_host', 0)} NoValidHost, "
            f"{count(stats.get('claims_lost', 0), 'claim')} lost")


def _stats(scheduler, call_times=None, more=None):
    """One JSON line of what this worker did: decisions and claims made,
    and the CPU seconds spent decoding, deciding (claims included),
    claiming and encoding, beside the process's whole CPU time; with
    ``call_times``, the wall time of its select_destinations calls by
    phase (rpc.call_times); ``more``: other figures (the collector's,
    rpc.heap)."""
    times = os.times()
    stats = {key: round(value, 6) if isinstance(value, float) else value
             for key, value in sorted(scheduler.stats.items())}
    stats["process_cpu_s"] = round(times.user + times.system, 6)
    if call_times is not None:
        stats.update(call_times.report())
    stats.update(more or {})
    return json.dumps(stats, sort_keys=True)


def run(conf, stop=None, ready=None, on_stop=None):
    """serve() until SIGTERM or SIGINT (``on_stop()`` when one comes)."""
    if stop is None:
        stop = _StopSignal(lambda: reload_config(conf), on_stop)
        stop.install()
    try:
        return serve(conf, stop, ready)
    except _Stopped:
        LOG.info("%s stopped before it was ready", PROG)
        return 0


def _tell(fd, line):
    """One line to the parent; a parent that is gone hears nothing."""
    try:
        os.write(fd, (line.replace("\n", " ") + "\n").encode())
    except OSError:
        pass


def _stop_with_parent(parent):
    """SIGTERM to this worker when its parent dies (SIGKILL, the OOM
    killer): a worker must not go on serving, unsupervised, beside the
    service that replaces it. Linux's PR_SET_PDEATHSIG; the signal waits,
    blocked, until the handlers are in place."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
    except (OSError, AttributeError):
        return  # not Linux: the parent's stop is the only stop
    if os.getppid() != parent:  # it died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)


def _worker(conf, index, report_fd, parent):
    """The body of a forked worker, started with the handled signals
    blocked; never returns. It writes ``ready`` to ``report_fd`` once it
    serves, or ``failed <status> <line>`` if it fails before."""
    code = 1
    told = []

    def ready():
        told.append(True)
        _tell(report_fd, "ready")

    try:
        stop = _StopSignal(lambda: reload_config(conf))
        stop.install()
        _stop_with_parent(parent)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _StopSignal.HANDLED)
        code = run(conf, stop, ready)
    except _Stopped:
        code = 0
    except BaseException as exc:
        if told:
            LOG.exception("%s worker %d failed", PROG, index)
        else:
            code, text = command_errors.classify(
                exc, failures=_FAILURES, usage=_USAGE)
            if conf.debug:
                LOG.exception("%s worker %d failed at start", PROG, index)
            _tell(report_fd, f"failed {code} {text}")
    finally:
        logging_shutdown()
        os._exit(code)


class _Child:
    def __init__(self, index, report_fd):
        self.index = index
        self.report_fd = report_fd
        self.buffer = b""
        self.ready = False
        self.failure = None  # (status, line) it reported


class _Supervisor:
    """Forks the workers and watches them: their reports (a pipe each)
    and their exits."""

    def __init__(self, conf, count, notifier=None):
        self.conf = conf
        self.count = count
        # The service manager (placement.service_notify) hears READY=1
        # from this process, the one systemd watches (NotifyAccess=main),
        # once every worker has said it serves.
        self.notifier = notifier or service_notify.Notifier()
        self.announced = False
        self.stop = _StopSignal(
            self._reload, lambda: self.notifier.stopping(STOPPING))
        self.stop.ready = True  # the parent only ever waits
        self.children = {}  # pid -> _Child
        self.deaths = []  # times of deaths after ready
        self.pid = os.getpid()

    def _reload(self):
        reload_config(self.conf)
        for pid in self.children:
            _kill(pid, signal.SIGHUP)

    def spawn(self, index):
        read_fd, write_fd = os.pipe()
        # A child must not run the parent's handlers: signals wait until
        # the child has installed its own.
        signal.pthread_sigmask(signal.SIG_BLOCK, _StopSignal.HANDLED)
        try:
            pid = os.fork()
            if pid == 0:
                os.close(read_fd)
                for child in self.children.values():
                    os.close(child.report_fd)
                _worker(self.conf, index, write_fd, self.pid)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _StopSignal.HANDLED)
        os.close(write_fd)
        os.set_blocking(read_fd, False)
        self.children[pid] = _Child(index, read_fd)

    def _read_reports(self, timeout):
        fds = {child.report_fd: child for child in self.children.values()}
        if not fds:
            self.stop.event.wait(timeout)
            return
        try:
            readable, _, _ = select.select(list(fds), [], [], timeout)
        except InterruptedError:
            return
        for fd in readable:
            self._read(fds[fd])

    @staticmethod
    def _read(child):
        try:
            data = os.read(child.report_fd, 4096)
        except (BlockingIOError, InterruptedError):
            return
        child.buffer += data
        while b"\n" in child.buffer:
            line, child.buffer = child.buffer.split(b"\n", 1)
            word, _, rest = line.decode(errors="replace").partition(" ")
            if word == "ready":
                child.ready = True
            elif word == "failed":
                status, _, text = rest.partition(" ")
                child.failure = (int(status), text)

    def _reap(self):
        """(pid, child, exit status) of a worker that exited, or None."""
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0 or pid not in self.children:
            return None
        child = self.children.pop(pid)
        self._read(child)  # what it said before it went
        os.close(child.report_fd)
        if metrics_mod.enabled(self.conf):
            metrics_mod.worker_gone(pid)
        return pid, child, os.waitstatus_to_exitcode(status)

    def _stop_all(self):
        for pid in self.children:
            _kill(pid)
        deadline = time.monotonic() + self.conf.graceful_shutdown_timeout + 5
        while self.children and time.monotonic() < deadline:
            if self._reap() is None:
                time.sleep(0.05)
        for pid in list(self.children):
            _kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(self.children.pop(pid).report_fd)

    def run(self):
        """0 when every worker stopped cleanly on a signal; else the
        status the failure calls for, its line printed once."""
        self.stop.install()
        for index in range(self.count):
            self.spawn(index)
        LOG.info("%s started %d workers: %s", PROG, self.count,
                 ", ".join(str(p) for p in sorted(self.children)))
        while self.children:
            if self.stop.event.is_set():
                return self._stopping()
            self.stop.reload_if_asked()
            self._read_reports(0.2)
            self._announce_when_ready()
            gone = self._reap()
            if gone is None:
                continue
            pid, child, code = gone
            if not child.ready:
                return self._failed_at_start(pid, child, code)
            self.deaths.append(time.monotonic())
            self.deaths = [t for t in self.deaths
                           if t > time.monotonic() - DEATH_WINDOW]
            if len(self.deaths) > MAX_DEATHS:
                self._stop_all()
                command_errors.report(
                    PROG, f"workers keep dying ({len(self.deaths)} in "
                          f"{DEATH_WINDOW:.0f} s, the last with status "
                          f"{code}); stopping, see the log")
                return command_errors.FAILURE
            LOG.error("%s worker %d (pid %d) exited with %s; starting it "
                      "again", PROG, child.index, pid, code)
            self.stop.event.wait(RESPAWN_DELAY)
            if not self.stop.event.is_set():
                self.spawn(child.index)
        LOG.info("%s stopped", PROG)
        return 0

    def _announce_when_ready(self):
        if self.announced or self.stop.event.is_set():
            return
        if sum(child.ready for child in self.children.values()) == self.count:
            self.announced = True
            self.notifier.ready(_serving(self.conf, self.count))

    def _failed_at_start(self, pid, child, code):
        self._stop_all()
        if child.failure is not None:
            status, text = child.failure
        else:
            status = command_errors.FAILURE
            text = (f"worker {child.index} (pid {pid}) exited with {code} "
                    f"before it was ready; see the log")
        command_errors.report(PROG, text)
        return status

    def _stopping(self):
        failed = False
        for pid in self.children:
            _kill(pid)
        while self.children:
            gone = self._reap()
            if gone is None:
                time.sleep(0.05)
                continue
            failed = failed or gone[2] != 0
        LOG.info("%s stopped", PROG)
        return 1 if failed else 0


def supervise(conf, count, notifier=None):
    """Fork ``count`` workers, start again those that die after they
    were ready, and stop them all (SIGTERM) when asked to."""
    return _Supervisor(conf, count, notifier).run()


def _serving(conf, workers):
    return (f"serving topic {conf.scheduler.topic} of exchange "
            f"{conf.control_exchange} with {workers} "
            f"worker{'s' if workers > 1 else ''}")


def _kill(pid, signum=signal.SIGTERM):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _check_host_source(conf):
    """A host state source that can be used, or cfg.Error."""
    if (conf.scheduler.host_state_source == host_options.NOVA
            and not conf.api_database.connection):
        raise cfg.Error("[scheduler] host_state_source = nova needs "
                        "[api_database] connection, the URL of Nova's API "
                        "database")


def _check_filters_and_weighers(conf):
    # Their names, before any worker starts.
    framework.enabled_filters(conf)
    framework.enabled_weighers(conf)


# How a failure at start ends the service (the parent's checks and a
# worker's start alike).
_FAILURES = (host_updates.SourceError, schema_state.SchemaNotReady,
             broker_check.BrokerUnreachable, metrics_mod.EndpointUnavailable)
# BrokerRefused is a ConfigError.
_USAGE = (scheduler_errors.ConfigError,)


def main(argv=None):
    return command_errors.main(
        PROG, argv, build_conf, start,
        failures=_FAILURES, usage=_USAGE,
        checks=(broker_check.check_transport,
                rpc_conf.check_transport_name,
                _check_host_source, recorder.check_conf,
                _check_filters_and_weighers),
        config_errors=(scheduler_errors.ConfigError,))


def _check_database(conf):
    """The schema brought up to date once, before any worker connects
    ([placement_database] sync_on_startup), or found current."""
    schema_state.open_store(conf).dispose()


def start(conf):
    """Run the service (its workers) once the config is known good and
    what every worker needs answers."""
    # Out of the environment before any worker is forked: only this
    # process speaks to systemd.
    notifier = service_notify.Notifier.from_environment()
    workers = rpc_conf.worker_count(conf)
    guru.enable(conf, PROG)
    if rpc_conf.in_process(conf):
        LOG.warning("[DEFAULT] transport_url is the in-process transport "
                    "(%s): only this process can reach the scheduler. Set "
                    "it to the broker Nova uses, e.g. "
                    "rabbit://user:password@host:5672/",
                    rpc_conf.IN_PROCESS_TRANSPORT_URL)
    broker_check.reach(conf, conf.scheduler.broker_start_timeout)
    _check_database(conf)
    host_updates.check_source(conf)
    shared_metrics = endpoint = None
    if metrics_mod.enabled(conf):
        shared_metrics = metrics_mod.prepare()
    try:
        if shared_metrics:
            endpoint = metrics_mod.serve(conf)
            LOG.info("%s metrics at http://%s:%d/metrics", PROG,
                     conf.scheduler.metrics_bind_host,
                     conf.scheduler.metrics_bind_port)
        if workers == 1:
            return run(conf, ready=lambda: notifier.ready(_serving(conf, 1)),
                       on_stop=lambda: notifier.stopping(STOPPING))
        return supervise(conf, workers, notifier)
    finally:
        if endpoint is not None:
            endpoint.shutdown()
        if shared_metrics:
            metrics_mod.cleanup(shared_metrics)


if __name__ == "__main__":
    sys.exit(main())
