"""``gantt-manage scheduler ping``: is a gantt-scheduler answering on
the configured transport and topic?

    gantt-manage scheduler ping [--timeout S] [--topic T] [--format json]

One call of gantt's ``ping`` (rpc.server.StatusEndpoint), answered by
one scheduler process: its host, pid, gantt version, uptime and the
compute hosts its host state knows, and the round trip. Exit status 1,
with one line, when none answers within --timeout seconds (default 10)
or the message broker cannot be reached; 2 when the transport is the
in-process one (transport_url unset), which no scheduler can share.

oslo.messaging waits for an unreachable broker forever, whatever the
call's timeout, logging each attempt: the broker is tried first
(rpc.broker_check; a login it refuses is exit 2), the call made in a
thread the command stops waiting for after --timeout and a grace, and
the driver's reconnection messages kept out of the output unless
--debug.
"""

import json
import logging
import threading
import time

from scheduler import errors

DEFAULT_TIMEOUT = 10.0
# Connection attempts before a send gives up (oslo.messaging retries
# forever by default): an unreachable broker ends the command.
SEND_RETRIES = 2


# How long past --timeout the command waits for the call to end by
# itself (a broker that went away after the first check).
GRACE = 5.0
# oslo.messaging's driver loggers: one line a reconnection attempt.
DRIVER_LOGGERS = ("oslo.messaging._drivers.impl_rabbit",
                  "oslo_messaging._drivers.impl_rabbit")


class NoAnswer(errors.SchedulerError):
    """No scheduler answered in time, or the broker cannot be reached."""


class InProcessTransport(errors.ConfigError):
    """The configured transport is the in-process one."""


def seconds(text):
    try:
        value = float(text)
    except ValueError:
        value = 0
    if not value > 0:
        raise ValueError(f"expected seconds > 0, got {text!r}")
    return value


def add_actions(actions):
    """gantt-manage scheduler's actions: ping."""
    ping = actions.add_parser(
        "ping", help="ask one gantt-scheduler on the configured transport "
                     "who it is; exit status 1 when none answers within "
                     "--timeout")
    ping.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT,
                      metavar="S",
                      help=f"seconds to wait for an answer (default "
                           f"{DEFAULT_TIMEOUT:g})")
    ping.add_argument("--topic", default=None,
                      help="the schedulers' topic (default: [scheduler] "
                           "topic)")
    ping.add_argument("--format", choices=["table", "json"],
                      default="table")
    ping.set_defaults(run=run)


def connect(conf, topic=None, **kwargs):
    """A SchedulerClient on the configured broker once the broker has
    answered (``kwargs``: SchedulerClient's); InProcessTransport (exit
    2) for the in-process transport, NoAnswer (1) for a broker that
    cannot be reached. Shared with ``schedule --rpc``."""
    # oslo.messaging is imported here, when a command calls: gantt-manage
    # loads this module for its options, and its import is half a second
    # every other command would pay.
    from rpc import broker_check
    from rpc import client as client_mod
    from rpc import conf as rpc_conf

    rpc_conf.register_opts(conf)
    if rpc_conf.in_process(conf):
        raise InProcessTransport(
            "[DEFAULT] transport_url is the in-process transport "
            f"({rpc_conf.transport_url(conf)}), which no gantt-scheduler "
            "shares: set it to the schedulers' message broker")
    if not conf.debug:
        for name in DRIVER_LOGGERS:
            logging.getLogger(name).setLevel(logging.CRITICAL)
    problems = broker_check.unreachable(conf)
    if problems:
        raise NoAnswer(f"could not reach the message broker: "
                       f"{'; '.join(problems)}")
    return client_mod.SchedulerClient(conf, topic=topic,
                                      retry=SEND_RETRIES, **kwargs)


def call_within(client, call, timeout):
    """(answer, seconds) of ``call()``, one call of ``client``; NoAnswer
    when no scheduler answers within ``timeout`` seconds (or the call is
    stuck reconnecting past a grace). Closes the client."""
    outcome = {}

    def caller():
        started = time.monotonic()
        try:
            outcome["answer"] = call()
        except Exception as exc:  # noqa: BLE001 - raised by the caller
            outcome["error"] = exc
        outcome["elapsed"] = time.monotonic() - started

    thread = threading.Thread(target=caller, name="rpc-call", daemon=True)
    thread.start()
    thread.join(timeout + GRACE)
    if thread.is_alive():
        # Stuck reconnecting: leave the thread (a daemon) to the exit.
        raise NoAnswer(
            f"no answer from the message broker or a gantt-scheduler on "
            f"topic {client.topic!r} within {timeout:g} s")
    client.close()
    error = outcome.get("error")
    from rpc import client as client_mod  # loaded by connect()

    if isinstance(error, client_mod.SchedulerTimeout):
        raise NoAnswer(
            f"no gantt-scheduler answered on topic {client.topic!r} "
            f"within {timeout:g} s")
    if error is not None:
        raise error
    return outcome["answer"], outcome["elapsed"]


def run(conf):
    args = conf.command
    client = connect(conf, topic=args.topic)
    answer, elapsed = call_within(
        client, lambda: client.gantt_ping(None, timeout=args.timeout),
        args.timeout)
    if args.format == "json":
        print(json.dumps({"answer": answer, "topic": client.topic,
                          "round_trip_ms": round(elapsed * 1000, 3)},
                         indent=2, sort_keys=True))
    else:
        print(render(answer, client.topic, elapsed))
    return 0


def render(answer, topic, elapsed):
    hosts = answer.get("hosts")
    known = ("host state not read yet" if hosts is None
             else f"{hosts} compute host{'s' if hosts != 1 else ''} known")
    return (f"gantt-scheduler on {answer.get('host')} answered on topic "
            f"{topic!r} in {elapsed * 1000:.1f} ms: pid {answer.get('pid')}, "
            f"gantt {answer.get('version')}, up {answer.get('uptime')} s, "
            f"{known}")
