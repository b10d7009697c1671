"""Run Nova's functional tests one at a time, as the runner hands them out.

Runs inside the Nova virtualenv (never with gantt on the path: gantt's
``placement`` package and upstream's have one name)::

    python worker.py --mode gantt|upstream --result-fd N NAME...

It loads NAME... (modules, classes or test ids) as unittest does, then
speaks JSON lines: it writes ``{"tests": [ids]}`` once to the result fd,
and then for each ``{"run": id}`` read from stdin runs that test and
writes ``{"result": id, "status": ..., "seconds": ..., "details": ...}``.
In the gantt mode a test that sets placement up writes ``{"need":
"placement"}`` and reads ``{"url": ...}`` back (placement_proxy.py).

Each test runs in a suite of its own, so that the order the runner picks
does not matter (a class's setUpClass, if any, runs for each test).
"""

import argparse
import faulthandler
import gc
import json
import os
import signal
import sys
import time
import traceback
import unittest

import placement_proxy
import placement_traffic

# Statuses a test ends with; the runner counts pass and xfail as passed,
# skip apart, the others as failed.
PASS, FAIL, ERROR, SKIP, XFAIL, XPASS = (
    "pass", "fail", "error", "skip", "xfail", "xpass")
# The error text kept: the head (where testtools puts the captured
# output) and the tail (the traceback comes last).
HEAD_CHARS, TAIL_CHARS = 4000, 40000


class Channel:
    """The runner's end: requests in on stdin, messages out on a pipe."""

    def __init__(self, result_fd):
        self._out = os.fdopen(result_fd, "w", buffering=1)

    def send(self, message):
        self._out.write(json.dumps(message) + "\n")
        self._out.flush()

    def receive(self):
        line = sys.stdin.readline()
        if not line:
            raise SystemExit(0)  # the runner went away
        return json.loads(line)

    def ask(self, message):
        self.send(message)
        return self.receive()


def _flatten(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from _flatten(test)
        else:
            yield test


def _clip(text):
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    cut = len(text) - HEAD_CHARS - TAIL_CHARS
    return (text[:HEAD_CHARS] + f"\n[... {cut} characters cut ...]\n"
            + text[-TAIL_CHARS:])


def install_stack_dumps():
    """What the runner asks for before it kills a worker that hung:
    SIGUSR1, every thread's stack (faulthandler, from C: it answers
    even when no Python code runs); SIGUSR2, every greenlet's (Nova's
    services run on eventlet, so the thread stacks show the hub). Both
    to the worker's log: sys.stderr is captured while a test runs."""
    faulthandler.register(signal.SIGUSR1, file=sys.__stderr__,
                          all_threads=True)
    signal.signal(signal.SIGUSR2, _dump_greenlets)


def _dump_greenlets(signum, frame):
    try:
        import greenlet
    except ImportError:
        return
    out = sys.__stderr__
    out.write("Greenlets:\n")
    for found in gc.get_objects():
        if isinstance(found, greenlet.greenlet) and \
                found.gr_frame is not None:
            out.write(f"greenlet {found!r}\n")
            traceback.print_stack(found.gr_frame, file=out)
    out.flush()


def run_one(test):
    """(status, details text) of running ``test`` in a suite of its own."""
    import testtools  # after Nova's import, which patches for eventlet

    result = testtools.TestResult()
    unittest.TestSuite([test]).run(result)
    if result.errors:
        return ERROR, _clip(result.errors[0][1])
    if result.failures:
        return FAIL, _clip(result.failures[0][1])
    if result.unexpectedSuccesses:
        return XPASS, "an expected failure passed"
    if result.skip_reasons:
        return SKIP, "; ".join(result.skip_reasons)
    if result.expectedFailures:
        return XFAIL, ""
    return PASS, ""


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("gantt", "upstream"),
                        required=True)
    parser.add_argument("--result-fd", type=int, required=True)
    parser.add_argument("--record", help="a folder to write the placement "
                                         "traffic to (placement_traffic.py)")
    parser.add_argument("names", nargs="+")
    args = parser.parse_args(argv)
    # Nova reads options from sys.argv in places: give it none.
    sys.argv = sys.argv[:1]
    channel = Channel(args.result_fd)
    install_stack_dumps()

    suite = unittest.defaultTestLoader.loadTestsFromNames(args.names)
    tests = {test.id(): test for test in _flatten(suite)}
    recorder = (placement_traffic.Recorder(args.record) if args.record
                else None)
    if args.mode == "gantt":
        placement_proxy.install(
            lambda: channel.ask({"need": "placement"})["url"], recorder)
    elif recorder is not None:
        placement_proxy.install(None, recorder)
    channel.send({"tests": list(tests)})

    while True:
        request = channel.receive()
        if "quit" in request:
            return 0
        test_id = request["run"]
        if recorder is not None:
            recorder.test_id = test_id
        began = time.monotonic()
        status, details = run_one(tests.pop(test_id))
        channel.send({"result": test_id, "status": status,
                      "seconds": round(time.monotonic() - began, 3),
                      "details": details})


if __name__ == "__main__":
    sys.exit(main())
