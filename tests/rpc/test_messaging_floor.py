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


def test_floor_rounds_alternate_both_sides_and_give_medians(capsys):
    helpers.require_rabbit()
    code = rpc_bench.main([
        "--sizes", "10", "--processes", "1", "--calls", "12",
        "--clients", "2", "--transport-url", helpers.RABBIT_URL,
        "--messaging-floor", "--floor-rounds", "2"])
    assert code == 0
    found = json.loads(capsys.readouterr().out)
    result = found["results"]["10"]
    assert found["inputs"]["floor_rounds"] == 2
    # Round 1 is the pair every --messaging-floor run makes; round 2
    # runs both again, kept beside them.
    assert {"1", "1/floor", "1/round2", "1/floor/round2"} <= set(
        result["runs"])
    assert result["runs"]["1/round2"]["instances_placed"] == 12 + 3
    assert result["runs"]["1/floor/round2"].get("instances_placed", 0) == 0
    rounds = result["versus_floor_rounds"]["1"]
    assert len(rounds["rounds"]) == 2
    ratios = sorted(r["calls_per_s"]["ratio"] for r in rounds["rounds"])
    assert rounds["calls_per_s_ratio"] == {
        "median": round((ratios[0] + ratios[1]) / 2, 3),
        "lowest": ratios[0], "highest": ratios[1]}
    assert rounds["rounds"][0] == result["versus_floor"]["1"]


def test_floor_rounds_need_the_floor_and_a_closed_loop(capsys):
    for extra in ([], ["--messaging-floor", "--rates", "50"],
                  ["--messaging-floor", "--claim-group-sizes", "1,8"]):
        try:
            rpc_bench.main(["--floor-rounds", "3", *extra])
        except SystemExit as exc:
            assert exc.code == 2
        else:
            raise AssertionError(f"--floor-rounds with {extra} accepted")
        assert "--floor-rounds needs --messaging-floor" in \
            capsys.readouterr().err
