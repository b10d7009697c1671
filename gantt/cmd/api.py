"""gantt-placement-api: serve the Placement REST API.

    gantt-placement-api [--config-file F] [--host H] [--port N]
                        [--workers N] [--threads N] [--db URL|PATH]
                        [--policy legacy|secure|open] [--cors]

The server is gunicorn: a pre-forking master with ``--workers`` processes
(each with its own connection pool and candidates index, so that the
processes use every core) of ``--threads`` threads each. The schema is
brought up to date once, in the master, before the workers start.

It listens on ``--host`` and ``--port`` when they are given, else on
``[api] bind_host`` and ``[api] bind_port``. The options of this command
are read from the command line only: a config file sets the ``[api]``
options, and never this command's through ``[DEFAULT]`` (where ``host`` is
gantt-scheduler's RPC server name), so that one config file serves every
gantt service.

``--db`` takes a database URL or an SQLite file path. ``--policy``
chooses the default rules: ``legacy`` (the old admin-only defaults also
pass), ``secure`` (only the new role-based defaults) or ``open`` (every
rule allowed to any authenticated caller except admin_api; for test
harnesses). ``--cors`` allows origin http://valid.example.com with header
openstack-api-version, for the conformance harness; real deployments set
``[cors]`` in the config file.

Requests gunicorn refuses before the application sees them (a malformed
request line or header such as a Content-Length that is not a number, a
method in lower case, a request line or header past gunicorn's limits)
are answered with the API's JSON error body rather than gunicorn's HTML
page (:class:`JsonErrorWorker`; ``gunicorn -k
gantt.cmd.api.JsonErrorWorker placement.api.wsgi:application`` does
the same). What gunicorn answers with no response at all (a client that
goes away, a connection that sends nothing before the timeout) stays
unanswered, and an HTTP/2 connection's errors are gunicorn's own. A
connection an answer closes is waited on (for the client to close too)
in the request's thread, never in the worker's main loop.
"""

import errno
import gc
import os
import shutil
import socket
import sys
import tempfile
import threading
import time

from gunicorn import arbiter as gunicorn_arbiter
from gunicorn import errors as gunicorn_master_errors
from gunicorn import util as gunicorn_util
from gunicorn.app import base as gunicorn_base
from gunicorn.http import errors as gunicorn_errors
from gunicorn.workers import gthread
from oslo_config import cfg
from oslo_log import log as logging

from placement import (
    command_errors,
    config_check,
    guru,
    hangup,
    service_notify,
)
from placement import conf as conf_mod
from placement.api import app as app_mod
from placement.api import auth, errors, metrics, microversion, middleware
from placement.api import policy as policy_mod
from placement.db import schema_state
from placement.db import store as store_mod

LOG = logging.getLogger(__name__)

CORS_TEST_ORIGIN = "http://valid.example.com"
CORS_TEST_HEADERS = ["openstack-api-version"]

# Each dest differs from the option's name: oslo.config reads a command
# line option from [DEFAULT] of the config files too, under its dest, and
# [DEFAULT] host there is gantt-scheduler's (or Nova's) host name.
CLI_OPTS = [
    cfg.HostAddressOpt("host", dest="cli_host", metavar="HOST",
                       help="Listen address (default: [api] bind_host)."),
    cfg.PortOpt("port", dest="cli_port", metavar="PORT",
                help="Listen port (default: [api] bind_port)."),
    cfg.IntOpt("workers", dest="cli_workers", metavar="N", min=1,
               help="Server processes (default: [api] workers)."),
    cfg.IntOpt("threads", dest="cli_threads", metavar="N", min=1,
               help="Threads per process (default: [api] threads)."),
    cfg.StrOpt("db", dest="cli_db", metavar="URL|PATH",
               help="Database URL, or the path of an SQLite file "
                    "(default: [placement_database] connection)."),
    cfg.StrOpt("policy", dest="cli_policy", metavar="MODE",
               choices=policy_mod.MODES,
               help="Default policy rules: legacy, secure or open (see "
                    "the command's help)."),
    # dest: the [cors] option group already answers to conf.cors.
    cfg.BoolOpt("cors", dest="test_cors", default=False,
                help="Allow CORS requests from http://valid.example.com "
                     "with header openstack-api-version (tests)."),
]


def _given(value, default):
    """The command line's ``value``, or ``default`` when it gave none."""
    return default if value is None else value


def database_url(value):
    if "://" in value:
        return value
    return "sqlite:///" + os.path.abspath(value)


def build_conf(argv):
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    app_mod.register_opts(conf)
    logging.register_options(conf)
    logging.set_defaults(default_log_levels=(
        logging.get_default_log_levels() + ["alembic=WARN"]))
    guru.register_opts(conf)
    conf.register_cli_opts(CLI_OPTS)
    config_check.register(conf)
    conf(argv, project="gantt", prog="gantt-placement-api",
         version=f"gantt-placement-api {conf_mod.version()}")
    if conf.cli_db:
        conf.set_override("connection", database_url(conf.cli_db),
                          group="placement_database")
    if conf.test_cors:
        conf.set_override("allowed_origin", [CORS_TEST_ORIGIN], group="cors")
        conf.set_override("allow_headers", CORS_TEST_HEADERS, group="cors")
    return conf


def bind_address(conf):
    """gunicorn's bind setting: the command line's host and port, else
    [api] bind_host and bind_port."""
    host = _given(conf.cli_host, conf.api.bind_host)
    port = _given(conf.cli_port, conf.api.bind_port)
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{port}"


class _Captured:
    """Stands for the client's socket while gunicorn writes its own error
    page, to learn the status it chose."""

    def __init__(self):
        self.data = b""

    def gettimeout(self):
        return 0.0

    def sendall(self, data):
        self.data += data

    def status(self):
        """The status code of what was written, or None."""
        line = self.data.split(b"\r\n", 1)[0].split()
        if len(line) < 2 or not line[1].isdigit():
            return None
        return int(line[1])


def _request_version(req):
    """The microversion the refused request named, when gunicorn got as
    far as its headers and the header is good; else None."""
    headers = getattr(req, "headers", None) or ()
    environ = {"HTTP_" + name.upper().replace("-", "_"): value
               for name, value in headers}
    try:
        return microversion.negotiate(environ)
    except ValueError:
        return None


def _refusal_detail(exc, status, req):
    if status == 500:
        return ("The server failed to complete the request; the error is "
                "in its log under this request id.")
    if (isinstance(exc, gunicorn_errors.InvalidHeader)
            and exc.hdr == "CONTENT-LENGTH"):
        lengths = [value for name, value in getattr(req, "headers", ())
                   if name.upper() == "CONTENT-LENGTH"]
        if not all(value.strip().isdigit() for value in lengths):
            # What the application says of it, and OpenStack Placement.
            return "content-length header must be an integer"
    return errors.clip(str(exc))


# How long a closing connection waits for its client to close too (what
# gunicorn's own graceful close waits), and how much it reads meanwhile.
CLOSE_LINGER = 2.0
_CLOSE_DRAIN = 65536


def _linger(sock):
    """Close the writing side and read what the client still sends until
    it closes (RFC 9112 9.6: closing with its bytes unread would reset
    the connection, and the client could lose the answer), for at most
    CLOSE_LINGER; then shut the reading side, so that the close gunicorn
    makes next has nothing left to wait for. gunicorn's
    util.close_graceful does the same and closes the socket too, which
    its main loop does itself afterwards."""
    deadline = time.monotonic() + CLOSE_LINGER
    try:
        sock.shutdown(socket.SHUT_WR)
        drained = 0
        while drained < _CLOSE_DRAIN:
            # One wait for the whole linger, however the client dribbles.
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            data = sock.recv(4096)
            if not data:
                break
            drained += len(data)
    except OSError:
        pass  # gone already, or the wait is over
    try:
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass


class JsonErrorWorker(gthread.ThreadWorker):
    """gunicorn's threaded worker, except that:

    - a request gunicorn refuses itself gets the API's JSON error body
      instead of an HTML page. gunicorn still chooses the status and logs
      the request; only what is sent differs;
    - a connection the answer closes waits for its client to close in the
      request's thread, not in the worker's main loop: gunicorn 27 waits
      there (up to 2 s a connection) on every such close, so that a
      client which keeps its socket open after a ``Connection: close``
      answer held back every other connection of the worker."""

    def handle(self, conn):
        keep = super().handle(conn)
        # False: the connection closes (True keeps it alive; gunicorn 27
        # also returns a marker for a connection it waits on).
        if keep is False:
            _linger(conn.sock)
        return keep

    def handle_error(self, req, client, addr, exc):
        captured = _Captured()
        super().handle_error(req, captured, addr, exc)
        status = captured.status()
        if status is None:
            return
        # A header gunicorn refuses comes with the request so far.
        req = req or getattr(exc, "req", None)
        version = _request_version(req)
        request_id = middleware.new_request_id()
        response = errors.standalone(
            status, _refusal_detail(exc, status, req), request_id, version)
        headers = [*response.headerlist, ("Connection", "close"),
                   (middleware.REQUEST_ID_HEADER, request_id),
                   (microversion.HEADER, microversion.header_value(
                       version or microversion.parse(
                           microversion.MIN_VERSION))),
                   ("vary", microversion.HEADER)]
        head = "".join(f"{name}: {value}\r\n" for name, value in headers)
        data = (f"HTTP/1.1 {response.status}\r\n{head}\r\n".encode(
            "latin-1") + response.body)
        try:
            gunicorn_util.write_nonblock(client, data)
        except Exception:
            self.log.debug("Failed to send error message.")


def _listeners(arbiter):
    return ", ".join(str(listener) for listener in arbiter.LISTENERS)


class _Arbiter(gunicorn_arbiter.Arbiter):
    """gunicorn's master, which tells the service manager when it starts
    to stop (every way it stops goes through stop())."""

    _stopping = False

    def stop(self, graceful=True):
        self._stopping = True
        self.app.notifier.stopping("stopping: finishing the requests in "
                                   "progress")
        super().stop(graceful)

    def reap_workers(self):
        # While it stops because one worker failed to boot, the master
        # reaps the others; a second boot failure must not escape halt()
        # (it would end the service with 1, not gunicorn's 3).
        while True:
            try:
                return super().reap_workers()
            except gunicorn_master_errors.HaltServer:
                if not self._stopping:
                    raise


def _worker_gone(arbiter, worker):
    """A worker's metrics files stop counting as live once it exits (its
    counters stay in the totals)."""
    if os.environ.get(metrics.MULTIPROC_VARIABLE):
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(worker.pid)


class Server(gunicorn_base.BaseApplication):
    """gunicorn with its settings from our options; the application is
    built in each worker, after the fork.

    SIGHUP (gunicorn's reload) reads the config files again, applies the
    options marked mutable (oslo.config), reopens the log files and
    replaces the workers gracefully; the new ones build their
    application from the new values.

    The service manager (``notifier``, placement.service_notify) hears
    READY=1 once every worker of the start has loaded the application,
    not when the master starts to listen (gunicorn's own notification,
    which the notifier's taking of NOTIFY_SOCKET silences): a request
    sent then is answered without waiting for a worker, and a worker
    that fails to load stops the master before systemd calls the start
    done. Each worker writes one byte to a pipe when it is ready
    (post_worker_init); a thread of the master counts them."""

    def __init__(self, conf, notifier=None):
        self.conf = conf
        self.notifier = notifier or service_notify.Notifier()
        self._ready_pipe = None
        super().__init__()

    def reload(self):
        LOG.info("gantt-placement-api reloading (SIGHUP): config files, "
                 "log files, workers")
        hangup.reload_config(self.conf)
        super().reload()

    def _when_ready(self, arbiter):
        """In the master, listening, before the workers start."""
        LOG.info("gantt-placement-api ready: listening on %s, pid=%d",
                 _listeners(arbiter), os.getpid())
        if not self.notifier.enabled:
            return
        read_end, self._ready_pipe = os.pipe()
        threading.Thread(target=self._count_workers,
                         args=(read_end, arbiter.num_workers,
                               _listeners(arbiter)),
                         name="ready-workers", daemon=True).start()

    def _count_workers(self, read_end, workers, listening):
        seen = 0
        while seen < workers:
            data = os.read(read_end, 64)
            if not data:
                return
            seen += len(data)
        self.notifier.ready(f"serving on {listening} with {workers} "
                            "workers")
        # Workers started again later write too: keep the pipe empty.
        while os.read(read_end, 64):
            pass

    def _worker_ready(self, worker):
        """In a worker, once it has loaded the application."""
        if self._ready_pipe is not None:
            os.write(self._ready_pipe, b".")

    def run(self):
        _Arbiter(self).run()

    def load_config(self):
        conf = self.conf
        settings = {
            "bind": bind_address(conf),
            "workers": _given(conf.cli_workers, conf.api.workers),
            "threads": _given(conf.cli_threads, conf.api.threads),
            "worker_class": JsonErrorWorker,
            "proc_name": "gantt-placement-api",
            "accesslog": None,
            "errorlog": "-",
            "loglevel": "warning",
            "keepalive": 5,
            "graceful_timeout": 10,
            # Said once the master listens and handles SIGTERM: what
            # start-up scripts (and the tests) can wait for.
            "when_ready": self._when_ready,
            "post_worker_init": self._worker_ready,
            "child_exit": _worker_gone,
        }
        for name, value in settings.items():
            self.cfg.set(name, value)

    def load(self):
        conf = self.conf
        # The schema was synced by the master; workers only connect.
        guru.enable(conf, "gantt-placement-api")
        store = store_mod.Store(conf)
        app = app_mod.make_app(conf, store=store, policy_mode=conf.cli_policy)
        # What is loaded now lives as long as the worker: keep it out of
        # the collector's passes. A large answer (the candidates of a
        # thousand providers) is tens of thousands of short-lived dicts
        # without cycles; with the default young-generation threshold
        # (700) the collector walks them over and over while they are
        # built, which doubled the time of such requests. Collections
        # still happen, less often.
        gc.collect()
        gc.freeze()
        gc.set_threshold(50_000, 20, 20)
        return app


def _bind_problem(address):
    """None when ``address`` (host:port) can be listened on, bound the way
    gunicorn binds (SO_REUSEADDR); else the exception to end with, so
    that a port in use or an address that is not this host's is one line
    rather than gunicorn's five retries and its traceback."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, int(port)))
        except socket.gaierror:
            return AddressNotHere(f"cannot listen on {address}: no such "
                                  "host name; choose --host or [api] "
                                  "bind_host")
        except OSError as exc:
            if exc.errno == errno.EADDRNOTAVAIL:
                return AddressNotHere(
                    f"cannot listen on {address}: address not available "
                    "on this host; choose --host or [api] bind_host")
            if exc.errno == errno.EADDRINUSE:
                return AddressInUse(
                    f"{address} is in use (another server listens "
                    "there): choose --port or [api] bind_port")
            return AddressInUse(f"cannot listen on {address}: "
                                f"{exc.strerror}")
    return None


def prepare_database(conf):
    """The schema brought up to date ([placement_database]
    sync_on_startup), or found current: a server whose every request
    would fail does not start."""
    schema_state.open_store(conf).dispose()


class AddressInUse(Exception):
    """The address to listen on is taken (or the OS refuses it)."""


class AddressNotHere(Exception):
    """The address to listen on is not one of this host's."""


def serve(conf):
    address = bind_address(conf)
    problem = _bind_problem(address)
    if problem is not None:
        raise problem
    prepare_database(conf)
    LOG.info("gantt-placement-api starting: %s; listening on %s, %d "
             "workers x %d threads", conf_mod.startup_summary(conf),
             address, _given(conf.cli_workers, conf.api.workers),
             _given(conf.cli_threads, conf.api.threads))
    notifier = service_notify.Notifier.from_environment()
    shared_metrics = _metrics_directory(conf)
    master = os.getpid()
    try:
        Server(conf, notifier).run()
    finally:
        # Workers leave through here too (gunicorn forks them inside
        # run()): only the master says the server stopped and cleans up.
        if os.getpid() == master:
            if shared_metrics:
                shutil.rmtree(shared_metrics, ignore_errors=True)
            LOG.info("gantt-placement-api stopped, pid=%d", master)
    return 0


def _metrics_directory(conf):
    """Where the workers write their metrics for one another (a new
    directory, removed at exit), unless the environment names one; None
    when metrics are off or named by the environment."""
    if not conf.api.metrics or os.environ.get(metrics.MULTIPROC_VARIABLE):
        return None
    path = tempfile.mkdtemp(prefix="gantt-api-metrics-")
    os.environ[metrics.MULTIPROC_VARIABLE] = path
    return path


def main(argv=None):
    return command_errors.main("gantt-placement-api", argv, build_conf,
                               serve, checks=(auth.check_conf,),
                               usage=(AddressNotHere,),
                               failures=(AddressInUse,
                                         schema_state.SchemaNotReady))


if __name__ == "__main__":
    sys.exit(main())
