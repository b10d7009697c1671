"""A PostgreSQL 15 primary and a streaming standby, each in a namespace of
benchmarks.ha_topology, for the three-controller runs (issue 40).

    python -m benchmarks.ha_postgres    # replicates, fails over, prints
                                        # JSON, stops

    with ha_topology.Topology(["p1", "p2"]) as net:
        with PostgresPair(net, "p1", "p2", root) as pair:   # start()
            pair.connect("p1")            # psycopg, autocommit
            net.block("p1")               # the primary is lost
            pair.promote("p2")            # seconds until p2 takes writes
            pair.fence("p1")              # SIGKILL: never a second primary

Each server is a ``postgres`` of its own, run as the postgres user
(``runuser``) with its data under a scratch directory, listening on its
namespace's address, port 5432, and its Unix socket in the scratch
directory (never /var/run/postgresql: the machine's own server is
there). The primary is made with initdb; the standby with
``pg_basebackup -R`` over the bridge, with a replication slot, and
streams from it asynchronously: a commit returns on the primary before
the standby has it, so a failover may lose the last commits, as with
any asynchronous standby. Anyone on the bridge's network may log in as
postgres, and replicate, without a password (trust).

For speed the servers run with fsync=off and full_page_writes=off:
safe against a server killed (fence), not against the machine
crashing, which a scratch cluster need not survive. synchronous_commit
stays on (with no synchronous standby that is the local flush only,
a no-op without fsync). The WAL sender and receiver give up on a silent
peer after 10 s instead of 60.

Every process of a server carries its data directory on its command
line (the postmaster, runuser) or its cluster_name, unique to the run,
in its title (the postmaster's children): stop() and fence() find them
by that, never by a program's name.
"""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from benchmarks import ha_topology

BIN = pathlib.Path("/usr/lib/postgresql/15/bin")
PORT = 5432
USER = "postgres"
# Common to both servers (pg_basebackup copies the primary's file to
# the standby); the per-server ones are on the command line (_argv).
SETTINGS = {
    "port": PORT,
    "wal_level": "replica",
    "max_wal_senders": 4,
    "max_replication_slots": 4,
    "hot_standby": "on",
    "wal_sender_timeout": "10s",
    "wal_receiver_timeout": "10s",
    "wal_receiver_status_interval": "1s",
    "fsync": "off",
    "full_page_writes": "off",
    "synchronous_commit": "on",
    "shared_buffers": "16MB",
    "max_connections": 40,
    "logging_collector": "off",
    "log_line_prefix": "'%m [%p] '",
}


class PostgresPair:
    def __init__(self, net, primary, standby, root):
        self.net = net
        self.hosts = [primary, standby]
        # The host that takes writes now, and the one that follows it.
        self.primary = primary
        self.standby = standby
        self.root = pathlib.Path(root)
        self.procs = {}
        self.logs = {}
        self.fenced = set()

    # -- where things are --------------------------------------------

    def _base(self, host):
        return self.root / host

    def _datadir(self, host):
        return self._base(host) / "data"

    def cluster_name(self, host):
        """The server's cluster_name: in each of its process titles and,
        for the standby, its application_name on the primary."""
        return f"{self.root.name}-{host}"

    def slot(self, host):
        return "standby_" + "".join(
            c if c.isalnum() else "_" for c in host.lower())

    def _as_postgres(self, host, argv):
        return self.net.command(host, ["runuser", "-u", USER, "--", *argv])

    def _run(self, host, argv, timeout=120):
        done = subprocess.run(
            self._as_postgres(host, argv), cwd=self.root,
            capture_output=True, text=True, check=False, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} on {host} exited with "
                               f"{done.returncode}: {done.stderr[-2000:]}")
        return done

    # -- starting ----------------------------------------------------

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self, timeout=120):
        """initdb and start the primary, copy it to the standby with
        pg_basebackup and start that; return once the primary shows the
        standby streaming."""
        primary, standby = self.primary, self.standby
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)
        ha_topology.open_parents(self.root)
        for host in self.hosts:
            self._base(host).mkdir(exist_ok=True)
            shutil.chown(self._base(host), USER, USER)
        self._run(primary, [
            str(BIN / "initdb"), "-D", str(self._datadir(primary)),
            "-U", USER, "--auth=trust", "--no-locale", "--encoding=UTF8",
            "--no-sync", "--no-instructions"])
        network = f"{self.net.network}.0/24"
        with open(self._datadir(primary) / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {network} trust\n"
                      f"host replication all {network} trust\n")
        with open(self._datadir(primary) / "postgresql.conf", "a") as conf:
            conf.write("\n# benchmarks.ha_postgres\n" + "".join(
                f"{key} = {value}\n" for key, value in SETTINGS.items()))
        self._start_server(primary)
        self._wait(primary, self._writable, timeout)
        self._run(standby, [
            str(BIN / "pg_basebackup"), "-h", self.net.address(primary),
            "-p", str(PORT), "-U", USER, "-D", str(self._datadir(standby)),
            "-R", "-X", "stream", "-C", "-S", self.slot(standby),
            "--checkpoint=fast", "--no-sync"], timeout=timeout)
        self._start_server(standby)
        self._wait(standby, self._in_recovery, timeout)
        self._wait(primary, lambda host: self._streaming(host, standby),
                   timeout)

    def make_synchronous(self):
        """Commits on the primary wait until the standby has them
        (synchronous_standby_names = '*'): what a failover that must not
        lose a claim needs; the primary then blocks while it has no
        standby."""
        with self.connect(self.primary) as conn:
            conn.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
            conn.execute("SELECT pg_reload_conf()")
        _wait_for(lambda: any(
            row.get("sync_state") == "sync"
            for row in self.status(self.primary)["senders"]),
            30, "the standby to become synchronous")

    def _argv(self, host):
        return [str(BIN / "postgres"), "-D", str(self._datadir(host)),
                "-c", f"listen_addresses={self.net.address(host)}",
                "-c", f"unix_socket_directories={self._base(host)}",
                "-c", f"cluster_name={self.cluster_name(host)}"]

    def _start_server(self, host):
        if host in self.fenced:
            raise RuntimeError(f"{host} was fenced")
        log = self.logs.get(host)
        if log is None:
            log = self.logs[host] = open(self._base(host) / "server.log",
                                         "ab")
        # A session of its own: a ^C at the terminal reaches us, and we
        # stop the servers, rather than reaching them first.
        self.procs[host] = subprocess.Popen(
            self._as_postgres(host, self._argv(host)), cwd=self.root,
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)

    def log_tail(self, host, size=2000):
        try:
            return (self._base(host) / "server.log").read_text(
                errors="replace")[-size:]
        except OSError:
            return ""

    def _wait(self, host, ready, timeout):
        deadline = time.monotonic() + timeout
        last = None
        while True:
            proc = self.procs.get(host)
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"postgres on {host} exited with "
                                   f"{proc.returncode}: "
                                   + self.log_tail(host))
            try:
                if ready(host):
                    return
            except psycopg.Error as exc:
                last = exc
            if time.monotonic() > deadline:
                raise RuntimeError(f"{host} not ready after {timeout} s "
                                   f"({last}): " + self.log_tail(host))
            time.sleep(0.2)

    def _in_recovery(self, host):
        with self.connect(host) as conn:
            return conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]

    def _writable(self, host):
        """Whether ``host`` takes writes: it assigns a transaction id,
        which a server in recovery refuses."""
        with self.connect(host) as conn:
            conn.execute("SELECT pg_current_xact_id()")
            return True

    def _streaming(self, host, standby):
        with self.connect(host) as conn:
            row = conn.execute(
                "SELECT state FROM pg_stat_replication "
                "WHERE application_name = %s",
                [self.cluster_name(standby)]).fetchone()
            return row is not None and row[0] == "streaming"

    # -- using -------------------------------------------------------

    def connect(self, host, dbname="postgres", **kwargs):
        """A connection over the bridge, as gantt's would be."""
        kwargs.setdefault("connect_timeout", 5)
        kwargs.setdefault("autocommit", True)
        return psycopg.connect(host=self.net.address(host), port=PORT,
                               user=USER, dbname=dbname, **kwargs)

    def is_primary(self, host):
        return not self._in_recovery(host)

    def status(self, host):
        """What ``host``'s server says of replication: whether it is in
        recovery, its WAL position, the standbys it sends to and, on a
        standby, its WAL receiver."""
        with self.connect(host) as conn:
            conn.row_factory = dict_row
            found = conn.execute(
                "SELECT pg_is_in_recovery() AS in_recovery, "
                "CASE WHEN pg_is_in_recovery() "
                "THEN pg_last_wal_replay_lsn() "
                "ELSE pg_current_wal_lsn() END::text AS lsn").fetchone()
            found["senders"] = conn.execute(
                "SELECT application_name, client_addr::text, state, "
                "sync_state, replay_lsn::text FROM pg_stat_replication"
            ).fetchall()
            found["receiver"] = conn.execute(
                "SELECT status, sender_host, slot_name "
                "FROM pg_stat_wal_receiver").fetchone()
            return found

    def create_database(self, name):
        """On the primary; the standby gets it by replication."""
        with self.connect(self.primary) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(
                sql.Identifier(name)))

    def promote(self, host, timeout=60):
        """Make ``host``'s standby a primary; return the seconds until it
        took writes."""
        started = time.monotonic()
        with self.connect(host) as conn:
            done = conn.execute("SELECT pg_promote(true, %s)",
                                [int(timeout)]).fetchone()[0]
        if not done:
            raise RuntimeError(f"{host} not promoted after {timeout} s: "
                               + self.log_tail(host))
        self._wait(host, self._writable, timeout)
        self.primary = host
        if self.standby == host:
            self.standby = None
        return time.monotonic() - started

    def fence(self, host, timeout=5):
        """Stop ``host``'s server at once, by signal on this machine so
        that it works whatever the network does: what a cluster manager
        does to a lost primary so that it never serves again. An
        immediate shutdown (SIGQUIT: no checkpoint, as a crash), then
        SIGKILL for whatever is left after ``timeout`` s. This pair
        never starts it again. Returns the seconds it took."""
        started = time.monotonic()
        self.fenced.add(host)
        self._shutdown(host, signal.SIGQUIT, timeout)
        self._kill(host)
        return time.monotonic() - started

    # -- stopping ----------------------------------------------------

    def pids(self, host):
        """Live processes of ``host``'s server: its data directory is on
        their command line, or its cluster_name in their title."""
        datadir = str(self._datadir(host))
        title = f"postgres: {self.cluster_name(host)}: "
        found = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    argv = f.read().decode(errors="replace").split("\0")
                with open(f"/proc/{entry.name}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state in "ZX":
                continue
            if datadir in argv or argv[0].startswith(title):
                found.append(int(entry.name))
        return found

    def _postmaster(self, host):
        for pid in self.pids(host):
            try:
                argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if argv.split(b"\0")[0] == str(BIN / "postgres").encode():
                return pid
        return None

    def _reap(self, host):
        proc = self.procs.get(host)
        if proc is not None:
            proc.poll()

    def _shutdown(self, host, sig, timeout):
        """Send the postmaster ``sig`` (SIGINT: fast shutdown, SIGQUIT:
        immediate) and wait until its processes are gone: it takes its
        children down itself and reaps them."""
        postmaster = self._postmaster(host)
        if postmaster is None:
            return
        _signal([postmaster], sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._reap(host)
            if not self.pids(host):
                return
            time.sleep(0.05)

    def _kill(self, host, timeout=30):
        """SIGKILL every process of ``host``'s server, the last resort.
        They are stopped first, so that none forks a process we have
        not seen. The postmaster's children, orphaned, are left to
        PID 1 to reap (zombies until it does)."""
        deadline = time.monotonic() + timeout
        postmaster = self._postmaster(host)
        while True:
            self._reap(host)
            pids = self.pids(host)
            if not pids:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{host}: processes {pids} outlived "
                                   "SIGKILL")
            _signal(pids, signal.SIGSTOP)
            # With any that forked before it stopped.
            _signal(self.pids(host), signal.SIGKILL)
            time.sleep(0.05)
        proc = self.procs.pop(host, None)
        if proc is not None:
            proc.wait()
        if postmaster is not None:
            self._release_shared_memory(host, postmaster)

    def _release_shared_memory(self, host, postmaster):
        """A killed postmaster leaves its System V segment (a few bytes)
        behind: remove it, if postmaster.pid names it, that postmaster
        made it and nothing is attached any longer."""
        try:
            lines = (self._datadir(host) / "postmaster.pid").read_text(
            ).splitlines()
            key, shmid = (int(word) for word in lines[6].split())
            segments = pathlib.Path("/proc/sysvipc/shm").read_text()
        except (OSError, IndexError, ValueError):
            return
        if int(lines[0]) != postmaster:
            return
        for row in segments.splitlines()[1:]:
            words = row.split()
            if (int(words[0]), int(words[1])) == (key, shmid) and \
                    int(words[4]) == postmaster and int(words[6]) == 0:
                subprocess.run(["ipcrm", "-m", str(shmid)], check=False,
                               capture_output=True)

    def stop(self, timeout=15):
        """Stop both servers (a fast shutdown, then SIGKILL for what is
        left); leaves no process of theirs behind."""
        errors = []
        # The standby first: the primary's fast shutdown then has no
        # WAL sender to wait for.
        for host in sorted(self.hosts, key=lambda h: h != self.standby):
            try:
                self._shutdown(host, signal.SIGINT, timeout)  # fast
                self._kill(host)
            except Exception as exc:  # stop the other one all the same
                errors.append(exc)
        for log in self.logs.values():
            log.close()
        self.logs.clear()
        if errors:
            raise errors[0]


def _signal(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _wait_for(check, timeout, what):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            found = check()
            if found:
                return found
        except psycopg.Error as exc:
            last = exc
        time.sleep(0.1)
    raise RuntimeError(f"{what} after {timeout} s ({last})")


def run():
    """The self-check: start a pair on p1 and p2, write on p1 and read
    on p2, cut p1 off, promote p2, fence p1, write on p2, heal; return
    the figures."""
    hosts = ["p1", "p2"]
    root = pathlib.Path(tempfile.mkdtemp(prefix="gantt-pg-"))
    started = time.monotonic()
    figures = {}
    try:
        with ha_topology.Topology(hosts, name="gpg",
                                  network="10.78.0") as net:
            pair = PostgresPair(net, "p1", "p2", root)
            try:
                pair.start()
                figures["start_s"] = round(time.monotonic() - started, 2)
                figures["streaming"] = pair.status("p1")["senders"]
                pair.create_database("probe")
                with pair.connect("p1", "probe") as conn:
                    conn.execute("CREATE TABLE t (id int PRIMARY KEY, "
                                 "written_on text NOT NULL)")
                    conn.execute("INSERT INTO t VALUES (1, 'p1')")

                def on_standby():
                    with pair.connect("p2", "probe") as conn:
                        return conn.execute(
                            "SELECT written_on FROM t WHERE id = 1"
                        ).fetchone()

                seen = _wait_for(on_standby, 30, "row 1 not on p2")
                figures["replication_seen"] = seen[0] == "p1"
                figures["standby_in_recovery"] = not pair.is_primary("p2")
                net.block("p1")
                figures["promote_s"] = round(pair.promote("p2"), 2)
                figures["p2_primary"] = pair.is_primary("p2")
                figures["fence_s"] = round(pair.fence("p1"), 2)
                figures["p1_processes_after_fence"] = len(pair.pids("p1"))
                with pair.connect("p2", "probe") as conn:
                    conn.execute("INSERT INTO t VALUES (2, 'p2')")
                net.unblock("p1")
                with pair.connect("p2", "probe") as conn:
                    figures["rows_after"] = conn.execute(
                        "SELECT id, written_on FROM t ORDER BY id"
                    ).fetchall()
                try:
                    pair.connect("p1").close()
                    figures["p1_answers_after_heal"] = True
                except psycopg.OperationalError:
                    figures["p1_answers_after_heal"] = False
            finally:
                pair.stop()
    except BaseException:
        print(f"kept {root} for a look", file=sys.stderr)
        raise
    shutil.rmtree(root, ignore_errors=True)
    figures["total_s"] = round(time.monotonic() - started, 2)
    return figures


def main():
    print(json.dumps(run(), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
