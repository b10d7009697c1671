"""gantt-scheduler: the scheduler RPC service.

    gantt-scheduler [--config-file F]

Serves Nova's scheduler RPC API on ``[scheduler] topic`` (``scheduler``)
of ``[DEFAULT] control_exchange`` (``nova``) on the broker of ``[DEFAULT]
transport_url``, scheduling on the cloud in ``[placement_database]
connection``. Runs ``[scheduler] workers`` processes, each with its own
broker connection, database pool and host state; they share the calls
and each gets every fanout cast.

SIGTERM or SIGINT stops it gracefully: no new calls are taken, the calls
in progress finish (for up to ``[DEFAULT] graceful_shutdown_timeout``
seconds), then it exits 0. When the broker goes away, oslo.messaging
reconnects (``[oslo_messaging_rabbit] rabbit_retry_interval``,
``rabbit_retry_backoff``, ``rabbit_interval_max``) and the service goes
on. Exit status: 0 after a graceful stop, 2 for a configuration that
cannot be used, 1 for anything else.
"""

import json
import logging as std_logging
import os
import signal
import sys
import threading

import oslo_messaging
from oslo_config import cfg
from oslo_log import log as logging

from placement import command_errors, config_check, service_notify
from placement import conf as placement_conf
from placement.db import store as store_mod
from rpc import conf as rpc_conf
from rpc import heap, recorder
from rpc import server as server_mod
from scheduler import conf as scheduler_conf
from scheduler import errors as scheduler_errors
from scheduler import framework, host_options, host_updates, manager

LOG = logging.getLogger("rpc.service")

PROG = "gantt-scheduler"

# What systemctl status says once a stop signal came.
STOPPING = "stopping: finishing the calls in progress"

# Seconds between two starts of a worker that keeps dying.
RESPAWN_DELAY = 1.0


def build_conf(argv):
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    host_options.register_opts(conf)
    scheduler_conf.register_opts(conf)
    rpc_conf.register_opts(conf)
    logging.register_options(conf)
    logging.set_defaults(default_log_levels=(
        logging.get_default_log_levels() + ["alembic=WARN"]))
    config_check.register(conf)
    conf(argv, project="gantt", prog=PROG,
         version=f"{PROG} {placement_conf.version()}")
    return conf


class _Stopped(BaseException):
    """A stop signal arrived before the server was ready (a
    BaseException, as KeyboardInterrupt is, so that no retry loop
    catching Exception swallows it)."""


class _StopSignal:
    """SIGTERM and SIGINT set an event the main thread waits on (signal
    handlers run in the main thread, between its waits). Before the
    server is ready, while the main thread may be blocked (connecting to
    a broker that is down, say), a signal ends the start-up at once."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self, on_stop=None):
        self.event = threading.Event()
        self.signum = None
        self.ready = False
        self.on_stop = on_stop

    def install(self):
        for signum in self.SIGNALS:
            signal.signal(signum, self._handle)

    def _handle(self, signum, frame):
        if self.event.is_set():
            return  # already stopping
        self.signum = signum
        self.event.set()
        if self.on_stop is not None:
            self.on_stop()
        if not self.ready:
            raise _Stopped()

    def wait(self):
        self.ready = True
        while not self.event.wait(1.0):
            pass


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


def serve(conf, stop, on_ready=None):
    """Run one scheduler server until ``stop`` fires; 0 when it stopped
    gracefully. ``on_ready()`` is called once it takes calls."""
    # The schema was brought up to date before the workers started.
    store = store_mod.Store(conf)
    scheduler = manager.Scheduler(conf, store=store)
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
            server = server_mod.build_server(conf, scheduler, transport)
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
            if on_ready is not None:
                on_ready()
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
        store.dispose()
        pauses.uninstall()
        # An in-process caller (the tests) gets its collector back whole.
        heap.unfreeze()
    LOG.info("%s stats: pid=%d %s", PROG, os.getpid(), _stats(
        scheduler, getattr(server, "call_times", None),
        {"gc_frozen_objects": frozen, "gc": pauses.report()}))
    LOG.info("%s stopped, pid=%d", PROG, os.getpid())
    return 0


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


def run(conf, stop=None, on_ready=None, on_stop=None):
    """serve() until SIGTERM or SIGINT (``on_stop()`` when one comes)."""
    if stop is None:
        stop = _StopSignal(on_stop)
        stop.install()
    try:
        return serve(conf, stop, on_ready)
    except _Stopped:
        LOG.info("%s stopped before it was ready", PROG)
        return 0


def _worker(conf, index, ready_pipe):
    """The body of a forked worker, started with the stop signals
    blocked; never returns. Once ready it writes its index to
    ``ready_pipe`` (4 bytes: one write, which a pipe never splits)."""
    code = 1
    try:
        stop = _StopSignal()
        stop.install()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _StopSignal.SIGNALS)
        code = run(conf, stop,
                   on_ready=lambda: _tell_parent(ready_pipe, index))
    except _Stopped:
        code = 0
    except BaseException:
        LOG.exception("%s worker %d failed", PROG, index)
    finally:
        logging_shutdown()
        os._exit(code)


def _tell_parent(ready_pipe, index):
    try:
        os.write(ready_pipe, index.to_bytes(4, "big"))
    except OSError as exc:  # the parent is gone: nobody to tell
        LOG.debug("cannot say worker %d is ready: %s", index, exc)


class _ReadyWorkers:
    """The parent's end of the pipe its workers say they are ready on:
    which worker indices have said so."""

    def __init__(self):
        self.read_end, self.write_end = os.pipe()
        os.set_blocking(self.read_end, False)
        self.indices = set()
        self._partial = b""

    def poll(self):
        """The indices of the workers ready so far."""
        try:
            data = self._partial + os.read(self.read_end, 4096)
        except BlockingIOError:
            return self.indices
        whole = len(data) - len(data) % 4
        self._partial = data[whole:]
        for at in range(0, whole, 4):
            self.indices.add(int.from_bytes(data[at:at + 4], "big"))
        return self.indices

    def close(self):
        os.close(self.read_end)
        os.close(self.write_end)


def supervise(conf, count, notifier=None):
    """Fork ``count`` workers, start again those that die, and stop them
    all (SIGTERM) when asked to; 0 when every worker stopped cleanly.

    ``notifier`` (placement.service_notify) hears READY=1 from this
    process, the one systemd watches (NotifyAccess=main), once every
    worker has said on a pipe that it takes calls: it is the parent that
    systemd hears, and only the workers know when they are ready. A
    worker that dies before then is started again, as ever, and the
    start is done when its successor is ready."""
    notifier = notifier or service_notify.Notifier()
    stop = _StopSignal(lambda: notifier.stopping(STOPPING))
    stop.ready = True  # the parent only ever waits
    stop.install()
    children = {}  # pid -> worker index
    ready = _ReadyWorkers()
    announced = False

    def spawn(index):
        # A child must not run the parent's handlers: signals wait until
        # the child has installed its own.
        signal.pthread_sigmask(signal.SIG_BLOCK, _StopSignal.SIGNALS)
        try:
            pid = os.fork()
            if pid == 0:
                os.close(ready.read_end)
                _worker(conf, index, ready.write_end)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _StopSignal.SIGNALS)
        children[pid] = index

    for index in range(count):
        spawn(index)
    LOG.info("%s started %d workers: %s", PROG, count,
             ", ".join(str(p) for p in sorted(children)))
    failed = False
    signalled = False
    while children:
        if (not announced and not stop.event.is_set()
                and len(ready.poll()) == count):
            announced = True
            notifier.ready(_serving(conf, count))
        if stop.event.is_set() and not signalled:
            signalled = True
            for pid in children:
                _kill(pid)
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            stop.event.wait(0.2)
            continue
        index = children.pop(pid)
        code = os.waitstatus_to_exitcode(status)
        if signalled:
            failed = failed or code != 0
            continue
        LOG.error("%s worker %d (pid %d) exited with %s; starting it "
                  "again", PROG, index, pid, code)
        stop.event.wait(RESPAWN_DELAY)
        if not stop.event.is_set():
            spawn(index)
    ready.close()
    LOG.info("%s stopped", PROG)
    return 1 if failed else 0


def _serving(conf, workers):
    return (f"serving topic {conf.scheduler.topic} of exchange "
            f"{conf.control_exchange} with {workers} "
            f"worker{'s' if workers > 1 else ''}")


def _kill(pid):
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def _check_host_source(conf):
    """A host state source that can be used, or cfg.Error."""
    if (conf.scheduler.host_state_source == host_options.NOVA
            and not conf.api_database.connection):
        raise cfg.Error("[scheduler] host_state_source = nova needs "
                        "[api_database] connection, the URL of Nova's API "
                        "database")


def _check_transport(conf):
    """A transport URL oslo.messaging can use, or cfg.Error."""
    try:
        oslo_messaging.TransportURL.parse(conf, rpc_conf.transport_url(conf))
    except oslo_messaging.InvalidTransportURL as exc:
        raise cfg.Error(f"[DEFAULT] transport_url: {exc}") from None


def _check_filters_and_weighers(conf):
    # Their names, before any worker starts.
    framework.enabled_filters(conf)
    framework.enabled_weighers(conf)


def main(argv=None):
    return command_errors.main(
        PROG, argv, build_conf, start,
        failures=(host_updates.SourceError,),
        checks=(_check_transport, _check_host_source, recorder.check_conf,
                _check_filters_and_weighers),
        config_errors=(scheduler_errors.ConfigError,))


def start(conf):
    """Run the service (its workers) once the config is known good."""
    # Out of the environment before any worker is forked: only this
    # process speaks to systemd.
    notifier = service_notify.Notifier.from_environment()
    workers = rpc_conf.worker_count(conf)
    if rpc_conf.in_process(conf):
        LOG.warning("[DEFAULT] transport_url is the in-process transport "
                    "(%s): only this process can reach the scheduler. Set "
                    "it to the broker Nova uses, e.g. "
                    "rabbit://user:password@host:5672/",
                    rpc_conf.IN_PROCESS_TRANSPORT_URL)
    # Bring the schema up to date once, before any worker connects.
    store_mod.Store.open(conf).dispose()
    # And see that the host state source answers, once.
    host_updates.check_source(conf)
    if workers == 1:
        return run(conf, on_ready=lambda: notifier.ready(
            _serving(conf, 1)), on_stop=lambda: notifier.stopping(STOPPING))
    return supervise(conf, workers, notifier)


if __name__ == "__main__":
    sys.exit(main())
