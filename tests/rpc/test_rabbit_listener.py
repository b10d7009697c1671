"""gantt-scheduler's RabbitMQ listener (rpc/rabbit_listener.py), on the
in-process broker and on a real RabbitMQ: how long it waits between
calls, and that a call arriving during a long wait is served at once.

The waits are read from the listener's own connection: each consume()
it makes is recorded with its timeout and whether a message ended it.
oslo.messaging's stock listener is measured the same way beside it."""

import threading
import time

import oslo_messaging
import pytest
from oslo_messaging._drivers import amqpdriver
from oslo_messaging._drivers import common as rpc_common
from oslo_messaging.rpc import server as om_rpc_server

from rpc import conf as rpc_conf
from rpc import rabbit_listener
from tests.rpc import helpers


class _Waits:
    """Spies on a listener connection's consume(): (timeout, whether a
    message ended the wait), in order."""

    def __init__(self, conn):
        self.seen = []
        self._consume = conn.consume
        conn.consume = self.consume

    def consume(self, timeout=None):
        try:
            self._consume(timeout=timeout)
        except rpc_common.Timeout:
            self.seen.append((timeout, False))
            raise
        else:
            self.seen.append((timeout, True))

    def after_last_message(self):
        """The timeouts of the empty waits since the last message."""
        last = max(i for i, (_, got) in enumerate(self.seen) if got)
        return [timeout for timeout, _ in self.seen[last + 1:]]


def _recording(listener_cls):
    """A listener class that records its waits in ``spies``."""
    class Recording(listener_cls):
        spies = []

        def __init__(self, driver, conn, *args):
            super().__init__(driver, conn, *args)
            self.spies.append(_Waits(conn))
    return Recording


class _SteadyDriver(rabbit_listener.SteadyRabbitDriver):
    listener_cls = _recording(rabbit_listener.SteadyRpcListener)


class _StockDriver(rabbit_listener.SteadyRabbitDriver):
    """oslo.messaging's listener class, built the way the steady driver
    builds its own (it takes no idle wait)."""

    class listener_cls(_recording(amqpdriver.RpcAMQPListener)):
        def __init__(self, driver, conn, idle_wait):
            super().__init__(driver, conn)


class _Ping:
    def ping(self, ctxt):
        return "pong"


def _serve(transport_url, driver_cls, idle_wait,
           server_cls=om_rpc_server.RPCServer):
    conf = helpers.messaging_conf(transport_url, helpers.unique_topic())
    rpc_conf.get_server_transport(conf).cleanup()  # registers its options
    if "oslo_messaging_rabbit" in conf:
        conf.set_override("amqp_auto_delete", True,
                          group="oslo_messaging_rabbit")
    url = oslo_messaging.TransportURL.parse(conf,
                                            rpc_conf.transport_url(conf))
    transport = oslo_messaging.transport.RPCTransport(driver_cls(
        conf, url, idle_wait, default_exchange=conf.control_exchange))
    target = oslo_messaging.Target(topic=conf.scheduler.topic,
                                   server="listener-test")
    server = oslo_messaging.get_rpc_server(transport, target, [_Ping()],
                                           server_cls=server_cls)
    driver_cls.listener_cls.spies.clear()
    server.start()
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic=conf.scheduler.topic),
        timeout=10)
    return transport, server, client


def _stop(transport, server):
    server.stop()
    server.wait()
    transport.cleanup()


@pytest.mark.parametrize("driver_cls, first_wait", [
    (_StockDriver, amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN),
    (_SteadyDriver, 0.1),
], ids=["stock", "steady"])
def test_waits_after_a_call(transport_url, driver_cls, first_wait):
    transport, server, client = _serve(transport_url, driver_cls, 0.1)
    try:
        assert client.call({}, "ping") == "pong"
        time.sleep(0.5)
        [spy] = driver_cls.listener_cls.spies
        waits = spy.after_last_message()
    finally:
        _stop(transport, server)
    # oslo.messaging's: 1 ms, doubled after each empty wait; the steady
    # listener's: the same doubling from its idle wait. In 0.5 s the
    # stock listener wakes about 9 times, the steady one 3 times.
    assert waits[0] == pytest.approx(first_wait)
    for before, after in zip(waits, waits[1:], strict=False):
        assert after == pytest.approx(before * 2)
    if driver_cls is _StockDriver:
        assert len(waits) >= 7
    else:
        assert len(waits) <= 3


def test_a_call_ends_a_long_wait_at_once(transport_url):
    transport, server, client = _serve(transport_url, _SteadyDriver, 1.0)
    try:
        assert client.call({}, "ping") == "pong"
        # The listener is now in a wait of 1 s; a call sent 0.1 s into
        # it is answered long before the wait would end.
        time.sleep(0.1)
        started = time.monotonic()
        assert client.call({}, "ping") == "pong"
        took = time.monotonic() - started
        [spy] = _SteadyDriver.listener_cls.spies
        # That call ended a wait of 1 s, not one that timed out.
        assert (1.0, True) in spy.seen
    finally:
        _stop(transport, server)
    # Had it waited for the wait to end, it would take 0.9 s or more.
    assert took < 0.85


def test_stopping_ends_a_long_wait(transport_url):
    transport, server, client = _serve(transport_url, _SteadyDriver, 1.0)
    assert client.call({}, "ping") == "pong"
    stopped = threading.Event()

    def stop():
        _stop(transport, server)
        stopped.set()
    threading.Thread(target=stop, daemon=True).start()
    # The wait is capped by the driver's poll timeout (1 s without
    # heartbeats), as oslo.messaging's own listener's.
    assert stopped.wait(5)


class _SeesStamps(om_rpc_server.RPCServer):
    """Records, per message, when the listener says it arrived and when
    a thread took it."""

    seen = []

    def _process_incoming(self, incoming):
        self.seen.append((incoming[0].received_at, time.monotonic()))
        return super()._process_incoming(incoming)


def test_messages_carry_when_they_arrived(transport_url):
    """Where a call's time in the service starts (rpc.call_times): each
    message the steady listener hands over says when it came off the
    connection, within the call's round trip and before a thread took
    it."""
    _SeesStamps.seen.clear()
    transport, server, client = _serve(transport_url, _SteadyDriver, 0.1,
                                       server_cls=_SeesStamps)
    try:
        sent = time.monotonic()
        assert client.call({}, "ping") == "pong"
        answered = time.monotonic()
    finally:
        _stop(transport, server)
    [(received, taken)] = _SeesStamps.seen
    assert sent <= received <= taken <= answered


def test_server_transport_uses_the_steady_listener(transport_url):
    conf = helpers.messaging_conf(transport_url, helpers.unique_topic())
    conf.set_override("listener_idle_wait", 0.25, group="scheduler")
    transport = rpc_conf.get_server_transport(conf)
    try:
        assert isinstance(transport._driver,
                          rabbit_listener.SteadyRabbitDriver)
        assert transport._driver.idle_wait == 0.25
    finally:
        transport.cleanup()


def test_other_drivers_keep_their_own_listener():
    """A transport URL that names another driver (oslo.messaging's fake
    one here) gets the transport get_transport gives, untouched."""
    conf = helpers.messaging_conf("fake://", helpers.unique_topic())
    transport = rpc_conf.get_server_transport(conf)
    try:
        assert not isinstance(transport._driver,
                              rabbit_listener.SteadyRabbitDriver)
        assert type(transport._driver).__name__ == "FakeDriver"
    finally:
        transport.cleanup()
