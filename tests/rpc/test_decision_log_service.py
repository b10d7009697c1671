"""The decision log of a running gantt-scheduler (its own process, on
RabbitMQ and a PostgreSQL scratch database, called as a Nova conductor
calls it), read by `gantt-manage decisions` and replayed by
`gantt-simulate replay`, each run as an operator runs it: a process of
its own, given the service's config file.

Needs RabbitMQ and PostgreSQL on loopback (skipped locally, failed in CI
when missing)."""

import json
import pathlib
import subprocess
import sys
import uuid as uuidlib

import oslo_messaging
import pytest

from scheduler import decision_log
from tests.rpc import helpers, service_process
from tests.rpc.service_process import Service

BIN = pathlib.Path(sys.executable).parent
# Three hosts, RAM apart: the default weighers spread to cn2, then cn1.
CLOUD = """
providers:
""" + "".join(f"""
  - name: {name}
    inventories: {{VCPU: 8, MEMORY_MB: {memory}, DISK_GB: 100}}
    compute: {{cell: cell1}}
""" for name, memory in (("cn1", 8192), ("cn2", 16384), ("cn3", 4096)))


@pytest.fixture(scope="module")
def pg_cloud(tmp_path_factory):
    with service_process.pg_cloud(tmp_path_factory, CLOUD) as url:
        yield url


@pytest.fixture
def service(tmp_path, pg_cloud):
    decisions = tmp_path / "decisions"
    running = Service(tmp_path, pg_cloud, extra=f"""
        [decision_log]
        directory = {decisions}
        flush_interval = 0.05
        """)
    try:
        yield running
    finally:
        running.close()


def _command(*argv):
    done = subprocess.run([str(BIN / argv[0]), *argv[1:]],
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout.splitlines(), \
        done.stderr.splitlines()


def test_decisions_of_a_running_service(service, tmp_path):
    config = str(service.config)
    placed = str(uuidlib.uuid4())
    service.client().call(
        helpers.CONTEXT, "select_destinations",
        spec_obj=helpers.request_spec(vcpus=2, memory_mb=1024),
        instance_uuids=[placed], return_objects=True,
        return_alternates=True)
    refused = str(uuidlib.uuid4())
    with pytest.raises(oslo_messaging.RemoteError):
        service.client().call(
            helpers.CONTEXT, "select_destinations",
            spec_obj=helpers.request_spec(vcpus=64),
            instance_uuids=[refused], return_objects=True,
            return_alternates=True)
    elsewhere = str(uuidlib.uuid4())
    service.client().call(
        helpers.CONTEXT, "select_destinations",
        spec_obj=helpers.request_spec(vcpus=2, memory_mb=1024,
                                      ignore_hosts=["cn2"]),
        instance_uuids=[elsewhere], return_objects=True,
        return_alternates=True)
    directory = str(tmp_path / "decisions")
    helpers.wait_for(
        lambda: len(list(decision_log.read(directory))) == 3,
        what="three decisions in the log")
    [(pid, _, _)] = service.lines("gantt-scheduler ready")

    code, out, err = _command("gantt-manage", "--config-file", config,
                              "decisions", "show", placed)
    assert (code, err) == (0, [])
    assert out[0].endswith(f", request {helpers.CONTEXT['request_id']}, "
                           f"scheduler {service.host}, pid {pid}")
    assert out[1:6] == [
        f"instances: {placed}",
        "result: placed",
        "query: resources=DISK_GB:1,MEMORY_MB:1024,VCPU:2"
        "&root_required=!COMPUTE_STATUS_DISABLED&limit=1000",
        "placement: 3 candidates on 3 hosts the request allows",
        f"instance {placed}: cn2 (node cn2)"]
    assert "  chosen: cn2, weight 3.0000, the best weighed of 3 hosts" in out
    assert out[-1] == "claims: 1 attempt, no conflicts"

    code, out, err = _command(
        "gantt-manage", "--config-file", config, "decisions", "show",
        "5b4c0c1e-0000-4000-8000-000000000000")
    assert (code, out, err) == (2, [], [
        "gantt-manage: no decision logged about instance "
        f"5b4c0c1e-0000-4000-8000-000000000000 in {directory}"])

    code, out, err = _command(
        "gantt-manage", "--config-file", config, "decisions", "list",
        "--no-valid-host", "--format", "json")
    assert (code, err) == (0, [])
    [record] = json.loads("\n".join(out))
    assert record["instances"] == [refused]
    assert record["request"] == helpers.CONTEXT["request_id"]
    assert (record["result"], record["error"]["cause"]) == (
        "no_valid_host", "no_candidates")
    assert (record["scheduler"], record["pid"]) == (service.host, pid)

    code, out, err = _command("gantt-manage", "--config-file", config,
                              "decisions", "list", "--since", "1h")
    assert (code, err) == (0, [])
    assert [line.split()[2:] for line in out] == [
        ["instances", "result"], [placed, "cn2"],
        [refused, "no", "valid", "host", "(no_candidates)"],
        [elsewhere, "cn1"]]
    code, out, _ = _command("gantt-manage", "--config-file", config,
                            "decisions", "list", "--host", "cn1")
    assert (code, [line.split()[2] for line in out[1:]]) == (0, [elsewhere])

    # The logged request decided again under another config, on the
    # database as it is now: packing by RAM goes to cn3.
    stack = tmp_path / "stack.conf"
    stack.write_text(service.config.read_text() + """
[filter_scheduler]
ram_weight_multiplier = -1.0
""")
    code, out, err = _command("gantt-simulate", "replay", placed,
                              "--config-file", str(stack))
    assert (code, err) == (0, [])
    assert "  chosen: cn2 -> cn3" in out
    assert out[2].startswith("decided on: the cloud in the database "
                             "(postgresql+psycopg://")
    assert out[2].endswith("as it is now, not as it was when the decision "
                           "was made: hosts added, filled or removed since "
                           "count as they are, and the instance itself, if "
                           "it still holds its allocation, takes room on "
                           "its host; nothing was claimed")
    assert "  instance 1: chosen cn2 -> cn3" in out

    assert service.terminate() == 0
    assert "Traceback" not in service.text()
