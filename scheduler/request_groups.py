"""Requests that wait for the scheduler are served in groups.

The Scheduler decides one request at a time. Under load, RPC threads
queue for it; instead of taking turns, the thread that gets the lock
serves every request queued so far (up to a limit) as one group, and the
others find their answers ready when their turn comes. The group shares
one sync of the caches and one claim transaction (group commit), which
is where a decision's database cost goes on PostgreSQL and MySQL.

Nothing waits on purpose: a request that arrives alone is a group of
one, served at once.
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
            self._queue.append(waiting)
        with self._lock:
            while not waiting.done:
                self._serve_next()
        return waiting.result()

    def _serve_next(self) -> None:
        with self._queue_lock:
            group = [self._queue.popleft()
                     for _ in range(min(self._limit, len(self._queue)))]
        try:
            self._serve(group)
        except BaseException as exc:
            # A failure of the group as a whole (the database gone, say)
            # is every unanswered request's failure.
            for waiting in group:
                if waiting.answer is None and waiting.error is None:
                    waiting.error = exc
            if not isinstance(exc, Exception):
                raise
        finally:
            for waiting in group:
                waiting.done = True
