"""gantt-scheduler as a service: its own process (``python -m
rpc.service --config-file F``), RabbitMQ, and a cloud loaded in a
PostgreSQL scratch database, called by a raw oslo.messaging client as a
Nova conductor calls it.

Needs RabbitMQ and PostgreSQL on loopback (skipped locally, failed in CI
when missing). The broker restart test also needs rabbitmqctl (root).
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid as uuidlib

import oslo_messaging
import pytest
import sqlalchemy as sa

from placement import direct
from placement import errors as placement_errors
from placement.db import store as store_mod
from rpc import cell_retry
from rpc import client as rpc_client
from scheduler import host_records
from tests import databases
from tests.rpc import helpers, service_process
from tests.rpc.service_process import REPO, Service

HOSTS = ("cn1", "cn2", "cn3")
CLOUD = """
providers:
""" + "".join(f"""
  - name: {name}
    inventories: {{VCPU: 8, MEMORY_MB: 8192, DISK_GB: 100}}
    compute: {{cell: cell1}}
""" for name in HOSTS)

@pytest.fixture(scope="module")
def pg_cloud(tmp_path_factory):
    """The URL of a PostgreSQL scratch database holding a three-host
    cloud, loaded as `gantt-manage cloud load` loads it."""
    with service_process.pg_cloud(tmp_path_factory, CLOUD) as url:
        yield url


@pytest.fixture
def start(tmp_path, pg_cloud):
    started = []

    def start(**kw):
        service = Service(tmp_path / str(len(started)), pg_cloud, **kw)
        started.append(service)
        return service

    for i in range(3):
        (tmp_path / str(i)).mkdir()
    yield start
    for service in started:
        service.close()


def _data(primitive):
    assert primitive["nova_object.name"] == "Selection"
    assert primitive["nova_object.version"] == "1.1"
    return primitive["nova_object.data"]


def test_select_destinations_over_rabbitmq(start, pg_cloud):
    service = start()
    instance = str(uuidlib.uuid4())
    sent = time.monotonic()
    answer = service.client().call(
        helpers.CONTEXT, "select_destinations",
        spec_obj=helpers.request_spec(vcpus=2, memory_mb=1024),
        instance_uuids=[instance], return_objects=True,
        return_alternates=True)
    # The first call's round trip, as its client saw it.
    round_trip_ms = 1000 * (time.monotonic() - sent)
    [selections] = [[_data(p) for p in per] for per in answer]
    assert sorted(s["service_host"] for s in selections) == sorted(HOSTS)
    for s in selections:
        request = json.loads(s["allocation_request"])
        assert request["allocations"] == {s["compute_node_uuid"]: {
            "resources": {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 1}}}
        assert "mappings" in request
    # The chosen host's allocation request was claimed in PostgreSQL.
    store = store_mod.Store(databases.make_conf(pg_cloud))
    try:
        claimed = direct.PlacementDirect(store).get_allocations(instance)
        assert {rp: a.resources for rp, a in claimed.allocations.items()} \
            == {selections[0]["compute_node_uuid"]: {
                "VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 1}}
    finally:
        store.dispose()

    ping = service.client(version="1.1", namespace="baseapi")
    assert ping.call(helpers.CONTEXT, "ping", arg="hello") == {
        "service": "scheduler", "arg": "hello"}

    with pytest.raises(oslo_messaging.RemoteError) as caught:
        service.select(vcpus=64)
    assert caught.value.exc_type == "NoValidHost"
    assert caught.value.value.startswith("No valid host was found.")
    assert "Traceback" not in service.text()
    assert service.terminate() == 0
    # As it stops, the worker says what its calls cost (benchmarks.rpc
    # splits a call's CPU with it): two decisions (one NoValidHost), one
    # claim, and CPU in each phase.
    from benchmarks import worker_stats
    [stats] = worker_stats.worker_stats(service.text()).values()
    assert stats["decisions"] == 2
    assert stats["claim_attempts"] == 1
    for phase in ("decode_cpu_s", "decision_cpu_s", "claim_cpu_s",
                  "encode_cpu_s"):
        assert 0 < stats[phase] < stats["process_cpu_s"], phase
    # And how long its select_destinations calls took, by phase
    # (rpc.call_times): both calls, the ping not among them; no phase
    # longer than the whole, and the first call's time in the service
    # within its round trip (p50 of two: the faster one).
    assert stats["calls_timed"] == 2
    histograms = stats["call_ms_histograms"]
    assert {p: sum(h.values()) for p, h in histograms.items()} == {
        "total": 2, "before": 2, "scheduler": 2, "reply": 2}
    times = stats["call_ms"]
    for phase in ("before", "scheduler", "reply"):
        assert 0 < times[phase]["p99"] <= times["total"]["p99"], phase
    assert times["total"]["p50"] <= round_trip_ms * 2 ** (1 / 8)
    # The scheduler held for the two decisions (claim included) and
    # what the process's CPU did while the calls were served: a call's
    # own thread ran for part of it, never more than all of it.
    assert 0 < stats["claim_wall_s"] < stats["decision_wall_s"]
    served = worker_stats.service_times({1: stats})["while_served"]
    slowest = served["p99_and_over"]
    assert slowest["calls"] >= 1
    assert 0 < slowest["own_cpu"] <= slowest["wall"]
    assert slowest["others_cpu"] >= 0
    # Its heap was frozen once it was ready (rpc.heap), and the
    # collections made while it served are counted.
    assert stats["gc_frozen_objects"] > 10_000
    assert stats["gc"]["0"]["collections"] >= 1


def test_the_stop_is_one_short_line(start, pg_cloud):
    """By default a worker's stop says what it did in a few words; the
    stats JSON is for DEBUG (or [scheduler] log_worker_stats), and the
    broker's cancel of the consumers while the channel closes is not a
    warning."""
    service = start(worker_stats=False)
    service.select(claim=False, vcpus=1, memory_mb=256)
    with pytest.raises(oslo_messaging.RemoteError):
        service.select(vcpus=64)
    assert service.terminate() == 0
    [(pid, level, line)] = service.lines("gantt-scheduler stopped")
    assert (level, line) == ("INFO", f"gantt-scheduler stopped, pid={pid}: "
                             "2 decisions, 1 NoValidHost, 0 claims lost")
    text = service.text()
    assert "gantt-scheduler stats:" not in text
    assert "during closing channel" not in text
    assert " WARNING " not in text, text


def test_calls_that_queue_are_claimed_together(start, pg_cloud):
    """Calls that arrive while the worker is deciding wait and are served
    as a group (scheduler.request_groups): each still gets its host,
    claimed for its own instance, in fewer claim transactions than
    decisions."""
    calls = 12
    instances = [str(uuidlib.uuid4()) for _ in range(calls)]
    store = store_mod.Store(databases.make_conf(pg_cloud))
    placement = direct.PlacementDirect(store)
    try:
        free = sum(8 - placement.get_provider_usages(p.uuid)[1]
                   .get("VCPU", 0) for p in placement.list_providers())
        assert free >= calls, "earlier tests left too little room"
        service = start()
        ready = threading.Barrier(calls)
        answers = {}

        def call(instance):
            client = service.client(timeout=30)
            ready.wait(10)
            try:
                answers[instance] = client.call(
                    helpers.CONTEXT, "select_destinations",
                    spec_obj=helpers.request_spec(vcpus=1, memory_mb=256),
                    instance_uuids=[instance], return_objects=True,
                    return_alternates=True)
            except Exception as exc:
                answers[instance] = exc

        threads = [threading.Thread(target=call, args=(i,))
                   for i in instances]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        for instance in instances:
            [[chosen, *_]] = answers[instance]
            host = _data(chosen)["compute_node_uuid"]
            held = placement.get_allocations(instance).allocations
            assert {rp: a.resources for rp, a in held.items()} == {
                host: {"VCPU": 1, "MEMORY_MB": 256, "DISK_GB": 1}}
    finally:
        # The module's cloud is shared: leave its room to the next tests.
        for instance in instances:
            with contextlib.suppress(placement_errors.AllocationsNotFound):
                placement.delete_allocations(instance)
        store.dispose()
    assert service.terminate() == 0
    from benchmarks import worker_stats
    [stats] = worker_stats.worker_stats(service.text()).values()
    assert stats["decisions"] == calls
    assert stats["grouped_decisions"] > 0
    assert stats["claim_attempts"] < calls


def _lock_waiters(conn, database):
    return conn.execute(sa.text(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = :db "
        "AND wait_event_type = 'Lock'"), {"db": database}).scalar()


def test_sigterm_lets_the_call_in_flight_finish(start, pg_cloud):
    service = start()
    engine = sa.create_engine(pg_cloud)
    database = sa.make_url(pg_cloud).database
    answers = []
    try:
        with engine.connect() as locker, engine.connect() as watcher:
            # Hold the allocations table: the call's claim waits for it.
            locker.begin()
            locker.execute(sa.text(
                "LOCK TABLE allocations IN ACCESS EXCLUSIVE MODE"))
            caller = threading.Thread(target=lambda: answers.append(
                service.select(timeout=30)))
            caller.start()
            helpers.wait_for(lambda: _lock_waiters(watcher, database),
                             timeout=10, what="the call to reach the lock")
            service.proc.send_signal(signal.SIGTERM)
            helpers.wait_for(lambda: service.lines("stopping"),
                             what="the service to start stopping")
            time.sleep(0.3)
            assert service.proc.poll() is None, "exited mid-call"
            locker.rollback()
            caller.join(30)
    finally:
        engine.dispose()
    assert service.proc.wait(30) == 0
    [[chosen, *alternates]] = answers[0]
    assert _data(chosen)["service_host"] in HOSTS
    assert len(alternates) == 2
    assert service.lines("stopped")


def test_a_call_longer_than_the_shutdown_timeout_is_cut(start, pg_cloud):
    service = start(extra="""
        [DEFAULT]
        graceful_shutdown_timeout = 1
        """)
    engine = sa.create_engine(pg_cloud)
    database = sa.make_url(pg_cloud).database
    try:
        with engine.connect() as locker, engine.connect() as watcher:
            locker.begin()
            locker.execute(sa.text(
                "LOCK TABLE allocations IN ACCESS EXCLUSIVE MODE"))
            outcome = []

            def call():
                try:
                    service.select(timeout=3)
                except oslo_messaging.MessagingTimeout as exc:
                    outcome.append(exc)
            caller = threading.Thread(target=call)
            caller.start()
            helpers.wait_for(lambda: _lock_waiters(watcher, database),
                             timeout=10, what="the call to reach the lock")
            service.proc.send_signal(signal.SIGTERM)
            assert service.proc.wait(10) == 1
            locker.rollback()
            caller.join(10)
    finally:
        engine.dispose()
    assert service.lines("did not finish in 1 s")
    # The process is gone: the caller never gets an answer.
    assert len(outcome) == 1


def test_workers_share_the_calls_and_each_gets_the_fanout(start, pg_cloud):
    service = start(workers=2, debug=True)
    pids = {pid for pid, _, _ in service.lines("gantt-scheduler ready")}
    assert len(pids) == 2 and service.proc.pid not in pids
    for _ in range(6):
        service.select()
    served = {pid for pid, _, _ in service.lines(
        "select_destinations for instances")}
    assert served == pids

    agg = str(uuidlib.uuid4())
    service.client(fanout=True).cast(
        helpers.CONTEXT, "update_aggregates", aggregates=[
            helpers.aggregate(agg, "west", list(HOSTS),
                              {"availability_zone": "west"})])
    try:
        # Each worker has a fanout queue of its own: both apply the cast.
        helpers.wait_for(
            lambda: {pid for pid, _, _ in service.lines(
                "Applied update_aggregates")} == pids,
            what="both workers to apply the cast")
        # Both host state tables caught up: every answer is in "west".
        zones = {_data(p)["availability_zone"]
                 for _ in range(4) for p in service.select()[0]}
        assert zones == {"west"}
    finally:
        store = store_mod.Store(databases.make_conf(pg_cloud))
        host_records.delete_aggregate(store, agg)
        store.dispose()

    # A worker that dies is started again.
    lost = min(pids)
    os.kill(lost, signal.SIGKILL)
    helpers.wait_for(lambda: len(service.lines("gantt-scheduler ready"))
                     == 3, timeout=20, what="a new worker")
    now = {pid for pid, _, _ in service.lines("gantt-scheduler ready")}
    assert len(now - pids) == 1
    assert service.select()[0]

    assert service.terminate() == 0
    assert {pid for pid, _, _ in service.lines(
        "gantt-scheduler stopped, pid=")} == now - {lost}


def test_defaults_and_unusable_configuration(tmp_path):
    from rpc import conf as rpc_conf
    from rpc import service as service_mod

    conf = service_mod.build_conf(["--config-file", os.devnull])
    assert conf.transport_url == rpc_conf.IN_PROCESS_TRANSPORT_URL
    assert conf.control_exchange == "nova"
    assert conf.scheduler.topic == "scheduler"
    assert conf.scheduler.workers is None
    # One process on the in-process transport; one per CPU on a broker.
    assert rpc_conf.worker_count(conf) == 1
    conf.set_override("transport_url", helpers.RABBIT_URL)
    assert rpc_conf.worker_count(conf) == (os.cpu_count() or 1)
    # The options oslo.messaging reads but registers only globally.
    assert conf.oslo_messaging_tracing.tracing_enabled is False
    assert conf.oslo_messaging_metrics.metrics_enabled is False

    bad = tmp_path / "bad.conf"
    bad.write_text("[DEFAULT]\ntransport_url = nonsense\n")
    done = subprocess.run(
        [sys.executable, "-m", "rpc.service", "--config-file", str(bad)],
        cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "transport_url" in done.stderr


def _rabbitmqctl(*args):
    subprocess.run(["rabbitmqctl", *args], check=True, capture_output=True,
                   timeout=60)


def test_calls_succeed_after_a_broker_restart(start):
    if shutil.which("rabbitmqctl") is None or os.geteuid() != 0:
        databases.unavailable("rabbitmqctl", "needs rabbitmqctl as root")
    service = start()
    outcomes = []  # (time, ok)
    stop = threading.Event()

    def load():
        # Calls that claim nothing, so that the cloud never fills up.
        while not stop.wait(0.05):
            try:
                service.select(timeout=2, claim=False)
                outcomes.append((time.monotonic(), True))
            except Exception:  # timeouts and lost connections
                outcomes.append((time.monotonic(), False))

    loader_thread = threading.Thread(target=load)
    loader_thread.start()
    try:
        helpers.wait_for(lambda: any(ok for _, ok in outcomes),
                         what="a first answer")
        try:
            _rabbitmqctl("stop_app")
        finally:
            _rabbitmqctl("start_app")
        restarted = time.monotonic()
        helpers.wait_for(
            lambda: sum(ok for at, ok in outcomes if at > restarted) >= 3,
            timeout=30, what="answers after the broker restart")
    finally:
        stop.set()
        loader_thread.join(10)
    # The same process served before and after, without restarting.
    assert service.proc.poll() is None
    assert service.lines("Reconnected to AMQP server")
    assert len(service.lines("gantt-scheduler ready")) == 1
    assert service.terminate() == 0


def test_conductor_client_and_cell_retry_end_to_end(start, pg_cloud):
    # A conductor's path: SchedulerClient -> gantt-scheduler (its own
    # process) -> placement on PostgreSQL; the build on the chosen host
    # fails, the cell claims an alternate, nothing leaks.
    service = start()
    client = rpc_client.SchedulerClient(service.conf,
                                        transport=service.transport,
                                        timeout=10)
    instance = str(uuidlib.uuid4())
    [selections] = client.select_destinations(
        helpers.CONTEXT, helpers.request_spec(vcpus=1, memory_mb=512),
        [instance])
    assert len(selections) == 3
    assert len({s.service_host for s in selections}) == 3
    store = store_mod.Store(databases.make_conf(pg_cloud))
    try:
        placement = direct.PlacementDirect(store)

        def held():
            found = placement.get_allocations(instance).allocations
            return {rp: a.resources for rp, a in found.items()}

        chosen, first_alternate = selections[0], selections[1]
        assert held() == {chosen.compute_node_uuid: {
            "VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}}
        got = cell_retry.claim_first(placement, selections, instance,
                                     "p1", "u1")
        assert got == first_alternate
        assert held() == {first_alternate.compute_node_uuid: {
            "VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}}
    finally:
        store.dispose()
    assert service.terminate() == 0
