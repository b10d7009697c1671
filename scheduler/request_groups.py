"""Requests that wait for the scheduler are served in groups.

The Scheduler decides one request at a time. Under load, RPC threads
queue for it; instead of taking turns, one thread at a time leads: it
takes every request queued so far (up to a limit, its own first), serves
them as one group under the scheduler's lock, wakes their threads with
their answers and hands the lead to the next request in the queue. The
group shares one sync of the caches and one claim transaction (group
commit), which is where a decision's database cost goes on PostgreSQL
and MySQL.

Nothing waits on purpose: a request that arrives with nobody leading
leads at once, alone. A thread whose request was answered returns at
once, without waiting for the lock again.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Callable
from typing import Any


@dataclasses.dataclass(eq=False)
class Waiting:
    """One request in the queue, and then its answer."""

    request: Any
    answer: Any = None
    error: BaseException | None = None
    done: bool = False
    # Set when the request is answered or its thread is to lead; made
    # only for a request that waits (one that leads at once, the usual
    # case without load, needs none: an Event costs a Condition, whose
    # making raises and catches three AttributeErrors: 21,000
    # instructions, 0.6 % of an embedded decision's).
    woken: threading.Event | None = None

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.answer


class RequestGroups:
    """A queue in front of ``lock``: ``serve(group)`` gets up to
    ``limit`` Waiting requests, in arrival order, under the lock, and sets
    each one's answer or error."""

    def __init__(self, lock: Any, limit: int,
                 serve: Callable[[list[Waiting]], None]) -> None:
        self._lock = lock
        self._limit = limit
        self._serve = serve
        self._queue: collections.deque[Waiting] = collections.deque()
        self._queue_lock = threading.Lock()
        # Whether a thread leads (or has been handed the lead). While it
        # is false the queue is empty.
        self._leading = False

    @property
    def queued(self) -> int:
        """Requests waiting, not yet taken into a group."""
        with self._queue_lock:
            return len(self._queue)

    def run(self, request: Any) -> Any:
        """``request``'s answer (or its error, raised), served in whatever
        group it falls into."""
        waiting = Waiting(request)
        with self._queue_lock:
            lead = not self._leading
            if not lead:
                # Before it is in the queue: a leader may wake it as
                # soon as the queue lock is let go.
                waiting.woken = threading.Event()
            self._queue.append(waiting)
            self._leading = True
        if not lead:
            try:
                waiting.woken.wait()
            except BaseException:
                self._abandon(waiting)
                raise
        if not waiting.done:
            # Nobody led, or the lead was handed over: this request is
            # at the head of the queue.
            self._lead(waiting)
        return waiting.result()

    def _lead(self, own: Waiting) -> None:
        group: list[Waiting] = []
        try:
            with self._lock:
                # Taken once the scheduler is free: whatever queued
                # meanwhile joins the group.
                with self._queue_lock:
                    group = [self._queue.popleft() for _ in
                             range(min(self._limit, len(self._queue)))]
                self._serve(group)
        except BaseException as exc:
            # A failure of the group as a whole (the database gone, say)
            # is every unanswered request's failure; an interruption of
            # this thread is reported to the others as such.
            given = exc if isinstance(exc, Exception) else RuntimeError(
                f"the thread serving this request stopped: {exc!r}")
            for waiting in group:
                if waiting.answer is None and waiting.error is None:
                    waiting.error = given
            if given is not exc:
                raise
        finally:
            self._hand_over(own)
            for waiting in group:
                waiting.done = True
                if waiting.woken is not None:
                    waiting.woken.set()

    def _hand_over(self, own: Waiting) -> None:
        """The lead to the request at the head of the queue, if any. The
        leader's own request leaves the queue if it is still there (its
        thread was interrupted before it took its group)."""
        with self._queue_lock:
            if own in self._queue:
                self._queue.remove(own)
            self._pass_lead()

    def _abandon(self, waiting: Waiting) -> None:
        """A thread that stops waiting: its request leaves the queue and,
        if the lead had been handed to it, the lead goes on. (Once taken
        into a group, the request is served with nobody to answer.)"""
        with self._queue_lock:
            if waiting not in self._queue:
                return
            self._queue.remove(waiting)
            if waiting.woken.is_set():
                self._pass_lead()

    def _pass_lead(self) -> None:
        """The lead to the head of the queue, or to nobody when it is
        empty (the caller holds the queue lock)."""
        if self._queue:
            self._queue[0].woken.set()
        else:
            self._leading = False
