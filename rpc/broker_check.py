"""What gantt-scheduler checks of its transport before any worker starts:
that oslo.messaging has the driver the URL names, and on RabbitMQ that
one of the URL's brokers answers and accepts the login.

oslo.messaging itself would retry a refused login, or a broker that
does not answer, forever and from every worker; a misstep in the URL
then shows as workers failing over and over. This check makes it one
line: a login or virtual host the broker refuses is the operator's to
fix (BrokerRefused, status 2); a broker that cannot be reached is waited
for, each attempt logged, up to a time limit (BrokerUnreachable, 1).
"""

import logging
import time

import amqp.exceptions
import kombu
import oslo_messaging
from oslo_config import cfg
from oslo_messaging import opts as messaging_opts

from rpc import conf as rpc_conf
from rpc import rabbit_listener
from scheduler import errors

LOG = logging.getLogger(__name__)

# Seconds between two attempts, and for one connection to open.
RETRY_INTERVAL = 2.0
CONNECT_TIMEOUT = 5.0


class BrokerRefused(errors.ConfigError):
    """The broker answered and refused the login or the virtual host:
    the URL's to fix (a configuration error to every command)."""


class BrokerUnreachable(Exception):
    """No broker of the URL answered in time."""


def check_transport(conf):
    """A transport URL oslo.messaging can use, with a driver that is
    installed, or cfg.Error (a config check of gantt-scheduler and
    gantt-compute-agent)."""
    try:
        url = oslo_messaging.TransportURL.parse(
            conf, rpc_conf.transport_url(conf))
    except oslo_messaging.InvalidTransportURL as exc:
        raise cfg.Error(f"[DEFAULT] transport_url: {exc}") from None
    check_driver(conf, url)


def check_driver(conf, url):
    """cfg.Error unless oslo.messaging has the driver ``url`` names."""
    # stevedore's own warning would be a second line saying less.
    loader_log = logging.getLogger("stevedore.named")
    level = loader_log.level
    loader_log.setLevel(logging.ERROR)
    try:
        transport = oslo_messaging.get_rpc_transport(conf, url=url)
    except oslo_messaging.DriverLoadFailure:
        known = ", ".join(sorted(_drivers()))
        raise cfg.Error(
            f"[DEFAULT] transport_url: no transport driver "
            f"{url.transport!r} (installed: {known})") from None
    finally:
        loader_log.setLevel(level)
    transport.cleanup()


def _drivers():
    from importlib import metadata
    return {entry.name for entry in
            metadata.entry_points(group="oslo.messaging.drivers")}


def reach(conf, timeout):
    """Return once a RabbitMQ broker of the transport URL accepts the
    login; nothing to check on other transports."""
    deadline = time.monotonic() + timeout
    while True:
        problems = unreachable(conf)
        if not problems:
            return
        if time.monotonic() >= deadline:
            raise BrokerUnreachable(
                f"cannot reach the broker of [DEFAULT] transport_url after "
                f"{timeout:g} s ([scheduler] broker_start_timeout): "
                f"{'; '.join(problems)}")
        LOG.warning("Cannot reach the broker (%s); trying again in %g s",
                    "; ".join(problems), RETRY_INTERVAL)
        time.sleep(RETRY_INTERVAL)


def unreachable(conf):
    """One try of every RabbitMQ host of the transport URL: what went
    wrong with each ("host:port: reason"), or [] when one accepts the
    login or the transport is not RabbitMQ. BrokerRefused when a broker
    answers no."""
    url = oslo_messaging.TransportURL.parse(conf, rpc_conf.transport_url(conf))
    if not rabbit_listener.is_rabbit(url) or url.transport.endswith("memory"):
        return []
    problems = []
    for host in url.hosts or [None]:
        problem = _try(conf, url, host)
        if problem is None:
            return []
        problems.append(problem)
    return problems


def _try(conf, url, host):
    """None when ``host`` accepts the login; else what went wrong.
    BrokerRefused when it answered no."""
    hostname = getattr(host, "hostname", None) or "localhost"
    port = getattr(host, "port", None) or 5672
    user = getattr(host, "username", None) or "guest"
    where = f"{hostname}:{port}"
    connection = kombu.Connection(
        hostname=hostname, port=port, userid=user,
        password=getattr(host, "password", None) or "guest",
        virtual_host=url.virtual_host or "/",
        ssl=bool(_rabbit_options(conf).ssl),
        connect_timeout=CONNECT_TIMEOUT, transport="pyamqp")
    try:
        connection.connect()
    except amqp.exceptions.AccessRefused:
        raise BrokerRefused(
            f"the broker at {where} refused the login of user {user!r}: "
            f"check the user and password in [DEFAULT] "
            f"transport_url") from None
    except amqp.exceptions.NotAllowed as exc:
        raise BrokerRefused(
            f"the broker at {where} refused virtual host "
            f"{url.virtual_host or '/'!r} for user {user!r} ({exc.reply_text})"
            f": check [DEFAULT] transport_url") from None
    except (OSError, amqp.exceptions.AMQPError) as exc:
        return f"{where}: {_reason(exc)}"
    finally:
        connection.release()
    return None


def _rabbit_options(conf):
    """[oslo_messaging_rabbit], registered first: a command that makes no
    transport (gantt-manage) has not had oslo.messaging register it."""
    for group, opts in messaging_opts.list_opts():
        if group == rpc_conf.RABBIT_GROUP:
            conf.register_opts(opts, group=group)
    return conf.oslo_messaging_rabbit


def _reason(exc):
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
