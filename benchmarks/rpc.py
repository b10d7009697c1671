"""select_destinations over RabbitMQ: round trips per second and latency
of gantt-scheduler, called as a Nova conductor calls it.

    .venv/bin/python -m benchmarks.rpc [--sizes 1000,10000]
        [--processes 1,4] [--calls 400] [--clients N]
        [--transport-url rabbit://guest:guest@127.0.0.1:5672/]
        [--db URL] [--spec-form nova|gantt]
        [--change-feed redis://127.0.0.1:6379/0]
        [--claim-group-sizes 1,8] [--listener-idle-waits 0.001,0.05]
        [--rates 100,200] [--messaging-floor] [--decision-log-rounds 3]
        [--floor-rounds 4]

Per size, the cloud of benchmarks.scheduler (N compute nodes of 64 vCPUs,
256 GB, 4 TB in 10 aggregates, half in a second cell) is built once in a
fresh SQLite file (WAL mode: every scheduler process reads and claims in
the same file) or, with ``--db``, in that database (wiped first; one run
at a time on it, benchmarks.db_lock). Then,
per process count P:

- a gantt-scheduler service (``python -m rpc.service``) starts with
  ``[scheduler] workers = P`` (and, per value of
  ``--claim-group-sizes``, ``claim_group_size``, and per value of
  ``--listener-idle-waits``, ``listener_idle_wait``: the runs are then
  keyed "P/gG", "P/wW", "P/gG/wW", ...) on a topic and exchange of its own; the
  benchmark waits for P "gantt-scheduler ready" log lines (each worker
  has loaded its host state and candidates index by then);
- warm-up: 3 x P calls, spread over the workers by the broker, so that
  each has served (and claimed) before the figures are taken;
- ``--calls`` select_destinations calls for one instance each, with a new
  instance uuid each (so each claims in placement), sent by ``--clients``
  threads (default: 2 per scheduler process, so that every worker has a
  call waiting while its last answer travels back) through one
  rpc.client.SchedulerClient on one transport, as a conductor process
  shares its transport; Nova's timeouts (call monitor heartbeat);
- or, per value of ``--rates`` (runs keyed "P/rR"), the calls arrive as
  conductors' calls do, whether or not earlier ones were answered (open
  loop): Poisson arrivals at R calls/s, each sent when due by the next
  free one of ``--clients`` threads (default 32); its latency counts from
  when it was due, so a closed loop's flattering of the tail (a slow call
  holds back the calls behind it) does not apply. p50/p99 at a rate
  below the capacity are what a user waits at that load;
- figures: calls/s (wall time of the whole batch), p50 / p99 per call
  (successful calls), failures by error type; the CPU time each worker
  and the client process spent on the batch (Linux /proc), per worker
  to show how the broker spread the calls, per call to show the cost;
- where a call's scheduler CPU goes (``cpu_split_ms_per_call``): each
  worker logs, as it stops, the CPU it spent decoding calls, deciding
  (claims aside), claiming and encoding replies, per decision; the rest
  of the measured batch CPU per call is ``messaging`` (AMQP receive and
  reply, kombu and oslo.messaging, logging); ``claim_groups``: the share
  of decisions that were decided in a group with others
  (scheduler.request_groups), claim transactions per decision, and how
  many groups failed their claim and were decided again alone;
  ``follow``: decisions, syncs that skipped the change-log read
  (PostgreSQL's notifications or the change feed said nobody else
  committed) and claims lost to another writer;
- where a call's wall time goes (``service_ms``): p50/p99 of the
  workers' own timing of each call, from the listener's receipt of its
  message to the end of its reply, and of its phases (waiting for a
  thread and decoding, in the Scheduler with any wait for the group
  ahead, the reply), rpc.call_times; beside the client's p50/p99, it
  tells whether a slow call was slow in the service or on the way to
  and from it (client, broker); its ``while_served``: for the calls at
  or under the median and at or over the 99th percentile, the mean wall
  time from when a thread took a call, that thread's CPU and the rest
  of its process's CPU meanwhile (a slow call during which the process
  ran other calls for most of its wall time waited for the
  interpreter); ``wall_split_ms_per_decision``: how long the
  scheduler's decision lock was held a decision (``held``: what a call
  that arrives meanwhile waits on), and the claims' wall time within
  it (``claim``); ``gc``: the workers' garbage
  collections while serving, per generation, and the longest pause
  (rpc.heap; each worker freezes its heap once ready, and the benchmark
  freezes its own for each batch, so that neither's full collection
  lands in the figures);
- the rest of the machine (``machine_cpu_ms_per_call``): the CPU the
  broker (beam.smp), the database server's processes and everything
  else spent during the batch, per call (all of /proc, by command
  name): with the client's and the scheduler's, the whole cost of a
  call on this machine, which bounds calls/s at CPU count / that sum;
- with ``--decision-log-rounds N``, per process count (``decision_log``):
  N rounds of two closed-loop runs, ``[decision_log] enabled`` false and
  true, in alternating order; the medians of each side's calls/s and CPU
  per call, and the records' own CPU a call, as the workers sample it
  (``cpu_split_ms_per_call``'s ``decision_log``),
  against the worker's CPU a call;
- with ``--messaging-floor``, per process count run both ways in closed
  loop (``versus_floor``): gantt-scheduler's calls/s and the floor's,
  and their ratio; the machine's CPU a call of each, in all (and its
  ratio) and by process (client, scheduler workers, broker, database
  server, the rest); and gantt's worker CPU a call by phase;
- with ``--floor-rounds N`` too, N rounds of both in alternating order
  (``versus_floor_rounds``): each round's comparison and the median,
  lowest and highest of the two ratios over the rounds (the first
  round is the pair above; the later ones are keyed "P/roundK" and
  "P/floor/roundK");
- SIGTERM: the service must exit 0. Its queues are auto-delete, its
  fanout and the client's reply queues expire 10 s after their last use;
  the benchmark also deletes what it can name, lists with rabbitmqctl
  (when it can run) whatever is left of the run on the broker and deletes
  it, and reports what it could not remove.

The spec is a Nova RequestSpec 1.15 primitive (flavor 2 vCPUs, 4 GB,
20 GB), as Nova's conductor sends it and the service's Nova serializer
decodes it; ``--spec-form gantt`` sends gantt's JSON form instead.
Default filters and weighers (the service's defaults). Claims add up over
the runs of one size: the run for P = 4 finds the instances of the run
for P = 1 in place. Every host fits 32 instances of the flavor: the
defaults place 815 instances, under 3 % of 1,000 hosts; the benchmark
refuses options that would fill more than half of a cloud.

With ``--messaging-floor``, each process count also runs (key
"P/floor", or "P/floor/rR" per value of ``--rates``)
benchmarks.messaging_floor in the service's place: the same
transport, listener, executor and topic answering every call with the
primitives of one real reply of gantt's, without decoding it or
deciding anything. Its CPU per call is what oslo.messaging, kombu and
AMQP cost a worker alone: the floor under the service's ``messaging``
share, and under any ratio to the embedded path. Its p50/p99 at a rate
are the floor under the service's latency: client, broker and
oslo.messaging on the same cores, with nothing decided or claimed.

After the service runs of a size, the same requests go to gantt's
Scheduler embedded in the benchmark process on the same database
(``embedded``: one call after another, the Nova spec decoded first;
calls/s, p50/p99 and CPU per call), and each run gives its scheduler CPU
per call as a multiple of that (``cpu_vs_embedded``).

Prints one JSON document with the inputs, CPU count and, per size and
process count, the figures. Exit status 1 when a service did not exit 0
after SIGTERM or left queues or exchanges behind. Client, broker and
schedulers share the machine's CPUs: on a small machine the figures say
as much about it as about the scheduler.
"""

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid

import kombu
from oslo_config import cfg

from benchmarks import (
    db_lock,
    messaging_floor,
    proc_cpu,
    rpc_floor,
    rpc_load,
    rpc_rounds,
    worker_stats,
)
from benchmarks import scheduler as scheduler_bench
from benchmarks.rpc_load import CONTEXT
from rpc import client as client_mod
from rpc import conf as rpc_conf
from rpc import heap
from tests.rpc import helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAVOR = scheduler_bench.FLAVOR
# What build() gives each host, and so how many instances of FLAVOR a
# host holds.
HOST_INVENTORY = {"vcpus": 64, "memory_mb": 262144, "root_gb": 4096}
PER_HOST = min(HOST_INVENTORY[k] // FLAVOR[k] for k in FLAVOR)
WARMUP_PER_WORKER = 3
READY_TIMEOUT = 600  # seconds for every worker to load its host state
STOP_TIMEOUT = 90
CALL_TIMEOUT = 120
# Client threads of an open-loop run (--rates): enough that a call rarely
# waits for one below the service's capacity.
OPEN_LOOP_THREADS = 32
# Queue TTL (x-expires) of the fanout and reply queues, which are not
# auto-delete: they go this long after their last consumer.
QUEUE_TTL = 10


def _spec_maker(form):
    """spec(instance uuid) -> the spec_obj of one call."""
    if form == "nova":
        return lambda instance: helpers.request_spec(
            vcpus=FLAVOR["vcpus"], memory_mb=FLAVOR["memory_mb"],
            root_gb=FLAVOR["root_gb"], instance_uuid=instance,
            project_id=CONTEXT["project_id"], user_id=CONTEXT["user_id"])
    return lambda instance: {
        "flavor": FLAVOR, "instance_uuid": instance, "num_instances": 1,
        "project_id": CONTEXT["project_id"],
        "user_id": CONTEXT["user_id"]}


def _masked(url):
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


class Service:
    """One gantt-scheduler process (and its workers) on a topic and
    exchange of its own; with ``floor_reply`` (a JSON file of reply
    primitives), benchmarks.messaging_floor in its place, on the same
    configuration."""

    def __init__(self, workdir, transport_url, db_url, workers,
                 change_feed=None, claim_group_size=None,
                 listener_idle_wait=None, listen=True, floor_reply=None,
                 decision_log=None):
        tag = uuid.uuid4().hex[:12]
        self.topic = "gantt-bench-" + tag
        self.exchange = "gantt-bench-" + tag
        self.host = "bench-" + tag
        self.workers = workers
        self.log = os.path.join(workdir, "gantt-scheduler.log")
        self.config = os.path.join(workdir, "gantt.conf")
        feed_line = (f"change_feed_url = {change_feed}" if change_feed
                     else "")
        group_line = (f"claim_group_size = {claim_group_size}"
                      if claim_group_size else "")
        wait_line = (f"listener_idle_wait = {listener_idle_wait}"
                     if listener_idle_wait else "")
        # The service's default unless a run turns it on or off.
        log_lines = ("" if decision_log is None else
                     f"enabled = {str(decision_log).lower()}\n"
                     f"directory = {os.path.join(workdir, 'decisions')}")
        with open(self.config, "w") as f:
            f.write(textwrap.dedent(f"""\
                [DEFAULT]
                transport_url = {transport_url}
                control_exchange = {self.exchange}
                host = {self.host}
                log_file = {self.log}
                debug = false
                graceful_shutdown_timeout = 60
                [scheduler]
                workers = {workers}
                topic = {self.topic}
                log_worker_stats = true
                {group_line}
                {wait_line}
                [placement_database]
                connection = {db_url}
                sync_on_startup = false
                postgresql_listen = {str(listen).lower()}
                {feed_line}
                [oslo_messaging_rabbit]
                amqp_auto_delete = true
                rabbit_transient_queues_ttl = {QUEUE_TTL}
                [decision_log]
                """) + log_lines + "\n")
        command = [sys.executable, "-m", "rpc.service", "--config-file",
                   self.config]
        self.ready_line = "gantt-scheduler ready:"
        if floor_reply is not None:
            command = [sys.executable, "-m", "benchmarks.messaging_floor",
                       "--config-file", self.config, "--reply", floor_reply]
            self.ready_line = messaging_floor.READY
        self.output = open(os.path.join(workdir, "stdout.txt"), "wb")
        self.proc = subprocess.Popen(
            command, cwd=REPO, stdout=self.output, stderr=subprocess.STDOUT)

    def text(self):
        try:
            with open(self.log) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def lines(self, needle):
        return [line for line in self.text().splitlines()
                if needle in line]

    def wait_ready(self):
        """Seconds until every worker logged that it is ready."""
        start = time.perf_counter()
        deadline = time.monotonic() + READY_TIMEOUT
        while len(self.lines(self.ready_line)) < self.workers:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"gantt-scheduler exited with {self.proc.returncode} "
                    f"before it was ready:\n{self._tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"gantt-scheduler not ready in {READY_TIMEOUT} s:\n"
                    f"{self._tail()}")
            time.sleep(0.1)
        return time.perf_counter() - start

    def ready_pids(self):
        return {int(m.group(1)) for line in self.lines(self.ready_line)
                for m in [re.search(r"pid=(\d+)", line)] if m}

    def terminate(self):
        """SIGTERM; the exit status (None: had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self.output.close()

    def _tail(self, count=30):
        return "\n".join(self.text().splitlines()[-count:])


def _client(transport_url, service):
    """A SchedulerClient on a transport of its own, set as the
    service's (exchange, topic, auto-delete queues)."""
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    rpc_conf.register_opts(conf)
    conf.set_override("transport_url", transport_url)
    conf.set_override("control_exchange", service.exchange)
    conf.set_override("topic", service.topic, group="scheduler")
    conf.set_override("host", "bench-conductor")
    transport = rpc_conf.get_transport(conf)
    # The driver registered its options: declare the exchange as the
    # service does (auto-delete), and let the reply queue expire soon.
    conf.set_override("amqp_auto_delete", True,
                      group="oslo_messaging_rabbit")
    conf.set_override("rabbit_transient_queues_ttl", QUEUE_TTL,
                      group="oslo_messaging_rabbit")
    return client_mod.SchedulerClient(
        conf, transport=transport, timeout=CALL_TIMEOUT,
        call_monitor_timeout=client_mod.DEFAULT_CALL_MONITOR_TIMEOUT)


@contextlib.contextmanager
def _local_scheduler(db_url, spec_form, listen=True):
    """gantt's Scheduler in this process on the database, and a function
    that gives the spec of one call for an instance uuid (a Nova
    RequestSpec primitive decoded, when the runs send Nova's form)."""
    from placement.db import store as store_mod
    from rpc import serializer as serializer_mod
    from scheduler import manager
    from tests import databases

    spec_of = _spec_maker(spec_form)
    if spec_form == "nova":
        decode = serializer_mod.NovaSerializer().deserialize_entity
        raw = spec_of

        def spec_of(instance):
            return decode(CONTEXT, raw(instance))
    store = store_mod.Store.open(databases.make_conf(db_url, {
        ("placement_database", "postgresql_listen"): listen}))
    scheduler = manager.Scheduler(store.conf, store=store)
    try:
        yield scheduler, spec_of
    finally:
        scheduler.close()
        store.dispose()


def embedded(db_url, spec_form, calls, listen=True):
    """The same requests without the broker: gantt's Scheduler in this
    process on the same database, one call after another (a decoded
    Nova spec when the runs send Nova's form); calls/s, latency and CPU
    per call."""
    with _local_scheduler(db_url, spec_form, listen) as (scheduler,
                                                         spec_of):
        def one():
            instance = str(uuid.uuid4())
            spec = spec_of(instance)
            t0 = time.perf_counter()
            scheduler.select_destinations(CONTEXT, spec, [instance])
            return time.perf_counter() - t0

        for _ in range(WARMUP_PER_WORKER):
            one()
        cpu, start = time.thread_time(), time.perf_counter()
        samples = [one() for _ in range(calls)]
        wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
    return {"calls": calls, "calls_per_s": round(calls / wall, 1),
            **_stats(samples),
            "cpu_ms_per_call": round(1000 * cpu / calls, 3)}


def real_reply(db_url, spec_form, listen=True):
    """The reply primitives of one real select_destinations of gantt's
    (a chosen host and its alternates, claimed), for the messaging
    floor to answer."""
    from rpc import serializer as serializer_mod

    with _local_scheduler(db_url, spec_form, listen) as (scheduler,
                                                         spec_of):
        instance = str(uuid.uuid4())
        answer = scheduler.select_destinations(
            CONTEXT, spec_of(instance), [instance], return_objects=True,
            return_alternates=True)
    return [[serializer_mod.selection_to_primitive(sel) for sel in per]
            for per in answer]


def _stats(samples):
    if not samples:
        return {"p50_ms": None, "p99_ms": None, "count": 0}
    ms = sorted(s * 1000 for s in samples)
    return {"p50_ms": round(statistics.median(ms), 2),
            "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 2),
            "count": len(ms)}


# -- the broker ---------------------------------------------------------------


def _amqp_url(transport_url):
    """kombu's spelling of an oslo.messaging rabbit:// URL."""
    return re.sub(r"^rabbit://", "amqp://", transport_url)


def _rabbitmqctl(kind):
    """Names of the broker's queues or exchanges (``kind``), or None when
    rabbitmqctl cannot tell."""
    if shutil.which("rabbitmqctl") is None:
        return None
    try:
        done = subprocess.run(["rabbitmqctl", "-q", f"list_{kind}", "name"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    # -q still prints a "name" header line.
    return [n for n in done.stdout.splitlines()[1:] if n]


def clean_broker(transport_url, service):
    """Delete the run's queues and exchanges; what is left of them (None:
    could not check)."""
    prefixes = (service.topic, service.exchange)
    queues = [service.topic, f"{service.topic}.{service.host}"]
    listed = _rabbitmqctl("queues")
    if listed is not None:
        queues += [n for n in listed if n.startswith(prefixes)]
    with kombu.Connection(_amqp_url(transport_url)) as conn:
        channel = conn.channel()
        for name in dict.fromkeys(queues):
            channel.queue_delete(name)
        for name in (service.exchange, f"{service.topic}_fanout"):
            channel.exchange_delete(name)
    after_queues = _rabbitmqctl("queues")
    after_exchanges = _rabbitmqctl("exchanges")
    if after_queues is None or after_exchanges is None:
        return None
    return [n for n in after_queues + after_exchanges
            if n.startswith(prefixes)]


# -- the runs -----------------------------------------------------------------


def run(args, db_url, workers, placed, workdir, claim_group_size=None,
        listener_idle_wait=None, rate=None, floor_reply=None,
        decision_log=None):
    """One service with ``workers`` processes: its figures. With ``rate``
    the measured calls arrive at that many per second (open loop),
    otherwise each client thread sends its next call when its last one
    is answered (closed loop). With ``floor_reply``, the messaging floor
    (benchmarks.messaging_floor) stands in for the service."""
    threads = args.clients or (OPEN_LOOP_THREADS if rate else 2 * workers)
    spec_of = _spec_maker(args.spec_form)
    service = Service(workdir, args.transport_url, db_url, workers,
                      args.change_feed, claim_group_size, listener_idle_wait,
                      args.postgresql_listen, floor_reply, decision_log)
    client = None
    out = {"processes": workers, "clients": threads,
           "claim_group_size": claim_group_size or "default",
           "listener_idle_wait": listener_idle_wait or "default",
           "offered_calls_per_s": rate or "closed loop",
           "instances_before": placed}
    try:
        out["ready_s"] = round(service.wait_ready(), 1)
        out["worker_pids"] = len(service.ready_pids())
        client = _client(args.transport_url, service)
        warmup = WARMUP_PER_WORKER * workers
        wall, samples, failures, messages = rpc_load.fire(
            client, spec_of, warmup, threads)
        if failures:
            raise RuntimeError(f"warm-up calls failed: {messages}")
        out["warmup_calls"] = warmup
        out["warmup_p50_ms"] = _stats(samples)["p50_ms"]
        pids = service.ready_pids()
        # This process's heap (the cloud it built, the embedded run's
        # modules) out of its collector's walks for the batch: a full
        # collection here would stop every client thread 50-75 ms and
        # be counted as the service's latency.
        heap.freeze()
        cpu_before = {pid: proc_cpu.cpu_seconds(pid) for pid in pids}
        machine_before = proc_cpu.machine_cpu()
        client_cpu = time.process_time()
        if rate:
            due = rpc_load.arrivals(args.calls, rate)
            wall, samples, failures, messages, late = rpc_load.fire_at_rate(
                client, spec_of, due, threads)
            # Calls that found no free client thread: their wait is in
            # their latency, and too many say the pool was too small.
            out["late_starts"] = late
        else:
            wall, samples, failures, messages = rpc_load.fire(
                client, spec_of, args.calls, threads)
        client_cpu = time.process_time() - client_cpu
        machine_after = proc_cpu.machine_cpu()
        workers_cpu = proc_cpu.cpu_used(
            cpu_before, {pid: proc_cpu.cpu_seconds(pid) for pid in pids})
        out.update({
            "calls": args.calls,
            "calls_per_s": round(len(samples) / wall, 1),
            "wall_s": round(wall, 2),
            **_stats(samples),
            "failures": sum(failures.values()),
            "failures_by_type": dict(failures),
            # Where the CPU went: each scheduler worker's share shows
            # how the broker spread the calls.
            "worker_cpu_s": workers_cpu,
            "scheduler_cpu_ms_per_call": round(
                1000 * sum(workers_cpu) / args.calls, 2),
            "client_cpu_ms_per_call": round(
                1000 * client_cpu / args.calls, 2),
            # The rest of the machine, per call: what the broker and the
            # database spent serving these calls (and anything else that
            # ran meanwhile).
            "machine_cpu_ms_per_call": proc_cpu.machine_split(
                machine_before, machine_after,
                [*pids, os.getpid(), service.proc.pid], args.calls),
        })
        total = (out["scheduler_cpu_ms_per_call"]
                 + out["client_cpu_ms_per_call"]
                 + sum(out["machine_cpu_ms_per_call"].values()))
        out["total_cpu_ms_per_call"] = round(total, 2)
        # What the machine could serve were its CPUs the only limit.
        out["cpu_bound_calls_per_s"] = round(
            1000 * (os.cpu_count() or 1) / total, 1) if total else None
        if messages:
            out["failure_messages"] = messages
        # The floor claims nothing.
        out["instances_placed"] = (0 if floor_reply is not None
                                   else warmup + len(samples))
    finally:
        heap.unfreeze()
        if client is not None:
            client.close()
        out["exit_code"] = service.terminate()
        if "scheduler_cpu_ms_per_call" in out and floor_reply is None:
            out.update(worker_stats.figures(
                service.text(), out["scheduler_cpu_ms_per_call"]))
        out["worker_restarts"] = len(service.lines("starting it again"))
        out["tracebacks_in_log"] = service.text().count("Traceback")
        out["broker_leftovers"] = clean_broker(args.transport_url, service)
    return out


def scenario(args, n):
    workdir = tempfile.mkdtemp(prefix="gantt-bench-rpc-")
    # A fresh SQLite file per cloud, as benchmarks.scheduler.
    url = args.db or "sqlite:///" + os.path.join(workdir,
                                                 "placement.sqlite")
    store = scheduler_bench._store(url)
    t0 = time.perf_counter()
    scheduler_bench.build(store, n)
    built = time.perf_counter() - t0
    store.dispose()
    out = {"hosts": n, "build_s": round(built, 1), "capacity": n * PER_HOST,
           "runs": {}}
    placed = 0
    variants = [(group, wait, rate)
                for group in args.claim_group_sizes or [None]
                for wait in args.listener_idle_waits or [None]
                for rate in args.rates or [None]]
    reply = None
    if args.messaging_floor:
        reply = os.path.join(workdir, "floor-reply.json")
        with open(reply, "w") as f:
            json.dump(real_reply(url, args.spec_form,
                                 args.postgresql_listen), f)
        placed += 1
    for workers in args.processes:
        # The floor at each offered rate too: the latency of the path
        # with nothing decided.
        for rate in (args.rates or [None]) if reply is not None else []:
            key = f"{workers}/floor" + ("" if rate is None
                                        else f"/r{rate}")
            print(f"{n} hosts, {workers} process(es) of the messaging "
                  "floor" + ("" if rate is None else
                             f", {rate} calls/s offered"),
                  file=sys.stderr)
            rundir = os.path.join(workdir, "p" + key.replace("/", "-"))
            os.makedirs(rundir, exist_ok=True)
            out["runs"][key] = run(args, url, workers, placed, rundir,
                                   rate=rate, floor_reply=reply)
        for group, wait, rate in variants:
            key = str(workers)
            if group is not None:
                key += f"/g{group}"
            if wait is not None:
                key += f"/w{wait}"
            if rate is not None:
                key += f"/r{rate}"
            print(f"{n} hosts, {workers} scheduler process(es)"
                  + ("" if group is None else
                     f", claim_group_size {group}")
                  + ("" if wait is None else
                     f", listener_idle_wait {wait}")
                  + ("" if rate is None else
                     f", {rate} calls/s offered"), file=sys.stderr)
            rundir = os.path.join(workdir, "p" + key.replace("/", "-"))
            os.makedirs(rundir, exist_ok=True)
            # Each run starts without the dead rows of the one before.
            scheduler_bench.vacuum(url)
            figures = run(args, url, workers, placed, rundir, group, wait,
                          rate)
            placed += figures.get("instances_placed", 0)
            out["runs"][key] = figures
        if args.floor_rounds > 1:
            found = rpc_rounds.floor_rounds(run, args, url, workers, placed,
                                            workdir, n, reply, out["runs"])
            placed += found.pop("instances_placed")
            out.setdefault("versus_floor_rounds", {})[str(workers)] = found
        if args.decision_log_rounds:
            runs = rpc_rounds.decision_log_rounds(run, args, url, workers,
                                                  placed, workdir, n)
            placed += runs.pop("instances_placed")
            out.setdefault("decision_log", {})[str(workers)] = runs
    print(f"{n} hosts, embedded", file=sys.stderr)
    out["embedded"] = embedded(url, args.spec_form, args.calls,
                               args.postgresql_listen)
    embedded_cpu = out["embedded"]["cpu_ms_per_call"]
    for figures in out["runs"].values():
        if figures.get("scheduler_cpu_ms_per_call") and embedded_cpu:
            figures["cpu_vs_embedded"] = round(
                figures["scheduler_cpu_ms_per_call"] / embedded_cpu, 2)
    against = rpc_floor.versus_floor(out["runs"])
    if against:
        out["versus_floor"] = against
    # Only configuration and logs are left there (and the SQLite file).
    shutil.rmtree(workdir, ignore_errors=True)
    return out


def _ints(text):
    values = [int(s) for s in text.split(",") if s]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected positive integers")
    return values


def _waits(text):
    try:
        values = [float(s) for s in text.split(",") if s]
    except ValueError:
        values = []
    if not values or not all(0.001 <= v <= 1.0 for v in values):
        raise argparse.ArgumentTypeError(
            "expected seconds from 0.001 to 1.0")
    return values


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_ints, default=[1000, 10000],
                        help="cloud sizes, hosts (default 1000,10000)")
    parser.add_argument("--processes", type=_ints, default=[1, 4],
                        help="scheduler processes per run (default 1,4)")
    parser.add_argument("--calls", type=int, default=400,
                        help="measured calls per run (default 400)")
    parser.add_argument("--clients", type=int, default=None,
                        help="concurrent client threads (default: 2 per "
                             "scheduler process)")
    parser.add_argument("--transport-url",
                        default="rabbit://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--db", help="database URL, wiped per size, "
                        "one run at a time (default: a fresh SQLite "
                        "file per size)")
    parser.add_argument("--change-feed", metavar="REDIS_URL",
                        help="[placement_database] change_feed_url of the "
                             "service")
    parser.add_argument("--no-postgresql-listen", dest="postgresql_listen",
                        action="store_false",
                        help="[placement_database] postgresql_listen = "
                             "false for the service and the embedded run")
    parser.add_argument("--spec-form", choices=("nova", "gantt"),
                        default="nova",
                        help="spec_obj as a Nova RequestSpec primitive "
                             "(default) or gantt's JSON form")
    parser.add_argument("--claim-group-sizes", type=_ints, default=None,
                        help="run each process count once per [scheduler] "
                             "claim_group_size given (default: the "
                             "service's default only)")
    parser.add_argument("--listener-idle-waits", type=_waits, default=None,
                        help="run each process count once per [scheduler] "
                             "listener_idle_wait given, in seconds (default: "
                             "the service's default only)")
    parser.add_argument("--rates", type=_ints, default=None,
                        help="open loop: run each process count once per "
                             "rate given, the calls arriving at that many "
                             "per second (Poisson), sent by --clients "
                             f"threads (default {OPEN_LOOP_THREADS}); "
                             "latency counts from when a call was due")
    parser.add_argument("--messaging-floor", action="store_true",
                        help="per process count, one more run (key "
                             "\"P/floor\") on benchmarks.messaging_floor: "
                             "gantt-scheduler's transport and executor "
                             "answering a recorded reply, nothing else")
    parser.add_argument("--decision-log-rounds", type=int, default=0,
                        help="per process count, this many rounds of two "
                             "closed-loop runs with [decision_log] off and "
                             "on, in alternating order: the log's cost a "
                             "call (default 0: none)")
    parser.add_argument("--floor-rounds", type=int, default=1,
                        help="with --messaging-floor, closed loop: run "
                             "gantt-scheduler and the floor this many "
                             "times each per process count, in "
                             "alternating order, and give each round's "
                             "ratios and their median "
                             "(versus_floor_rounds; default 1)")
    args = parser.parse_args(argv)
    if args.floor_rounds < 1:
        parser.error("--floor-rounds must be positive")
    if args.floor_rounds > 1 and (
            not args.messaging_floor or args.rates
            or args.claim_group_sizes or args.listener_idle_waits):
        parser.error("--floor-rounds needs --messaging-floor, closed loop "
                     "(no --rates) and the service's default claim group "
                     "and listener wait (no --claim-group-sizes or "
                     "--listener-idle-waits)")
    if args.calls < 1 or (args.clients is not None and args.clients < 1):
        parser.error("--calls and --clients must be positive")
    for name in ("processes", "claim_group_sizes", "listener_idle_waits",
                 "rates"):
        values = getattr(args, name) or []
        if len(set(values)) != len(values):
            parser.error(f"--{name.replace('_', '-')}: each value once "
                         "(run the benchmark again to repeat a run)")
    # Instances placed on one cloud over all its runs; keep them to half
    # its capacity so that no run meets a full cloud.
    planned = sum(args.calls + WARMUP_PER_WORKER * p
                  for p in args.processes) * (
                      len(args.claim_group_sizes or [1])
                      * len(args.listener_idle_waits or [1])
                      * len(args.rates or [1])
                      + 2 * max(args.decision_log_rounds, 0)
                      + args.floor_rounds - 1)
    planned += args.calls + WARMUP_PER_WORKER  # the embedded run
    for n in args.sizes:
        if planned > n * PER_HOST // 2:
            parser.error(f"{planned} instances would fill more than half "
                         f"of {n} hosts ({PER_HOST} instances each): "
                         f"fewer --calls or more hosts")
    # Held until main returns: no other run wipes the database meanwhile.
    _held = args.db and db_lock.hold(parser, args.db, "benchmarks.rpc")
    results = {}
    for n in args.sizes:
        results[str(n)] = scenario(args, n)
    print(json.dumps({
        "benchmark": "select_destinations over RabbitMQ, gantt-scheduler "
                     "service, claims included",
        "inputs": {"database": (args.db or "sqlite").split(":", 1)[0],
                   "transport_url": _masked(args.transport_url),
                   "sizes": args.sizes, "processes": args.processes,
                   "calls": args.calls,
                   "clients": args.clients or (
                       f"{OPEN_LOOP_THREADS} (open loop)" if args.rates
                       else "2 per process"),
                   "rates": args.rates or "closed loop",
                   "messaging_floor": args.messaging_floor,
                   "warmup_calls_per_process": WARMUP_PER_WORKER,
                   "spec_form": args.spec_form, "flavor": FLAVOR,
                   "change_feed": bool(args.change_feed),
                   "postgresql_listen": args.postgresql_listen,
                   "claim_group_sizes": args.claim_group_sizes or "default",
                   "listener_idle_waits":
                       args.listener_idle_waits or "default",
                   "decision_log_rounds": args.decision_log_rounds,
                   "floor_rounds": args.floor_rounds,
                   "filters": "default", "weighers": "default (all)"},
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "results": results,
    }, indent=2))
    bad = [f"{n} hosts, {p} process(es)"
           for n, result in results.items()
           for p, figures in result["runs"].items()
           if figures["exit_code"] != 0 or figures["broker_leftovers"]]
    if bad:
        print("gantt-scheduler did not stop cleanly (exit status or "
              "broker leftovers): " + "; ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
