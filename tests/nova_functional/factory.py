"""Start gantt-placement-api servers, each on a fresh SQLite database, in
a fraction of the time the command takes from scratch.

Runs in gantt's virtualenv as a process of its own::

    python -m tests.nova_functional.factory --work DIR [--script-name P]

Nova's functional tests set placement up afresh for each test. Started
from scratch, gantt-placement-api spends about a second of CPU, nearly
all of it importing; a thousand tests would spend a quarter of the run
on it. This process imports the command once, then for each server forks
a child that runs the command's own ``main()`` with its usual arguments:
gunicorn's master, a worker, the schema synced on the new database.
Nothing is shared after the fork but the code already loaded.

A server is stopped by killing its process group: its database is thrown
away with it, so a graceful stop would only cost time.

Speaks JSON lines: ``{"start": true}`` on stdin answers ``{"url", "pid",
"log"}`` once the server answers HTTP; ``{"stop": pid, "keep": path}``
kills it, keeps its log at ``path`` (or drops it when null) and answers
``{"stopped": pid}``. At the end of stdin every server is stopped.
"""

import argparse
import http.client
import json
import os
import pathlib
import shutil
import signal
import socket
import sys
import time
import traceback

import webob

from gantt.cmd import api
from placement.api import app as app_mod
from placement.db import store as store_mod

START_TIMEOUT_S = 30
START_ATTEMPTS = 3


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Factory:
    def __init__(self, work, script_name):
        self.work = pathlib.Path(work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.script_name = script_name
        # An empty file: no config file of the machine's is read.
        self.config = self.work / "gantt.conf"
        self.config.write_text("[DEFAULT]\n")
        self.servers = {}  # pid: its folder
        self._count = 0
        self._warm_up()

    def _warm_up(self):
        """Run once, here, what each server runs first (the schema sync,
        the application's construction, a request), so that what those
        leave behind in the code (compiled schemas, parsed migrations and
        policies) is inherited by every child instead of redone in it."""
        folder = self.work / "warm-up"
        folder.mkdir(exist_ok=True)
        conf = api.build_conf([
            "--config-file", str(self.config),
            "--db", str(folder / "placement.sqlite"), "--policy", "legacy"])
        api.prepare_database(conf)
        store = store_mod.Store(conf)
        app = app_mod.make_app(conf, store=store, policy_mode="legacy")
        webob.Request.blank("/resource_providers", headers={
            "x-auth-token": "admin"}).get_response(app)
        store.dispose()
        shutil.rmtree(folder)

    def start(self):
        error = None
        for _ in range(START_ATTEMPTS):
            try:
                return self._start_once()
            except RuntimeError as exc:  # e.g. the port was taken
                error = exc
        return {"error": str(error)}

    def _start_once(self):
        self._count += 1
        folder = self.work / f"server-{self._count}"
        folder.mkdir()
        port = free_port()
        log = folder / "server.log"
        argv = ["--config-file", str(self.config), "--host", "127.0.0.1",
                "--port", str(port), "--db", str(folder / "placement.sqlite"),
                "--workers", "1", "--policy", "legacy"]
        pid = os.fork()
        if pid == 0:
            self._child(argv, log)
        self.servers[pid] = folder
        try:
            self._wait_until_answering(pid, port, log)
        except RuntimeError:
            self.stop(pid, None)
            raise
        return {"url": f"http://127.0.0.1:{port}", "pid": pid,
                "log": str(log)}

    def _child(self, argv, log):
        code = 1
        try:
            os.setsid()  # its own group: killed with its workers
            out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(out, 1)
            os.dup2(out, 2)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            # Nova's fixture serves placement under this path; gunicorn
            # takes SCRIPT_NAME from the environment.
            os.environ["SCRIPT_NAME"] = self.script_name
            code = api.main(argv) or 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def _wait_until_answering(self, pid, port, log):
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                del self.servers[pid]
                raise RuntimeError(
                    f"gantt-placement-api exited ({status}): "
                    f"{log.read_text()[-2000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port,
                                                  timeout=5)
                conn.request("GET", self.script_name + "/")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                pass
            finally:
                conn.close()
            if time.monotonic() > deadline:
                raise RuntimeError(f"gantt-placement-api did not answer in "
                                   f"{START_TIMEOUT_S} s: "
                                   f"{log.read_text()[-2000:]}")
            time.sleep(0.01)

    def stop(self, pid, keep):
        folder = self.servers.pop(pid, None)
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        if folder is not None:
            if keep:
                pathlib.Path(keep).parent.mkdir(parents=True, exist_ok=True)
                shutil.move(folder / "server.log", keep)
            shutil.rmtree(folder, ignore_errors=True)
        return {"stopped": pid}

    def stop_all(self):
        for pid in list(self.servers):
            self.stop(pid, None)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--script-name", default="/placement")
    args = parser.parse_args(argv)
    factory = Factory(args.work, args.script_name)
    try:
        for line in sys.stdin:
            request = json.loads(line)
            if "start" in request:
                answer = factory.start()
            else:
                answer = factory.stop(request["stop"], request.get("keep"))
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    finally:
        factory.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
