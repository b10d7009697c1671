"""gantt-scheduler's RabbitMQ listener: oslo.messaging's own, with fewer
idle wake-ups after each call.

oslo.messaging's AMQP listener waits for the next message with a timeout
that starts at 1 ms after every message and doubles while nothing comes.
Each timeout wakes the listener to run the acknowledgements and requeues
that dispatch threads left for it (kombu is not thread-safe). An RPC
listener never gets any: it acknowledges each call in the consumer
callback, before the call is dispatched, and its messages' acknowledge()
and requeue() do nothing. For a scheduler those wake-ups are pure cost (a
socket poll, a timeout raised through kombu's connection wrappers, a
lock), paid between every two calls once calls come more than a
millisecond apart.

This listener starts the wait at ``[scheduler] listener_idle_wait``
instead; the doubling, the cap and everything else are oslo.messaging's.
A message that arrives ends the wait at once whatever its timeout, so
only the empty wake-ups become rarer. Stopping the server takes effect
when the current wait ends, as with oslo.messaging's own listener: up to
``listener_idle_wait`` after a call instead of 1 ms (an idle listener
of either kind waits up to a second). The wire is untouched: the same
queues, consumers, acknowledgements and replies.

It is a subclass, not a patch: the driver's listen() is oslo.messaging's
with this listener class in it (upstream has no option for the
interval). The RPCTransport around it is the one
oslo_messaging.get_rpc_transport builds.
"""

import time

import oslo_messaging
from oslo_messaging._drivers import amqpdriver, base, impl_rabbit
from oslo_messaging._drivers import common as rpc_common

# The drivers, by the scheme of a transport URL ("kombu+memory" names
# kombu), that this listener replaces the listener of.
RABBIT_DRIVER_NAMES = ("rabbit", "kombu")


class StampedIncomingMessage(amqpdriver.AMQPIncomingMessage):
    """oslo.messaging's incoming message, with the time the listener
    took it off the connection (``received_at``, time.monotonic()): where
    a call's time in the service starts (rpc.call_times)."""

    def __init__(self, *args, **kwargs):
        self.received_at = time.monotonic()
        super().__init__(*args, **kwargs)


class SteadyRpcListener(amqpdriver.RpcAMQPListener):
    """oslo.messaging's RPC listener whose wait for the next message never
    starts below ``idle_wait`` seconds. oslo.messaging's poll() sets
    ``_current_timeout`` (1 ms after a message, doubled after each empty
    wait); this class keeps it at ``idle_wait`` or above. Its messages
    carry the time they arrived (:class:`StampedIncomingMessage`)."""

    message_cls = StampedIncomingMessage

    def __init__(self, driver, conn, idle_wait):
        # Set first: the parent's __init__ sets the timeout.
        self._idle_wait = idle_wait
        super().__init__(driver, conn)

    @property
    def _current_timeout(self):
        return self._wait_timeout

    @_current_timeout.setter
    def _current_timeout(self, seconds):
        self._wait_timeout = max(seconds, self._idle_wait)


class SteadyRabbitDriver(impl_rabbit.RabbitDriver):
    """oslo.messaging's RabbitMQ driver whose RPC listeners are
    :class:`SteadyRpcListener`."""

    listener_cls = SteadyRpcListener

    def __init__(self, conf, url, idle_wait, **kwargs):
        super().__init__(conf, url, **kwargs)
        self.idle_wait = idle_wait

    def listen(self, target, batch_size, batch_timeout):
        # AMQPDriverBase.listen with the listener class changed: the same
        # three consumers (topic, topic.server, fanout).
        conn = self._get_connection(rpc_common.PURPOSE_LISTEN)
        listener = self.listener_cls(self, conn, self.idle_wait)
        exchange = self._get_exchange(target)
        conn.declare_topic_consumer(exchange_name=exchange,
                                    topic=target.topic, callback=listener)
        conn.declare_topic_consumer(exchange_name=exchange,
                                    topic=f"{target.topic}.{target.server}",
                                    callback=listener)
        conn.declare_fanout_consumer(target.topic, listener)
        return base.PollStyleListenerAdapter(listener, batch_size,
                                             batch_timeout)


def is_rabbit(url):
    """Whether a parsed TransportURL names oslo.messaging's RabbitMQ
    driver (as get_rpc_transport picks it: the scheme before any '+')."""
    return url.transport.split("+")[0] in RABBIT_DRIVER_NAMES


def transport(conf, url, idle_wait, allowed_remote_exmods=None):
    """An RPC transport on ``url`` (a parsed TransportURL naming the
    RabbitMQ driver) whose listeners are :class:`SteadyRpcListener`."""
    driver = SteadyRabbitDriver(
        conf, url, idle_wait, default_exchange=conf.control_exchange,
        allowed_remote_exmods=allowed_remote_exmods or [])
    return oslo_messaging.transport.RPCTransport(driver)
