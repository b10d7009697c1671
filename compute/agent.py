"""gantt-compute-agent: a compute node's reports, for clouds that do not
run Nova (Nova's own resource tracker does this part for Nova's).

    gantt-compute-agent --config-file F [--placement-url URL]
                        [--token T] [--root PATH] [--once]

At start and every ``[compute] report_interval`` seconds it discovers the
machine (``/proc`` and ``/sys`` under ``--root``; ``[compute] host_file``
stands in for discovery or adds to it), reports the provider tree to
placement (compute.report_client: no write when nothing changed; a
change of shape with allocations on it, such as a NUMA split, becomes a
reshape that moves them) and the host record with a heartbeat
(update_host_info): to gantt-scheduler when ``[DEFAULT] transport_url``
names its broker, else, on the embedded store, into that database
directly (the schedulers reading it learn the node). Placement is the
embedded store of ``[placement_database]``, or gantt's (or OpenStack
Placement's) REST API at ``--placement-url``. SIGTERM or SIGINT stops
it after the report in progress; ``--once`` reports once and exits.

Exit status as every gantt command: 0, 2 for config or input that cannot
be used, 1 for other failures (--debug prints the traceback).
"""

import signal
import sys
import time

from oslo_config import cfg
from oslo_log import log as logging

from compute import conf as compute_conf
from compute import host_report, host_tree
from compute import placement_port as port_mod
from compute.discovery import (
    CpuSetError,
    DiscoveryConfigError,
    HostFileError,
    describe_host,
)
from compute.report_client import ReportClient, ReportError
from placement import (
    command_errors,
    config_check,
    direct,
    guru,
    service_notify,
    signal_event,
)
from placement import conf as placement_conf
from placement import hangup as hangup_mod
from placement.db import schema_state
from rpc import broker_check
from rpc import client as client_mod
from rpc import conf as rpc_conf
from rpc import errors as rpc_errors
from rpc import server as rpc_server

LOG = logging.getLogger(__name__)
PROG = "gantt-compute-agent"
# The request context of the agent's calls to the scheduler.
CONTEXT = {"user_id": PROG, "project_id": PROG, "is_admin": True,
           "roles": ["admin"], "read_deleted": "no"}

CLI_OPTS = [
    cfg.StrOpt("placement-url", dest="placement_url", metavar="URL",
               help="Placement's REST API (gantt's or OpenStack "
                    "Placement's); unset: the embedded store of "
                    "[placement_database]."),
    cfg.StrOpt("token", default="admin", metavar="T",
               help="X-Auth-Token for --placement-url (default: admin, "
                    "gantt's noauth2)."),
    cfg.StrOpt("root", default="/", metavar="PATH",
               help="Where /proc and /sys are (a copy, for tests)."),
    cfg.BoolOpt("once", default=False,
                help="Report once and exit."),
]

USAGE_ERRORS = (CpuSetError, DiscoveryConfigError, HostFileError,
                compute_conf.ComputeConfigError)
# A report placement or the scheduler refused, or a scheduler that did
# not answer: the next turn tries again.
REPORT_FAILURES = (ReportError, client_mod.InvalidHostInfo,
                   rpc_errors.InvalidRequest,
                   client_mod.RemoteSchedulerError,
                   client_mod.SchedulerTimeout,
                   client_mod.SchedulerUnavailable)


class Interrupted(BaseException):
    """SIGTERM or SIGINT while a report to the scheduler waits for a
    broker that went away (oslo.messaging reconnects without limit):
    raised by the signal handler to end that wait, out of reach of the
    report's own error handling."""


class Agent:
    """One compute node's reports: the tree to placement, the host
    record to the scheduler (when ``scheduler`` is given)."""

    def __init__(self, conf, port, scheduler=None, root="/"):
        self.conf = conf
        self.config = compute_conf.discovery_config(conf)
        self.client = ReportClient(port)
        self.scheduler = scheduler
        self.root = root
        # True while a report's call to the scheduler is in flight.
        self.calling_scheduler = False

    def report(self):
        """Discover, report; the root provider's uuid."""
        host = describe_host(self.root, self.config,
                             host_file=self.conf.compute.host_file)
        tree = host_tree.provider_tree(host, self.config)
        self.client.update_from_provider_tree(tree)
        root_uuid = tree.roots()[0]
        if self.scheduler is not None:
            report = host_report.host_report(host, self.config)
            self.calling_scheduler = True
            try:
                self.scheduler.update_host_info(
                    CONTEXT, host.hostname, nodename=host.hostname,
                    compute_node_uuid=root_uuid, report=report,
                    heartbeat=True)
            finally:
                self.calling_scheduler = False
        return host.hostname, root_uuid

    def run(self, stop, hangup=None, notifier=None):
        """Report now and every report_interval until ``stop`` is set;
        a failed report is logged and tried again at the next turn.
        ``hangup``: a placement.hangup.Hangup, asked between two waits.

        ``notifier`` (placement.service_notify) hears READY=1 after the
        first turn, whatever came of it (a placement service that is
        down must not keep the agent from starting: it reports again at
        the next turn), and STATUS= after each."""
        notifier = notifier or service_notify.Notifier()
        try:
            self._run(stop, hangup, notifier)
        except Interrupted:
            LOG.warning("%s: stopped while a report to the scheduler "
                        "waited for the broker", PROG)

    def _run(self, stop, hangup, notifier):
        first = True
        while not stop.is_set():
            interval = self.conf.compute.report_interval
            try:
                hostname, root = self.report()
                LOG.debug("reported %s (root provider %s)", hostname, root)
                status = f"reported {hostname} (root provider {root})"
            except (*REPORT_FAILURES, OSError) as exc:
                LOG.error("%s: report failed: %s", PROG, exc)
                status = f"report failed: {exc}"
            except Exception as exc:  # noqa: BLE001 - keep reporting
                if command_errors.database_problem(exc) is None:
                    raise
                LOG.error("%s: report failed: %s", PROG, exc)
                status = f"report failed: {exc}"
            status += f"; next in {interval} s"
            if first:
                notifier.ready(status)
                first = False
            else:
                notifier.status(status)
            # Read each turn: SIGHUP may have changed it (mutable).
            deadline = time.monotonic() + interval
            while not stop.is_set() and time.monotonic() < deadline:
                stop.wait(min(1.0, deadline - time.monotonic()))
                if hangup is not None:
                    hangup.reload_if_asked()


def build_conf(argv):
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    compute_conf.register_opts(conf)
    rpc_conf.register_opts(conf)
    logging.register_options(conf)
    logging.set_defaults(default_log_levels=(
        logging.get_default_log_levels() + ["alembic=WARN"]))
    guru.register_opts(conf)
    conf.register_cli_opts(CLI_OPTS)
    config_check.register(conf)
    conf(argv, project="gantt", prog=PROG,
         version=f"{PROG} {placement_conf.version()}")
    return conf


def _port(conf):
    if conf.placement_url:
        return port_mod.HttpPort(conf.placement_url, token=conf.token), None
    # A database without gantt's schema (or an older one) is refused
    # here, in one line, rather than failing every report.
    placement = direct.PlacementDirect(schema_state.open_store(conf))
    return port_mod.DirectPort(placement), placement


class StoreHostInfo:
    """The host record written straight into the embedded database, as
    gantt-scheduler's update_host_info would write it (the same checks):
    for an agent on the embedded store with no broker, so that the
    schedulers reading that database (gantt-manage schedule, a
    gantt-scheduler on it) learn the node."""

    def __init__(self, store):
        self._endpoint = rpc_server.HostInfoEndpoint(store)

    def update_host_info(self, context, host, **kwargs):
        return self._endpoint.update_host_info(context, host, **kwargs)

    def close(self):
        pass  # the store is the placement port's, closed with it


def _check_broker(conf):
    """Before anything is opened: a login or virtual host the broker
    refuses is the operator's to fix (BrokerRefused, one line and exit
    status 2), and a broker that cannot be reached is waited for
    ``[scheduler] broker_start_timeout`` seconds, each try logged, then
    one line and exit status 1 (BrokerUnreachable), as gantt-scheduler
    does: the first report's call would otherwise wait in
    oslo.messaging's reconnection loop for ever, deaf to SIGTERM and
    never ready."""
    if rpc_conf.in_process(conf):
        return
    broker_check.reach(conf, conf.scheduler.broker_start_timeout)


def _scheduler(conf, placement):
    if not rpc_conf.in_process(conf):
        return client_mod.SchedulerClient(conf, timeout=30)
    if placement is not None:
        return StoreHostInfo(placement.store)
    LOG.warning("[DEFAULT] transport_url is the in-process transport: "
                "no scheduler can hear this agent, only placement "
                "gets its reports. Set it to gantt-scheduler's broker.")
    return None


def _reload(conf):
    """SIGHUP (placement.hangup): the options marked mutable change
    ([compute] report_interval, [DEFAULT] debug), the log reopened."""
    LOG.info("%s reloading (SIGHUP): config files and log files", PROG)
    hangup_mod.reload_config(conf)


def _install_signals(stop, hangup, notifier, agent):
    def handler(signum, frame):
        stop.set()
        notifier.stopping("stopping: finishing the report in progress")
        if agent.calling_scheduler:
            # It may wait for the broker for ever: end the wait.
            raise Interrupted
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, handler)
    hangup.install()
    # An Interrupted raised inside a weakref callback is lost: again.
    signal_event.on_swallowed(
        Interrupted, lambda: signal_event.send_later(signal.SIGTERM))


def serve(conf):
    notifier = service_notify.Notifier.from_environment()
    # Config errors first, before anything is opened.
    compute_conf.discovery_config(conf)
    _check_broker(conf)
    port, placement = _port(conf)
    scheduler = _scheduler(conf, placement)
    agent = Agent(conf, port, scheduler, root=conf.root)
    LOG.info("%s starting: %s; placement %s, report every %d s", PROG,
             placement_conf.startup_summary(conf),
             conf.placement_url or "embedded",
             conf.compute.report_interval)
    try:
        if conf.once:
            hostname, root = agent.report()
            print(f"reported {hostname}: root provider {root}")
            return 0
        guru.enable(conf, PROG)
        # Set by the SIGTERM handler: an event that takes no lock.
        stop = signal_event.SignalEvent()
        hangup = hangup_mod.Hangup(lambda: _reload(conf))
        _install_signals(stop, hangup, notifier, agent)
        agent.run(stop, hangup, notifier)
        return 0
    finally:
        if scheduler is not None:
            scheduler.close()
        if placement is not None:
            placement.close()
        LOG.info("%s stopped", PROG)


def main(argv=None):
    return command_errors.main(
        PROG, argv, build_conf, serve,
        usage=(*USAGE_ERRORS, broker_check.BrokerRefused),
        failures=(*REPORT_FAILURES, schema_state.SchemaNotReady,
                  broker_check.BrokerUnreachable),
        checks=(broker_check.check_transport,
                rpc_conf.check_transport_name))


if __name__ == "__main__":
    sys.exit(main())
