"""gantt-scheduler's own options, declared apart from the messaging
options (rpc/conf.py) so that listing them (oslo-config-generator, the
config file check every command runs) does not import oslo.messaging."""

import socket

from oslo_config import cfg

from rpc import recorder

DEFAULT_TOPIC = "scheduler"

DEFAULT_OPTS = [
    cfg.StrOpt(
        "host",
        default=socket.gethostname(),
        sample_default="<current_hostname>",
        help="Name of this scheduler service: its RPC server name, so "
             "that a caller can address one scheduler (topic.host) rather "
             "than any of them. Must be unique among the schedulers on one "
             "broker and exchange."),
    cfg.IntOpt(
        "graceful_shutdown_timeout",
        default=60,
        min=0,
        help="Seconds gantt-scheduler waits, after SIGTERM or SIGINT, for "
             "the calls it is handling to finish before it exits anyway. "
             "0 waits as long as they take."),
]

SCHEDULER_OPTS = [
    cfg.PortOpt(
        "metrics_bind_port",
        default=0,
        help="Port of gantt-scheduler's Prometheus metrics endpoint "
             "(GET /metrics, served by the parent process for every "
             "worker). 0 turns it off."),
    cfg.FloatOpt(
        "broker_start_timeout",
        default=30.0,
        min=0,
        help="Seconds gantt-scheduler and gantt-compute-agent wait at "
             "start for a broker they cannot reach (each attempt logged) "
             "before they exit with status 1. A broker that refuses the "
             "login is not waited for (status 2). Once started, they "
             "reconnect to a broker that goes away without limit "
             "(oslo.messaging)."),
    cfg.HostAddressOpt(
        "metrics_bind_host",
        default="127.0.0.1",
        help="Address of the metrics endpoint (metrics_bind_port)."),
    cfg.IntOpt(
        "workers",
        min=1,
        sample_default="<number of CPUs>",
        help="gantt-scheduler processes. Each has its own broker "
             "connection, database pool and in-memory host state, and "
             "takes its share of the calls from the common queue; every "
             "one receives the fanout casts. Unset means the number of "
             "CPUs. With the in-process transport (kombu+memory) there is "
             "always one."),
    cfg.StrOpt(
        "topic",
        default=DEFAULT_TOPIC,
        help="RPC topic the scheduler listens on (Nova's conductors call "
             "'scheduler'). A different topic keeps separate scheduler "
             "deployments, or test runs, on one broker apart: the topic "
             "names the queues, whatever the exchange."),
    cfg.BoolOpt(
        "log_worker_stats",
        default=False,
        help="Log, as each gantt-scheduler worker stops, one INFO line "
             "'gantt-scheduler stats: pid=N {...}' with the JSON of what it "
             "did and what that cost (decisions, claims, CPU by phase, "
             "call times, collector pauses), which the benchmarks read. "
             "Off, that line is logged at DEBUG only, and the stop is the "
             "short 'stopped' line."),
    cfg.FloatOpt(
        "listener_idle_wait",
        default=0.05,
        min=0.001,
        max=1.0,
        help="Seconds gantt-scheduler's RabbitMQ listener first waits for "
             "the next call after each call, before it wakes with nothing "
             "to do (the wait then doubles while no call comes). A call "
             "that arrives ends the wait at once, so this does not delay "
             "calls; it only sets how often an idle listener wakes. "
             "oslo.messaging's own listener starts at 0.001, which costs "
             "CPU between calls that come a few milliseconds apart; 0.001 "
             "here behaves as it does."),
]


def list_opts():
    """gantt's own RPC options, for oslo-config-generator (oslo.messaging's
    come from its namespace, with our defaults set by
    rpc.conf.set_sample_defaults)."""
    return [("DEFAULT", DEFAULT_OPTS), ("scheduler", SCHEDULER_OPTS),
            *recorder.list_opts()]
