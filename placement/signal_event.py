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
"""

import os
import select
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
