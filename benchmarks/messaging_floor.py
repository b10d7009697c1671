"""The messaging floor: what oslo.messaging alone costs a call to
gantt-scheduler, for benchmarks.rpc (``--messaging-floor``).

    python -m benchmarks.messaging_floor --config-file gantt.conf \
        --reply reply.json

A server on gantt-scheduler's transport (rpc.conf.get_server_transport:
its RabbitMQ listener included), topic, exchange, executor and
dispatcher (rpc.call_monitor), with
``[scheduler] workers`` processes as the service has, whose
select_destinations does nothing: it answers every call with the reply
in ``--reply``, the primitives of a real answer of gantt's (three Nova
Selections), without decoding the call (oslo.messaging's no-op
serializer). A call then costs the worker what receiving, dispatching
and replying cost, and nothing of gantt's own: the floor under
gantt-scheduler's "messaging" share of benchmarks.rpc's CPU split.

Each worker logs ``messaging floor ready: pid=N`` once it listens, and
``messaging floor stats: pid=N {...}`` (calls answered) as it stops on
SIGTERM. Benchmark code: never run as a test or in production.
"""

import argparse
import json
import os
import signal
import sys

import oslo_messaging
from oslo_log import log as logging
from oslo_messaging.rpc import server as om_rpc_server

from placement import signal_event
from rpc import call_monitor
from rpc import conf as rpc_conf
from rpc import server as server_mod
from rpc import service as service_mod

LOG = logging.getLogger("benchmarks.messaging_floor")
READY = "messaging floor ready:"
STATS = "messaging floor stats:"


class FloorEndpoint:
    """select_destinations that answers ``reply`` to every call."""

    target = oslo_messaging.Target(version="4.5")

    def __init__(self, reply):
        self._reply = reply
        self.calls = 0

    def select_destinations(self, ctxt, **kwargs):
        self.calls += 1
        return self._reply


def serve(conf, reply, stop):
    transport = rpc_conf.get_server_transport(conf)
    endpoint = FloorEndpoint(reply)
    # gantt-scheduler's dispatcher: call-monitor heartbeats from one
    # thread (rpc.call_monitor); oslo.messaging's no-op serializer.
    dispatcher = call_monitor.MonitoredDispatcher(
        [endpoint], oslo_messaging.NoOpSerializer())
    server = om_rpc_server.RPCServer(transport, server_mod.target(conf),
                                     dispatcher)
    try:
        server.start()
        LOG.info("%s pid=%d", READY, os.getpid())
        stop.wait()
        server.stop()
        server.wait()
    finally:
        dispatcher.monitor.close()
        transport.cleanup()
    LOG.info("%s pid=%d %s", STATS, os.getpid(),
             json.dumps({"calls": endpoint.calls}))


def _child(conf, reply):
    stop = signal_event.SignalEvent()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    code = 1
    try:
        serve(conf, reply, stop)
        code = 0
    except BaseException:
        LOG.exception("messaging floor worker failed")
    finally:
        os._exit(code)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config-file", required=True)
    parser.add_argument("--reply", required=True,
                        help="JSON file: the primitives to answer")
    args = parser.parse_args(argv)
    with open(args.reply) as f:
        reply = json.load(f)
    conf = service_mod.build_conf(["--config-file", args.config_file])
    logging.setup(conf, "gantt")
    # Workers forked before any connection or thread exists, as
    # gantt-scheduler's are.
    children = []
    for _ in range(rpc_conf.worker_count(conf)):
        pid = os.fork()
        if pid == 0:
            _child(conf, reply)
        children.append(pid)
    stop = signal_event.SignalEvent()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    codes = {}
    # Until SIGTERM, or a worker that died (then the others stop too).
    while not stop.wait(0.5):
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid:
            codes[pid] = os.waitstatus_to_exitcode(status)
            break
    for pid in children:
        if pid not in codes:
            os.kill(pid, signal.SIGTERM)
            codes[pid] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return 0 if stop.is_set() and not any(codes.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
