"""Run Nova 34's functional tests with upstream Placement or with
gantt-placement-api as their placement.

    .venv/bin/python -m tests.nova_functional.run [--placement gantt]
        [--workers N] [--exclude ID]... [--logs DIR] [--record DIR]
        [--report FILE] NAME...

NAME is a module, class or test id of nova.tests.functional (the prefix
may be left out: ``test_servers.ServerMovingTests``), or ``@full`` /
``@ci`` for the module list and the CI selection of selection.py.
``--placement upstream`` runs Nova's fixtures exactly as shipped;
``--placement gantt`` (the default) serves placement's endpoint from a
gantt-placement-api process on a fresh database for each fixture
(nova_side/placement_proxy.py). Prints a line per module, the failures,
the tests that hung once and were run again (HANG_RERUNS), and last
``N passed, M failed`` (errors count as failed); exits 1 when any test
failed.

The tests run in ``--workers`` processes of the Nova virtualenv
(install.py; default: one more than the cores), each handed one test at
a time, the slowest known first (the times of earlier runs are kept
beside the virtualenv).
"""

import argparse
import collections
import json
import os
import pathlib
import signal
import sys
import tempfile
import threading
import time

from tests import peer_venv
from tests.nova_functional import install, selection, servers, workers

PREFIX = "nova.tests.functional."
PASSED = ("pass", "xfail")
FAILED = ("fail", "error", "xpass")
# Seconds a test may take, the worker's own timeout (OS_TEST_TIMEOUT)
# included, before its worker is killed.
TEST_DEADLINE_S = 300
START_DEADLINE_S = 180
UNKNOWN_TEST_S = 10.0
# Of the log of a worker that hung or died: its end, where the stacks it
# was asked for are.
GONE_LOG_CHARS = 30000
# A test whose worker hung is run once more, in a new worker, and the
# report names it. One of Nova's tests has hung in a few runs of the
# whole selection, waiting for the cell fixture's lock, and never alone;
# why is not known yet (README.md, "A test that hangs").
HANG_RERUNS = 1


def expand(name):
    if name.startswith("nova."):
        return [name]
    if name == "@full":
        return [PREFIX + n for n in selection.FULL_MODULES]
    if name == "@ci":
        return [PREFIX + n for n in selection.CI_SELECTION]
    return [PREFIX + name]


def module_of(test_id):
    """The module part of a test id (the parts before the class)."""
    parts = test_id.split(".")
    for index, part in enumerate(parts):
        if part[:1].isupper():
            return ".".join(parts[:index])
    return test_id


def _times_file():
    return peer_venv.cache_root() / "nova-functional-times.json"


def _load_times():
    try:
        return json.loads(_times_file().read_text())
    except (OSError, ValueError):
        return {}


def _save_times(results):
    times = _load_times()
    times.update({r["result"]: r["seconds"] for r in results.values()
                  if r["status"] in PASSED})
    path = _times_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(times, sort_keys=True))
    tmp.replace(path)


class HarnessError(Exception):
    """The run could not start: no worker loaded the tests, or no
    placement server started."""


class Run:
    """One run of a list of tests in one mode."""

    def __init__(self, venv, mode, names, worker_count, logs, record=None,
                 exclude=(), progress=None):
        self.venv = venv
        self.mode = mode
        self.names = names
        self.worker_count = worker_count
        self.logs = pathlib.Path(logs)
        self.record = record
        self.exclude = set(exclude)
        self.progress = progress or (lambda line: None)
        self.results = {}
        # {test id: [result of each run that hung]}, for the tests rerun.
        self.hangs = collections.defaultdict(list)
        self.excluded = []
        self.total = 0
        self.pool = None
        self._queue = None
        self._lock = threading.Lock()
        self._start_errors = []
        self._workers = set()

    def execute(self):
        self.logs.mkdir(parents=True, exist_ok=True)
        if self.mode == "gantt":
            self._start_pool()
        threads = [threading.Thread(target=self._slot, args=(n,),
                                    daemon=True)
                   for n in range(self.worker_count)]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        except BaseException:  # Ctrl-C, SIGTERM: no test outlives us
            with self._lock:
                if self._queue is not None:
                    self._queue.clear()
                for worker in list(self._workers):
                    worker.kill()
            raise
        finally:
            if self.pool is not None:
                self.pool.close()
        if self._queue is None:
            raise HarnessError("no worker listed the tests: "
                               + "\n".join(self._start_errors))
        # Left when every worker failed to start again.
        for test_id in self._queue:
            self.results[test_id] = {
                "result": test_id, "status": "error", "seconds": 0.0,
                "details": "not run: no worker could be started\n"
                           + "\n".join(self._start_errors)}
        return self.results

    def _start_pool(self):
        """The server pool, once it started a server: a factory that
        cannot is the harness's failure, not every test's."""
        with open(self.logs / "factory.log", "a") as log:
            self.pool = servers.ServerPool(self.logs / "servers",
                                           self.worker_count, log)
        try:
            self.pool.release(self.pool.take())
        except servers.ServerError as exc:
            self.pool.close()
            raise HarnessError(f"gantt-placement-api did not start: {exc}; "
                               f"see {self.logs / 'factory.log'}") from None

    def _new_worker(self, slot):
        """A worker that loaded the tests; the first to do so fills the
        queue."""
        worker = workers.Worker(
            self.venv, self.mode, self.names,
            self.logs / f"worker-{slot}.log", self.record)
        with self._lock:
            self._workers.add(worker)
        try:
            listed = worker.receive(START_DEADLINE_S)["tests"]
        except workers.WorkerGone as exc:
            worker.kill()
            with self._lock:
                self._start_errors.append(f"{exc}\n{worker.log_tail()}")
            return None
        with self._lock:
            if self._queue is None:
                self._fill_queue(listed)
        return worker

    def _fill_queue(self, listed):
        times = _load_times()
        self.excluded = [t for t in listed if t in self.exclude]
        wanted = [t for t in listed if t not in self.exclude]
        # Slowest first, so that no long test starts last.
        wanted.sort(key=lambda t: -times.get(t, UNKNOWN_TEST_S))
        self._queue = collections.deque(wanted)
        self.total = len(wanted)
        self.progress(f"{len(wanted)} tests ({len(self.excluded)} "
                      f"excluded), {self.worker_count} workers, "
                      f"placement: {self.mode}")

    def _next(self):
        with self._lock:
            return self._queue.popleft() if self._queue else None

    def _slot(self, slot):
        worker = None
        try:
            while True:
                if worker is None:
                    worker = self._new_worker(slot)
                    if worker is None:
                        return
                test_id = self._next()
                if test_id is None:
                    return
                result = self._run_one(worker, test_id)
                if result.get("worker_gone"):
                    worker.kill()
                    with self._lock:
                        self._workers.discard(worker)
                    worker = None
                if self._rerun_after_hang(test_id, result):
                    continue
                with self._lock:
                    self.results[test_id] = result
                    done = len(self.results)
                self.progress(f"[{done}/{self.total}] {result['status']:5} "
                              f"{result['seconds']:6.1f} s  {test_id}")
        finally:
            if worker is not None:
                worker.stop()

    def _rerun_after_hang(self, test_id, result):
        """Queue ``test_id`` again when its worker hung and it has reruns
        left (HANG_RERUNS); a result after a hang says how many came
        before it."""
        hangs = self.hangs.get(test_id, [])
        if hangs:
            result["hung_before"] = len(hangs)
        if not result.get("hung") or len(hangs) >= HANG_RERUNS:
            return False
        (self.logs / "hung").mkdir(exist_ok=True)
        kept = self.logs / "hung" / f"{test_id}.{len(hangs)}.txt"
        kept.write_text(result.get("details", ""))
        result["kept"] = str(kept)
        with self._lock:
            self.hangs[test_id].append(result)
            self._queue.append(test_id)
        self.progress(f"hung   {result['seconds']:6.1f} s  {test_id} "
                      f"(run again; its worker's log: {kept})")
        return True

    def _run_one(self, worker, test_id):
        began = time.monotonic()
        taken = []
        try:
            worker.send({"run": test_id})
            while True:
                message = worker.receive(TEST_DEADLINE_S)
                if "need" in message:
                    server = self.pool.take()
                    taken.append(server)
                    worker.send({"url": server.url})
                    continue
                result = message
                break
        except workers.WorkerGone as exc:
            worker.dump_stacks()
            result = {"result": test_id, "status": "error",
                      "details": f"{exc}; the end of its log:\n"
                                 f"{worker.log_tail(GONE_LOG_CHARS)}",
                      "worker_gone": True,
                      "hung": isinstance(exc, workers.WorkerHung)}
        except servers.ServerError as exc:
            result = {"result": test_id, "status": "error",
                      "details": f"gantt-placement-api: {exc}",
                      "worker_gone": True}
        result["seconds"] = round(time.monotonic() - began, 3)
        result["placement_servers"] = len(taken)
        result["placement_logs"] = []
        failed = result["status"] in FAILED
        for number, server in enumerate(taken):
            keep = None
            if failed:
                keep = self.logs / "placement" / f"{test_id}.{number}.log"
                result["placement_logs"].append(str(keep))
            try:
                self.pool.release(server, keep)
            except servers.ServerError:
                pass
        return result


def summarize(results, excluded=()):
    """{module: Counter of passed/failed/skipped}."""
    by_module = collections.defaultdict(collections.Counter)
    for test_id, result in results.items():
        counts = by_module[module_of(test_id)]
        if result["status"] in PASSED:
            counts["passed"] += 1
        elif result["status"] in FAILED:
            counts["failed"] += 1
        else:
            counts["skipped"] += 1
    for test_id in excluded:
        by_module[module_of(test_id)]["excluded"] += 1
    return dict(sorted(by_module.items()))


def report_lines(results, excluded, seconds, verbose=False):
    lines = []
    for module, counts in summarize(results, excluded).items():
        extra = "".join(f", {counts[k]} {k}" for k in ("skipped", "excluded")
                        if counts[k])
        lines.append(f"{module}: {counts['passed']} passed, "
                     f"{counts['failed']} failed{extra}")
    failed = sorted(t for t, r in results.items() if r["status"] in FAILED)
    for test_id in failed:
        details = results[test_id].get("details", "").rstrip()
        # A worker that hung or died: its log's end and its stacks are
        # all there is to go on (CI keeps nothing else).
        shown = details if verbose or results[test_id].get("worker_gone") \
            else "\n".join(details.splitlines()[-3:])
        lines.append(f"FAILED ({results[test_id]['status']}) {test_id}\n"
                     + "\n".join("    " + line for line in
                                 shown.splitlines()))
    for test_id in sorted(t for t, r in results.items()
                          if r.get("hung_before")):
        lines.append(f"HUNG {results[test_id]['hung_before']}x, then "
                     f"{results[test_id]['status']} when run again: "
                     f"{test_id}")
    passed = sum(r["status"] in PASSED for r in results.values())
    skipped = len(results) - passed - len(failed)
    started = sum(r.get("placement_servers", 0) for r in results.values())
    lines.append(f"{len(results)} tests in {seconds:.0f} s"
                 f" ({skipped} skipped, {len(excluded)} excluded;"
                 f" {started} gantt-placement-api servers started)")
    lines.append(f"{passed} passed, {len(failed)} failed")
    return lines


def default_workers():
    """One more than the cores: Nova's tests wait on their services
    (polling sleeps) for a third of their time, which a third worker
    fills (on 2 cores: 20% less time than 2 workers; a fourth gained
    6% more)."""
    return (os.cpu_count() or 1) + 1


def run(names, mode="gantt", worker_count=None, exclude=(), logs=None,
        record=None, progress=None):
    """(results, excluded, seconds) of one run; HarnessError when it
    cannot start, RuntimeError when the virtualenv cannot be
    installed."""
    venv = install.nova_venv()
    worker_count = worker_count or default_workers()
    full_names = [full for name in names for full in expand(name)]
    logs = logs or tempfile.mkdtemp(prefix="nova-functional-")
    began = time.monotonic()
    one = Run(venv, mode, full_names, worker_count, logs, record, exclude,
              progress)
    results = one.execute()
    _save_times(results)
    return results, one.excluded, time.monotonic() - began


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv=None):
    signal.signal(signal.SIGTERM, _interrupt)
    parser = argparse.ArgumentParser(
        prog="python -m tests.nova_functional.run",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+", metavar="NAME")
    parser.add_argument("--placement", choices=("gantt", "upstream"),
                        default="gantt")
    parser.add_argument("--workers", type=int, default=default_workers(),
                        help="processes running tests (default: the "
                             "cores plus one)")
    parser.add_argument("--exclude", action="append", default=[],
                        metavar="ID", help="a test id not to run")
    parser.add_argument("--skip-upstream-failures", action="store_true",
                        help="also exclude selection.UPSTREAM_FAILURES")
    parser.add_argument("--logs", help="where the workers' logs, and the "
                                       "servers' of failed tests, go")
    parser.add_argument("--record", help="write placement's traffic here "
                                         "(compare.py compares two runs)")
    parser.add_argument("--report", help="write every result here (JSON)")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="print each test and whole failures")
    args = parser.parse_args(argv)
    exclude = list(args.exclude)
    if args.skip_upstream_failures:
        exclude += list(selection.UPSTREAM_FAILURES)
    logs = args.logs or tempfile.mkdtemp(prefix="nova-functional-")
    print(f"logs in {logs}", flush=True)
    progress = (lambda line: print(line, flush=True)) if args.verbose \
        else None
    try:
        results, excluded, seconds = run(
            args.names, args.placement, args.workers, exclude, logs,
            args.record, progress)
    except (HarnessError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: workers and servers stopped", file=sys.stderr)
        return 130
    if args.report:
        pathlib.Path(args.report).write_text(json.dumps(
            {"mode": args.placement, "seconds": round(seconds, 1),
             "excluded": excluded, "results": results}, indent=1))
    for line in report_lines(results, excluded, seconds, args.verbose):
        print(line)
    return 1 if any(r["status"] in FAILED for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
