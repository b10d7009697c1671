"""A stand-in for systemd's end of the notification protocol: a Unix
datagram socket, bound in a short temporary folder (a socket's path
must be short), that hears each message with the pid of its sender (the
kernel's credentials, SO_PASSCRED), as systemd does to apply
NotifyAccess=main."""

import os
import shutil
import socket
import struct
import tempfile

_UCRED = struct.Struct("iII")  # pid, uid, gid


class NotifySocket:
    def __init__(self):
        self._dir = tempfile.mkdtemp(prefix="gantt-notify-", dir="/tmp")
        self.path = os.path.join(self._dir, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.sock.bind(self.path)

    def environ(self, base=None):
        env = dict(os.environ if base is None else base)
        env["NOTIFY_SOCKET"] = self.path
        return env

    def receive(self, timeout):
        """(sender pid, message text), or None when nothing comes within
        ``timeout`` seconds."""
        self.sock.settimeout(timeout)
        try:
            data, ancillary, _, _ = self.sock.recvmsg(
                4096, socket.CMSG_SPACE(_UCRED.size))
        except TimeoutError:
            return None
        pid = None
        for level, kind, value in ancillary:
            if (level, kind) == (socket.SOL_SOCKET, socket.SCM_CREDENTIALS):
                pid = _UCRED.unpack(value[:_UCRED.size])[0]
        return pid, data.decode()

    def close(self):
        self.sock.close()
        shutil.rmtree(self._dir, ignore_errors=True)
