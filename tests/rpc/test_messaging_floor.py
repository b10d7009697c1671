"""benchmarks.messaging_floor over real RabbitMQ: gantt-scheduler's
transport answering a recorded reply of gantt's, as benchmarks.rpc
--messaging-floor runs it."""

import json
import re

from benchmarks import rpc as rpc_bench
from benchmarks import rpc_load
from benchmarks import scheduler as scheduler_bench
from rpc import serializer as serializer_mod
from tests.rpc import helpers


def test_the_floor_answers_gantts_own_reply_from_every_worker(tmp_path):
    helpers.require_rabbit()
    db_url = "sqlite:///" + str(tmp_path / "placement.sqlite")
    store = scheduler_bench._store(db_url)
    scheduler_bench.build(store, 10)
    store.dispose()
    reply = rpc_bench.real_reply(db_url, "nova")
    # A chosen host and its alternates, as Nova's Selection primitives.
    [per_instance] = reply
    assert len(per_instance) == 3
    assert {s["nova_object.name"] for s in per_instance} == {"Selection"}
    reply_file = tmp_path / "reply.json"
    reply_file.write_text(json.dumps(reply))

    service = rpc_bench.Service(str(tmp_path), helpers.RABBIT_URL, db_url,
                                2, floor_reply=str(reply_file))
    client = None
    try:
        service.wait_ready()
        assert len(service.ready_pids()) == 2
        client = rpc_bench._client(helpers.RABBIT_URL, service)
        _, samples, failures, messages = rpc_load.fire(
            client, rpc_bench._spec_maker("nova"), 8, 2)
        assert not failures, messages
        assert len(samples) == 8
        answer = client.select_destinations(
            rpc_load.CONTEXT, rpc_bench._spec_maker("nova")("x"), ["x"])
        assert [[serializer_mod.selection_to_primitive(s) for s in per]
                for per in answer] == reply
    finally:
        if client is not None:
            client.close()
        code = service.terminate()
        leftovers = rpc_bench.clean_broker(helpers.RABBIT_URL, service)
    assert code == 0
    assert not leftovers
    calls = [json.loads(m.group(1))["calls"] for m in re.finditer(
        r"messaging floor stats: pid=\d+ (\{.*\})", service.text())]
    assert len(calls) == 2 and sum(calls) == 9
