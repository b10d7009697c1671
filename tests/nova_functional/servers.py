"""Fresh gantt-placement-api servers for the gantt mode, one ready ahead
for each worker so that a test does not wait for its own.

The servers come from factory.py, a process of gantt's virtualenv (the
runner's interpreter). A server is used by one placement fixture of one
test, then killed with its database.
"""

import dataclasses
import json
import pathlib
import queue
import subprocess
import sys
import threading

REPO = pathlib.Path(__file__).resolve().parents[2]
TAKE_TIMEOUT_S = 120


class ServerError(Exception):
    """A gantt-placement-api could not be started."""


@dataclasses.dataclass(frozen=True)
class Server:
    url: str
    pid: int
    log: str


class ServerPool:
    def __init__(self, work, spare, log):
        self._factory = subprocess.Popen(
            [sys.executable, "-m", "tests.nova_functional.factory",
             "--work", str(work)],
            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=log, text=True)
        self._factory_lock = threading.Lock()
        self._ready = queue.Queue()
        self._wanted = threading.Semaphore(spare)
        self._closed = False
        self._filler = threading.Thread(target=self._fill, daemon=True)
        self._filler.start()

    def _ask(self, request):
        with self._factory_lock:
            if self._factory.poll() is not None:
                raise ServerError(f"the server factory exited "
                                  f"({self._factory.returncode})")
            self._factory.stdin.write(json.dumps(request) + "\n")
            self._factory.stdin.flush()
            line = self._factory.stdout.readline()
        if not line:
            raise ServerError("the server factory exited")
        return json.loads(line)

    def _fill(self):
        """Keep ``spare`` servers started: one more each time one is
        taken."""
        while True:
            self._wanted.acquire()
            if self._closed:
                return
            try:
                answer = self._ask({"start": True})
            except (ServerError, OSError, ValueError) as exc:
                # ValueError: closed under us at the end of the run.
                self._ready.put(ServerError(str(exc)))
                return
            if "error" in answer:
                self._ready.put(ServerError(answer["error"]))
            else:
                self._ready.put(Server(answer["url"], answer["pid"],
                                       answer["log"]))

    def take(self):
        """A started server on a fresh database; ServerError when none
        could be started."""
        try:
            got = self._ready.get(timeout=TAKE_TIMEOUT_S)
        except queue.Empty:
            raise ServerError(f"no gantt-placement-api started in "
                              f"{TAKE_TIMEOUT_S} s") from None
        self._wanted.release()
        if isinstance(got, Exception):
            raise got
        return got

    def release(self, server, keep_log=None):
        """Kill ``server``; keep its log at ``keep_log`` if given."""
        self._ask({"stop": server.pid,
                   "keep": str(keep_log) if keep_log else None})

    def close(self):
        self._closed = True
        self._wanted.release()
        try:
            self._factory.stdin.close()
        except OSError:
            pass
        try:
            self._factory.wait(30)
        except subprocess.TimeoutExpired:
            self._factory.kill()
            self._factory.wait()
