"""rpc.call_monitor: call-monitor heartbeats from one thread per server
instead of oslo.messaging's thread per call. A call longer than its
caller's call monitor timeout is kept alive by them, on the in-process
broker and on a real RabbitMQ; no call starts a thread of its own; a
call never replies while its heartbeat is being sent."""

import threading
import time

import oslo_messaging
import pytest
from oslo_messaging.rpc import dispatcher as om_dispatcher

from rpc import call_monitor
from rpc import conf as rpc_conf
from rpc import server as server_mod
from tests.rpc import helpers


class _Endpoint:
    def __init__(self):
        self.watchdogs = []

    def slow(self, ctxt, seconds):
        # The threads running oslo.messaging's per-call watchdog now.
        self.watchdogs.append([
            t for t in threading.enumerate()
            if getattr(getattr(t, "_target", None), "__name__", "")
            == "_watchdog"])
        time.sleep(seconds)
        return "done"


def _serve(transport_url, dispatcher_of):
    """A started OrderedCastsServer whose dispatcher is
    ``dispatcher_of(endpoints)``, and a client of it with a call monitor
    timeout of 2 s (a heartbeat wanted every second)."""
    conf = helpers.messaging_conf(transport_url, helpers.unique_topic())
    transport = rpc_conf.get_server_transport(conf)
    if "oslo_messaging_rabbit" in conf:
        conf.set_override("amqp_auto_delete", True,
                          group="oslo_messaging_rabbit")
    endpoint = _Endpoint()
    dispatcher = dispatcher_of([endpoint])
    server = server_mod.OrderedCastsServer(
        transport, server_mod.target(conf), dispatcher)
    server.start()
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic=conf.scheduler.topic),
        timeout=20, call_monitor_timeout=2)
    return transport, server, client, endpoint


def _stop(transport, server):
    server.stop()
    server.wait()
    transport.cleanup()


def _monitored(tick=call_monitor.TICK_S):
    return lambda endpoints: call_monitor.MonitoredDispatcher(
        endpoints, oslo_messaging.NoOpSerializer(),
        monitor=call_monitor.CallMonitor(tick=tick))


def test_heartbeats_keep_a_long_call_alive(transport_url):
    transport, server, client, endpoint = _serve(transport_url, _monitored())
    try:
        # Three times the heartbeat interval, past the 2 s timeout.
        assert client.call({}, "slow", seconds=3.5) == "done"
        # And a short call, with no heartbeat due.
        assert client.call({}, "slow", seconds=0) == "done"
        monitor_thread = server.dispatcher.monitor._thread
    finally:
        _stop(transport, server)
    # Neither call started a thread of its own.
    assert endpoint.watchdogs == [[], []]
    # The server's shutdown stopped the monitor's thread.
    assert monitor_thread.name == "gantt-call-monitor"
    assert not monitor_thread.is_alive()


def test_without_heartbeats_the_call_times_out(transport_url):
    # The check above could fail: a monitor that never beats in time
    # leaves the caller to give up at its call monitor timeout.
    transport, server, client, _ = _serve(transport_url, _monitored(tick=60))
    try:
        with pytest.raises(oslo_messaging.MessagingTimeout):
            client.call({}, "slow", seconds=3.5)
    finally:
        _stop(transport, server)


def test_oslo_messagings_dispatcher_starts_a_thread_per_call():
    # What the watchdog check above sees with the stock dispatcher.
    transport, server, client, endpoint = _serve(
        None, lambda endpoints: om_dispatcher.RPCDispatcher(
            endpoints, oslo_messaging.NoOpSerializer()))
    try:
        assert client.call({}, "slow", seconds=0) == "done"
    finally:
        _stop(transport, server)
    [running] = endpoint.watchdogs
    assert len(running) == 1


class _Incoming:
    """A message's heartbeat(), counted; ``block`` holds it."""

    def __init__(self, fail=False):
        self.msg_id = "m"
        self.beats = 0
        self.fail = fail
        self.sending = threading.Event()
        self.block = threading.Event()
        self.block.set()

    def heartbeat(self):
        self.sending.set()
        assert self.block.wait(10)
        self.beats += 1
        if self.fail:
            raise oslo_messaging.MessageDeliveryFailure("queue gone")


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_each_call_beats_every_half_timeout_until_it_ends():
    clock = _Clock()
    monitor = call_monitor.CallMonitor(clock=clock)
    short, long_ = _Incoming(), _Incoming()
    calls = [monitor.start(short, 60), monitor.start(long_, 10)]
    for now in (4.9, 5.0, 9.9, 10.0, 15.0):
        clock.now = now
        monitor.beat()
    assert (short.beats, long_.beats) == (0, 3)
    monitor.end(calls[1])
    clock.now = 30.0
    monitor.beat()
    assert (short.beats, long_.beats) == (1, 3)
    assert monitor.watched == 1
    monitor.end(calls[0])
    assert monitor.watched == 0
    monitor.close()


def test_a_failed_heartbeat_stops_that_calls_alone(caplog):
    clock = _Clock()
    monitor = call_monitor.CallMonitor(clock=clock)
    gone, alive = _Incoming(fail=True), _Incoming()
    calls = [monitor.start(gone, 4), monitor.start(alive, 4)]
    for now in (2.0, 4.0):
        clock.now = now
        monitor.beat()
    assert (gone.beats, alive.beats) == (1, 2)
    assert "no more for it" in caplog.text
    for call in calls:
        monitor.end(call)
    monitor.close()


def test_a_timeout_oslo_messaging_would_refuse_gets_no_heartbeats(caplog):
    monitor = call_monitor.CallMonitor(clock=_Clock())
    for timeout in (1, "soon", 0.5):
        assert monitor.start(_Incoming(), timeout) is None
    assert monitor.watched == 0
    assert "invalid timeout value of 'soon'" in caplog.text


def test_a_call_ends_only_after_the_heartbeat_being_sent():
    clock = _Clock()
    monitor = call_monitor.CallMonitor(clock=clock)
    incoming = _Incoming()
    incoming.block.clear()
    call = monitor.start(incoming, 2)
    clock.now = 1.0
    beating = threading.Thread(target=monitor.beat)
    beating.start()
    assert incoming.sending.wait(10)
    ended = threading.Event()
    ending = threading.Thread(target=lambda: (monitor.end(call),
                                              ended.set()))
    ending.start()
    # The call's end (then its reply) waits for the heartbeat.
    assert not ended.wait(0.2)
    incoming.block.set()
    assert ended.wait(10)
    beating.join(10)
    ending.join(10)
    assert incoming.beats == 1
    monitor.close()


def test_a_closed_monitor_beats_again_for_a_later_call():
    # A server stopped and started again keeps its dispatcher.
    monitor = call_monitor.CallMonitor(tick=0.01)
    incoming = _Incoming()
    monitor.end(monitor.start(incoming, 2))
    first = monitor._thread
    monitor.close()
    assert not first.is_alive()
    later = _Incoming()
    call = monitor.start(later, 2)
    call.due = 0  # due at the next tick
    helpers.wait_for(lambda: later.beats >= 1, what="a heartbeat")
    monitor.end(call)
    monitor.close()
