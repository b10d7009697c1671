"""The deployment the operator guide documents: the WSGI application
under gunicorn run directly (the documented command line), and the
systemd units in etc/systemd/."""

import configparser
import json
import os
import pathlib
import shlex
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from gantt.cmd import manage

REPO = pathlib.Path(__file__).parents[2]
BIN = pathlib.Path(sys.executable).parent
UNITS = sorted((REPO / "etc/systemd").glob("*.service"))


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(url):
    request = urllib.request.Request(url, headers={
        "x-auth-token": "admin", "accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _wait(url, deadline=60):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            return _get(url)
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    raise AssertionError(f"{url} never answered")


def test_gunicorn_serves_the_wsgi_application_after_db_sync(tmp_path):
    config = tmp_path / "gantt.conf"
    config.write_text(f"[placement_database]\nconnection = "
                      f"sqlite:///{tmp_path / 'placement.sqlite'}\n")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env["GANTT_CONFIG_FILE"] = str(config)
    log = open(tmp_path / "gunicorn.log", "w")
    server = subprocess.Popen(
        [str(BIN / "gunicorn"), "--workers", "2", "--threads", "2",
         "--bind", f"127.0.0.1:{port}", "--worker-class",
         "gantt.cmd.api.JsonErrorWorker", "placement.api.wsgi:application"],
        env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/resource_providers"
    try:
        status, body = _wait(url)
        # No worker migrated the schema: each says what to run.
        assert status == 503, body
        assert body["errors"][0]["detail"].strip().endswith(
            "the database has no gantt schema; run gantt-manage db sync")
        assert manage.main(["--config-file", str(config), "db", "sync"]) == 0
        for _ in range(4):  # whichever worker answers
            assert _get(url) == (200, {"resource_providers": []})
    finally:
        server.terminate()
        server.wait(30)
        log.close()


@pytest.mark.parametrize("unit", UNITS, ids=[u.stem for u in UNITS])
def test_systemd_unit_runs_a_gantt_service(unit):
    parsed = configparser.ConfigParser(strict=False, interpolation=None)
    parsed.optionxform = str
    parsed.read(unit)
    command = shlex.split(parsed["Service"]["ExecStart"])
    assert pathlib.Path(command[0]).name == unit.stem
    assert (BIN / unit.stem).exists()
    assert command[1:3] == ["--config-file", "/etc/gantt/gantt.conf"]
    # The service's own --help knows the flags the unit passes.
    help_text = subprocess.run([str(BIN / unit.stem), "--help"],
                               capture_output=True, text=True,
                               timeout=60).stdout
    assert "--config-file" in help_text
    assert parsed["Service"]["KillSignal"] == "SIGTERM"
    assert parsed["Service"]["RestartPreventExitStatus"] == "2"
    assert parsed["Install"]["WantedBy"] == "multi-user.target"
