"""Three controllers under a conductor's load while things fail (issue
40): every claim must stay correct through node loss and partitions.

    python -m benchmarks.ha_run --topology galera-haproxy|galera-multiwriter
        |postgresql [--seconds 200] [--hosts 40] [--clients 6]
        [--faults NAME,...] [--keep DIR]

Namespaces c1, c2, c3 (controllers) and client on one bridge
(benchmarks.ha_topology). Each controller runs gantt-placement-api and
gantt-scheduler (2 workers); the database is

- galera-haproxy: a MariaDB Galera node per controller, gantt reaching
  the cluster through HAProxy in active/backup mode;
- galera-multiwriter: the same cluster, each controller writing to its
  own node;
- postgresql: a primary (c1) and a synchronous streaming standby (c2)
  behind HAProxy, which sends connections to whichever is a primary.

HAProxy (benchmarks.ha_haproxy) also forwards the machine's RabbitMQ to
the bridge and balances the three APIs. The client namespace runs the
conductor (benchmarks.ha_conductor). Faults strike one after another,
each timed; afterwards the database is checked: no provider over
capacity, every instance the client holds live has its allocation on its
host, no allocation without a live instance other than those of calls
that failed, no instance on two hosts, generations never moving back
(sampled through the API during the run), anti-affinity held. Failed
calls are counted by cause and by whether they overlap a fault. Prints
JSON. Runs as root; installs haproxy, galera-4 and iptables with
apt-get when missing.
"""

import argparse
import collections
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid as uuidlib

import requests
import sqlalchemy as sa
from oslo_config import cfg

from benchmarks import ha_galera, ha_haproxy, ha_postgres, ha_topology
from cloudfile import loader
from placement.db import store as store_mod
from rpc import conf as rpc_conf
from scheduler import host_options
from tests import databases, soak_harness
from tests.rpc import helpers

BIN = pathlib.Path(sys.executable).parent
REPO = pathlib.Path(__file__).parents[1]
CONTROLLERS = ["c1", "c2", "c3"]
HOSTS = [*CONTROLLERS, "client"]
TOPOLOGIES = ("galera-haproxy", "galera-multiwriter", "postgresql")
FAULTS = {
    "galera-haproxy": ["kill_controller", "partition_controller",
                       "kill_active_db_node", "minority_partition",
                       "broker_restart"],
    "galera-multiwriter": ["kill_controller", "partition_controller",
                           "kill_db_node", "minority_partition",
                           "broker_restart"],
    "postgresql": ["kill_controller", "partition_controller",
                   "isolate_primary", "broker_restart"],
}
# How long a partition or a lost node lasts before it heals or returns.
OUTAGE = 10.0
# How long a killed controller stays down (systemd's RestartSec).
RESTART_AFTER = 5.0
HEADERS = {"x-auth-token": "admin",
           "openstack-api-version": "placement 1.39"}


class Run:
    def __init__(self, topology, root, hosts=40, clients=6, seconds=200.0,
                 faults=None):
        self.topology = topology
        self.root = pathlib.Path(root)
        self.hosts = hosts
        self.clients = clients
        self.seconds = seconds
        self.faults = list(faults or FAULTS[topology])
        self.exchange = "gantt-ha-" + uuidlib.uuid4().hex[:8]
        self.net = self.cluster = self.pair = self.haproxy = None
        self.procs = {}  # (host, "api"|"scheduler") -> Popen
        self.timeline = []
        self.samples_back = []  # generations seen moving back
        self._stop_sampling = threading.Event()

    # -- where things are ------------------------------------------------

    @property
    def galera(self):
        return self.topology.startswith("galera")

    def db_url(self, host):
        gw = self.net.gateway
        if self.topology == "galera-haproxy":
            return f"mysql+pymysql://root@{gw}:{ha_haproxy.MYSQL_PORT}/gantt"
        if self.topology == "galera-multiwriter":
            return (f"mysql+pymysql://root@{self.net.address(host)}:"
                    f"{ha_galera.PORT}/gantt")
        return f"postgresql+psycopg://postgres@{gw}:{ha_haproxy.PG_PORT}/gantt"

    def admin_url(self):
        """The harness's own view of the database (through HAProxy, or a
        node that is up)."""
        if self.topology == "galera-multiwriter":
            return self.db_url("c2")
        return self.db_url(None)

    @property
    def broker_url(self):
        return f"rabbit://guest:guest@{self.net.gateway}:5672/"

    @property
    def placement_url(self):
        return f"http://{self.net.gateway}:{ha_haproxy.API_PORT}"

    # -- set up ------------------------------------------------------------

    def start(self):
        ha_haproxy.ensure_installed(("haproxy", "galera-4", "iptables"))
        self.root.mkdir(parents=True, exist_ok=True)
        self.net = ha_topology.Topology(HOSTS).__enter__()
        if self.galera:
            self.cluster = ha_galera.GaleraCluster(self.net, CONTROLLERS,
                                                   self.root / "galera")
            self.cluster.start()
            with self.cluster.connect("c1") as conn, conn.cursor() as cur:
                cur.execute("CREATE DATABASE gantt")
        else:
            self.pair = ha_postgres.PostgresPair(self.net, "c1", "c2",
                                                 self.root / "postgres")
            self.pair.start()
            self.pair.make_synchronous()
            self.pair.create_database("gantt")
        self.haproxy = ha_haproxy.HAProxy(
            self.net, self.root / "haproxy", CONTROLLERS,
            galera=CONTROLLERS if self.galera else None,
            postgres=None if self.galera else ["c1", "c2"])
        self.haproxy.start()
        _wait(lambda: soak_harness.database_up(self.admin_url()), 60,
              "the database through HAProxy")
        conf = self.root / "admin.conf"
        conf.write_text(f"[placement_database]\nconnection = "
                        f"{self.admin_url()}\n")
        subprocess.run([str(BIN / "gantt-manage"), "--config-file",
                        str(conf), "db", "sync"], check=True,
                       capture_output=True)
        self._load_cloud()
        for host in CONTROLLERS:
            self.start_controller(host)
        for host in CONTROLLERS:
            _wait(lambda h=host: self._controller_ready(h), 90,
                  f"the services of {host}")

    def _admin_store(self):
        conf = databases.make_conf(self.admin_url())
        host_options.register_opts(conf)
        return store_mod.Store.open(conf)

    def _load_cloud(self):
        cloud = self.root / "cloud.yaml"
        cloud.write_text("providers:\n" + "".join(
            f"  - name: cn{i}\n"
            f"    inventories: {{VCPU: 16, MEMORY_MB: 65536, "
            f"DISK_GB: 1024}}\n"
            f"    compute: {{cell: cell1}}\n" for i in range(self.hosts)))
        store = self._admin_store()
        try:
            loader.load(store, loader.read(str(cloud)))
        finally:
            store.dispose()

    def _config(self, host):
        address = self.net.address(host)
        path = self.root / f"{host}.conf"
        # Its own state (the decision log), kept with the logs (--keep).
        state = self.root / f"{host}-state"
        state.mkdir(exist_ok=True)
        path.write_text(textwrap.dedent(f"""\
            [DEFAULT]
            transport_url = {self.broker_url}
            control_exchange = {self.exchange}
            host = {host}
            state_path = {state}
            log_file = {self.root / host}-scheduler.log
            graceful_shutdown_timeout = 10
            [scheduler]
            workers = 2
            log_worker_stats = false
            [placement_database]
            connection = {self.db_url(host)}
            sync_on_startup = false
            db_retry_count = 30
            [api]
            bind_host = {address}
            bind_port = {ha_haproxy.API_PORT}
            workers = 1
            threads = 8
            metrics = false
            [oslo_messaging_rabbit]
            amqp_auto_delete = true
            heartbeat_timeout_threshold = 10
            rabbit_qos_prefetch_count = 1
            rabbit_retry_interval = 1
            rabbit_retry_backoff = 1
            rabbit_interval_max = 2
            """))
        return path

    def start_controller(self, host):
        config = self._config(host)
        for role, program in (("api", "gantt-placement-api"),
                              ("scheduler", "gantt-scheduler")):
            log = open(self.root / f"{host}-{role}.out", "ab")
            argv = [str(BIN / program), "--config-file", str(config)]
            if role == "api":
                argv += ["--log-file", str(self.root / f"{host}-api.log")]
            self.procs[host, role] = self.net.popen(
                host, argv, stdout=log, stderr=subprocess.STDOUT, cwd=REPO)

    def _controller_ready(self, host):
        for role in ("api", "scheduler"):
            proc = self.procs[host, role]
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{host}'s {role} exited with {proc.returncode}: "
                    + _tail(self.root / f"{host}-{role}.out"))
        log = self.root / f"{host}-scheduler.log"
        ready = log.exists() and log.read_text().count(
            "gantt-scheduler ready") >= 2
        try:
            up = requests.get(f"http://{self.net.address(host)}:"
                              f"{ha_haproxy.API_PORT}/healthcheck",
                              timeout=2).ok
        except requests.RequestException:
            up = False
        return ready and up

    # -- faults --------------------------------------------------------------

    def kill_controller(self, host="c2"):
        """SIGKILL every gantt process of ``host``; start them again
        after RESTART_AFTER seconds (as systemd would)."""
        for pid in self._gantt_pids(host):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for role in ("api", "scheduler"):
            self.procs[host, role].wait()
        time.sleep(RESTART_AFTER)
        self.start_controller(host)
        _wait(lambda: self._controller_ready(host), 90,
              f"{host}'s services back")

    def _gantt_pids(self, host):
        """The processes of ``host``'s gantt services: the two started
        and every process under them (workers)."""
        pids = []
        todo = [self.procs[host, role].pid for role in ("api", "scheduler")]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            todo.extend(soak_harness._children(pid))
        return pids

    def partition_controller(self, host="c3"):
        """Cut ``host`` from the broker and the database (HAProxy, and
        its own node when it writes there), then heal."""
        self.net.block(host, self.net.gateway)
        if self.topology == "galera-multiwriter":
            self.net.block(host, self.net.address(host), ha_galera.PORT)
        time.sleep(OUTAGE)
        self.net.unblock(host, self.net.gateway)
        if self.topology == "galera-multiwriter":
            self.net.unblock(host, self.net.address(host), ha_galera.PORT)

    def kill_active_db_node(self):
        """SIGKILL the Galera node HAProxy sends connections to; start it
        again after OUTAGE seconds (it rejoins by state transfer)."""
        self.kill_db_node("c1")

    def kill_db_node(self, host="c1"):
        self.cluster.kill(host)
        time.sleep(OUTAGE)
        self.cluster.restart(host)

    def minority_partition(self, host="c3"):
        """Cut ``host`` (its Galera node and its services) from the other
        two controllers: its node leaves the primary component and stops
        taking reads and writes until it is healed."""
        for peer in CONTROLLERS:
            if peer != host:
                self.net.cut(host, peer)
        time.sleep(OUTAGE)
        for peer in CONTROLLERS:
            if peer != host:
                self.net.heal(host, peer)
        _wait(lambda: self.cluster.status(host).get(
            "wsrep_local_state") == "4", 120, f"{host}'s node synced")

    def isolate_primary(self):
        """Cut the PostgreSQL primary's host off the network, promote
        the standby, fence the old primary (a cluster manager's work),
        heal the network."""
        old, new = self.pair.primary, self.pair.standby
        self.net.block(old)
        time.sleep(2.0)  # a cluster manager's detection time
        self.pair.promote(new)
        self.pair.fence(old)
        time.sleep(OUTAGE - 2.0)
        self.net.unblock(old)

    def broker_restart(self):
        soak_harness._run(["rabbitmqctl", "stop_app"])
        soak_harness._run(["rabbitmqctl", "start_app"])

    # -- the run --------------------------------------------------------------

    def _sample_generations(self):
        """Every provider's generation, through the API, twice a second:
        none may move back."""
        seen = {}
        while not self._stop_sampling.wait(0.5):
            try:
                answer = requests.get(self.placement_url
                                      + "/resource_providers",
                                      headers=HEADERS, timeout=10)
                if not answer.ok:
                    continue
                for rp in answer.json()["resource_providers"]:
                    before = seen.get(rp["uuid"], -1)
                    if rp["generation"] < before:
                        self.samples_back.append(
                            (rp["uuid"], before, rp["generation"]))
                    seen[rp["uuid"]] = max(before, rp["generation"])
            except (requests.RequestException, ValueError):
                continue

    def run(self):
        out = self.root / "conductor.json"
        client_log = open(self.root / "client.out", "wb")
        self.began = time.monotonic()
        client = self.net.popen("client", [
            sys.executable, "-m", "benchmarks.ha_conductor",
            "--transport-url", self.broker_url, "--exchange", self.exchange,
            "--placement", self.placement_url, "--seconds",
            str(self.seconds), "--clients", str(self.clients), "--out",
            str(out)], cwd=REPO, stdout=client_log,
            stderr=subprocess.STDOUT)
        # close() ends it too when a fault fails the run part way.
        self.procs["client", "conductor"] = client
        sampler = threading.Thread(target=self._sample_generations,
                                   daemon=True)
        sampler.start()
        step = self.seconds / (len(self.faults) + 1)
        for index, name in enumerate(self.faults, start=1):
            time.sleep(max(0.0, self.began + step * index
                           - time.monotonic()))
            began = time.monotonic()
            print(f"ha_run: {name} at {began - self.began:.1f} s",
                  file=sys.stderr, flush=True)
            getattr(self, name)()
            self.timeline.append({"fault": name, "began": began,
                                  "ended": time.monotonic()})
            print(f"ha_run: {name} over after "
                  f"{time.monotonic() - began:.1f} s", file=sys.stderr,
                  flush=True)
        if client.wait(self.seconds + 300) != 0:
            raise RuntimeError("the conductor failed: "
                               + _tail(self.root / "client.out"))
        self._stop_sampling.set()
        sampler.join(15)
        self.ended = time.monotonic()
        return json.loads(out.read_text())

    # -- what happened --------------------------------------------------------

    def views(self, tries=40):
        """Every scheduler worker's view (gantt's ``view``), asked of each
        controller until both its workers answered: {pid: view}."""
        conf = cfg.ConfigOpts()
        conf([], default_config_files=[])
        rpc_conf.register_opts(conf)
        conf.set_override("transport_url", f"rabbit://guest:guest@"
                                           f"127.0.0.1:{ha_haproxy.BROKER_PORT}/")
        conf.set_override("control_exchange", self.exchange)
        transport = helpers.client_transport(conf)
        found = {}
        try:
            for host in CONTROLLERS:
                client = helpers.raw_client(
                    transport, conf.scheduler.topic, "1.2", timeout=30,
                    namespace="gantt", server=host)
                pids = set()
                for _ in range(tries):
                    view = client.call(helpers.CONTEXT, "view")
                    found[view["pid"]] = view
                    pids.add(view["pid"])
                    if len(pids) == 2:
                        break
        finally:
            transport.cleanup()
        return found

    def _database(self):
        """(over-committed inventories, [(consumer, provider)] of the
        allocations, usage {provider: {class id: used}}, instance records
        {host: [uuid]}), read through the admin URL."""
        engine = sa.create_engine(self.admin_url())
        try:
            over = soak_harness.over_commits(engine)
            with engine.connect() as conn:
                rows = conn.exec_driver_sql(
                    "SELECT c.uuid, rp.uuid FROM allocations a "
                    "JOIN consumers c ON a.consumer_id = c.id "
                    "JOIN resource_providers rp ON "
                    "a.resource_provider_id = rp.id").all()
                usage = {}
                for uuid, rc, used in conn.exec_driver_sql(
                        "SELECT rp.uuid, a.resource_class_id, SUM(a.used) "
                        "FROM allocations a JOIN resource_providers rp ON "
                        "a.resource_provider_id = rp.id GROUP BY rp.uuid, "
                        "a.resource_class_id"):
                    if used:
                        usage.setdefault(uuid, {})[str(rc)] = int(used)
                records = collections.defaultdict(list)
                for uuid, host in conn.exec_driver_sql(
                        "SELECT instance_uuid, host FROM host_instances "
                        "ORDER BY instance_uuid"):
                    records[host].append(uuid)
        finally:
            engine.dispose()
        return over, rows, usage, dict(records)

    def _state_off(self, load):
        """The views and database read once: (views, database, the
        workers whose view differs from the database, instance records
        differing from the client's)."""
        views = self.views()
        database = self._database()
        _, _, usage, records = database
        differing = [pid for pid, view in views.items()
                     if view["usage"] != usage
                     or view["instances"] != records]
        unknown = set(load["unknown"])
        known = collections.defaultdict(set)
        for uuid, (host, _, _) in load["live"].items():
            known[host].add(uuid)
        records_off = sum(
            len((set(records.get(h, ())) ^ known.get(h, set())) - unknown)
            for h in set(records) | set(known))
        return views, database, differing, records_off

    def invariants(self, load, settle=90.0):
        """Checked once the schedulers have applied what they were sent:
        the fanout casts each worker applies in its own time (one that
        stalled through a failover is behind the others), so the views
        and records are read again until they agree, up to ``settle``
        seconds."""
        began = time.monotonic()
        while True:
            views, database, differing, records_off = self._state_off(load)
            if (not differing and not records_off) or (
                    time.monotonic() - began > settle):
                break
            time.sleep(3.0)
        settled = round(time.monotonic() - began, 1)
        over, rows, usage, records = database
        held = collections.defaultdict(set)
        for consumer, provider in rows:
            held[consumer].add(provider)
        live, unknown = load["live"], set(load["unknown"])
        lost = [u for u, (_, node, _) in live.items()
                if u not in unknown and node not in held.get(u, ())]
        orphans = [u for u in held if u not in live]
        unexplained = [u for u in orphans if u not in unknown]
        two_hosts = [u for u, providers in held.items()
                     if len(providers) > 1]
        violations = 0
        for members in load["groups"].values():
            hosts = [live[m][0] for m in members if m in live]
            violations += len(hosts) - len(set(hosts))
        view_diffs = {}
        for pid in differing:
            view = views[pid]
            view_diffs[f"{view['host']}/{pid}"] = {
                "providers_off": sorted(
                    u for u in set(view["usage"]) | set(usage)
                    if view["usage"].get(u) != usage.get(u))[:5],
                "only_in_view": sorted(
                    set(_pairs(view["instances"])) - set(_pairs(records)))[:5],
                "only_in_database": sorted(
                    set(_pairs(records)) - set(_pairs(view["instances"])))[:5],
            }
        return {
            "over_capacity": len(over),
            "live_instances": len(live),
            "live_without_allocation": len(lost),
            "allocations_of_failed_calls": len(orphans) - len(unexplained),
            "allocations_without_live_instance": len(unexplained),
            "consumers_on_two_hosts": len(two_hosts),
            "generations_moved_back": len(self.samples_back),
            "anti_affinity_violations": violations,
            "scheduler_workers_asked": len(views),
            "scheduler_views_differing_from_database": len(differing),
            "instance_records_differing_from_client": records_off,
            "settled_after_s": settled,
            "views_off": view_diffs,
            "allocations_without_live_instance_uuids": unexplained[:10],
            # Each lost instance: the node the client was told, and the
            # providers the database holds its allocations on.
            "live_without_allocation_of": {
                u: {"told": live[u][1], "held": sorted(held.get(u, ()))}
                for u in lost[:10]},
        }

    def figures(self, load):
        calls = load["calls"]
        windows = [(f["began"], f["ended"]) for f in self.timeline]

        def overlaps(call):
            return any(call["started"] <= end and call["ended"] >= began
                       for began, end in windows)

        failed = [c for c in calls if c["failure"]]
        faults = []
        def first_fault(call):
            for index, (began, end) in enumerate(windows):
                if call["started"] <= end and call["ended"] >= began:
                    return index
            return None

        for index, fault in enumerate(self.timeline):
            during = [c for c in calls if c["started"] <= fault["ended"]
                      and c["ended"] >= fault["began"]]
            after = sorted(c["ended"] for c in calls if not c["failure"]
                           and c["kind"].startswith("create")
                           and c["started"] >= fault["ended"])
            faults.append({
                "fault": fault["fault"],
                "at_s": round(fault["began"] - self.began, 1),
                "took_s": round(fault["ended"] - fault["began"], 1),
                # The stall: the longest call that overlapped the fault
                # and still succeeded (a failed one is in "failed").
                "longest_stall_s": round(max(
                    (c["ended"] - c["started"] for c in during
                     if not c["failure"]), default=0.0), 2),
                "recovery_s": (round(after[0] - fault["ended"], 2)
                               if after else None),
                # A call that spans two faults counts for the first.
                "failed": dict(collections.Counter(
                    f"{c['kind']}: {c['failure']}" for c in during
                    if c["failure"] and first_fault(c) == index)),
            })
        return {
            "topology": self.topology,
            "controllers": len(CONTROLLERS), "compute_hosts": self.hosts,
            "clients": self.clients,
            "seconds": round(self.ended - self.began, 1),
            "calls": len(calls),
            "calls_by_kind": dict(collections.Counter(
                c["kind"] for c in calls)),
            "failed_by_cause": dict(collections.Counter(
                c["failure"] for c in failed)),
            "failed_outside_faults": [
                {"kind": c["kind"], "failure": c["failure"],
                 "at_s": round(c["started"] - self.began, 1)}
                for c in failed if not overlaps(c)],
            # How HAProxy saw those it answered with a 5xx (its
            # termination flags say which side ended the request).
            "proxy_5xx": self.haproxy.failed_requests(),
            # What each API's gunicorn said on its own (a worker
            # timed out or died, a socket error): its last lines.
            "api_server_output": self._server_output(),
            "longest_call_s": round(max(
                (c["ended"] - c["started"] for c in calls), default=0.0), 2),
            "faults": faults,
            "invariants": self.invariants(load),
        }

    def _server_output(self, lines=10):
        out = {}
        for host in CONTROLLERS:
            text = _tail(self.root / f"{host}-api.out", 4000)
            if text.strip():
                out[host] = text.strip().splitlines()[-lines:]
        return out

    def close(self):
        self._stop_sampling.set()
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.haproxy is not None:
            self.haproxy.stop()
        if self.cluster is not None:
            self.cluster.stop()
        if self.pair is not None:
            self.pair.stop()
        if self.net is not None:
            self.net.__exit__(None, None, None)


def _pairs(instances):
    return [(host, uuid) for host, uuids in instances.items()
            for uuid in uuids]


def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.5)


def _tail(path, size=2000):
    try:
        return pathlib.Path(path).read_text(errors="replace")[-size:]
    except OSError:
        return ""


def run(topology, seconds=200.0, hosts=40, clients=6, faults=None,
        keep=None):
    root = pathlib.Path(tempfile.mkdtemp(prefix="gantt-ha-"))
    ha = Run(topology, root, hosts=hosts, clients=clients, seconds=seconds,
             faults=faults)
    try:
        ha.start()
        load = ha.run()
        return ha.figures(load)
    finally:
        ha.close()
        if keep:
            shutil.copytree(root, keep, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns(
                                "data", "pgdata", "*.sock"))
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ha_run")
    parser.add_argument("--topology", choices=TOPOLOGIES, required=True)
    parser.add_argument("--seconds", type=float, default=200.0)
    parser.add_argument("--hosts", type=int, default=40)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--faults", help="comma-separated, in order "
                        "(default: every fault of the topology)")
    parser.add_argument("--keep", metavar="DIR",
                        help="copy the logs and configuration there")
    args = parser.parse_args(argv)
    faults = args.faults.split(",") if args.faults else None
    for name in faults or ():
        if name not in FAULTS[args.topology]:
            parser.error(f"--faults: {name!r} is not a fault of "
                         f"{args.topology} (one of "
                         f"{', '.join(FAULTS[args.topology])})")
    print(json.dumps(run(args.topology, args.seconds, args.hosts,
                         args.clients, faults, args.keep), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
