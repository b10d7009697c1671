"""A TCP proxy in front of a real database server, that breaks
connections the way a restart or a failover does.

The database is real; only the wire between gantt and it is cut:

- :meth:`FaultProxy.cut` closes every open connection (the server went
  away, as in a restart);
- :meth:`FaultProxy.refuse` turns new connections away for a while
  (the server is down or starting up);
- :meth:`FaultProxy.arm` cuts the next connection that sends a packet
  holding some bytes (``b"COMMIT"``), either before passing the packet
  on (the transaction never committed) or after, once the server has
  answered, without passing the answer on (it committed; the client
  cannot know).
"""

import socket
import threading
import time

BEFORE, AFTER = "before", "after"
# Cut the client's side before passing the packet on, and keep the
# server's side open: the server never learns its client is gone (a
# network partition).
PARTITION = "partition"

# A COMMIT statement on the wire (not "READ COMMITTED" in a BEGIN):
# PostgreSQL's simple query message of "COMMIT" (length 11), MySQL's
# COM_QUERY (command 3) of it.
COMMIT = {"postgresql": b"\x0bCOMMIT\x00", "mysql": b"\x03COMMIT"}
# PostgreSQL's COMMIT sent in a pipeline (the extended protocol's Parse
# message of the unnamed statement "COMMIT"), with a write's statements.
PIPELINED_COMMIT = b"\x00COMMIT\x00"


class _Pair:
    def __init__(self, client, server):
        self.client = client
        self.server = server
        self.drop_answer = False
        self.closed = False

    def close(self):
        self.closed = True
        for sock in (self.client, self.server):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


class FaultProxy:
    """Listens on 127.0.0.1:``port`` (an ephemeral one) and forwards to
    ``host``:``target_port``."""

    def __init__(self, host, target_port):
        self.target = (host, target_port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._pairs = set()
        self._partitioned = []  # server sockets left open by PARTITION
        self._refuse_until = 0.0
        self._armed = None  # (bytes, BEFORE, AFTER or PARTITION)
        self.cuts = 0
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, url):
        """``url`` (an SQLAlchemy URL) pointed at the proxy."""
        import sqlalchemy as sa
        return sa.make_url(url).set(host="127.0.0.1", port=self.port) \
            .render_as_string(hide_password=False)

    def cut(self):
        """Close every open connection."""
        with self._lock:
            pairs, self._pairs = self._pairs, set()
            self.cuts += len(pairs)
        for pair in pairs:
            pair.close()
        self.end_partitions()

    def refuse(self, seconds):
        """Cut every connection and turn new ones away for
        ``seconds``."""
        with self._lock:
            self._refuse_until = time.monotonic() + seconds
        self.cut()

    def arm(self, needle, when):
        """Cut the next connection whose client sends ``needle``, BEFORE
        passing it on or AFTER the server answered it."""
        with self._lock:
            self._armed = (needle, when)

    @property
    def armed(self):
        return self._armed is not None

    def close(self):
        self._stop = True
        self._listener.close()
        self.cut()

    def _accept(self):
        while not self._stop:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if time.monotonic() < self._refuse_until:
                client.close()
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            pair = _Pair(client, server)
            with self._lock:
                self._pairs.add(pair)
            threading.Thread(target=self._upstream, args=(pair,),
                             daemon=True).start()
            threading.Thread(target=self._downstream, args=(pair,),
                             daemon=True).start()

    def _trigger(self, data):
        with self._lock:
            if self._armed is None or self._armed[0] not in data:
                return None
            when = self._armed[1]
            self._armed = None
            return when

    def _upstream(self, pair):
        try:
            while True:
                data = pair.client.recv(65536)
                if not data:
                    break
                when = self._trigger(data)
                if when == BEFORE:
                    break
                if when == PARTITION:
                    self._partition(pair)
                    return
                if when == AFTER:
                    pair.drop_answer = True
                pair.server.sendall(data)
        except OSError:
            pass
        self._forget(pair)

    def _downstream(self, pair):
        try:
            while True:
                data = pair.server.recv(65536)
                if not data or pair.drop_answer:
                    break
                pair.client.sendall(data)
        except OSError:
            pass
        self._forget(pair)

    def end_partitions(self):
        """Close the servers' sides that PARTITION left open."""
        with self._lock:
            partitioned, self._partitioned = self._partitioned, []
        for sock in partitioned:
            try:  # wakes the thread reading it; close alone would not
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _partition(self, pair):
        """Close the client's side only; the server's stays open, idle,
        until the proxy closes."""
        with self._lock:
            self._pairs.discard(pair)
            self._partitioned.append(pair.server)
        try:
            pair.client.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        pair.client.close()

    def _forget(self, pair):
        with self._lock:
            self._pairs.discard(pair)
        pair.close()
