"""Telling the service manager how a gantt service is doing: systemd's
notification protocol (sd_notify(3)), as a unit of ``Type=notify``
expects it. The manager names a Unix datagram socket in
``NOTIFY_SOCKET``; the service sends it lines ``READY=1`` (start-up is
over: the service answers), ``STOPPING=1`` (it is stopping),
``STATUS=...`` (one line for ``systemctl status``).

Why not oslo.service's helper (oslo_service.systemd): it sends
``READY=1`` and nothing else, and reads the socket's address from the
environment at each call. gantt's services also say ``STOPPING=1`` and
``STATUS=``, and must take the address out of the environment before
they fork: with ``NotifyAccess=main`` only the main process is heard,
workers have nothing to say, and gunicorn's master would otherwise send
``READY=1`` itself as soon as it listens, before any worker has loaded
the application.

Without ``NOTIFY_SOCKET`` (not started by systemd, or by a unit of
another type) every call does nothing. A message that cannot be sent is
logged (debug) and forgotten: the service goes on.
"""

import logging
import os
import socket

LOG = logging.getLogger(__name__)

ENV = "NOTIFY_SOCKET"


def _status_field(text):
    """STATUS= is one line."""
    return "STATUS=" + " ".join(str(text).split())


class Notifier:
    """The messages of one service process to the manager at
    ``address`` (None: no manager listens)."""

    def __init__(self, address=None):
        self.address = address or None
        self._stopping = False

    @classmethod
    def from_environment(cls):
        """The manager of ``$NOTIFY_SOCKET``, which leaves the
        environment: the processes this one starts do not inherit it."""
        return cls(os.environ.pop(ENV, None))

    @property
    def enabled(self):
        return self.address is not None

    def _target(self):
        # "@name" is a socket in the abstract namespace.
        if self.address.startswith("@"):
            return "\0" + self.address[1:]
        return self.address

    def send(self, *fields):
        """Send ``fields`` ("NAME=value", one a line) as one datagram."""
        if not self.enabled:
            return
        message = "\n".join(fields).encode("utf-8")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.connect(self._target())
                sock.sendall(message)
        except OSError as exc:
            LOG.debug("cannot notify the service manager at %s: %s",
                      self.address, exc)

    @staticmethod
    def _with_status(field, status):
        if status is None:
            return (field,)
        return (field, _status_field(status))

    def ready(self, status=None):
        self.send(*self._with_status("READY=1", status))

    def status(self, status):
        self.send(_status_field(status))

    def stopping(self, status=None):
        """``STOPPING=1``, once, however often the stop is asked for."""
        if self._stopping:
            return
        self._stopping = True
        self.send(*self._with_status("STOPPING=1", status))
