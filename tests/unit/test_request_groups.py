"""scheduler.request_groups: whoever holds the lock serves what queued,
in arrival order and groups of at most the limit; a group's failure is
each unanswered request's failure."""

import threading
import time

import pytest

from scheduler import request_groups


def _queue_behind(lock, groups, requests):
    """Start a thread per request while ``lock`` is held; returns once
    all are queued, with the threads and their results."""
    results = {}

    def call(request):
        try:
            results[request] = ("answer", groups.run(request))
        except BaseException as exc:
            results[request] = ("error", exc)

    threads = []
    for request in requests:
        thread = threading.Thread(target=call, args=(request,))
        thread.start()
        threads.append(thread)
        # One at a time, so that the queue keeps their order.
        deadline = time.monotonic() + 10
        while groups.queued < len(threads):
            assert time.monotonic() < deadline, "request never queued"
            time.sleep(0.001)
    return threads, results


def test_queued_requests_are_served_in_groups_of_the_limit_in_order():
    lock = threading.Lock()
    served = []

    def serve(group):
        served.append([w.request for w in group])
        for waiting in group:
            waiting.answer = waiting.request * 10

    groups = request_groups.RequestGroups(lock, 2, serve)
    with lock:
        threads, results = _queue_behind(lock, groups, [1, 2, 3, 4, 5])
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()
    assert served == [[1, 2], [3, 4], [5]]
    assert results == {r: ("answer", r * 10) for r in [1, 2, 3, 4, 5]}


def test_a_request_alone_is_served_at_once():
    served = []

    def serve(group):
        served.append(len(group))
        group[0].answer = "ok"

    groups = request_groups.RequestGroups(threading.Lock(), 8, serve)
    assert groups.run("r") == "ok"
    assert served == [1]


def test_a_groups_failure_is_every_unanswered_requests_error():
    lock = threading.Lock()
    broken = RuntimeError("database gone")

    def serve(group):
        group[0].answer = "first"
        group[1].error = ValueError("its own")
        raise broken

    groups = request_groups.RequestGroups(lock, 8, serve)
    with lock:
        threads, results = _queue_behind(lock, groups, ["a", "b", "c"])
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()
    assert results["a"] == ("answer", "first")
    assert isinstance(results["b"][1], ValueError)
    assert results["c"] == ("error", broken)


def test_the_next_group_is_served_after_a_failed_one():
    calls = []

    def serve(group):
        calls.append(len(group))
        if len(calls) == 1:
            raise RuntimeError("once")
        group[0].answer = "fine"

    groups = request_groups.RequestGroups(threading.Lock(), 8, serve)
    with pytest.raises(RuntimeError):
        groups.run("x")
    assert groups.run("y") == "fine"
    assert groups.queued == 0


def test_an_answered_request_returns_while_the_next_group_is_served():
    lock = threading.Lock()
    second_started, release_second = threading.Event(), threading.Event()

    def serve(group):
        [waiting] = group
        if waiting.request == "second":
            second_started.set()
            assert release_second.wait(10)
        waiting.answer = waiting.request

    groups = request_groups.RequestGroups(lock, 1, serve)
    with lock:
        threads, results = _queue_behind(lock, groups, ["first", "second"])
    assert second_started.wait(10)
    # The second group holds the scheduler; the first request's thread
    # has its answer and has returned all the same.
    threads[0].join(10)
    assert not threads[0].is_alive()
    assert results["first"] == ("answer", "first")
    release_second.set()
    threads[1].join(10)
    assert results["second"] == ("answer", "second")


def test_an_interrupted_leader_fails_its_group_and_the_queue_goes_on():
    lock = threading.Lock()
    served = []

    def serve(group):
        served.append([w.request for w in group])
        if group[0].request == "a":
            raise KeyboardInterrupt
        for waiting in group:
            waiting.answer = "ok"

    groups = request_groups.RequestGroups(lock, 2, serve)
    with lock:
        threads, results = _queue_behind(lock, groups, ["a", "b", "c"])
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()
    assert served == [["a", "b"], ["c"]]
    # The leader's own thread gets the interruption; the other member of
    # its group is told the server stopped; the next group is served.
    assert isinstance(results["a"][1], KeyboardInterrupt)
    assert isinstance(results["b"][1], RuntimeError)
    assert "stopped" in str(results["b"][1])
    assert results["c"] == ("answer", "ok")
    assert groups.run("d") == "ok"
