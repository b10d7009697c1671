"""placement.signal_event: set by a signal handler, however the main
thread's wait is interrupted; as threading.Event otherwise."""

import subprocess
import sys
import threading
import time

from placement.signal_event import SignalEvent

# The main thread blocks SIGUSR1, so that another thread takes each
# signal and the main thread runs the handler at its next check: inside
# its wait, where threading.Event holds its lock (with threading.Event
# in its place this script hangs within a few rounds).
#
# The other thread wakes every 5 ms. A signal taken by a thread other
# than the main one does not interrupt the main thread on Python 3.11:
# the main thread sees it when it next takes the GIL. Its busy loop
# gives the GIL up only when another thread asks for it, so a thread
# that slept on (one long sleep: a signal that came while it was
# between two sleeps did not wake it) left the signal unseen, and the
# script hung (1 run in 5 of 5,000 rounds; once in CI at 300).
SCRIPT = """
import os, signal, sys, threading, time
from {module} import {name} as Event
ROUNDS = 300
box = []
signal.signal(signal.SIGUSR1, lambda *_: box[-1].set())
def pulse():
    while True:
        time.sleep(0.005)
# Started first: a thread inherits the mask of the one starting it.
threading.Thread(target=pulse, daemon=True).start()
signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGUSR1}})
for _ in range(ROUNDS):
    box.append(Event())
    os.kill(os.getpid(), signal.SIGUSR1)
    while not box[-1].wait(0):
        pass
print(len(box))
"""


def test_a_handler_sets_it_while_the_main_thread_waits():
    done = subprocess.run(
        [sys.executable, "-c",
         SCRIPT.format(module="placement.signal_event", name="SignalEvent")],
        capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "300\n", "")


def test_wait_times_out_unset_and_returns_at_once_when_set():
    event = SignalEvent()
    started = time.monotonic()
    assert event.wait(0.05) is False
    assert time.monotonic() - started >= 0.05
    assert not event.is_set()
    event.set()
    assert event.is_set() and event.wait() and event.wait(0)
    event.close()


def test_another_threads_set_wakes_a_waiter():
    event = SignalEvent()
    woke = []
    waiter = threading.Thread(target=lambda: woke.append(event.wait(30)))
    waiter.start()
    time.sleep(0.05)
    started = time.monotonic()
    event.set()
    waiter.join(10)
    assert woke == [True]
    assert time.monotonic() - started < 5


def test_many_sets_do_not_block_the_setter():
    event = SignalEvent()
    for _ in range(100_000):  # more than a pipe holds
        event.set()
    assert event.wait(0)


# A handler's exception raised inside a weakref callback: Python prints
# "Exception ignored in ..." and goes on (gantt-scheduler's worker kept
# starting after SIGTERM that way once in CI).
SWALLOWED = """
import os, signal, time, weakref
{setup}

class Thing:
    pass

def callback(ref):
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(100):  # the handler runs here, inside the callback
        pass

thing = Thing()
ref = weakref.ref(thing, callback)
try:
    del thing
    # The signal sent again comes from another thread: a moment.
    for _ in range(200):
        time.sleep(0.005)
    print("went on")
except {exception}:
    print("stopped")
"""

GENERIC = """
from placement import signal_event

class Stop(BaseException):
    pass

def handler(signum, frame):
    raise Stop()

signal.signal(signal.SIGTERM, handler)
"""

HOOKED = """
signal_event.on_swallowed(Stop, lambda: signal_event.send_later(
    signal.SIGTERM))
"""

SCHEDULER = """
from rpc import service
service._StopSignal().install()
"""


def _swallowed(setup, exception):
    return subprocess.run(
        [sys.executable, "-c",
         SWALLOWED.format(setup=setup, exception=exception)],
        capture_output=True, text=True, timeout=60)


def test_a_swallowed_exception_is_raised_again():
    done = _swallowed(GENERIC + HOOKED, "Stop")
    assert (done.returncode, done.stdout, done.stderr) == (0, "stopped\n", "")


def test_without_the_hook_the_exception_is_lost():
    # What on_swallowed is for (and that the script provokes it).
    done = _swallowed(GENERIC, "Stop")
    assert done.stdout.splitlines()[-1] == "went on"
    assert "Exception ignored in" in done.stderr


def test_the_schedulers_stop_before_ready_is_raised_again():
    done = _swallowed(SCHEDULER, "service._Stopped")
    assert (done.returncode, done.stdout, done.stderr) == (0, "stopped\n", "")
