"""gantt-placement-api run as an operator runs it: refused at start on a
database without gantt's schema, honest access lines, /healthcheck,
Prometheus metrics gathered from every worker, SIGHUP, and the proxy
headers of a TLS-terminating balancer. Each test starts the real
command."""

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request

import pytest
import sqlalchemy as sa

from tests import databases
from tests.integration.test_clients import BIN, _free_port

ID = r"req-[0-9a-f-]{36}"


class Api:
    """A running gantt-placement-api; its log is ``self.log_path``."""

    def __init__(self, tmp, config_text, workers=1, threads=1):
        self.tmp = tmp
        self.port = _free_port()
        self.config = tmp / "gantt.conf"
        self.log_path = tmp / "api.log"
        self.config.write_text(
            config_text + f"\n[api]\nbind_host = 127.0.0.1\n"
            f"bind_port = {self.port}\nworkers = {workers}\n"
            f"threads = {threads}\n")
        self.output = open(tmp / "stdout.log", "w")
        self.proc = subprocess.Popen(
            [str(BIN / "gantt-placement-api"), "--config-file",
             str(self.config)], stdout=self.output, stderr=subprocess.STDOUT)
        self.wait_for("ready: listening on")

    def wait_for(self, text, timeout=30):
        deadline = time.monotonic() + timeout
        while text not in self.text():
            assert self.proc.poll() is None, self.text()
            assert time.monotonic() < deadline, f"no {text!r}: {self.text()}"
            time.sleep(0.05)

    def text(self):
        out = (self.tmp / "stdout.log").read_text()
        if self.log_path.exists():
            out += self.log_path.read_text()
        return out

    def request(self, path, method="GET", headers=None, data=None):
        """(status, headers, body) of a request."""
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method, data=data,
            headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=10) as answer:
                return answer.status, answer.headers, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def stop(self):
        self.proc.terminate()
        assert self.proc.wait(30) == 0
        self.output.close()


@pytest.fixture
def sqlite_config(tmp_path):
    db = tmp_path / "placement.sqlite"
    return db, (f"[DEFAULT]\nlog_file = {tmp_path / 'api.log'}\n"
                f"[placement_database]\nconnection = sqlite:///{db}\n")


def _tables(db):
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table'").fetchall()


def test_refused_at_start_on_a_database_without_gantt_schema(tmp_path):
    """The operator guide's units leave sync_on_startup off: on an empty
    PostgreSQL database the server must not start and answer 500s."""
    try:
        url = databases.create_scratch("postgresql")
    except Exception as exc:  # noqa: BLE001 - any connection failure
        databases.unavailable("postgresql", str(exc).splitlines()[0])
    try:
        config = tmp_path / "gantt.conf"
        config.write_text(
            f"[placement_database]\nconnection = {url}\n"
            "sync_on_startup = false\n"
            f"[api]\nbind_port = {_free_port()}\n")
        done = subprocess.run(
            [str(BIN / "gantt-placement-api"), "--config-file",
             str(config)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 1
        shown = sa.make_url(url).render_as_string(hide_password=True)
        assert done.stderr.splitlines() == [
            f"gantt-placement-api: the database {shown} has no gantt "
            f"schema; run gantt-manage --config-file {config} db sync"]
        assert "Traceback" not in done.stderr
        engine = sa.create_engine(url)
        assert sa.inspect(engine).get_table_names() == []
        engine.dispose()
    finally:
        databases.drop_scratch("postgresql", url)


def test_access_lines_carry_the_request_own_id_and_identity(
        tmp_path, sqlite_config):
    """One thread serves both requests: the unauthenticated one must log
    its own id (the one the client got) and no identity."""
    _db, text = sqlite_config
    api = Api(tmp_path, text)
    try:
        version = {"openstack-api-version": "placement 1.6"}
        status, headers, _ = api.request(
            "/traits", headers={"x-auth-token": "admin", **version})
        assert status == 200
        first = headers["x-openstack-request-id"]
        status, headers, body = api.request("/traits", headers=version)
        assert status == 401
        second = headers["x-openstack-request-id"]
        assert first != second
        api.wait_for('"GET /traits" status: 401')
    finally:
        api.stop()
    lines = [line for line in api.text().splitlines()
             if "placement.requestlog" in line]
    assert len(lines) == 2, lines
    form = (r' INFO placement.requestlog \[None (%s) (.*?)\] 127\.0\.0\.1 '
            r'"GET /traits" status: (\d+) len: (\d+) microversion: 1\.6 '
            r'time: \d+\.\d{6}$') % ID
    authed = re.search(form, lines[0])
    refused = re.search(form, lines[1])
    assert authed and refused, lines
    assert authed.groups()[0] == first
    assert authed.group(2).startswith("admin admin")
    assert authed.group(3) == "200"
    assert refused.group(1) == second
    assert refused.group(2) == "- - - - - -"
    assert refused.group(3) == "401"
    assert int(refused.group(4)) == len(body)


def test_healthcheck_follows_the_database_schema(tmp_path, sqlite_config):
    db, text = sqlite_config
    api = Api(tmp_path, text + "[healthcheck]\ndetailed = false\n")
    try:
        status, headers, body = api.request("/healthcheck")
        assert (status, body) == (200, b"database OK")
        # The schema goes (a restore of an older dump, say): 503, so that
        # the load balancer takes this server out.
        with sqlite3.connect(db) as conn:
            conn.execute("DELETE FROM alembic_version")
        status, _, body = api.request("/healthcheck")
        assert status == 503
        assert body == (b"the database has no gantt schema; run "
                        b"gantt-manage db sync")
        assert api.request("/healthcheck", method="HEAD")[0] == 503
    finally:
        api.stop()


def test_healthcheck_warning_names_no_earlier_request(tmp_path,
                                                     sqlite_config):
    db, text = sqlite_config
    api = Api(tmp_path, text)  # one thread: the check follows on it
    try:
        status, headers, _ = api.request(
            "/resource_providers", headers={"x-auth-token": "admin"})
        assert status == 200
        earlier = headers["x-openstack-request-id"]
        # The database file stops being one: the check fails and says
        # why in the log.
        with open(db, "r+b") as f:
            f.write(b"not a database" * 8)
        assert api.request("/healthcheck")[0] == 503
        api.wait_for("healthcheck: the database cannot be used")
        [line] = [line for line in api.text().splitlines()
                  if "healthcheck: the database cannot be used" in line]
        assert earlier in api.text()  # the earlier request's access line
        assert earlier not in line
        assert "admin" not in line
        assert re.search(rf"\[None {ID} - - - - - -\]", line), line
    finally:
        api.stop()


def test_a_client_that_keeps_its_socket_holds_back_no_other(
        tmp_path, sqlite_config):
    _db, text = sqlite_config
    api = Api(tmp_path, text, threads=4)
    held = []
    try:
        # Clients that ask for a close, read their answer and keep the
        # socket open (a slow or careless client).
        for _ in range(3):
            sock = socket.create_connection(("127.0.0.1", api.port))
            held.append(sock)
            sock.sendall(b"GET /healthcheck HTTP/1.1\r\nHost: gantt\r\n"
                         b"Connection: close\r\n\r\n")
            answer = b""
            sock.settimeout(10)
            while chunk := sock.recv(65536):
                answer += chunk
            # The whole answer, then the server's end of the connection.
            assert answer.startswith(b"HTTP/1.1 200 ")
            assert answer.endswith(b"database OK")
        # Another client is answered while they hold theirs: before,
        # the worker waited up to 2 s for each of them to close first.
        req = urllib.request.Request(
            f"http://127.0.0.1:{api.port}/healthcheck")
        with urllib.request.urlopen(req, timeout=1.5) as answer:
            assert answer.status == 200
    finally:
        for sock in held:
            sock.close()
        api.stop()


def _samples(body, name):
    """{labels text: value} of metric ``name`` in an exposition."""
    out = {}
    for line in body.decode().splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            key, _, value = line.rpartition(" ")
            out[key[len(name):]] = float(value)
    return out


def test_metrics_count_every_worker_requests(tmp_path, sqlite_config):
    _db, text = sqlite_config
    api = Api(tmp_path, text, workers=2)
    try:
        admin = {"x-auth-token": "admin"}
        for _ in range(20):
            assert api.request("/resource_providers", headers=admin)[0] == 200
        assert api.request("/resource_providers")[0] == 401
        # A balancer's health checks under their own route.
        assert api.request("/healthcheck")[0] == 200
        assert api.request(
            "/allocation_candidates?resources=VCPU:1",
            headers={**admin, "openstack-api-version": "placement 1.39"}
        )[0] == 200
        for _ in range(6):
            status, headers, body = api.request("/metrics")
            assert status == 200
            assert headers["content-type"].startswith("text/plain")
            requests = _samples(body, "gantt_api_requests_total")
            assert requests[
                '{method="GET",route="/resource_providers",status="200"}'
            ] == 20
            assert requests[
                '{method="GET",route="/resource_providers",status="401"}'
            ] == 1
            assert requests[
                '{method="GET",route="/healthcheck",status="200"}'] == 1
            assert not [k for k in requests if "unmatched" in k]
            assert _samples(body, "gantt_api_allocation_candidates_count"
                            ) == {"": 1.0}
            latency = _samples(body, "gantt_api_request_seconds_count")
            assert latency[
                '{method="GET",route="/resource_providers"}'] == 21
    finally:
        api.stop()


def test_sighup_reloads_options_and_reopens_the_log(tmp_path,
                                                    sqlite_config):
    _db, text = sqlite_config
    api = Api(tmp_path, text, workers=1)
    try:
        body = json.dumps({"name": "CUSTOM_" + "X" * 40}).encode()
        headers = {"x-auth-token": "admin", "content-type":
                   "application/json",
                   "openstack-api-version": "placement 1.7"}
        status, _, _ = api.request("/resource_classes", "POST", headers,
                                   body)
        assert status == 201
        # logrotate moves the file away, the config gets a smaller
        # body limit (a mutable option), then SIGHUP.
        api.log_path.rename(tmp_path / "api.log.1")
        api.config.write_text(api.config.read_text().replace(
            "[api]\n", "[api]\nmax_request_body_size = 16\n"))
        api.proc.send_signal(signal.SIGHUP)
        api.wait_for("reloading (SIGHUP)")
        deadline = time.monotonic() + 30
        while True:
            status, _, answer = api.request("/resource_classes", "POST",
                                            headers, body)
            if status == 413:
                break
            assert time.monotonic() < deadline, (status, answer)
            time.sleep(0.2)
        assert api.proc.poll() is None
        api.wait_for('"POST /resource_classes" status: 413')
    finally:
        api.stop()
    rotated = (tmp_path / "api.log.1").read_text()
    assert "status: 413" not in rotated
    assert "status: 201" in rotated


def test_proxy_headers_of_a_tls_balancer(tmp_path, sqlite_config):
    _db, text = sqlite_config
    api = Api(tmp_path, text + "[oslo_middleware]\n"
              "enable_proxy_headers_parsing = true\n")
    try:
        status, _, body = api.request(
            "/resource_classes/VCPU",
            headers={"x-auth-token": "admin",
                     "openstack-api-version": "placement 1.7",
                     "x-forwarded-proto": "https",
                     "x-forwarded-prefix": "/placement"})
        assert status == 200
        assert json.loads(body)["links"] == [
            {"rel": "self", "href": "/placement/resource_classes/VCPU"}]
    finally:
        api.stop()


def test_sigusr2_writes_a_guru_meditation_report_of_a_worker(
        tmp_path, sqlite_config):
    """oslo.reports in the API's workers (gunicorn's master keeps
    SIGUSR2 for its binary upgrade): the worker that served a request
    writes its report and serves on."""
    _db, text = sqlite_config
    reports = tmp_path / "reports"
    reports.mkdir()
    api = Api(tmp_path, text + f"[oslo_reports]\nlog_dir = {reports}\n")
    try:
        admin = {"x-auth-token": "admin"}
        assert api.request("/resource_providers", headers=admin)[0] == 200
        api.wait_for('"GET /resource_providers" status: 200')
        [worker] = {int(line.split()[2]) for line in api.text().splitlines()
                    if "placement.requestlog" in line}
        assert worker != api.proc.pid
        os.kill(worker, signal.SIGUSR2)
        deadline = time.monotonic() + 30
        while not list(reports.iterdir()):
            assert time.monotonic() < deadline, api.text()
            time.sleep(0.1)
        [path] = reports.iterdir()
        assert path.name.startswith("gantt-placement-api_gurumeditation_")
        while not ("Threads" in path.read_text()
                   and "Configuration" in path.read_text()):
            assert time.monotonic() < deadline, path.read_text()
            time.sleep(0.1)
        assert api.request("/resource_providers", headers=admin)[0] == 200
        assert api.proc.poll() is None
    finally:
        api.stop()
