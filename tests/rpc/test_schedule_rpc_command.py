"""gantt-manage schedule SPEC --rpc against a real gantt-scheduler on
RabbitMQ, run as an operator runs it: one select_destinations call that
the running scheduler decides (and claims with --claim); a spec either
side refuses, no valid host, --explain with --rpc, no scheduler on the
topic and the in-process transport are one line each with their exit
status, and claim nothing."""

import json
import pathlib
import time

import pytest

from tests.rpc import helpers
from tests.rpc.service_process import Service, manage

REPO = pathlib.Path(__file__).parents[2]
SPEC = REPO / "etc/examples/spec.json"
CLUSTER = REPO / "etc/examples/cluster.yaml"
HOSTS = {"compute-1", "compute-2", "compute-3"}
FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    helpers.require_rabbit()
    tmp_path = tmp_path_factory.mktemp("schedule-rpc")
    url = f"sqlite:///{tmp_path / 'gantt.sqlite'}"
    load = tmp_path / "load.conf"
    load.write_text(f"[placement_database]\nconnection = {url}\n")
    code, _, err, _ = manage(load, "cloud", "load", str(CLUSTER))
    assert code == 0, err
    running = Service(tmp_path, url)
    yield running
    running.close()


def _vcpus_used(service):
    code, out, err, _ = manage(service.config, "cloud", "show", "--format",
                                "json")
    assert code == 0, err
    return json.loads(out)["totals"]["VCPU"]["used"]


def _calls(service):
    """The calls the scheduler decided: its decision log's records, once
    the log has written every one it holds (it writes from a buffer
    every [decision_log] flush_interval, 1 s)."""
    def count():
        records = 0
        for path in (service.log.parent / "state" / "decisions").glob(
                "decisions.*.jsonl"):
            records += sum('"request"' in line
                           for line in path.read_text().splitlines())
        return records
    seen = count()
    while True:
        time.sleep(1.5)
        now = count()
        if now == seen:
            return now
        seen = now


def _spec(tmp_path, spec):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def test_the_running_scheduler_decides_and_claims_nothing(service):
    used, calls = _vcpus_used(service), _calls(service)
    code, out, err, _ = manage(service.config, "schedule", str(SPEC),
                                "--rpc")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["instance 1",
                                                      "instance 2"]
    picked = [line.split(": ")[1].split(" / ")[0] for line in lines]
    # The spec's anti-affinity group: two hosts.
    assert len(set(picked)) == 2 and set(picked) <= HOSTS
    assert "claimed" not in out
    helpers.wait_for(lambda: _calls(service) == calls + 1,
                     what="the scheduler's decision record")
    assert _vcpus_used(service) == used


def test_claim_over_rpc(service):
    used = _vcpus_used(service)
    code, out, err, _ = manage(service.config, "schedule", str(SPEC),
                                "--rpc", "--claim", "--format", "json")
    assert (code, err) == (0, "")
    instances = json.loads(out)["instances"]
    assert len(instances) == 2
    for item in instances:
        assert item["instance_uuid"]
        assert item["selections"][0]["service_host"] in HOSTS
    assert _vcpus_used(service) == used + 2


@pytest.mark.parametrize("spec, says", [
    ({"flavour": FLAVOR}, "flavour: unknown field (did you mean flavor?)"),
    # Refused by the scheduler, named the same way.
    ({"flavor": dict(FLAVOR, extra_specs={"resources:VCPUS": "1"})},
     "flavor.extra_specs.resources:VCPUS: unknown resource class VCPUS: "
     "neither a standard class nor CUSTOM_* (did you mean VCPU?)"),
], ids=["field", "resource-class"])
def test_a_bad_spec_exits_2_naming_the_file_and_field(service, tmp_path,
                                                     spec, says):
    used = _vcpus_used(service)
    path = _spec(tmp_path, spec)
    assert manage(service.config, "schedule", str(path), "--rpc",
                   "--claim")[:3] == (2, "", f"gantt-manage: {path}: {says}\n")
    assert _vcpus_used(service) == used


def test_no_valid_host_exits_1(service, tmp_path):
    path = _spec(tmp_path, {"flavor": dict(FLAVOR, vcpus=10_000)})
    assert manage(service.config, "schedule", str(path), "--rpc",
                   "--claim")[:3] == (
        1, "", "gantt-manage: No valid host was found. no valid host for "
               "instance 1 of 1: 0 candidate hosts\n")


def test_explain_is_not_sent(service):
    calls = _calls(service)
    assert manage(service.config, "schedule", str(SPEC), "--rpc",
                   "--explain")[:3] == (
        2, "", "gantt-manage: schedule: --explain is the command's own "
               "scheduler's, a running gantt-scheduler does not send its "
               "reasons: drop --rpc or --explain\n")
    assert _calls(service) == calls


def test_no_scheduler_on_the_topic_exits_1_after_the_timeout(service):
    topic = helpers.unique_topic()
    code, out, err, took = manage(service.config, "schedule", str(SPEC),
                                   "--rpc", "--topic", topic, "--timeout",
                                   "2")
    assert (code, out, err) == (
        1, "", f"gantt-manage: no gantt-scheduler answered on topic "
               f"'{topic}' within 2 s\n")
    assert 2 <= took < 30


def test_the_in_process_transport_exits_2(tmp_path):
    config = tmp_path / "gantt.conf"
    config.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'state'}\n")
    assert manage(config, "schedule", str(SPEC), "--rpc")[:3] == (
        2, "", "gantt-manage: [DEFAULT] transport_url is the in-process "
               "transport (kombu+memory:////), which no gantt-scheduler "
               "shares: set it to the schedulers' message broker\n")
    assert not (tmp_path / "state").exists()
