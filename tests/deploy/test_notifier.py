"""placement.service_notify.Notifier on its own: the datagrams it sends
(one per call, STATUS= on one line, STOPPING=1 once), an address in the
abstract namespace ("@name"), the variable taken out of the
environment, and silence without an address or with nobody listening."""

import os
import socket
import uuid

from placement import service_notify
from tests.deploy.notify_socket import NotifySocket


def test_messages_and_status_on_one_line():
    listener = NotifySocket()
    try:
        notifier = service_notify.Notifier(listener.path)
        pid = os.getpid()
        notifier.ready("serving\n  two lines")
        assert listener.receive(1) == (pid, "READY=1\nSTATUS=serving two "
                                            "lines")
        notifier.status("busy")
        assert listener.receive(1) == (pid, "STATUS=busy")
        notifier.stopping("bye")
        notifier.stopping("bye again")
        assert listener.receive(1) == (pid, "STOPPING=1\nSTATUS=bye")
        assert listener.receive(0.2) is None
    finally:
        listener.close()


def test_abstract_namespace_address():
    name = "gantt-test-" + uuid.uuid4().hex
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(1)
        service_notify.Notifier("@" + name).ready()
        assert sock.recv(100) == b"READY=1"


def test_from_environment_takes_the_variable(monkeypatch):
    monkeypatch.setenv("NOTIFY_SOCKET", "/run/systemd/notify")
    notifier = service_notify.Notifier.from_environment()
    assert notifier.address == "/run/systemd/notify"
    assert "NOTIFY_SOCKET" not in os.environ
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert not service_notify.Notifier.from_environment().enabled


def test_nobody_listening_is_not_an_error(tmp_path, caplog):
    caplog.set_level("DEBUG", logger="placement.service_notify")
    missing = tmp_path / "nobody"
    service_notify.Notifier(str(missing)).ready("x")
    assert [r.getMessage() for r in caplog.records] == [
        f"cannot notify the service manager at {missing}: "
        "[Errno 2] No such file or directory"]
