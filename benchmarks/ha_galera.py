"""A three-node MariaDB Galera cluster (Debian's galera-4), one node per
controller namespace of benchmarks.ha_topology, for the three-controller
runs (issue 40).

    python -m benchmarks.ha_galera      # forms a cluster, prints JSON, stops

Each node is a mariadbd of its own (no system config: --no-defaults) with
its data under a scratch directory, listening on its namespace's
address. The first node bootstraps the cluster (--wsrep-new-cluster);
the others join it by state transfer (rsync). The root user may log in
over TCP without a password from the bridge's network, as the loopback
server CI provides does.
"""

import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import pymysql

from benchmarks import ha_topology

PROVIDER = "/usr/lib/galera/libgalera_smm.so"
PORT = 3306
# The servers run as Debian's mysql user: run as root, the joiner's rsync
# daemon would drop to nobody, which cannot write the data directory.
USER = "mysql"


class GaleraCluster:
    def __init__(self, net, hosts, root):
        self.net = net
        self.hosts = list(hosts)
        self.root = pathlib.Path(root)
        self.procs = {}

    def _datadir(self, host):
        return self.root / host / "data"

    def _argv(self, host, bootstrap=False):
        """mariadbd's command line: its options in a file of its own,
        which the state transfer scripts read too (they find the data
        directory and the addresses there)."""
        base = self.root / host
        peers = ",".join(self.net.address(h) for h in self.hosts)
        options = [
            f"--user={USER}",
            f"--datadir={self._datadir(host)}",
            f"--socket={base / 'mysqld.sock'}",
            f"--pid-file={base / 'mysqld.pid'}",
            f"--log-error={base / 'error.log'}",
            f"--bind-address={self.net.address(host)}", f"--port={PORT}",
            "--binlog-format=ROW", "--default-storage-engine=InnoDB",
            "--innodb-autoinc-lock-mode=2", "--innodb-buffer-pool-size=64M",
            "--wsrep-on=ON", f"--wsrep-provider={PROVIDER}",
            f"--wsrep-cluster-address=gcomm://{peers}",
            f"--wsrep-node-address={self.net.address(host)}",
            f"--wsrep-node-name={host}", "--wsrep-cluster-name=gantt",
            "--wsrep-sst-method=rsync", "--skip-name-resolve",
        ]
        config = base / "my.cnf"
        config.write_text("[mysqld]\n" + "".join(
            option[2:] + "\n" for option in options))
        argv = ["mariadbd", f"--defaults-file={config}"]
        if bootstrap:
            argv.append("--wsrep-new-cluster")
        return argv

    def start(self, timeout=120):
        first = self.hosts[0]
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        ha_topology.open_parents(self.root)
        for host in self.hosts:
            self._datadir(host).mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["mariadb-install-db", "--no-defaults", f"--user={USER}",
             f"--datadir={self._datadir(first)}",
             "--auth-root-authentication-method=normal", "--skip-test-db"],
            check=True, capture_output=True)
        for host in self.hosts:
            shutil.chown(self.root / host, USER, USER)
            for path in (self.root / host).rglob("*"):
                shutil.chown(path, USER, USER)
        self._start_node(first, bootstrap=True)
        self._wait(first, 1, timeout)
        with self.admin(first) as conn, conn.cursor() as cur:
            cur.execute("CREATE USER IF NOT EXISTS 'root'@'%'")
            cur.execute("GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION")
        for count, host in enumerate(self.hosts[1:], start=2):
            self._start_node(host)
            self._wait(host, count, timeout)

    def _start_node(self, host, bootstrap=False):
        log = open(self.root / host / "stdout.log", "w")
        self.procs[host] = self.net.popen(
            host, self._argv(host, bootstrap), stdout=log,
            stderr=subprocess.STDOUT)

    def connect(self, host, **kwargs):
        """A connection over the network, as gantt's would be."""
        return pymysql.connect(host=self.net.address(host), port=PORT,
                               user="root", connect_timeout=5,
                               autocommit=True, **kwargs)

    def admin(self, host):
        """A connection through the node's socket (root@localhost), for
        what comes before root may log in over the network."""
        return pymysql.connect(
            unix_socket=str(self.root / host / "mysqld.sock"), user="root",
            connect_timeout=5, autocommit=True)

    def status(self, host):
        """wsrep status variables of ``host``'s node."""
        with self.admin(host) as conn, conn.cursor() as cur:
            cur.execute("SHOW STATUS LIKE 'wsrep_%'")
            return dict(cur.fetchall())

    def _wait(self, host, size, timeout):
        deadline = time.monotonic() + timeout
        while True:
            proc = self.procs[host]
            if proc.poll() is not None:
                raise RuntimeError(
                    f"node {host} exited with {proc.returncode}: "
                    + (self.root / host / "error.log").read_text()[-2000:])
            try:
                found = self.status(host)
                if (found.get("wsrep_ready") == "ON"
                        and int(found["wsrep_cluster_size"]) >= size):
                    return found
            except pymysql.MySQLError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"node {host} not in a cluster of {size} "
                                   f"after {timeout} s")
            time.sleep(0.5)

    def kill(self, host):
        """SIGKILL ``host``'s node (a crash: the others carry on)."""
        proc = self.procs.get(host)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def restart(self, host, timeout=120):
        """Start ``host``'s node again; it rejoins by state transfer.
        Returns once it is part of the full cluster again."""
        self._start_node(host)
        return self._wait(host, len(self.hosts), timeout)

    def stop(self):
        for host in reversed(self.hosts):
            proc = self.procs.pop(host, None)
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def main():
    hosts = ["c1", "c2", "c3"]
    root = pathlib.Path(tempfile.mkdtemp(prefix="gantt-galera-"))
    started = time.monotonic()
    try:
        with ha_topology.Topology(hosts) as net:
            cluster = GaleraCluster(net, hosts, root)
            try:
                cluster.start()
                formed = time.monotonic() - started
                with cluster.connect("c1") as conn, conn.cursor() as cur:
                    cur.execute("CREATE DATABASE probe")
                    cur.execute("CREATE TABLE probe.t (id INT PRIMARY KEY)")
                    cur.execute("INSERT INTO probe.t VALUES (1)")
                seen = {}
                for host in hosts:
                    with cluster.connect(
                            host, init_command="SET wsrep_sync_wait=1"
                    ) as conn, conn.cursor() as cur:
                        cur.execute("SELECT COUNT(*) FROM probe.t")
                        seen[host] = cur.fetchone()[0]
                status = cluster.status("c3")
                print(json.dumps({
                    "formed_s": round(formed, 1),
                    "cluster_size": int(status["wsrep_cluster_size"]),
                    "rows_seen_per_node": seen,
                    "provider_version": status["wsrep_provider_version"],
                }, sort_keys=True))
            finally:
                cluster.stop()
    except Exception:
        print(f"kept {root} for a look", file=sys.stderr)
        raise
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
