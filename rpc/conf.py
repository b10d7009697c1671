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
import logging as std_logging
import os

import oslo_messaging
from oslo_config import cfg
from oslo_messaging import opts as messaging_opts

from placement import config_check
from rpc import options, rabbit_listener, recorder
from rpc.options import DEFAULT_OPTS, SCHEDULER_OPTS

IN_PROCESS_TRANSPORT_URL = "kombu+memory:////"
DEFAULT_CONTROL_EXCHANGE = "nova"
RABBIT_GROUP = "oslo_messaging_rabbit"


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
    recorder.register_opts(conf)
    for group, opts in _messaging_opt_lists():
        conf.register_opts(opts, group=group)
    conf.set_default("transport_url", IN_PROCESS_TRANSPORT_URL)
    conf.set_default("control_exchange", DEFAULT_CONTROL_EXCHANGE)


def list_opts():
    """gantt's own options (rpc/options.py)."""
    return options.list_opts()


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
    _prepare(conf)
    return oslo_messaging.get_rpc_transport(
        conf, url=transport_url(conf),
        allowed_remote_exmods=allowed_remote_exmods)


def get_server_transport(conf):
    """The transport a gantt-scheduler server listens on: the one
    get_transport gives, but on RabbitMQ (and the in-process broker,
    which is its driver too) with gantt's listener
    (rpc/rabbit_listener.py), which wakes less often between calls."""
    _prepare(conf)
    url = oslo_messaging.TransportURL.parse(conf, transport_url(conf))
    if not rabbit_listener.is_rabbit(url):
        return oslo_messaging.get_rpc_transport(conf, url=url)
    return rabbit_listener.transport(conf, url,
                                     conf.scheduler.listener_idle_wait)


def _prepare(conf):
    register_opts(conf)
    std_logging.getLogger("amqp").addFilter(_CLOSING_CHANNEL)
    if in_process(conf):
        # The in-process broker has no heartbeats: without this, every
        # connection warns that it cannot send them.
        for group, opts in messaging_opts.list_opts():
            if group == RABBIT_GROUP:
                conf.register_opts(opts, group=group)
        conf.set_default("heartbeat_timeout_threshold", 0,
                         group=RABBIT_GROUP)
        _quiet_missing_hostname()


class _NoHostnameFilter(std_logging.Filter):
    """Drops kombu's "No hostname was supplied" warning: the in-process
    broker has no host, and each of its connections would say so."""

    def filter(self, record):
        return not record.getMessage().startswith("No hostname was supplied")


_NO_HOSTNAME = _NoHostnameFilter()


class _ClosingChannelFilter(std_logging.Filter):
    """Drops py-amqp's "Received method (60, 30) during closing channel
    1. This method will be ignored": RabbitMQ cancels the consumers of
    the queues it deletes (the fanout queue, auto-deleted) while the
    service closes the channel at stop; nothing is lost, and every stop
    would warn of it."""

    def filter(self, record):
        message = record.getMessage()
        return not (message.startswith("Received method")
                    and "during closing channel" in message)


_CLOSING_CHANNEL = _ClosingChannelFilter()


def _quiet_missing_hostname():
    std_logging.getLogger("kombu.connection").addFilter(_NO_HOSTNAME)


def check_transport_name(conf):
    """A misspelt ``[DEFAULT] transport_url`` (transport_ulr = rabbit://...)
    would leave the in-process transport, which no other process can
    reach: refused (ConfigCheckError) rather than started."""
    try:
        if not in_process(conf):
            return
    except oslo_messaging.InvalidTransportURL:
        return  # said as such by the command's own check
    config_check.misspelt_shared_option(
        conf, "transport_url",
        f"the transport is the in-process one ({IN_PROCESS_TRANSPORT_URL}), "
        "which no other process can reach")


def worker_count(conf):
    """How many gantt-scheduler processes to run."""
    if in_process(conf):
        return 1
    return conf.scheduler.workers or os.cpu_count() or 1
