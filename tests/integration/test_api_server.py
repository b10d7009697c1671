"""gantt-placement-api itself, over raw HTTP: it listens where [api]
says, whatever [DEFAULT] host (gantt-scheduler's name) is, and a request
that gunicorn refuses before the application sees it gets the API's JSON
error body, not gunicorn's HTML page."""

import json
import socket
import subprocess
import time

import pytest

from tests.integration.test_clients import BIN, _free_port


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """gantt-placement-api with one config file for every service: its
    [DEFAULT] host names a scheduler, which no address resolves to."""
    tmp = tmp_path_factory.mktemp("api-server")
    port = _free_port()
    config = tmp / "gantt.conf"
    config.write_text(
        "[DEFAULT]\nhost = scheduler-7.invalid\n"
        f"[api]\nbind_host = 127.0.0.1\nbind_port = {port}\n"
        "workers = 1\nthreads = 2\n"
        f"[placement_database]\nconnection = sqlite:///"
        f"{tmp / 'placement.sqlite'}\n")
    log = open(tmp / "server.log", "w")
    proc = subprocess.Popen(
        [str(BIN / "gantt-placement-api"), "--config-file", str(config)],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, (tmp / "server.log").read_text()
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "server did not listen"
            time.sleep(0.05)
    yield port
    proc.terminate()
    proc.wait(30)
    log.close()


def _exchange(port, data):
    """Send raw bytes; (status, headers, body) of the answer."""
    with socket.create_connection(("127.0.0.1", port), 10) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


def _error(status, headers, body):
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body)
    error, = json.loads(body)["errors"]
    assert error["status"] == status
    assert error["request_id"] == headers["x-openstack-request-id"]
    return error


def test_listens_on_api_bind_options(server):
    status, headers, body = _exchange(
        server, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200
    assert json.loads(body)["versions"][0]["id"] == "v1.0"


def test_bad_content_length_is_a_json_400(server):
    status, headers, body = _exchange(server, (
        b"POST /resource_providers HTTP/1.1\r\nHost: x\r\n"
        b"x-auth-token: admin\r\nopenstack-api-version: placement 1.30\r\n"
        b"content-type: application/json\r\ncontent-length: hi mom\r\n\r\n"
        b'{"name": "x"}'))
    assert status == 400
    error = _error(status, headers, body)
    # The words of the application (and of OpenStack Placement) for it.
    assert "content-length header must be an integer" in error["detail"]
    # The version the request named, with its error code.
    assert headers["openstack-api-version"] == "placement 1.30"
    assert error["code"] == "placement.undefined_code"


@pytest.mark.parametrize("request_bytes, status, detail", [
    (b"get / HTTP/1.1\r\nHost: x\r\n\r\n", 400,
     "Invalid HTTP method: 'get'"),
    (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414,
     "Request Line is too large"),
    (b"GET / HTTP/1.1\r\nHost: x\r\nx-big: " + b"b" * 9000 + b"\r\n\r\n",
     431, "limit request headers fields size"),
    (b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", 400, "Invalid HTTP Version"),
], ids=["lower-case method", "long line", "long header", "http version"])
def test_requests_gunicorn_refuses_get_json(server, request_bytes, status,
                                             detail):
    got, headers, body = _exchange(server, request_bytes)
    assert got == status
    error = _error(status, headers, body)
    assert detail in error["detail"]
    assert headers["openstack-api-version"] == "placement 1.0"
    assert "code" not in error


def test_a_declared_body_past_the_limit_is_a_json_413(server):
    status, headers, body = _exchange(server, (
        b"POST /resource_providers HTTP/1.1\r\nHost: x\r\n"
        b"x-auth-token: admin\r\ncontent-type: application/json\r\n"
        b"content-length: 5000000\r\n\r\n{}"))
    assert status == 413
    assert "max_request_body_size" in _error(status, headers, body)[
        "detail"]

