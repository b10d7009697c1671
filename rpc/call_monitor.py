"""Call-monitor heartbeats for every call in progress, from one thread.

A caller that sets a call monitor timeout (Nova's conductor does, for
select_destinations) expects a heartbeat at least every half of it while
its call runs, and gives up on the call when none comes. oslo.messaging's
dispatcher starts a thread per call to send them and joins it as the
call ends. Almost no scheduler call lasts long enough for one heartbeat,
but the thread's start and join hand the interpreter back and forth
twice a call: in benchmarks.rpc they cost gantt-scheduler 0.3-0.4 ms of
CPU a call, as much as the rest of oslo.messaging's work on it.

:class:`CallMonitor` keeps the calls in progress instead; one thread of
its own wakes every ``tick`` seconds and sends each call's heartbeats as
they fall due, through the message's own heartbeat() as oslo.messaging's
watchdog does, at most ``tick`` late. :class:`MonitoredDispatcher` is
oslo.messaging's RPC dispatcher with each call's timeout handed to the
monitor for the call's duration, so that the dispatcher starts no
thread. The wire is untouched: the same heartbeat messages, as often,
and none after the call's reply.
"""

import threading
import time

from oslo_log import log as logging
from oslo_messaging.rpc import dispatcher as om_dispatcher

LOG = logging.getLogger(__name__)

# How often the monitor's thread looks for heartbeats due. A heartbeat
# goes at most this late; oslo.messaging's interval is at least 1 s (a
# timeout of 2 s or more), so the caller still hears one well within
# its timeout.
TICK_S = 0.25


class _Call:
    """One call in progress: its message, the seconds between its
    heartbeats and when the next is due. ``lock`` is held while a
    heartbeat is sent, so that a call cannot end (and reply) meanwhile."""

    __slots__ = ("incoming", "interval", "due", "lock", "ended")

    def __init__(self, incoming, interval, due):
        self.incoming = incoming
        self.interval = interval
        self.due = due
        self.lock = threading.Lock()
        self.ended = False


class CallMonitor:
    """The heartbeats of every monitored call of one server."""

    def __init__(self, tick=TICK_S, clock=time.monotonic):
        self._tick = tick
        self._clock = clock
        self._calls = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    @property
    def watched(self):
        """Calls in progress that want heartbeats."""
        with self._lock:
            return len(self._calls)

    def start(self, incoming, client_timeout):
        """Heartbeats for ``incoming`` every ``client_timeout`` / 2 s
        until :meth:`end`; None (and a warning, as oslo.messaging gives)
        when that timeout is not a whole number of at least 2 s."""
        try:
            interval = int(client_timeout) / 2
        except (TypeError, ValueError):
            interval = 0
        if interval < 1:
            LOG.warning("Client provided an invalid timeout value of %r",
                        client_timeout)
            return None
        call = _Call(incoming, interval, self._clock() + interval)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, args=(self._stop,), daemon=True,
                    name="gantt-call-monitor")
                self._thread.start()
            self._calls[id(call)] = call
        return call

    def end(self, call):
        """No more heartbeats for ``call`` (returned by :meth:`start`);
        waits for one being sent."""
        with call.lock:
            call.ended = True
        with self._lock:
            self._calls.pop(id(call), None)

    def close(self):
        """Stop the thread: calls still in progress get no more
        heartbeats; a call started later (a server started again)
        starts a new one."""
        with self._lock:
            thread, stop = self._thread, self._stop
            self._thread, self._stop = None, threading.Event()
        stop.set()
        if thread is not None:
            thread.join(timeout=5)

    def beat(self):
        """Send the heartbeats due now (the thread's work, each tick)."""
        now = self._clock()
        with self._lock:
            due = [c for c in self._calls.values() if c.due <= now]
        for call in due:
            with call.lock:
                if call.ended:
                    continue
                call.due = now + call.interval
                try:
                    call.incoming.heartbeat()
                except Exception as exc:
                    # As oslo.messaging's watchdog: the broker or the
                    # caller is gone; the call's reply will tell.
                    LOG.warning("Could not send a call-monitor heartbeat "
                                "for message %s (%s); no more for it",
                                getattr(call.incoming, "msg_id", None), exc)
                    call.ended = True
            if call.ended:
                with self._lock:
                    self._calls.pop(id(call), None)

    def _run(self, stop):
        while not stop.wait(self._tick):
            try:
                self.beat()
            except Exception:
                LOG.exception("Call-monitor heartbeats failed this tick")


class MonitoredDispatcher(om_dispatcher.RPCDispatcher):
    """oslo.messaging's RPC dispatcher whose calls' heartbeats come from
    ``monitor`` (a :class:`CallMonitor`) instead of a thread per call."""

    def __init__(self, endpoints, serializer, access_policy=None,
                 monitor=None):
        super().__init__(endpoints, serializer, access_policy)
        self.monitor = monitor or CallMonitor()

    def dispatch(self, incoming):
        client_timeout = getattr(incoming, "client_timeout", None)
        if not client_timeout:
            return super().dispatch(incoming)
        call = self.monitor.start(incoming, client_timeout)
        # Without a timeout the dispatcher starts no watchdog thread.
        incoming.client_timeout = None
        try:
            return super().dispatch(incoming)
        finally:
            if call is not None:
                self.monitor.end(call)
            incoming.client_timeout = client_timeout
