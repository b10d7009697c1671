"""rpc.client.SchedulerClient against a real gantt RPC server
(rpc.server.build_server over the real scheduler) on RabbitMQ and on the
embedded in-process transport: Selections with alternates and their
allocation requests, Nova's and gantt's spec forms, NoValidHost and bad
requests as gantt errors, timeouts and the call monitor's heartbeat,
fanout casts reaching every scheduler, and the whole conductor flow with
the cell retry.

RabbitMQ: skipped when unreachable, a failure with CI=true. Each test has
its own topic and exchange; its queues go when its servers stop."""

import json
import random
import socket
import time
import uuid as uuidlib

import kombu
import pytest
import sqlalchemy as sa
from oslo_config import cfg
from oslo_context import context as context_mod

from placement import direct
from placement.db import store as store_mod
from rpc import cell_retry
from rpc import client as client_mod
from rpc import conf as rpc_conf
from rpc import serializer as serializer_mod
from rpc import server as server_mod
from scheduler import errors, host_tables, manager, request_spec
from tests import databases
from tests.rpc import helpers
from tests.rpc import test_cell_retry as retry_tests
from tests.scheduler import cloud as cloud_mod

FLAVOR = {"vcpus": 2, "memory_mb": 1024, "root_gb": 10}
USED = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}
# Most free RAM first: n0 is picked; n1 and n2 are its alternates
# (max_attempts 3), n3 is left out.
SIZES = (16384, 12288, 8192, 6144)
CONTEXT = helpers.CONTEXT
# kombu's spelling of the broker oslo.messaging reaches.
RABBIT_AMQP_URL = helpers.RABBIT_URL.replace("rabbit://", "amqp://", 1)
# The embedded transport too, for the tests marked so.
both_kinds = pytest.mark.parametrize("deployment", ["rabbit", "memory"],
                                     indirect=True)


def messaging_conf(conf, kind, topic, exchange, host):
    """The RPC options of one process of a test: its transport (RabbitMQ
    or in-process), the test's topic and exchange, its host name."""
    url = helpers.RABBIT_URL if kind == "rabbit" else None
    conf = helpers.messaging_conf(url, topic=topic, conf=conf)
    conf.set_override("control_exchange", exchange)
    conf.set_override("host", host)
    return conf


def transport_of(conf):
    transport = rpc_conf.get_transport(conf)
    if "oslo_messaging_rabbit" in conf:
        # The test's queues go with their last consumer (the driver
        # registered the option; queues are declared when a server
        # starts).
        conf.set_override("amqp_auto_delete", True,
                          group="oslo_messaging_rabbit")
    return transport


class SlowScheduler(manager.Scheduler):
    """A scheduler that takes its time over select_destinations."""

    # Heartbeats come every call_monitor_timeout / 2 (1 s here): the call
    # ends between two, well before the client would give up.
    delay = 2.5

    def select_destinations(self, *args, **kwargs):
        time.sleep(self.delay)
        return super().select_destinations(*args, **kwargs)


class Deployment:
    """Schedulers served over one transport kind, on one topic and
    exchange, and clients for them."""

    def __init__(self, kind):
        if kind == "rabbit":
            helpers.require_rabbit()
        self.kind = kind
        self.topic = helpers.unique_topic()
        self.exchange = "gantt-client-test-" + uuidlib.uuid4().hex[:12]
        self._servers = []
        self._clients = []

    def serve(self, store, host="sched-a", scheduler_cls=manager.Scheduler):
        """Start a scheduler on ``store`` as ``host``; returns it."""
        conf = messaging_conf(store.conf, self.kind, self.topic,
                              self.exchange, host)
        scheduler = scheduler_cls(conf, store=store, rng=random.Random(7))
        server = server_mod.build_server(conf, scheduler,
                                         transport_of(conf))
        server.start()
        self._servers.append((server, scheduler))
        return scheduler

    def client(self, topic=None, timeout=30, call_monitor_timeout=10):
        conf = cfg.ConfigOpts()
        conf([], default_config_files=[])
        messaging_conf(conf, self.kind, topic or self.topic, self.exchange,
                       "conductor")
        transport = transport_of(conf)
        client = client_mod.SchedulerClient(
            conf, transport=transport, timeout=timeout,
            call_monitor_timeout=call_monitor_timeout)
        self._clients.append(client)
        return client

    def close(self):
        for client in self._clients:
            client.close()
            client.transport.cleanup()
        for server, scheduler in self._servers:
            server.stop()
            server.wait()
            server.transport.cleanup()
            scheduler.close()
        if self.kind == "rabbit":
            # An auto-delete exchange goes with its last binding: one that
            # never had a queue (no scheduler listened) stays unless
            # removed.
            with kombu.Connection(RABBIT_AMQP_URL) as conn:
                conn.channel().exchange_delete(self.exchange)


class World:
    """Four hosts in one cell; a placement view of them."""

    def __init__(self, store):
        self.store = store
        cloud = cloud_mod.Cloud(store)
        self.placement = direct.PlacementDirect(store)
        self.uuids = [cloud_mod.add_host(cloud, self.placement, f"n{i}",
                                         memory_mb=m)
                      for i, m in enumerate(SIZES)]
        cloud.close()

    def usages(self):
        return {f"n{i}": {rc: n for rc, n in
                          self.placement.get_provider_usages(u)[1].items()
                          if n}
                for i, u in enumerate(self.uuids)}

    def held(self, consumer):
        view = self.placement.get_allocations(consumer)
        return {f"n{self.uuids.index(rp)}": dict(entry.resources)
                for rp, entry in view.allocations.items()}


@pytest.fixture
def deployment(request):
    """RabbitMQ, unless the test asks for a kind (indirect parameter)."""
    d = Deployment(getattr(request, "param", "rabbit"))
    yield d
    d.close()


@pytest.fixture
def world(sqlite_store):
    return World(sqlite_store)


@pytest.fixture
def client(deployment, world):
    deployment.serve(world.store)
    return deployment.client()


def gantt_spec(**fields):
    return {"flavor": dict(FLAVOR), "project_id": "p1", "user_id": "u1",
            **fields}


def new_id():
    return str(uuidlib.uuid4())


EMPTY = {"n0": {}, "n1": {}, "n2": {}, "n3": {}}

SPEC_FORMS = {
    "gantt-dict": lambda: gantt_spec(),
    "request-spec": lambda: request_spec.RequestSpec.from_dict(gantt_spec()),
    "nova-primitive": lambda: helpers.request_spec(**FLAVOR),
}


# -- select_destinations ----------------------------------------------------


@both_kinds
@pytest.mark.parametrize("form", sorted(SPEC_FORMS))
def test_select_destinations_claims_and_returns_alternates(client, world,
                                                           form):
    instance = new_id()
    [selections] = client.select_destinations(
        CONTEXT, SPEC_FORMS[form](), [instance])

    assert [s.nodename for s in selections] == ["n0", "n1", "n2"]
    for sel in selections:
        assert sel.service_host == sel.nodename
        assert sel.compute_node_uuid == world.uuids[int(sel.nodename[1:])]
        request = json.loads(sel.allocation_request)
        assert request["allocations"] == {
            sel.compute_node_uuid: {"resources": USED}}
        assert set(request) == {"allocations", "mappings"}
        assert sel.allocation_request_version
        assert sel.availability_zone == "nova"
    # Only the chosen host is claimed, for the instance, owned by the
    # context's project and user.
    assert world.usages() == {**EMPTY, "n0": USED}
    consumer = world.placement.get_consumer(instance)
    assert (consumer.project_id, consumer.user_id) == ("demo", "alice")


def test_multi_instance_request(client, world):
    instances = [new_id(), new_id()]
    answer = client.select_destinations(
        context_mod.RequestContext(user_id="u9", project_id="p9",
                                   overwrite=False),
        gantt_spec(num_instances=2), instances)
    # Each instance claimed on its host; the alternates are never a
    # host picked for the request.
    assert [[s.nodename for s in per_instance] for per_instance in answer] \
        == [["n0", "n2", "n3"], ["n1", "n2", "n3"]]
    assert [world.held(i) for i in instances] == [{"n0": USED},
                                                  {"n1": USED}]
    assert world.usages() == {**EMPTY, "n0": USED, "n1": USED}
    assert world.placement.get_consumer(instances[1]).project_id == "p9"


def test_legacy_answer_and_no_claim_without_instances(client, world):
    answer = client.select_destinations(None, gantt_spec(),
                                        return_objects=False)
    # Nova's legacy form: no limits set is an empty mapping.
    assert answer == [{"host": "n0", "nodename": "n0", "limits": {}}]
    [selections] = client.select_destinations(None, gantt_spec(),
                                              return_alternates=False)
    assert len(selections) == 1
    assert selections[0].allocation_request
    assert world.usages() == EMPTY


def test_no_valid_host_is_the_schedulers_error(client, world):
    with pytest.raises(manager.NoValidHost) as caught:
        client.select_destinations(
            CONTEXT, gantt_spec(flavor={**FLAVOR, "vcpus": 64}), [new_id()])
    message = str(caught.value)
    assert message.startswith("No valid host was found. ")
    assert "no valid host for instance 1 of 1" in message
    assert caught.value.message == message
    assert world.usages() == EMPTY


def test_bad_requests_are_clear_errors(client, world):
    with pytest.raises(
            client_mod.InvalidRequest,
            match=r"flavr: unknown field \(did you mean flavor\?\)"
    ) as caught:
        client.select_destinations(CONTEXT, {"flavr": FLAVOR}, [new_id()])
    assert isinstance(caught.value, ValueError)
    assert caught.value.exc_type == "InvalidRequest"
    assert str(caught.value).startswith("select_destinations: ")
    with pytest.raises(client_mod.InvalidRequest,
                       match=r"instance_uuids\[0\]: 'nope' is not a uuid"):
        client.select_destinations(CONTEXT, gantt_spec(), ["nope"])
    # Refused here, before anything is sent.
    with pytest.raises(errors.InvalidRequestSpec, match="spec: expected"):
        client.select_destinations(CONTEXT, "m1.small", [new_id()])
    assert world.usages() == EMPTY


def test_other_scheduler_errors_keep_their_message(client, world):
    """A request the scheduler cannot use is refused, says why, and
    changes nothing."""
    with pytest.raises(client_mod.RemoteSchedulerError,
                       match="flavor.vcpus") as caught:
        client.select_destinations(
            CONTEXT, gantt_spec(flavor=dict(FLAVOR, vcpus=-1)), [new_id()])
    assert caught.value.exc_type
    assert world.usages() == EMPTY


def test_one_instance_of_a_multi_create_request_moves_alone(client, world):
    """A move of one instance booted in a request of two: Nova sends the
    request's spec (num_instances 2) with the one instance's uuid, and
    one instance is placed."""
    [[chosen, *_]] = client.select_destinations(
        CONTEXT, gantt_spec(num_instances=2), [new_id()])
    assert world.usages() == {**EMPTY, chosen.service_host: USED}


def test_an_instance_holding_allocations_is_claimed_beside_them(
        client, world):
    """A second call for an instance that holds allocations (an
    evacuation: its source's allocation stays on it) claims the new host
    beside them, as Nova's scheduler does."""
    instance = new_id()
    [[first, *_]] = client.select_destinations(CONTEXT, gantt_spec(),
                                               [instance])
    [[second, *_]] = client.select_destinations(
        CONTEXT, gantt_spec(ignore_hosts=[first.service_host]), [instance])
    assert second.service_host != first.service_host
    assert world.usages() == {**EMPTY, first.service_host: USED,
                              second.service_host: USED}


@both_kinds
def test_no_scheduler_is_a_timeout(deployment):
    client = deployment.client(topic=helpers.unique_topic(), timeout=1,
                               call_monitor_timeout=None)
    started = time.monotonic()
    with pytest.raises(client_mod.SchedulerTimeout) as caught:
        client.select_destinations(CONTEXT, gantt_spec(), [new_id()])
    assert time.monotonic() - started < 10
    assert f"no scheduler answered on topic {client.topic!r} within 1 s" \
        in str(caught.value)
    assert isinstance(caught.value, errors.SchedulerError)


def test_unreachable_broker_is_a_clear_error():
    """With a bounded retry, a cast to a broker that is not there fails
    at once with a gantt error (nothing listens on the port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conf = helpers.messaging_conf(f"rabbit://guest:guest@127.0.0.1:{port}/")
    with client_mod.SchedulerClient(conf, retry=0) as client:
        with pytest.raises(client_mod.SchedulerUnavailable,
                           match="update_aggregates: could not reach the "
                                 "message broker"):
            client.update_aggregates(CONTEXT, [])


def test_call_monitor_gives_up_without_heartbeat():
    """No server heartbeats: the call fails after call_monitor_timeout,
    long before its own timeout."""
    d = Deployment("rabbit")
    try:
        client = d.client(timeout=120, call_monitor_timeout=2)
        started = time.monotonic()
        with pytest.raises(client_mod.SchedulerTimeout):
            client.select_destinations(CONTEXT, gantt_spec(), [new_id()])
        assert time.monotonic() - started < 15
    finally:
        d.close()


def test_heartbeat_keeps_a_long_call_alive(world):
    """The scheduler takes longer than call_monitor_timeout: its
    heartbeats keep the call going until the answer comes."""
    d = Deployment("rabbit")
    try:
        scheduler = d.serve(world.store, scheduler_cls=SlowScheduler)
        client = d.client(timeout=60, call_monitor_timeout=2)
        # A first call without delay: the heartbeats of the slow one are
        # not held up by the scheduler's first sync.
        scheduler.delay = 0
        client.select_destinations(CONTEXT, gantt_spec())
        scheduler.delay = SlowScheduler.delay
        started = time.monotonic()
        [selections] = client.select_destinations(CONTEXT, gantt_spec(),
                                                  [new_id()])
        assert time.monotonic() - started >= SlowScheduler.delay
        assert len(selections) == 3
    finally:
        d.close()


# -- the other calls ----------------------------------------------------


def test_ping_and_update_host_info(client, world):
    assert client.ping(CONTEXT, {"x": [1, 2]}) == {
        "service": "scheduler", "arg": {"x": [1, 2]}}
    answer = client.update_host_info(
        CONTEXT, "n0", service={"enabled": False,
                                "disabled_reason": "maintenance"},
        heartbeat=True)
    assert answer == {"host": "n0", "compute_node_uuid": None}
    # The scheduler sees it on its next request: n0 is disabled.
    [selections] = client.select_destinations(CONTEXT, gantt_spec(),
                                              [new_id()])
    assert [s.nodename for s in selections] == ["n1", "n2", "n3"]
    with pytest.raises(client_mod.InvalidRequest,
                       match="update_host_info: nothing to update"):
        client.update_host_info(CONTEXT, "n0")


@pytest.mark.parametrize("report, says", [
    ({"vcpus": "many"}, "vcpus"),
    ({"memroy_mb": 1024}, "unknown compute node field 'memroy_mb'"),
    ({"pci_device_pools": [{"vendor_id": "8086"}]},
     "pci_device_pools\\[0\\]: expected an object with an integer count"),
    (["not", "a", "dict"], "expected an object of compute node fields"),
], ids=["not-an-int", "unknown-field", "pool-without-count", "not-a-dict"])
def test_a_bad_host_report_is_refused_before_it_is_sent(client, report,
                                                         says):
    sent = []
    real_call = client._call
    client._call = lambda *a, **k: sent.append(a) or real_call(*a, **k)
    with pytest.raises(client_mod.InvalidHostInfo,
                       match=f"update_host_info: .*{says}"):
        client.update_host_info(CONTEXT, "n0", nodename="n0", report=report)
    assert sent == []


# -- fanout casts -------------------------------------------------------


def aggregates_of(store):
    agg, member = host_tables.host_aggregates, host_tables.host_aggregate_hosts
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(agg.c.name, member.c.host).select_from(
            agg.outerjoin(member, member.c.aggregate_id == agg.c.id))).all()
    out = {}
    for name, host in rows:
        out.setdefault(name, set())
        if host:
            out[name].add(host)
    return out


def instances_of(store):
    inst = host_tables.host_instances
    with store.engine.connect() as conn:
        return {(r.instance_uuid, r.host) for r in conn.execute(
            sa.select(inst.c.instance_uuid, inst.c.host))}


@pytest.fixture
def second_store(tmp_path):
    """Another scheduler's database: fanout casts must reach it too."""
    conf = databases.make_conf(f"sqlite:///{tmp_path / 'other.sqlite'}")
    store = store_mod.Store.open(conf)
    yield store
    store.dispose()


@both_kinds
def test_fanout_casts_reach_every_scheduler(deployment, world,
                                            second_store):
    deployment.serve(world.store, host="sched-a")
    deployment.serve(second_store, host="sched-b")
    client = deployment.client()
    stores = (world.store, second_store)
    a1, a2, a3 = new_id(), new_id(), new_id()

    client.update_aggregates(CONTEXT, [
        {"uuid": a1, "name": "plain", "hosts": ["n0"], "metadata": {}},
        helpers.aggregate(a2, "nova-object", ["n1", "n2"],
                          {"availability_zone": "az2"}),
        serializer_mod.Aggregate(a3, "dataclass", ("n3",)),
    ])
    expected = {"plain": {"n0"}, "nova-object": {"n1", "n2"},
                "dataclass": {"n3"}}
    for store in stores:
        helpers.wait_for(lambda s=store: aggregates_of(s) == expected,
                         what="the aggregates on every scheduler")
    client.delete_aggregate(CONTEXT, helpers.aggregate(a2, "nova-object",
                                                       []))
    del expected["nova-object"]
    for store in stores:
        helpers.wait_for(lambda s=store: aggregates_of(s) == expected,
                         what="the aggregate deleted on every scheduler")

    i1, i2, i3 = new_id(), new_id(), new_id()
    client.update_instance_info(CONTEXT, "n0", helpers.instance_list(
        [helpers.instance(i1, "n0"), helpers.instance(i2, "n0")]))
    client.update_instance_info(CONTEXT, "n1", [
        serializer_mod.Instance(i3, "n1", project_id="demo")])
    want = {(i1, "n0"), (i2, "n0"), (i3, "n1")}
    for store in stores:
        helpers.wait_for(lambda s=store: instances_of(s) == want,
                         what="the instances on every scheduler")
    client.delete_instance_info(CONTEXT, "n0", i1)
    client.sync_instance_info(CONTEXT, "n1", [])
    for store in stores:
        helpers.wait_for(lambda s=store: instances_of(s) == {(i2, "n0")},
                         what="the instance changes on every scheduler")


# -- the conductor's flow ----------------------------------------------


@pytest.mark.parametrize("deployment, via", [
    ("rabbit", "direct"), ("rabbit", "http"), ("memory", "direct")],
    indirect=["deployment"])
def test_build_fails_then_cell_retry_claims_alternates(client, world, via):
    """select_destinations over RPC claims n0; the build "fails" there
    and the conductor moves the claim along the alternates, through the
    embedded placement or its REST API, until none is left. No
    allocation leaks at any step."""
    placement, stop = world.placement, None
    if via == "http":
        url, stop = retry_tests.serve(world.store)
        placement = cell_retry.PlacementHttp(url)
    try:
        instance = new_id()
        [selections] = client.select_destinations(CONTEXT, gantt_spec(),
                                                  [instance])
        assert world.usages() == {**EMPTY, "n0": USED}

        chosen = cell_retry.claim_first(placement, selections, instance,
                                        "demo", "alice")
        assert chosen == selections[1]
        assert world.held(instance) == {"n1": USED}
        assert world.usages() == {**EMPTY, "n1": USED}

        chosen = cell_retry.claim_first(placement, selections[1:],
                                        instance, "demo", "alice")
        assert chosen == selections[2]
        assert world.usages() == {**EMPTY, "n2": USED}

        with pytest.raises(cell_retry.MaxRetriesExceeded,
                           match=f"instance {instance} after the build "
                                 "failed on n2: no alternate host left"):
            cell_retry.claim_first(placement, selections[2:], instance,
                                   "demo", "alice")
        assert world.held(instance) == {}
        assert world.usages() == EMPTY
        # The scheduler goes on placing on what is free.
        other = new_id()
        [again] = client.select_destinations(CONTEXT, gantt_spec(),
                                             [other])
        assert world.usages() == {**EMPTY, again[0].nodename: USED}
        assert world.held(other) == {again[0].nodename: USED}
    finally:
        if stop:
            stop()


def test_nova_internal_hints_are_dropped_from_gantt_requests(client, world):
    """_nova_check_type makes a request a rebuild check (no placement
    query, no claim, forced hosts filtered). Nova 34's API drops users'
    _nova hints; gantt drops them from its own JSON form, which is not
    Nova's conductor: the forced host is claimed as for any request."""
    instance = new_id()
    [[chosen]] = client.select_destinations(
        CONTEXT, gantt_spec(force_hosts=["n3"], scheduler_hints={
            "_nova_check_type": ["rebuild"]}), [instance],
        return_alternates=False)
    assert chosen.service_host == "n3"
    assert chosen.allocation_request is not None
    assert world.usages() == {**EMPTY, "n3": USED}
