"""Options of the RPC service (gantt-scheduler) and its clients.

gantt's own options are declared here; the messaging options are
oslo.messaging's, registered on the caller's ConfigOpts with two defaults
of our own (set on that ConfigOpts only, never on oslo.messaging's
globals):

- ``[DEFAULT] transport_url`` = ``kombu+memory:////``, the embedded
  in-process broker: a scheduler and its clients in one process work with
  no configuration at all. A gantt-scheduler service must name a real
  broker (``rabbit://user:pass@host:5672/``), or nobody can reach it.
- ``[DEFAULT] control_exchange`` = ``nova``: the exchange Nova's conductors
  send scheduler calls to, so gantt-scheduler is a drop-in replacement.
"""

import importlib
import os
import socket

import oslo_messaging
from oslo_config import cfg
from oslo_messaging import opts as messaging_opts

IN_PROCESS_TRANSPORT_URL = "kombu+memory:////"
DEFAULT_CONTROL_EXCHANGE = "nova"
DEFAULT_TOPIC = "scheduler"
RABBIT_GROUP = "oslo_messaging_rabbit"

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
]


def _messaging_opt_lists():
    """(group, opts) that oslo.messaging reads from the transport's
    ConfigOpts but registers only on its global cfg.CONF (metrics and,
    since 18.x, tracing): a transport on a private ConfigOpts fails
    without them, after it has acknowledged the message."""
    found = [(None, oslo_messaging.transport._transport_opts)]
    for module, name in (("oslo_messaging._metrics.client",
                          "oslo_messaging_metrics"),
                         ("oslo_messaging._tracing.client",
                          "oslo_messaging_tracing")):
        try:
            opts = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue  # an oslo.messaging without the feature
        found.append((name, opts))
    return found


def register_opts(conf):
    """Register gantt's RPC options and the messaging options on ``conf``
    (a private ConfigOpts); registering twice is harmless."""
    conf.register_opts(DEFAULT_OPTS)
    conf.register_opts(SCHEDULER_OPTS, group="scheduler")
    for group, opts in _messaging_opt_lists():
        conf.register_opts(opts, group=group)
    conf.set_default("transport_url", IN_PROCESS_TRANSPORT_URL)
    conf.set_default("control_exchange", DEFAULT_CONTROL_EXCHANGE)


def list_opts():
    """gantt's own options, for oslo-config-generator (oslo.messaging's
    come from its namespace, with our defaults set by
    :func:`set_sample_defaults`)."""
    return [("DEFAULT", DEFAULT_OPTS), ("scheduler", SCHEDULER_OPTS)]


def set_sample_defaults():
    """oslo.config.opts.defaults hook: show gantt's transport defaults in
    the generated sample. Changes oslo.messaging's module defaults, which
    only the generator process may do."""
    oslo_messaging.set_transport_defaults(DEFAULT_CONTROL_EXCHANGE)
    cfg.set_defaults(oslo_messaging.transport._transport_opts,
                     transport_url=IN_PROCESS_TRANSPORT_URL)


def transport_url(conf):
    return conf.transport_url or IN_PROCESS_TRANSPORT_URL


def in_process(conf):
    """Whether the transport is the embedded one (reachable only from
    this process)."""
    return oslo_messaging.TransportURL.parse(
        conf, transport_url(conf)).transport.endswith("memory")


def get_transport(conf, allowed_remote_exmods=None):
    """The RPC transport ``conf`` names."""
    register_opts(conf)
    if in_process(conf):
        # The in-process broker has no heartbeats: without this, every
        # connection warns that it cannot send them.
        for group, opts in messaging_opts.list_opts():
            if group == RABBIT_GROUP:
                conf.register_opts(opts, group=group)
        conf.set_default("heartbeat_timeout_threshold", 0,
                         group=RABBIT_GROUP)
    return oslo_messaging.get_rpc_transport(
        conf, url=transport_url(conf),
        allowed_remote_exmods=allowed_remote_exmods)


def worker_count(conf):
    """How many gantt-scheduler processes to run."""
    if in_process(conf):
        return 1
    return conf.scheduler.workers or os.cpu_count() or 1
