"""HAProxy in front of the three controllers (issue 40's runs), in the
root namespace on the bridge's address (``net.gateway``):

- ``:5672``: the machine's RabbitMQ (it listens on loopback only), so
  that a controller can be cut off from the broker inside its namespace;
- ``:8778``: the controllers' gantt-placement-api, round robin, checked
  with GET /healthcheck;
- ``:3306``: a Galera cluster in active/backup mode (the first node
  takes every connection while it is Synced; a node that is not, or is
  outside the primary component, is marked down and its connections are
  shut, so that gantt reconnects to the next);
- ``:5432``: a PostgreSQL pair: whichever server is a primary (not in
  recovery) is up; a standby becomes eligible once promoted.

The database checks run a client against each server every second (what
Galera's clustercheck and Patroni's REST check answer in a real
deployment).
"""

import os
import pathlib
import shutil
import socket
import subprocess
import textwrap
import time

BROKER_PORT = 5672
API_PORT = 8778
MYSQL_PORT = 3306
PG_PORT = 5432

_GALERA_CHECK = """\
#!/bin/sh
# HAProxy external check: $3 address, $4 port. Up when Synced (4).
state=$(mariadb -h "$3" -P "$4" -uroot -N -B --connect-timeout=1 \\
        -e "SHOW STATUS LIKE 'wsrep_local_state'" 2>/dev/null | cut -f2)
[ "$state" = 4 ]
"""

_PG_CHECK = """\
#!/bin/sh
# HAProxy external check: $3 address, $4 port. Up when a primary.
primary=$(PGCONNECT_TIMEOUT=1 psql -h "$3" -p "$4" -U postgres -At \\
          -c "SELECT NOT pg_is_in_recovery()" postgres 2>/dev/null)
[ "$primary" = t ]
"""


def ensure_installed(packages=("haproxy", "galera-4", "iptables")):
    """Install the Debian packages a run needs when they are missing
    (a fresh machine may first need its package lists)."""
    def missing():
        return [p for p in packages if "install ok installed" not in
                subprocess.run(["dpkg-query", "-W", "-f=${Status}", p],
                               capture_output=True, text=True).stdout]

    def apt(*words):
        subprocess.run(["apt-get", *words, "-q", "-o",
                        "DPkg::Lock::Timeout=300"], capture_output=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))

    if not missing():
        return
    apt("install", "-y", *missing())
    if missing():
        apt("update")
        apt("install", "-y", *missing())
    if missing():
        raise RuntimeError("could not install " + ", ".join(missing())
                           + " with apt-get")


class HAProxy:
    def __init__(self, net, root, controllers, galera=None, postgres=None):
        """``galera``: the Galera hosts, first one active; ``postgres``:
        the PostgreSQL hosts (primary first)."""
        self.net = net
        self.root = pathlib.Path(root)
        self.controllers = list(controllers)
        self.galera = list(galera or ())
        self.postgres = list(postgres or ())
        self.proc = None
        self.stats_socket = self.root / "haproxy.sock"

    def _script(self, name, text):
        path = self.root / name
        path.write_text(text)
        path.chmod(0o755)
        return path

    def config(self):
        gw = self.net.gateway
        out = [textwrap.dedent(f"""\
            global
                maxconn 4000
                external-check
                insecure-fork-wanted
                stats socket {self.stats_socket} mode 600 level admin
                # To haproxy.log (stdout under -db); only the API's
                # requests that ended abnormally are logged (below).
                log stdout format raw local0
            defaults
                mode tcp
                timeout connect 2s
                timeout client 2h
                timeout server 2h
                timeout check 2s
            listen broker
                bind {gw}:{BROKER_PORT}
                server rabbitmq 127.0.0.1:{BROKER_PORT}
            listen placement_api
                bind {gw}:{API_PORT}
                mode http
                log global
                option httplog
                option dontlog-normal
                timeout client 120s
                timeout server 120s
                balance roundrobin
                # Galera stalls every commit for a few seconds while it
                # evicts a lost node: a slow answer is not a dead API.
                timeout check 10s
                option httpchk GET /healthcheck
                # A request per server connection: reusing one the API
                # is closing at that instant answers 502.
                option http-server-close
                http-reuse never
                retry-on conn-failure empty-response
                retries 3
                option redispatch
            """)]
        out += [f"    server {h} {self.net.address(h)}:{API_PORT} check "
                "inter 1s fall 2 rise 2\n" for h in self.controllers]
        if self.galera:
            check = self._script("galera-check", _GALERA_CHECK)
            out.append(textwrap.dedent(f"""\
                listen galera
                    bind {gw}:{MYSQL_PORT}
                    option external-check
                    external-check path "/usr/bin:/bin"
                    external-check command {check}
                """))
            for i, h in enumerate(self.galera):
                out.append(
                    f"    server {h} {self.net.address(h)}:{MYSQL_PORT} "
                    "check inter 1s fall 2 rise 3 on-marked-down "
                    "shutdown-sessions" + (" backup" if i else "") + "\n")
        if self.postgres:
            check = self._script("pg-check", _PG_CHECK)
            out.append(textwrap.dedent(f"""\
                listen postgres
                    bind {gw}:{PG_PORT}
                    option external-check
                    external-check path "/usr/bin:/bin"
                    external-check command {check}
                """))
            for h in self.postgres:
                out.append(
                    f"    server {h} {self.net.address(h)}:{PG_PORT} check "
                    "inter 1s fall 2 rise 2 on-marked-down "
                    "shutdown-sessions\n")
        return "".join(out)

    def start(self):
        if shutil.which("haproxy") is None:
            ensure_installed(("haproxy",))
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / "haproxy.cfg"
        path.write_text(self.config())
        subprocess.run(["haproxy", "-c", "-q", "-f", str(path)], check=True)
        self.log = open(self.root / "haproxy.log", "w")
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", str(path)],
                                     stdout=self.log,
                                     stderr=subprocess.STDOUT)
        time.sleep(0.5)
        if self.proc.poll() is not None:
            raise RuntimeError("haproxy exited: " + (
                self.root / "haproxy.log").read_text()[-2000:])

    def servers_up(self, backend):
        """{server: "UP"/"DOWN"/...} from the stats socket."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(self.stats_socket))
            sock.sendall(b"show stat\n")
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        states = {}
        for line in data.decode().splitlines()[1:]:
            fields = line.split(",")
            if len(fields) > 17 and fields[0] == backend and fields[1] not in (
                    "FRONTEND", "BACKEND"):
                states[fields[1]] = fields[17]
        return states

    def failed_requests(self, limit=20):
        """The API requests HAProxy answered with a 5xx (its own, such
        as a 502 for a server that closed without answering, or a
        server's), as it logged them: the first ``limit`` lines."""
        found = []
        try:
            text = (self.root / "haproxy.log").read_text(errors="replace")
        except OSError:
            return found
        for line in text.splitlines():
            # client [date] frontend backend/server times status ...
            fields = line.split()
            if (len(fields) > 5 and fields[2] == "placement_api"
                    and fields[5].startswith("5")):
                found.append(line)
        return found[:limit]

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
