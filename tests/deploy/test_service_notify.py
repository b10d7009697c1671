"""The services tell systemd (a unit of Type=notify) when they are
ready and when they stop, each as a real process with NOTIFY_SOCKET
naming a socket the test listens on (tests/deploy/notify_socket.py):

- gantt-placement-api says READY=1 once its workers have loaded the
  application, not before (gunicorn's own early READY=1 is not sent): a
  request sent then is answered at once; STOPPING=1 on SIGTERM; then it
  exits 0. When its workers cannot load the application it never says
  READY=1;
- gantt-scheduler, with one worker and with two, says READY=1 once
  every worker takes calls (a ping over RabbitMQ is answered), and
  STOPPING=1 on SIGTERM;
- gantt-compute-agent says READY=1 after its first report, STATUS= after
  each, STOPPING=1 on SIGTERM;
- every message comes from the process systemd started (the main pid:
  a unit's default NotifyAccess=main hears no other), and nothing else
  arrives.

The scheduler needs RabbitMQ on loopback (failed in CI when missing).
"""

import os
import pathlib
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.deploy.tools import (
    agent_conf,
    free_port,
    scheduler_conf,
    scheduler_ping,
)
from tests.rpc import helpers

BIN = pathlib.Path(sys.executable).parent
START_TIMEOUT = 60


class _Process:
    def __init__(self, argv, notify, tmp_path):
        self.output = tmp_path / "output.txt"
        self._out = open(self.output, "wb")
        env = {k: v for k, v in notify.environ().items()
               if not k.startswith("OS_")}
        self.proc = subprocess.Popen(argv, cwd=tmp_path, env=env,
                                     stdout=self._out,
                                     stderr=subprocess.STDOUT)

    def text(self):
        return self.output.read_text()

    def stop(self):
        """SIGTERM; the exit status."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._out.close()


def _next(notify, process, what):
    got = notify.receive(START_TIMEOUT)
    assert got is not None, f"no {what} in {START_TIMEOUT} s:\n" + \
        process.text()
    return got


def _stops_with_stopping(notify, process, status):
    """SIGTERM: STOPPING=1 from the main pid, exit status 0, and no
    message after it."""
    code = process.stop()
    assert notify.receive(5) == (
        process.proc.pid, f"STOPPING=1\nSTATUS={status}")
    assert code == 0, process.text()
    assert notify.receive(0.5) is None


def test_placement_api_is_ready_when_its_workers_are(notify, tmp_path):
    port = free_port()
    process = _Process(
        [str(BIN / "gantt-placement-api"), "--port", str(port), "--db",
         str(tmp_path / "placement.sqlite"), "--workers", "2"],
        notify, tmp_path)
    try:
        pid, message = _next(notify, process, "READY=1")
        assert (pid, message) == (
            process.proc.pid, "READY=1\nSTATUS=serving on "
            f"http://127.0.0.1:{port} with 2 workers")
        # Both workers have loaded the application: answered at once.
        started = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/",
                                    timeout=5) as answer:
            assert answer.status == 200
        assert time.monotonic() - started < 1.0
        text = process.text()
        assert text.count("gantt-placement-api ready: listening on") == 1
        _stops_with_stopping(
            notify, process,
            "stopping: finishing the requests in progress")
    finally:
        process.close()


def test_placement_api_whose_workers_cannot_load_is_never_ready(
        notify, tmp_path):
    # A policy file that does not parse: the master starts, each worker
    # fails to load the application, gunicorn gives up (status 3).
    policy = tmp_path / "policy.yaml"
    policy.write_text('"placement:resource_providers:list": [[[\n')
    conf = tmp_path / "gantt.conf"
    conf.write_text(f"[oslo_policy]\npolicy_file = {policy}\n")
    process = _Process(
        [str(BIN / "gantt-placement-api"), "--config-file", str(conf),
         "--port", str(free_port()), "--db",
         str(tmp_path / "placement.sqlite"), "--workers", "4"],
        notify, tmp_path)
    try:
        assert process.proc.wait(START_TIMEOUT) == 3, process.text()
        assert "Reason: Worker failed to boot." in process.text()
        assert notify.receive(1) == (
            process.proc.pid, "STOPPING=1\nSTATUS=stopping: finishing the "
            "requests in progress")
        assert notify.receive(0.5) is None
    finally:
        process.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_scheduler_is_ready_when_every_worker_is(notify, tmp_path, workers):
    helpers.require_rabbit()
    conf, topic = scheduler_conf(tmp_path, workers)
    log = tmp_path / "gantt-scheduler.log"
    process = _Process([str(BIN / "gantt-scheduler"), "--config-file",
                        str(conf)], notify, tmp_path)
    try:
        pid, message = _next(notify, process, "READY=1")
        plural = "s" if workers > 1 else ""
        assert (pid, message) == (
            process.proc.pid, f"READY=1\nSTATUS=serving topic {topic} of "
            f"exchange {topic} with {workers} worker{plural}")
        # Every worker had said it was ready by then, and answers.
        assert log.read_text().count("gantt-scheduler ready: ") == workers
        with scheduler_ping(topic) as ping:
            assert ping("up") == {"service": "scheduler", "arg": "up"}
        _stops_with_stopping(notify, process,
                             "stopping: finishing the calls in progress")
    finally:
        process.close()


def test_compute_agent_is_ready_after_its_first_report(notify, tmp_path):
    conf, root = agent_conf(tmp_path, "cn-notify",
                            compute="report_interval = 1\n")
    process = _Process([str(BIN / "gantt-compute-agent"), "--config-file",
                        str(conf), "--root", str(root)], notify, tmp_path)
    try:
        pid, message = _next(notify, process, "READY=1")
        assert pid == process.proc.pid
        first, status = message.split("\n")
        assert first == "READY=1"
        assert status.startswith("STATUS=reported cn-notify (root provider ")
        assert status.endswith("); next in 1 s")
        # The next turn's report: a STATUS= of its own.
        assert _next(notify, process, "STATUS=") == (
            process.proc.pid, status)
        _stops_with_stopping(notify, process,
                             "stopping: finishing the report in progress")
    finally:
        process.close()


def test_without_notify_socket_nothing_is_sent(notify, tmp_path):
    # A service not started by systemd: the variable unset, no message
    # (and the socket is not looked for).
    env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
    conf, root = agent_conf(tmp_path, "cn-quiet")
    done = subprocess.run(
        [str(BIN / "gantt-compute-agent"), "--config-file", str(conf),
         "--root", str(root), "--once"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert notify.receive(0.5) is None
