"""Fanout casts from one sender take effect in the order they were sent,
even while calls keep the server's thread pool busy."""

import threading
import uuid as uuidlib

import pytest

from rpc import server as server_mod
from scheduler import host_reads, manager
from tests.rpc import helpers

CTX = {"project_id": "demo", "user_id": "alice"}
PAIRS = 150


def _serve(store, transport_url):
    helpers.build_cloud(store)
    conf = helpers.messaging_conf(transport_url, helpers.unique_topic(),
                                  conf=store.conf)
    scheduler = manager.Scheduler(conf, store=store)
    transport = helpers.client_transport(conf)
    server = server_mod.build_server(conf, scheduler, transport)
    server.start()
    return conf, scheduler, transport, server


def _load(client, stop, errors):
    """select_destinations calls, one after the other, until stopped."""
    spec = helpers.request_spec()
    while not stop.is_set():
        try:
            client.call(CTX, "select_destinations", spec_obj=spec,
                        instance_uuids=None, return_objects=True,
                        return_alternates=True)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
            return


@pytest.mark.parametrize("transport", ["in-process", "rabbit"])
def test_interleaved_casts_end_as_the_last_one_says(sqlite_store,
                                                    transport):
    url = None
    if transport == "rabbit":
        helpers.require_rabbit()
        url = helpers.RABBIT_URL
    conf, scheduler, client_transport, server = _serve(sqlite_store, url)
    topic = conf.scheduler.topic
    fanout = helpers.raw_client(client_transport, topic, fanout=True)
    stop, errors = threading.Event(), []
    loaders = [threading.Thread(target=_load, args=(
        helpers.raw_client(client_transport, topic), stop, errors))
        for _ in range(3)]
    try:
        for thread in loaders:
            thread.start()
        kept = str(uuidlib.uuid4())
        for _ in range(PAIRS):
            agg, inst = str(uuidlib.uuid4()), str(uuidlib.uuid4())
            fanout.cast(CTX, "update_aggregates", aggregates=[
                helpers.aggregate(agg, f"agg-{agg[:8]}", ["node1"],
                                  {"availability_zone": "east"})])
            fanout.cast(CTX, "update_instance_info", host_name="node2",
                        instance_info=helpers.instance_list(
                            [helpers.instance(inst, "node2")]))
            fanout.cast(CTX, "delete_aggregate",
                        aggregate=helpers.aggregate(agg, "gone", []))
            fanout.cast(CTX, "sync_instance_info", host_name="node2",
                        instance_uuids=[kept])
            fanout.cast(CTX, "delete_instance_info", host_name="node2",
                        instance_uuid=inst)
        # The last cast: once it shows, every cast before it has run.
        last = str(uuidlib.uuid4())
        fanout.cast(CTX, "update_aggregates", aggregates=[
            helpers.aggregate(last, "last", ["node3"])])
        helpers.wait_for(
            lambda: last in host_reads.aggregates(sqlite_store),
            timeout=60, what="the last cast")
    finally:
        stop.set()
        for thread in loaders:
            thread.join(30)
        server.stop()
        server.wait()
        client_transport.cleanup()
        scheduler.close()
    assert not errors, errors[0]
    assert set(host_reads.aggregates(sqlite_store)) == {last}
    held = host_reads.instances(sqlite_store).get("node2", {})
    assert set(held) == {kept}
