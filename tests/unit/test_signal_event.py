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
SCRIPT = """
import os, signal, sys, threading, time
from {module} import {name} as Event
ROUNDS = 300
box = []
signal.signal(signal.SIGUSR1, lambda *_: box[-1].set())
# Started first: a thread inherits the mask of the one starting it.
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
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
