"""Running worker processes that start together and report once: the
multi-process tests' harness (claims, schedulers)."""

import multiprocessing
import queue as queue_mod

import pytest


def run(target, args_per_worker, timeout=180):
    """Start ``target(*args, barrier, results)`` in a spawned process per
    entry of ``args_per_worker``; each waits on ``barrier`` and puts one
    report on ``results``. Returns the reports (order of arrival); fails
    the test when a worker does not report in time."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(len(args_per_worker))
    results = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, barrier, results))
             for args in args_per_worker]
    for proc in procs:
        proc.start()
    reports = []
    try:
        for _ in procs:
            reports.append(results.get(timeout=timeout))
    except queue_mod.Empty:
        pytest.fail(f"only {len(reports)} of {len(procs)} workers reported")
    finally:
        for proc in procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
                proc.join()
    return reports
