"""What the units' sandbox allows is what the services use: each service
runs under strace (installed with apt-get when missing) through its
start, some work and a SIGTERM, and

- every system call it makes is one its unit's SystemCallFilter= lines
  allow (the groups expanded by `systemd-analyze syscall-filter`), so
  that under systemd none of them fails with EPERM;
- every socket it opens is of a family in RestrictAddressFamilies=.

This machine has no systemd running to start the units themselves; the
trace is the next best witness. One exception: SQLite, run as root (as
here, not in the units: User=gantt), gives its journal files the
database file's owner with fchown; the test accepts fchown on those
files only.
"""

import os
import pathlib
import re
import signal
import subprocess
import sys
import urllib.request

from tests.deploy.tools import (
    agent_conf,
    free_port,
    need_tool,
    scheduler_conf,
    scheduler_ping,
)
from tests.rpc import helpers

REPO = pathlib.Path(__file__).parents[2]
SYSTEMD = REPO / "etc" / "systemd"
BIN = pathlib.Path(sys.executable).parent
TIMEOUT = 90

# strace -ff: a file per process, one call a line.
CALL = re.compile(r"^([a-z_0-9]+)\((.*)")
OPENED = re.compile(r'^openat\([^,]+, "([^"]+)".*\) = (\d+)$')
FCHOWN = re.compile(r"^fchown\((\d+),")
SQLITE_JOURNALS = ("-journal", "-wal", "-shm")


def _service_lists(unit):
    """(SystemCallFilter= values, RestrictAddressFamilies= families) of
    the unit."""
    filters, families = [], set()
    for line in (SYSTEMD / f"{unit}.service").read_text().splitlines():
        name, _, value = line.partition("=")
        if name == "SystemCallFilter":
            filters.append(value)
        elif name == "RestrictAddressFamilies":
            families.update(value.split())
    return filters, families


def _expand(name, analyze, seen=None):
    """The system calls of a name or @group."""
    if not name.startswith("@"):
        return {name}
    done = subprocess.run([analyze, "syscall-filter", name],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = set()
    for line in done.stdout.splitlines()[1:]:
        item = line.strip()
        if item and not item.startswith("#"):
            calls |= _expand(item, analyze)
    return calls


def _allowed(filters, analyze):
    """systemd's reading of several SystemCallFilter= lines: the allow
    lists add up, then each ~ list takes its calls out."""
    allowed, denied = set(), set()
    for value in filters:
        if value.startswith("~"):
            for name in value[1:].split():
                denied |= _expand(name, analyze)
        else:
            for name in value.split():
                allowed |= _expand(name, analyze)
    return allowed - denied


def _check_trace(trace, unit):
    analyze = need_tool("systemd-analyze", "systemd")
    filters, families = _service_lists(unit)
    allowed = _allowed(filters, analyze)
    used, families_used, bad_chown = set(), set(), []
    traces = sorted(trace.parent.glob(trace.name + ".*"))
    assert len(traces) > 2, "one file per process, threads included"
    for path in traces:
        opened = {}
        for line in path.read_text().splitlines():
            found = OPENED.match(line)
            if found:
                opened[found.group(2)] = found.group(1)
            found = CALL.match(line)
            if not found:
                continue
            name = found.group(1)
            used.add(name)
            if name == "socket":
                families_used.add(found.group(2).split(",")[0])
            chown = FCHOWN.match(line)
            if chown and not opened.get(chown.group(1), "").endswith(
                    SQLITE_JOURNALS):
                bad_chown.append(line)
    assert len(used) > 40, "the trace caught too little"
    assert bad_chown == []
    assert sorted(used - allowed - {"fchown"}) == []
    assert families_used and sorted(families_used - families) == []


class _Traced:
    """A command under strace -f, with NOTIFY_SOCKET: its main process
    is the one that sends READY=1."""

    def __init__(self, argv, tmp_path, notify):
        self.trace = tmp_path / "strace"
        self.output = open(tmp_path / "output.txt", "wb")
        self.proc = subprocess.Popen(
            [need_tool("strace", "strace"), "-ff", "-qq", "-o",
             str(self.trace), "--", *argv], cwd=tmp_path, env=notify.environ(),
            stdout=self.output, stderr=subprocess.STDOUT)
        got = notify.receive(TIMEOUT)
        assert got is not None, (tmp_path / "output.txt").read_text()
        self.pid, message = got
        assert message.startswith("READY=1")

    def stop(self):
        os.kill(self.pid, signal.SIGTERM)
        assert self.proc.wait(TIMEOUT) == 0

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.output.close()


def _request(url, method="GET", body=None):
    request = urllib.request.Request(
        url, method=method, data=body,
        headers={"x-auth-token": "admin", "content-type": "application/json",
                 "openstack-api-version": "placement 1.39"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status


def test_placement_api(notify, tmp_path):
    port = free_port()
    traced = _Traced([str(BIN / "gantt-placement-api"), "--port", str(port),
                      "--db", str(tmp_path / "placement.sqlite"),
                      "--workers", "2"], tmp_path, notify)
    try:
        base = f"http://127.0.0.1:{port}"
        assert _request(base + "/resource_providers", "POST",
                        b'{"name": "cn1"}') == 200
        assert _request(base + "/resource_providers") == 200
        traced.stop()
    finally:
        traced.close()
    _check_trace(traced.trace, "gantt-placement-api")


def test_scheduler(notify, tmp_path):
    helpers.require_rabbit()
    conf, topic = scheduler_conf(tmp_path, 2)
    traced = _Traced([str(BIN / "gantt-scheduler"), "--config-file",
                      str(conf)], tmp_path, notify)
    try:
        with scheduler_ping(topic) as ping:
            assert ping("x") == {"service": "scheduler", "arg": "x"}
        traced.stop()
    finally:
        traced.close()
    _check_trace(traced.trace, "gantt-scheduler")


def test_compute_agent(notify, tmp_path):
    conf, root = agent_conf(tmp_path, "cn-trace")
    traced = _Traced([str(BIN / "gantt-compute-agent"), "--config-file",
                      str(conf), "--root", str(root)], tmp_path, notify)
    try:
        traced.stop()
    finally:
        traced.close()
    _check_trace(traced.trace, "gantt-compute-agent")
