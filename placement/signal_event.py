"""An event that a signal handler may set.

Python runs a signal handler in the main thread, between two of its
bytecodes, wherever they are: also inside ``threading.Event.wait``
while that holds the event's lock (after each wait's timeout). A
handler calling ``set()`` on that same event then waits for a lock its
own thread holds, and the process hangs for ever. It happens when the
signal lands on another thread (OpenBLAS's, the SQLite checkpointer's)
and the main thread runs the handler at its next check, which comes
right after its wait returns: a SIGTERM sent under strace left
gantt-compute-agent hung that way.

This event takes no lock: a flag, and a pipe whose read end the waiters
select on, so that a ``set()`` from a handler or another thread wakes
them at once.

A handler that raises (to end a start-up blocked on a broker, say) has
the same trouble in another form: its exception may be raised inside a
weakref callback or a ``__del__`` that the garbage collector runs, where
Python cannot raise. It prints "Exception ignored in ..." and goes on,
as if no signal had come. :func:`on_swallowed` hears of that, so that
the service can have the handler raise again.
"""

import _thread
import os
import select
import sys
import time
import weakref


class SignalEvent:
    """``set``, ``is_set`` and ``wait`` as threading.Event has them."""

    def __init__(self):
        self._flag = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._closer = weakref.finalize(self, _close, self._read,
                                        self._write)

    def is_set(self):
        return self._flag

    def set(self):
        self._flag = True
        try:
            os.write(self._write, b"\0")
        except BlockingIOError:
            pass  # the pipe is full of earlier wake-ups: waiters wake

    def wait(self, timeout=None):
        """True once set; False when ``timeout`` seconds went first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._flag:
            left = None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
            # Nothing is read: once set, the pipe stays readable.
            select.select([self._read], [], [], left)
        return self._flag

    def close(self):
        self._closer()


def _close(*fds):
    for fd in fds:
        os.close(fd)


def on_swallowed(kind, again):
    """Call ``again()``, and print nothing, when Python swallows an
    exception of ``kind`` (see the module's doc); other exceptions go
    to the hook there was."""
    previous = sys.unraisablehook

    def hook(unraisable):
        if isinstance(unraisable.exc_value, kind):
            again()
        else:
            previous(unraisable)

    sys.unraisablehook = hook


def send_later(signum):
    """``signum`` to this process from a thread of its own (a bare one:
    the threading module takes locks): the handler then runs at the main
    thread's next check, not inside the hook that asks for it, where its
    exception would be swallowed again."""
    _thread.start_new_thread(os.kill, (os.getpid(), signum))
