"""Helpers for the RPC tests: the broker, raw oslo.messaging clients (as
a Nova conductor calls the scheduler), Nova object primitives and a small
cloud.

A test that uses a broker gets a topic of its own (:func:`unique_topic`):
RabbitMQ names the queues after the topic whatever the exchange, so two
runs on one broker that shared the topic would share the calls.
"""

import os
import socket
import time
import uuid as uuidlib

import oslo_messaging
from oslo_config import cfg

from placement import direct
from rpc import conf as rpc_conf
from tests import databases
from tests.scheduler import cloud as cloud_mod

RABBIT_URL = os.environ.get("GANTT_TEST_RABBIT_URL",
                            "rabbit://guest:guest@127.0.0.1:5672/")

# What a Nova conductor's context looks like on the wire (a subset of
# RequestContext.to_dict()).
CONTEXT = {"user_id": "alice", "project_id": "demo",
           "request_id": "req-0b0a8c8e-5ab3-4e63-9d86-2e1c4cf0d0a1",
           "roles": ["member"], "is_admin": False, "read_deleted": "no"}

HOSTS = ("node1", "node2", "node3")
CELL = "3f1d1a7e-3c6f-4d8e-9a0b-6c2e5f7a8b9c"


def unique_topic():
    return "gantt-test-" + uuidlib.uuid4().hex[:12]


def rabbit_unreachable():
    """Why RabbitMQ cannot be used, or None."""
    url = oslo_messaging.TransportURL.parse(cfg.ConfigOpts(), RABBIT_URL)
    host = url.hosts[0]
    try:
        socket.create_connection((host.hostname or "127.0.0.1",
                                  host.port or 5672), timeout=2).close()
    except OSError as exc:
        return str(exc)
    return None


def require_rabbit():
    reason = rabbit_unreachable()
    if reason:
        databases.unavailable("rabbitmq", reason)


def messaging_conf(transport_url=None, topic=None, conf=None):
    """A parsed ConfigOpts with the RPC options (on ``conf`` when given):
    ``transport_url`` (default: the in-process transport) and ``topic``,
    which names the exchange as well: a test's exchange is its own, as
    its queues are (tests run two at a time, and RabbitMQ refuses an
    exchange declared again with other arguments: the 'nova' exchange
    a service left, not auto-deleted, against a test's auto-deleted
    one)."""
    if conf is None:
        conf = cfg.ConfigOpts()
        conf([], default_config_files=[])
    rpc_conf.register_opts(conf)
    if transport_url:
        conf.set_override("transport_url", transport_url)
    if topic:
        conf.set_override("topic", topic, group="scheduler")
        conf.set_override("control_exchange", topic)
    return conf


def client_transport(conf):
    """A transport that, as a Nova conductor's, lets nova.exception
    through (which then fails to import here: a RemoteError)."""
    transport = rpc_conf.get_transport(
        conf, allowed_remote_exmods=["nova.exception"])
    if "oslo_messaging_rabbit" in conf:
        # The test's queues go with their last consumer; every server and
        # client of one exchange must agree on it (the driver registers
        # the option with the transport).
        conf.set_override("amqp_auto_delete", True,
                          group="oslo_messaging_rabbit")
    return transport


def raw_client(transport, topic, version="4.5", timeout=10, **target):
    """A plain oslo.messaging client: arguments and answers are the
    primitives that cross the wire."""
    return oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic=topic, version=version,
                                         **target),
        timeout=timeout)


def wait_for(predicate, timeout=5.0, what="the condition"):
    """Poll ``predicate`` until it returns something true; return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


# -- a small cloud ---------------------------------------------------------


def build_cloud(store, hosts=HOSTS, vcpus=4, memory_mb=4096, disk_gb=40):
    """Compute hosts (one cell) both placement and the host records
    know."""
    cloud = cloud_mod.Cloud(store)
    placement = direct.PlacementDirect(store)
    uuids = {name: cloud_mod.add_host(cloud, placement, name, vcpus=vcpus,
                                      memory_mb=memory_mb, disk_gb=disk_gb,
                                      cell=CELL)
             for name in hosts}
    cloud.close()
    return uuids


# -- Nova object primitives --------------------------------------------------


def nova_object(name, version, data):
    return {"nova_object.name": name, "nova_object.namespace": "nova",
            "nova_object.version": version, "nova_object.data": data,
            "nova_object.changes": sorted(data)}


def flavor(vcpus=1, memory_mb=512, root_gb=1, ephemeral_gb=0, swap=0,
           extra_specs=None, name="m1.tiny"):
    return nova_object("Flavor", "1.2", {
        "id": 1, "name": name, "flavorid": "1", "vcpus": vcpus,
        "memory_mb": memory_mb, "root_gb": root_gb,
        "ephemeral_gb": ephemeral_gb, "swap": swap, "rxtx_factor": 1.0,
        "vcpu_weight": 0, "disabled": False, "is_public": True,
        "extra_specs": extra_specs or {}, "description": None})


def image(properties=None):
    return nova_object("ImageMeta", "1.8", {
        "id": "155d900f-4e14-4e4c-a73d-069cbf4541e6", "name": "cirros",
        "status": "active", "disk_format": "qcow2",
        "container_format": "bare", "min_ram": 0, "min_disk": 0,
        "size": 16338944,
        "properties": nova_object("ImageMetaProps", "1.44",
                                  dict(properties or {}))})


def request_spec(num_instances=1, vcpus=1, memory_mb=512, root_gb=1,
                 hints=None, instance_uuid=None, **fields):
    """A RequestSpec 1.15 primitive as a Nova 34 conductor sends it."""
    data = {
        "flavor": flavor(vcpus, memory_mb, root_gb),
        "image": image(),
        "num_instances": num_instances,
        "project_id": CONTEXT["project_id"],
        "user_id": CONTEXT["user_id"],
        "availability_zone": None,
        "scheduler_hints": {k: list(v) for k, v in (hints or {}).items()},
        "instance_uuid": instance_uuid or str(uuidlib.uuid4()),
        "ignore_hosts": None,
        "force_hosts": None,
        "force_nodes": None,
        "is_bfv": False,
        "numa_topology": None,
        "pci_requests": None,
        "instance_group": None,
        "retry": None,
        "limits": None,
        "requested_destination": None,
        "security_groups": None,
    }
    data.update(fields)
    return nova_object("RequestSpec", "1.15", data)


def legacy_request(num_instances=1, vcpus=1, memory_mb=512, root_gb=1,
                   hints=None):
    """(request_spec, filter_properties) as RPC API 4.0 sends them."""
    the_flavor = flavor(vcpus, memory_mb, root_gb)
    request_spec_dict = {
        "image": {"id": "155d900f-4e14-4e4c-a73d-069cbf4541e6",
                  "properties": {}, "disk_format": "qcow2"},
        "instance_properties": {
            "project_id": CONTEXT["project_id"],
            "user_id": CONTEXT["user_id"],
            "uuid": str(uuidlib.uuid4()),
            "memory_mb": memory_mb, "vcpus": vcpus, "root_gb": root_gb,
            "ephemeral_gb": 0, "availability_zone": None},
        "instance_type": the_flavor,
        "num_instances": num_instances,
    }
    filter_properties = {
        "scheduler_hints": dict(hints or {}),
        "instance_type": the_flavor,
        "ignore_hosts": [], "force_hosts": [], "force_nodes": [],
    }
    return request_spec_dict, filter_properties


def aggregate(uuid, name, hosts, metadata=None):
    return nova_object("Aggregate", "1.3", {
        "id": 1, "uuid": uuid, "name": name, "hosts": list(hosts),
        "metadata": dict(metadata or {})})


def instance(uuid, host, project_id="demo", flavor_id=None):
    data = {"uuid": uuid, "host": host, "node": host,
            "project_id": project_id}
    if flavor_id is not None:
        data["instance_type_id"] = 1
        data["flavor"] = flavor(name=flavor_id)
    return nova_object("Instance", "2.8", data)


def instance_list(instances):
    return nova_object("InstanceList", "2.6", {"objects": list(instances)})
