"""The scheduler's RPC server, in process: Nova's scheduler RPC API 4.x
over the in-process transport, called by a raw oslo.messaging client
sending the primitives a Nova conductor sends."""

import json
import logging
import os
import pathlib
import sys
import types
import uuid as uuidlib

import oslo_messaging
import pytest

from placement import direct
from placement.db import store as store_mod
from rpc import errors, serializer
from rpc import server as server_mod
from scheduler import host_reads, host_records, manager
from tests.rpc import helpers

CTX = helpers.CONTEXT
FIXTURES = pathlib.Path(__file__).parent / "fixtures"

SELECTION_FIELDS = {"compute_node_uuid", "service_host", "nodename",
                    "cell_uuid", "limits", "allocation_request",
                    "allocation_request_version", "availability_zone"}


def _server_tracebacks(caplog):
    return [r for r in caplog.records
            if r.exc_info or r.levelno >= logging.ERROR]


def _rejections(caplog):
    return [r.getMessage() for r in caplog.records
            if r.name.startswith("rpc") and r.levelno == logging.WARNING]


def _select(client, version, spec=None, uuids=None, ctxt=CTX, **flags):
    """select_destinations as Nova's rpcapi sends it at ``version``."""
    call = client.prepare(version=version)
    if version == "4.0":
        request_spec, filter_properties = spec or helpers.legacy_request()
        return call.call(ctxt, "select_destinations",
                         request_spec=request_spec,
                         filter_properties=filter_properties)
    args = {"spec_obj": spec or helpers.request_spec()}
    if version in ("4.4", "4.5"):
        args["instance_uuids"] = uuids
    if version == "4.5":
        args.update(flags)
    return call.call(ctxt, "select_destinations", **args)


# -- plumbing -------------------------------------------------------------


def test_server_listens_on_its_topic_as_its_host(in_process):
    server = in_process.server
    assert server.executor_type == "threading"
    target = server_mod.target(in_process.conf)
    assert (target.topic, target.server) == (in_process.topic,
                                             in_process.conf.host)
    # A call addressed to this scheduler alone (topic.host) is answered.
    client = in_process.client(version="1.1", namespace="baseapi",
                               server=in_process.conf.host)
    assert client.call(CTX, "ping", arg="direct") == {
        "service": "scheduler", "arg": "direct"}


def test_ping(in_process):
    client = in_process.client(version="1.1", namespace="baseapi")
    assert client.call(CTX, "ping", arg={"x": [1, 2]}) == {
        "service": "scheduler", "arg": {"x": [1, 2]}}


def test_a_version_above_4_5_is_refused(in_process):
    client = in_process.client(version="4.6")
    with pytest.raises(oslo_messaging.RemoteError) as caught:
        _select(client, "4.6")
    assert caught.value.exc_type == "UnsupportedVersion"


# -- select_destinations --------------------------------------------------


@pytest.mark.parametrize("version", ["4.0", "4.3", "4.4"])
def test_versions_before_4_5_answer_host_dicts(in_process, version):
    uuids = [str(uuidlib.uuid4())] if version == "4.4" else None
    answer = _select(in_process.client(), version, uuids=uuids)
    assert len(answer) == 1
    assert set(answer[0]) == {"host", "nodename", "limits"}
    assert answer[0]["host"] in helpers.HOSTS
    assert answer[0]["nodename"] == answer[0]["host"]


def test_4_4_claims_for_each_instance_uuid(in_process):
    uuids = [str(uuidlib.uuid4()), str(uuidlib.uuid4())]
    answer = _select(in_process.client(), "4.4",
                     spec=helpers.request_spec(num_instances=2, vcpus=2),
                     uuids=uuids)
    assert len(answer) == 2
    placement = direct.PlacementDirect(in_process.store)
    for instance, host in zip(uuids, answer, strict=True):
        view = placement.get_allocations(instance)
        assert view.allocations == {
            in_process.uuids[host["host"]]: view.allocations[
                in_process.uuids[host["host"]]]}
        resources = next(iter(view.allocations.values())).resources
        assert resources == {"VCPU": 2, "MEMORY_MB": 512, "DISK_GB": 1}


def test_4_5_without_return_objects_answers_host_dicts(in_process):
    answer = _select(in_process.client(), "4.5",
                     uuids=[str(uuidlib.uuid4())], return_objects=False,
                     return_alternates=True)
    assert [set(a) for a in answer] == [{"host", "nodename", "limits"}]


def _selection(primitive):
    assert primitive["nova_object.name"] == "Selection"
    assert primitive["nova_object.namespace"] == "nova"
    assert primitive["nova_object.version"] == "1.1"
    data = primitive["nova_object.data"]
    assert set(data) == SELECTION_FIELDS
    return data


def test_4_5_selections_without_alternates(in_process):
    instance = str(uuidlib.uuid4())
    answer = _select(in_process.client(), "4.5", uuids=[instance],
                     return_objects=True, return_alternates=False)
    assert len(answer) == 1 and len(answer[0]) == 1
    chosen = _selection(answer[0][0])
    assert chosen["compute_node_uuid"] == in_process.uuids[
        chosen["service_host"]]
    request = json.loads(chosen["allocation_request"])
    assert set(request) == {"allocations", "mappings"}
    claimed = direct.PlacementDirect(in_process.store).get_allocations(
        instance).allocations
    assert {rp: a.resources for rp, a in claimed.items()} == {
        rp: a["resources"] for rp, a in request["allocations"].items()}


def test_4_5_selections_with_alternates(in_process):
    answer = _select(in_process.client(), "4.5",
                     uuids=[str(uuidlib.uuid4())], return_objects=True,
                     return_alternates=True)
    # max_attempts 3: the chosen host and two alternates.
    [selections] = [[_selection(p) for p in per] for per in answer]
    assert sorted(s["service_host"] for s in selections) == sorted(
        helpers.HOSTS)
    for s in selections:
        assert s["cell_uuid"] == helpers.CELL
        assert s["availability_zone"] == "nova"
        assert s["allocation_request_version"]
        alloc = json.loads(s["allocation_request"])
        assert list(alloc["allocations"]) == [s["compute_node_uuid"]]
        assert alloc["allocations"][s["compute_node_uuid"]] == {
            "resources": {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}}


def test_alternates_of_a_multi_instance_request(in_process):
    uuids = [str(uuidlib.uuid4()), str(uuidlib.uuid4())]
    answer = _select(in_process.client(), "4.5",
                     spec=helpers.request_spec(num_instances=2),
                     uuids=uuids, return_objects=True,
                     return_alternates=True)
    hosts = [[_selection(p)["service_host"] for p in per] for per in answer]
    # Each instance: its host, then the one host no instance took.
    chosen = {h[0] for h in hosts}
    [spare] = set(helpers.HOSTS) - chosen
    assert len(chosen) == 2
    assert [h[1:] for h in hosts] == [[spare], [spare]]


def test_context_names_the_owner_of_the_claims(in_process):
    instance = str(uuidlib.uuid4())
    ctxt = dict(CTX, project_id="proj-from-context",
                user_id="user-from-context")
    _select(in_process.client(), "4.5", uuids=[instance], ctxt=ctxt,
            return_objects=True)
    consumer = direct.PlacementDirect(in_process.store).get_consumer(
        instance)
    assert (consumer.project_id, consumer.user_id) == (
        "proj-from-context", "user-from-context")


def test_gantt_json_spec_is_accepted(in_process):
    spec = {"flavor": {"vcpus": 1, "memory_mb": 256, "root_gb": 1},
            "project_id": "demo", "user_id": "alice", "num_instances": 1}
    answer = _select(in_process.client(), "4.5", spec=spec,
                     uuids=[str(uuidlib.uuid4())], return_objects=True)
    assert _selection(answer[0][0])["service_host"] in helpers.HOSTS


def _captured(name):
    """What a Nova 34 conductor or compute host sent (see
    fixtures/README.md)."""
    return json.loads((FIXTURES / name).read_text())


@pytest.mark.parametrize("version, args, reason", [
    ("4.0", lambda: _captured("legacy_4_0.json"),
     "No such resource class CUSTOM_GOLD"),
    ("4.5", lambda: {"spec_obj": _captured("request_spec_boot.json"),
                     "instance_uuids": [str(uuidlib.uuid4()),
                                        str(uuidlib.uuid4())],
                     "return_objects": True, "return_alternates": True},
     "No such resource class CUSTOM_GOLD"),
    ("4.5", lambda: {"spec_obj": _captured("request_spec_move.json"),
                     "instance_uuids": [str(uuidlib.uuid4())],
                     "return_objects": True, "return_alternates": True},
     "host 'compute-3' node 'node-3' is not a known compute node"),
], ids=["legacy-boot", "boot", "move"])
def test_captured_nova_requests_are_scheduled(in_process, caplog, version,
                                              args, reason):
    """Nova 34's own requests are read and scheduled: they ask for what
    this small cloud lacks (a custom resource class placement does not
    know, NUMA, PCI, forced hosts), so the answer is NoValidHost, as
    Nova's own, not a refused request."""
    client = in_process.client().prepare(version=version)
    with pytest.raises(oslo_messaging.RemoteError) as caught:
        client.call(_captured("context.json"), "select_destinations",
                    **args())
    assert caught.value.exc_type == "NoValidHost"
    assert reason in caught.value.value
    assert _server_tracebacks(caplog) == []


# -- errors ---------------------------------------------------------------


def test_no_valid_host_arrives_as_nova_no_valid_host(in_process, caplog):
    with pytest.raises(oslo_messaging.RemoteError) as caught:
        _select(in_process.client(), "4.5",
                spec=helpers.request_spec(vcpus=64),
                uuids=[str(uuidlib.uuid4())], return_objects=True)
    # nova.exception cannot be imported here: oslo.messaging falls back
    # to a RemoteError named after the class.
    assert caught.value.exc_type == "NoValidHost"
    assert caught.value.value.startswith("No valid host was found. ")
    assert "no valid host for instance 1 of 1" in caught.value.value
    assert _server_tracebacks(caplog) == []


class _NovaExceptionModule(types.ModuleType):
    """Stands for nova.exception in a conductor: NovaException takes
    (message=None, **kwargs), keeps kwargs, and formats msg_fmt when no
    message is given."""

    def __init__(self):
        super().__init__("nova.exception")

        class NovaException(Exception):
            msg_fmt = "An unknown exception occurred."

            def __init__(self, message=None, **kwargs):
                self.kwargs = dict(kwargs)
                self.kwargs.setdefault("code", 500)
                super().__init__(message or self.msg_fmt % kwargs)

        class NoValidHost(NovaException):
            msg_fmt = "No valid host was found. %(reason)s"

        self.NovaException = NovaException
        self.NoValidHost = NoValidHost


def test_a_conductor_with_nova_rebuilds_no_valid_host(in_process,
                                                      monkeypatch):
    module = _NovaExceptionModule()
    monkeypatch.setitem(sys.modules, "nova", types.ModuleType("nova"))
    monkeypatch.setitem(sys.modules, "nova.exception", module)
    with pytest.raises(module.NoValidHost) as caught:
        _select(in_process.client(), "4.5",
                spec=helpers.request_spec(vcpus=64),
                uuids=[str(uuidlib.uuid4())], return_objects=True)
    reason = caught.value.kwargs["reason"]
    assert caught.value.kwargs == {"reason": reason, "code": 500}
    assert reason.startswith("no valid host for instance 1 of 1")
    assert caught.value.args == (f"No valid host was found. {reason}",)


def test_no_valid_host_wire_form():
    failure = errors.NoValidHost(reason="no hosts")
    assert type(failure).__name__ == "NoValidHost"
    assert type(failure).__module__ == "nova.exception"
    assert failure.args == ("No valid host was found. no hosts",)
    assert failure.kwargs == {"reason": "no hosts", "code": 500}


@pytest.mark.parametrize("spec, message", [
    ({"flavor": "m1.tiny"}, "flavor"),
    ({"flavor": {"vcpus": -1, "memory_mb": 1, "root_gb": 1}}, "vcpus"),
    ([1, 2], "spec_obj: expected a RequestSpec"),
], ids=["flavor-not-object", "negative-vcpus", "list"])
def test_unusable_spec_is_an_invalid_request(in_process, caplog, spec,
                                             message):
    with pytest.raises(oslo_messaging.RemoteError) as caught:
        _select(in_process.client(), "4.5", spec=spec,
                uuids=[str(uuidlib.uuid4())], return_objects=True)
    assert caught.value.exc_type == "InvalidRequest"
    assert message in caught.value.value
    assert _server_tracebacks(caplog) == []


def test_unreadable_primitive_is_an_invalid_request(in_process, caplog):
    spec = helpers.request_spec()
    spec["nova_object.version"] = "2.0"
    with pytest.raises(oslo_messaging.RemoteError) as caught:
        _select(in_process.client(), "4.5", spec=spec,
                uuids=[str(uuidlib.uuid4())], return_objects=True)
    assert caught.value.exc_type == "InvalidRequest"
    assert "RequestSpec" in caught.value.value
    assert _server_tracebacks(caplog) == []


def test_bad_instance_uuids_are_an_invalid_request(in_process, caplog):
    with pytest.raises(oslo_messaging.RemoteError) as caught:
        _select(in_process.client(), "4.5", uuids=["not-a-uuid"],
                return_objects=True)
    assert caught.value.exc_type == "InvalidRequest"
    assert "instance_uuids[0]" in caught.value.value
    assert _server_tracebacks(caplog) == []


def test_no_valid_host_claims_nothing(in_process):
    uuids = [str(uuidlib.uuid4()) for _ in range(4)]
    # Three hosts of 4 vCPUs: the fourth 4-vCPU instance cannot fit.
    with pytest.raises(oslo_messaging.RemoteError):
        _select(in_process.client(), "4.5",
                spec=helpers.request_spec(num_instances=4, vcpus=4),
                uuids=uuids, return_objects=True)
    placement = direct.PlacementDirect(in_process.store)
    assert all(placement.get_allocations(u).allocations == {}
               for u in uuids)


# -- fanout casts -------------------------------------------------------


def _aggregates(store):
    return host_reads.aggregates(store)


def _instances(store):
    return {host: set(found) for host, found in
            host_reads.instances(store).items()}


def _fanout(in_process):
    return in_process.client(fanout=True)


def test_update_aggregates_reaches_the_schedulers(in_process):
    agg = str(uuidlib.uuid4())
    _fanout(in_process).cast(CTX, "update_aggregates", aggregates=[
        helpers.aggregate(agg, "east", ["node1", "node2", "node3"],
                          {"availability_zone": "east"})])
    found = helpers.wait_for(lambda: _aggregates(in_process.store).get(agg),
                             what="the aggregate")
    assert (found.name, found.metadata, found.hosts) == (
        "east", {"availability_zone": "east"},
        frozenset(["node1", "node2", "node3"]))
    # This process's host state has caught up...
    answer = _select(in_process.client(), "4.5",
                     uuids=[str(uuidlib.uuid4())], return_objects=True)
    assert _selection(answer[0][0])["availability_zone"] == "east"
    # ...and so has another process's, from the change log.
    other_store = store_mod.Store(in_process.conf)
    other = manager.Scheduler(in_process.conf, store=other_store)
    try:
        picked = other.select_destinations(CTX, {
            "flavor": {"vcpus": 1, "memory_mb": 1, "root_gb": 1}})
        assert picked[0][0].availability_zone == "east"
        _fanout(in_process).cast(CTX, "delete_aggregate",
                                 aggregate=helpers.aggregate(agg, "east",
                                                             []))
        helpers.wait_for(
            lambda: agg not in _aggregates(in_process.store),
            what="the aggregate to go")
        picked = other.select_destinations(CTX, {
            "flavor": {"vcpus": 1, "memory_mb": 1, "root_gb": 1}})
        assert picked[0][0].availability_zone == "nova"
    finally:
        other.close()
        other_store.dispose()


def test_captured_casts_are_applied(in_process):
    fanout = _fanout(in_process)
    fanout.cast(_captured("context.json"), "update_aggregates",
                aggregates=_captured("aggregates.json"))
    found = helpers.wait_for(
        lambda: _aggregates(in_process.store).get(
            "a1a1a1a1-0000-4000-8000-000000000001"), what="the aggregate")
    assert (found.name, found.hosts, found.metadata) == (
        "az1-hosts", frozenset(["compute-1", "compute-2"]),
        {"availability_zone": "az1", "ssd": "true"})
    instances = _captured("instance_list.json")
    uuids = {i["nova_object.data"]["uuid"]
             for i in instances["nova_object.data"]["objects"]}
    fanout.cast(_captured("context.json"), "update_instance_info",
                host_name="compute-1", instance_info=instances)
    helpers.wait_for(lambda: _instances(in_process.store) == {
        "compute-1": uuids}, what="the instances")


def test_instance_info_casts(in_process):
    a, b, c = (str(uuidlib.uuid4()) for _ in range(3))
    fanout = _fanout(in_process)
    fanout.cast(CTX, "update_instance_info", host_name="node1",
                instance_info=helpers.instance_list(
                    [helpers.instance(a, "node1"),
                     helpers.instance(b, "node1")]))
    helpers.wait_for(lambda: _instances(in_process.store) == {
        "node1": {a, b}}, what="two instances on node1")
    fanout.cast(CTX, "delete_instance_info", host_name="node1",
                instance_uuid=a)
    helpers.wait_for(lambda: _instances(in_process.store) == {
        "node1": {b}}, what="one instance on node1")
    fanout.cast(CTX, "sync_instance_info", host_name="node1",
                instance_uuids=[c])
    helpers.wait_for(lambda: _instances(in_process.store) == {
        "node1": {c}}, what="node1's instances replaced")
    # This process's host state table has caught up.
    scheduler = in_process.scheduler
    scheduler.sync()
    with scheduler.table.lock:
        assert set(scheduler.table.instances["node1"]) == {c}


@pytest.mark.parametrize("method, args", [
    ("update_aggregates", {"aggregates": [
        {"uuid": "00000000-0000-0000-0000-00000000000a", "name": "ok",
         "hosts": ["node1"], "metadata": {}},
        {"uuid": "not-a-uuid", "name": "bad", "hosts": [], "metadata": {}}]}),
    ("update_aggregates", {"aggregates": [
        {"uuid": "00000000-0000-0000-0000-00000000000b", "name": "x",
         "hosts": ["node1"], "metadata": {"availability_zone": 3}}]}),
    ("update_aggregates", {"aggregates": "east"}),
    ("update_aggregates", {"aggregates": [helpers.aggregate(
        "00000000-0000-0000-0000-00000000000d", "x", [1])]}),
    ("delete_aggregate", {"aggregate": {"name": "no uuid"}}),
    ("update_instance_info", {"host_name": "node1", "instance_info": [
        {"uuid": "00000000-0000-0000-0000-00000000000c"},
        {"uuid": "nope"}]}),
    ("update_instance_info", {"host_name": "", "instance_info": []}),
    ("update_instance_info", {"host_name": "node1",
                              "instance_info": helpers.instance_list(
                                  [helpers.instance(None, "node1")])}),
    ("delete_instance_info", {"host_name": "node1",
                              "instance_uuid": "nope"}),
    ("sync_instance_info", {"host_name": "node1",
                            "instance_uuids": "not a list"}),
    ("sync_instance_info", {"host_name": ["node1"], "instance_uuids": []}),
], ids=["aggregate-bad-uuid-after-good", "metadata-not-string",
        "aggregates-string", "aggregate-primitive-bad-host",
        "delete-without-uuid", "instance-bad-uuid", "empty-host",
        "instance-primitive-without-uuid", "delete-bad-uuid",
        "sync-not-list", "sync-bad-host"])
def test_a_bad_cast_is_logged_and_changes_nothing(in_process, caplog,
                                                  method, args):
    host_records.update_instance_info(in_process.store, "node1",
                                      [str(uuidlib.uuid4())])
    before = (_aggregates(in_process.store), _instances(in_process.store))
    _fanout(in_process).cast(CTX, method, **args)
    [rejection] = helpers.wait_for(lambda: _rejections(caplog),
                                   what="the cast to be rejected")
    assert method in rejection or rejection.startswith("Refused a request: ")
    assert (_aggregates(in_process.store),
            _instances(in_process.store)) == before
    assert _server_tracebacks(caplog) == []


# -- update_host_info ---------------------------------------------------


def _host_info(in_process, **args):
    client = in_process.client(version="1.0", namespace="gantt")
    return client.call(CTX, "update_host_info", **args)


def test_update_host_info_records_a_new_compute_node(in_process):
    node = str(uuidlib.uuid4())
    answer = _host_info(
        in_process, host="node9", nodename="node9.example",
        compute_node_uuid=node,
        report={"vcpus": 16, "memory_mb": 8192, "local_gb": 100,
                "hypervisor_type": "QEMU", "hypervisor_version": 8002000,
                "stats": {"failed_builds": "2"},
                "metrics": [{"name": "cpu.percent", "value": 0.25}],
                "pci_device_pools": [{"vendor_id": "8086",
                                      "product_id": "154d", "count": 4}]},
        service={"enabled": False, "disabled_reason": "maintenance"},
        heartbeat="2030-01-02T03:04:05+00:00")
    assert answer == {"host": "node9", "compute_node_uuid": node}
    [recorded] = host_reads.compute_nodes(in_process.store, [node])
    assert (recorded.host, recorded.nodename, recorded.vcpus,
            recorded.hypervisor_type, recorded.failed_builds) == (
        "node9", "node9.example", 16, "QEMU", 2)
    assert recorded.free_ram_mb == 8192
    service = host_reads.services(in_process.store, ["node9"])["node9"]
    assert (service.disabled, service.disabled_reason) == (
        True, "maintenance")
    assert service.last_seen_up.isoformat() == "2030-01-02T03:04:05"


def test_update_host_info_finds_a_known_node_by_name(in_process):
    answer = _host_info(in_process, host="node1", nodename="node1",
                        report={"vcpus_used": 3}, heartbeat=True)
    assert answer == {"host": "node1",
                      "compute_node_uuid": in_process.uuids["node1"]}
    [node] = host_reads.compute_nodes(in_process.store,
                                      [in_process.uuids["node1"]])
    assert (node.vcpus, node.vcpus_used) == (4, 3)
    assert host_reads.services(
        in_process.store, ["node1"])["node1"].last_seen_up is not None


@pytest.mark.parametrize("args, message", [
    ({"host": "node1", "nodename": "node1", "report": {"vcpus": "four"}},
     "vcpus: expected an integer"),
    ({"host": "node1", "nodename": "node1", "report": {"colour": "red"}},
     "unknown compute node field 'colour'"),
    ({"host": "node1", "nodename": "node1", "report": ["vcpus"]},
     "report: expected an object"),
    ({"host": "node1", "report": {"vcpus": 1}},
     "nodename: required with a report"),
    ({"host": "nodeX", "nodename": "nodeX", "report": {"vcpus": 1}},
     "compute_node_uuid: required"),
    ({"host": "node1", "nodename": "node1",
      "compute_node_uuid": "123", "report": {}}, "is not a uuid"),
    ({"host": "node1", "service": {"enabled": "no"}},
     "service.enabled: expected true or false"),
    ({"host": "node1", "service": {"up": True}},
     "service: unknown field(s) up"),
    ({"host": "node1", "heartbeat": "yesterday"},
     "heartbeat: expected true or an ISO 8601 time"),
    ({"host": "node1"}, "nothing to update"),
    ({"host": 7, "heartbeat": True}, "host: expected a non-empty string"),
    # A valid report with an invalid service state: nothing is written.
    ({"host": "node1", "nodename": "node1", "report": {"vcpus": 99},
      "service": {"forced_down": "yes"}}, "service.forced_down"),
], ids=["vcpus-string", "unknown-field", "report-list", "no-nodename",
        "unknown-node", "bad-uuid", "enabled-string", "service-field",
        "heartbeat-text", "nothing", "host-number", "partial"])
def test_update_host_info_errors_change_nothing(in_process, caplog, args,
                                                message):
    before = (host_reads.compute_nodes(in_process.store),
              host_reads.services(in_process.store))
    with pytest.raises(oslo_messaging.RemoteError) as caught:
        _host_info(in_process, **args)
    assert caught.value.exc_type == "InvalidRequest"
    assert message in caught.value.value
    assert (host_reads.compute_nodes(in_process.store),
            host_reads.services(in_process.store)) == before
    assert _server_tracebacks(caplog) == []


# -- view (gantt 1.2) -----------------------------------------------------


def _usage_in_database(store):
    with store.engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT rp.uuid, a.resource_class_id, SUM(a.used) "
            "FROM allocations a JOIN resource_providers rp "
            "ON a.resource_provider_id = rp.id "
            "GROUP BY rp.uuid, a.resource_class_id").all()
    usage = {}
    for uuid, rc, used in rows:
        if used:
            usage.setdefault(uuid, {})[str(rc)] = int(used)
    return usage


def test_view_is_the_process_belief_and_equals_the_database(
        in_process, tmp_path):
    first = str(uuidlib.uuid4())
    [[chosen]] = _select(in_process.client(), "4.5", uuids=[first],
                         return_objects=True, return_alternates=False)
    host = chosen["nova_object.data"]["service_host"]
    host_records.update_instance_info(in_process.store, host, [first])
    # Another process's claim: a store of its own on the same file.
    other = store_mod.Store.open(in_process.store.conf)
    try:
        view_before = in_process.client(
            version="1.2", namespace="gantt").call(CTX, "view")
        manager.Scheduler(in_process.store.conf, store=other).schedule(
            serializer.request_spec_from_primitive(
                helpers.request_spec(vcpus=2)), [str(uuidlib.uuid4())])
    finally:
        other.dispose()
    view = in_process.client(version="1.2", namespace="gantt").call(
        CTX, "view")
    expected = _usage_in_database(in_process.store)
    assert view["usage"] == expected
    assert view["usage"] != view_before["usage"]  # it read the other claim
    assert view["instances"][host] == [first]
    assert view["pid"] == os.getpid()
