"""The fault soak: gantt under load while its servers fail.

gantt-scheduler (several workers) and gantt-placement-api run as
processes on a real database (PostgreSQL or MariaDB) and RabbitMQ.
Conductor-like clients create instances (select_destinations with a
claim, then the instance recorded on its host as a compute reports it)
and delete them (allocations removed, record dropped); an HTTP client
asks for allocation candidates and writes and removes allocations. Meanwhile
faults strike: the broker restarts, the database server restarts, a busy
scheduler worker is killed with SIGKILL.

Afterwards: nothing over-committed, every instance the clients know
holds its allocation on its host (no lost claim), no call failed while
the database restarted, and the allocation audit finds only claims that
no client learnt of (a killed worker's, a timed-out call's), which its
heal removes. Used by tests/integration/test_soak.py (bounded) and
benchmarks/soak.py (longer, JSON figures).
"""

import collections
import dataclasses
import os
import pathlib
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid as uuidlib

import requests
import sqlalchemy as sa

from cloudfile import loader
from placement.db import store as store_mod
from placement.objects import allocations
from rpc import client as rpc_client
from scheduler import allocation_audit, errors, host_options, host_records
from tests import databases
from tests.rpc import helpers
from tests.rpc.service_process import Service

BIN = pathlib.Path(sys.executable).parent
FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}
# Seconds a database server stays down in the database fault.
DOWN = 3.0


@dataclasses.dataclass
class Outcome:
    what: str  # create, delete, api
    started: float
    ended: float
    failure: str | None  # None: it worked


@dataclasses.dataclass
class Fault:
    name: str
    began: float = 0.0
    ended: float = 0.0
    recovered: float | None = None  # first success begun after ``ended``


class Soak:
    """One soak: ``engine`` postgresql or mysql; ``hosts`` compute nodes
    of 64 vCPUs; ``workers`` gantt-scheduler processes; ``clients``
    conductor threads."""

    def __init__(self, work, engine="postgresql", hosts=60, workers=4,
                 clients=4, rpc_timeout=10.0, seed=1):
        self.work = pathlib.Path(work)
        self.engine = engine
        self.hosts = hosts
        self.workers = workers
        self.clients = clients
        self.rpc_timeout = rpc_timeout
        self.rng = random.Random(seed)
        self.outcomes = []
        self.faults = []
        self.live = {}  # instance uuid -> (host, compute node uuid)
        self._live_lock = threading.Lock()
        self._stop = threading.Event()
        self.url = None
        self.service = self.api = self.store = None

    # -- set up and tear down ---------------------------------------------

    def start(self):
        self.url = databases.create_scratch(self.engine)
        cloud = self.work / "cloud.yaml"
        cloud.write_text("providers:\n" + "".join(
            f"  - name: cn{i}\n"
            f"    inventories: {{VCPU: 64, MEMORY_MB: 262144, "
            f"DISK_GB: 4096}}\n"
            f"    compute: {{cell: cell1}}\n" for i in range(self.hosts)))
        conf = databases.make_conf(self.url)
        host_options.register_opts(conf)
        self.store = store_mod.Store.open(conf)
        loader.load(self.store, loader.read(str(cloud)))
        (self.work / "scheduler").mkdir(parents=True, exist_ok=True)
        self.service = Service(self.work / "scheduler", self.url,
                               workers=self.workers)
        self.client = rpc_client.SchedulerClient(
            self.service.conf, transport=self.service.transport,
            timeout=self.rpc_timeout)
        self.api_port = _free_port()
        self.api_log = open(self.work / "placement-api.log", "wb")
        self.api = subprocess.Popen(
            [BIN / "gantt-placement-api", "--host", "127.0.0.1", "--port",
             str(self.api_port), "--db", self.url, "--workers", "2"],
            stdout=self.api_log, stderr=subprocess.STDOUT)
        helpers.wait_for(self._api_up, timeout=60, what="the placement API")

    def close(self):
        self._stop.set()
        if self.service is not None:
            self.service.close()
        if self.api is not None:
            self.api.terminate()
            self.api.wait(30)
            self.api_log.close()
        if self.store is not None:
            self.store.dispose()
        if self.url is not None:
            databases.drop_scratch(self.engine, self.url)

    def _api_up(self):
        try:
            return self._api("GET", "/").status_code == 200
        except requests.RequestException:
            return False

    # -- load -------------------------------------------------------------

    def _record(self, what, started, failure):
        self.outcomes.append(Outcome(what, started, time.monotonic(),
                                     failure))

    def _create(self):
        uuid = str(uuidlib.uuid4())
        started = time.monotonic()
        try:
            [[chosen]] = self.client.select_destinations(
                helpers.CONTEXT, helpers.request_spec(**FLAVOR), [uuid],
                return_alternates=False)
            # What the compute reports once it built the instance.
            host_records.update_instance_info(
                self.store, chosen.service_host, [uuid])
        except errors.NoValidHost:
            self._record("create", started, "NoValidHost")
            return
        except rpc_client.SchedulerTimeout:
            self._record("create", started, "timeout")
            return
        except Exception as exc:  # every other kind, counted
            self._record("create", started, _kind(exc))
            return
        with self._live_lock:
            self.live[uuid] = (chosen.service_host, chosen.compute_node_uuid)
        self._record("create", started, None)

    def _delete(self):
        with self._live_lock:
            if not self.live:
                return
            uuid = self.rng.choice(list(self.live))
            host, _node = self.live.pop(uuid)
        started = time.monotonic()
        try:
            allocations.delete_for_consumer(self.store, uuid)
            host_records.delete_instance_info(self.store, host, uuid)
        except Exception as exc:  # counted
            self._record("delete", started, _kind(exc))
            return
        self._record("delete", started, None)

    def _conductor(self):
        while not self._stop.is_set():
            if self.rng.random() < 0.45:
                self._delete()
            else:
                self._create()

    def _api(self, method, path, **kw):
        return requests.request(
            method, f"http://127.0.0.1:{self.api_port}{path}",
            headers={"x-auth-token": "admin",
                     "openstack-api-version": "placement 1.39"},
            timeout=30, **kw)

    def _api_client(self):
        """Candidates, then a claim and its removal, over HTTP."""
        while not self._stop.is_set():
            started = time.monotonic()
            failure = None
            try:
                got = self._api("GET", "/allocation_candidates?resources="
                                       "VCPU:1,MEMORY_MB:256&limit=5")
                if got.status_code >= 500:
                    failure = f"HTTP {got.status_code}"
                elif got.status_code == 200 and got.json()[
                        "allocation_requests"]:
                    failure = self._api_claim(
                        got.json()["allocation_requests"][0])
            except requests.RequestException as exc:
                failure = _kind(exc)
            self._record("api", started, failure)
            time.sleep(0.02)

    def _api_claim(self, request):
        consumer = str(uuidlib.uuid4())
        body = dict(request, project_id="soak", user_id="soak",
                    consumer_generation=None, consumer_type="INSTANCE")
        put = self._api("PUT", f"/allocations/{consumer}", json=body)
        if put.status_code >= 500:
            return f"HTTP {put.status_code}"
        gone = self._api("DELETE", f"/allocations/{consumer}")
        if gone.status_code >= 500:
            return f"HTTP {gone.status_code}"
        return None

    # -- faults -----------------------------------------------------------

    def broker_restart(self):
        _run(["rabbitmqctl", "stop_app"])
        _run(["rabbitmqctl", "start_app"])

    def database_restart(self, down=DOWN):
        if self.engine == "postgresql":
            version = sorted(os.listdir("/etc/postgresql"))[-1]
            cluster = ["pg_ctlcluster", "--skip-systemctl-redirect",
                       version, "main"]
            _run([*cluster, "stop", "-m", "fast"])
            time.sleep(down)
            _run([*cluster, "start"])
        else:
            _run(["mysqladmin", "-uroot", "shutdown"])
            time.sleep(down)
            _run(["start-stop-daemon", "--start", "--oknodo",
                  "--background", "--exec", "/usr/sbin/mariadbd"])
        helpers.wait_for(self._database_up, timeout=60,
                         what="the database server back")

    def _database_up(self):
        return database_up(self.url)

    def kill_busy_worker(self):
        """SIGKILL the gantt-scheduler worker that used the most CPU over
        the last 50 ms (one in the middle of a call, most likely); the
        supervisor starts another."""
        workers = _children(self.service.proc.pid)
        before = {pid: _cpu_ticks(pid) for pid in workers}
        time.sleep(0.05)
        busiest = max(workers, key=lambda pid: _cpu_ticks(pid)
                      - before[pid])
        os.kill(busiest, signal.SIGKILL)

    # -- the run ----------------------------------------------------------

    def run(self, schedule, duration):
        """Load for ``duration`` seconds; ``schedule``: [(seconds from the
        start, fault name)] with names broker, database, kill_worker."""
        actions = {"broker": self.broker_restart,
                   "database": self.database_restart,
                   "kill_worker": self.kill_busy_worker}
        threads = [threading.Thread(target=self._conductor, daemon=True)
                   for _ in range(self.clients)]
        threads.append(threading.Thread(target=self._api_client,
                                        daemon=True))
        self.began = time.monotonic()
        for thread in threads:
            thread.start()
        for at, name in sorted(schedule):
            time.sleep(max(0.0, self.began + at - time.monotonic()))
            fault = Fault(name, began=time.monotonic())
            actions[name]()
            fault.ended = time.monotonic()
            self.faults.append(fault)
        time.sleep(max(0.0, self.began + duration - time.monotonic()))
        self._stop.set()
        for thread in threads:
            thread.join(self.rpc_timeout + 40)
        self.ended = time.monotonic()

    # -- what happened ----------------------------------------------------

    def _recovery(self, fault):
        after = sorted(o.ended for o in self.outcomes
                       if o.failure is None and o.what == "create"
                       and o.started >= fault.ended)
        return after[0] - fault.began if after else None

    def _during(self, fault, slack):
        """Outcomes of operations begun while ``fault`` was under way
        (``slack`` seconds either side)."""
        return [o for o in self.outcomes
                if fault.began - slack <= o.started <= fault.ended + slack]

    def over_commits(self):
        """(provider, class, used, capacity) beyond capacity."""
        return over_commits(self.store.engine)

    def lost_claims(self):
        """Instances the clients know whose allocation is not on their
        compute node."""
        lost = []
        for uuid, (host, node) in sorted(self.live.items()):
            held = allocations.for_consumer(self.store, uuid).allocations
            if node not in held:
                lost.append((uuid, host, sorted(held)))
        return lost

    def audit(self):
        """(unexplained consumers before the heal, their uuids known to
        the clients, unexplained after the heal)."""
        conf = self.store.conf
        first = allocation_audit.run(self.store, conf, 0)
        known = [f.consumer for f in first.findings if f.consumer in
                 self.live]
        allocation_audit.heal(self.store, first)
        second = allocation_audit.run(self.store, conf, 0)
        return first, known, second

    def figures(self, slack=1.0):
        """Everything measured, as JSON-ready data."""
        by_kind = collections.Counter(
            (o.what, o.failure or "ok") for o in self.outcomes)
        first, known, second = self.audit()
        faults = []
        for fault in self.faults:
            during = self._during(fault, slack)
            faults.append({
                "fault": fault.name,
                "took_s": round(fault.ended - fault.began, 2),
                "recovery_s": (round(self._recovery(fault), 2)
                               if self._recovery(fault) is not None
                               else None),
                "calls_during": len(during),
                "failures_during": collections.Counter(
                    f"{o.what}: {o.failure}" for o in during
                    if o.failure)})
        return {
            "engine": self.engine, "hosts": self.hosts,
            "workers": self.workers, "clients": self.clients,
            "seconds": round(self.ended - self.began, 1),
            "calls": len(self.outcomes),
            "outcomes": {f"{what}: {kind}": n
                         for (what, kind), n in sorted(by_kind.items())},
            "faults": faults,
            "over_commits": len(self.over_commits()),
            "lost_claims": len(self.lost_claims()),
            "live_instances": len(self.live),
            "unexplained_before_heal": len(first.findings),
            "unexplained_known_to_clients": len(known),
            "leaked_after_heal": len(second.findings),
        }


def database_up(url):
    """Whether the database at ``url`` answers a query now."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
        return True
    except sa.exc.DBAPIError:
        return False
    finally:
        engine.dispose()


def over_commits(engine):
    """(provider id, class id, used, capacity) of every inventory whose
    allocations exceed its capacity."""
    with engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT i.resource_provider_id, i.resource_class_id, "
            "COALESCE(SUM(a.used), 0), i.total, i.reserved, "
            "i.allocation_ratio FROM inventories i LEFT JOIN "
            "allocations a ON a.resource_provider_id = "
            "i.resource_provider_id AND a.resource_class_id = "
            "i.resource_class_id GROUP BY i.resource_provider_id, "
            "i.resource_class_id, i.total, i.reserved, "
            "i.allocation_ratio").all()
    return [(rp, rc, int(used), (total - reserved) * ratio)
            for rp, rc, used, total, reserved, ratio in rows
            if int(used) > (total - reserved) * ratio]


def _kind(exc):
    return f"{type(exc).__name__}"


def _run(argv):
    if shutil.which(argv[0]) is None:
        raise RuntimeError(f"{argv[0]} is not installed")
    subprocess.run(argv, check=True, capture_output=True, timeout=120)


def _children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


def _cpu_ticks(pid):
    """User and system CPU ticks of a process so far (0 once gone)."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(
            ")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
