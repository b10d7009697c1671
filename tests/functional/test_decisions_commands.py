"""`gantt-manage decisions show | list` and `gantt-simulate replay` on a
decision log written by the Scheduler's real pipeline (SQLite, the
embedded setup): their lines and exit status."""

import json
import pathlib
import subprocess
import sys
import time
import uuid as uuidlib

import pytest
from oslo_config import cfg

from gantt.cmd import manage
from placement import conf as placement_conf
from scheduler import conf as scheduler_conf
from scheduler import decision_log, errors, manager
from simulation import cli as simulate

REPO = pathlib.Path(__file__).parents[2]
BIN = pathlib.Path(sys.executable).parent
CLOUD = """
providers:
""" + "".join(f"""
  - name: {name}
    inventories: {{VCPU: 8, MEMORY_MB: {memory}, DISK_GB: 100}}
    compute: {{cell: cell1}}
""" for name, memory in (("cn1", 8192), ("cn2", 16384), ("cn3", 4096)))
FLAVOR = {"vcpus": 2, "memory_mb": 2048, "root_gb": 10}
# Packs by RAM, and counts instances: a replay under it goes elsewhere.
STACK = """
[filter_scheduler]
ram_weight_multiplier = -1.0
enabled_filters = ComputeFilter,ImagePropertiesFilter,NumInstancesFilter
"""


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A cloud of three hosts, and the log of three decisions on it:
    req-a placed (cn2, the most free RAM), req-b no valid host (no host
    has 32 GB), req-c placed with cn2 ignored (cn1)."""
    base = tmp_path_factory.mktemp("decisions")
    config = base / "gantt.conf"
    config.write_text(f"[DEFAULT]\nstate_path = {base / 'state'}\n")
    args = ["--config-file", str(config)]
    cloud = base / "cloud.yaml"
    cloud.write_text(CLOUD)
    assert manage.main(args + ["db", "sync"]) == 0
    assert manage.main(args + ["cloud", "load", str(cloud)]) == 0
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    scheduler_conf.register_opts(conf)
    conf(args, default_config_files=[])
    log = decision_log.from_conf(conf)
    scheduler = manager.Scheduler(conf, decisions=log)
    instances = [str(uuidlib.uuid4()) for _ in range(3)]
    try:
        scheduler.select_destinations({"request_id": "req-a"},
                                      {"flavor": FLAVOR}, [instances[0]])
        with pytest.raises(errors.NoValidHost):
            scheduler.select_destinations(
                {"request_id": "req-b"},
                {"flavor": dict(FLAVOR, memory_mb=32768)}, [instances[1]])
        scheduler.select_destinations(
            {"request_id": "req-c"},
            {"flavor": FLAVOR, "ignore_hosts": ["cn2"]}, [instances[2]])
    finally:
        scheduler.close()
        log.close()
    stack = base / "stack.conf"
    stack.write_text(f"[DEFAULT]\nstate_path = {base / 'state'}\n" + STACK)
    records = decision_log.ordered(decision_log.read(log.directory))
    return {"args": args, "instances": instances, "base": base,
            "records": records, "cloud": cloud, "stack": stack}


def _run(capsys, argv):
    code = manage.main(argv)
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def test_show_says_why_this_host(logged, capsys):
    instance = logged["instances"][0]
    record = logged["records"][0]
    code, out, err = _run(capsys, logged["args"] + [
        "decisions", "show", instance, "--host", "cn3"])
    assert (code, err) == (0, [])
    assert out == [
        f"decision at {decision_log.iso(record['time'])}, request req-a, "
        f"pid {record['pid']}",
        f"instances: {instance}",
        "result: placed",
        "query: resources=DISK_GB:10,MEMORY_MB:2048,VCPU:2"
        "&root_required=!COMPUTE_STATUS_DISABLED&limit=1000",
        "placement: 3 candidates on 3 hosts the request allows",
        f"instance {instance}: cn2 (node cn2)",
        "  filters (hosts before -> after):",
        "    ComputeFilter                      3 -> 3",
        "    ComputeCapabilitiesFilter          3 -> 3",
        "    ImagePropertiesFilter              3 -> 3",
        "    ServerGroupAntiAffinityFilter      3 -> 3",
        "    ServerGroupAffinityFilter          3 -> 3",
        "  passed the filters: 3 hosts",
        "  best weighed, in the order tried (weight = the sum of the "
        "weighers' shares):",
        "    1. cn2     3.0000  CPUWeigher 1.0000, DiskWeigher 1.0000, "
        "RAMWeigher 1.0000",
        "    2. cn1     2.5000  CPUWeigher 1.0000, DiskWeigher 1.0000, "
        "RAMWeigher 0.5000",
        "    3. cn3     2.2500  CPUWeigher 1.0000, DiskWeigher 1.0000, "
        "RAMWeigher 0.2500",
        "  chosen: cn2, weight 3.0000, the best weighed of 3 hosts",
        "  alternates: cn1 (rank 2, weight 2.5000), cn3 (rank 3, weight "
        "2.2500)",
        "  cn3: an alternate (rank 3, weight 2.2500)",
        "claims: 1 attempt, no conflicts"]


def test_show_says_why_not_a_host_the_request_ignored(logged, capsys):
    code, out, _ = _run(capsys, logged["args"] + [
        "decisions", "show", logged["instances"][2], "--host", "cn2"])
    assert code == 0
    assert "placement: 3 candidates on 2 hosts the request allows" in out
    assert "  cn2: not among what the decision kept: placement had no " \
        "candidate on it, or a filter removed it without naming it " \
        "(none did), or it weighed below the best 2" in out


def test_show_a_no_valid_host(logged, capsys):
    instance = logged["instances"][1]
    code, out, _ = _run(capsys, logged["args"] + [
        "decisions", "show", instance])
    assert code == 0
    assert out[2:6] == [
        "result: no valid host (no_candidates): no valid host for "
        "instance 1 of 1: 0 candidate hosts",
        "query: resources=DISK_GB:10,MEMORY_MB:32768,VCPU:2"
        "&root_required=!COMPUTE_STATUS_DISABLED&limit=1000",
        "placement: 0 candidates on 0 hosts the request allows",
        f"instance {instance}: no host"]
    assert "  filters: no candidate host to run on" in out


@pytest.mark.parametrize("argv, line", [
    (["decisions", "show", "5b4c0c1e-0000-4000-8000-000000000000"],
     "gantt-manage: no decision logged about instance "
     "5b4c0c1e-0000-4000-8000-000000000000 in {directory}"),
    (["decisions", "show", "nope"],
     "gantt-manage: 'nope' is not an instance uuid"),
    (["decisions", "list", "--since", "yesterday"],
     "gantt-manage: --since: 'yesterday' is neither a time (2024-05-01, "
     "2024-05-01T10:00) nor an age (90s, 30m, 12h, 7d)"),
    (["decisions", "list", "--dir", "/nonexistent/decisions"],
     "gantt-manage: no decision log at /nonexistent/decisions (see "
     "[decision_log] directory)"),
])
def test_what_cannot_be_answered_is_one_line_and_status_2(
        logged, capsys, argv, line):
    code, out, err = _run(capsys, logged["args"] + argv)
    directory = logged["base"] / "state" / "decisions"
    assert (code, out, err) == (2, [], [line.format(directory=directory)])


def test_list_is_a_line_a_decision(logged, capsys):
    code, out, err = _run(capsys, logged["args"] + ["decisions", "list"])
    a, b, c = logged["instances"]
    times = [decision_log.iso(r["time"]) for r in logged["records"]]
    assert (code, err) == (0, [])
    assert out == [
        f"{'time'.ljust(len(times[0]))}  request  "
        f"{'instances'.ljust(36)}  result",
        f"{times[0]}  req-a    {a}  cn2",
        f"{times[1]}  req-b    {b}  no valid host (no_candidates)",
        f"{times[2]}  req-c    {c}  cn1"]


def test_list_filters(logged, capsys):
    a, b, c = logged["instances"]

    def listed(*argv):
        code, out, _ = _run(capsys, logged["args"] + [
            "decisions", "list", "--format", "json", *argv])
        assert code == 0
        return [r["instances"][0] for r in json.loads("\n".join(out))]

    assert listed("--no-valid-host") == [b]
    # (cn1 is the chosen host's place among the top hosts, as written.)
    assert listed("--host", "cn1") == [c]
    assert listed("--since", "1h") == [a, b, c]
    assert listed("--since", "2999-01-01") == []
    assert listed("--limit", "1") == [c]
    [nvh] = json.loads("\n".join(_run(capsys, logged["args"] + [
        "decisions", "list", "--no-valid-host", "--format", "json"])[1]))
    assert nvh["error"]["cause"] == "no_candidates"
    assert nvh["request"] == "req-b"


def test_since_reads_times_and_ages():
    from scheduler import decisions_command as command
    now = 1_900_000_000.0
    assert command.since("90s", now) == now - 90
    assert command.since("7d", now) == now - 7 * 86400
    assert command.since("2030-01-01T00:00") == 1893456000.0
    assert command.since("2030-01-01T01:00+01:00") == 1893456000.0


def test_replay_under_another_config_says_what_changes(logged):
    # As an operator runs it: its own process.
    instance = logged["instances"][0]
    done = subprocess.run(
        [str(BIN / "gantt-simulate"), "replay", instance,
         "--config-file", str(logged["stack"])],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    out = done.stdout.splitlines()
    state = logged["base"] / "state"
    assert out[1:] == [
        f"config: {logged['stack']}",
        f"decided on: the cloud in the database "
        f"({state / 'placement.sqlite'}) as it is now, not as it was when "
        "the decision was made: hosts added, filled or removed since "
        "count as they are, and the instance itself, if it still holds "
        "its allocation, takes room on its host; nothing was claimed",
        "result: placed -> placed",
        "placement candidates: 3 -> 3",
        "instance 1:",
        "  chosen: cn2 -> cn3",
        "  alternates: cn1, cn3 -> cn1, cn2",
        "  filters (hosts before -> after), then | now:",
        "    ComputeFilter                          3 -> 3 | 3 -> 3",
        "    ComputeCapabilitiesFilter              3 -> 3 | not run",
        "    ImagePropertiesFilter                  3 -> 3 | 3 -> 3",
        "    ServerGroupAntiAffinityFilter          3 -> 3 | not run",
        "    ServerGroupAffinityFilter              3 -> 3 | not run",
        "    NumInstancesFilter                    not run | 3 -> 3",
        out[15], out[16],
        "would change:",
        "  instance 1: chosen cn2 -> cn3",
        "  instance 1: alternates cn1, cn3 -> cn1, cn2",
        "  instance 1: best weighed cn2 -> cn3",
        "  instance 1: ComputeCapabilitiesFilter: 3 -> 3 then, not run now",
        "  instance 1: ServerGroupAntiAffinityFilter: 3 -> 3 then, not run "
        "now",
        "  instance 1: ServerGroupAffinityFilter: 3 -> 3 then, not run now",
        "  instance 1: NumInstancesFilter: not run then, 3 -> 3 now"]
    assert out[15].startswith("  best weighed then: cn2 3.0000, ")
    assert out[16].startswith("  best weighed now: cn3 ")


def test_replay_of_a_record_on_a_cloud_file(logged, capsys, tmp_path):
    record = tmp_path / "record.json"
    record.write_text(json.dumps([logged["records"][2]]))
    assert simulate.main(["replay", str(record), "--config-file",
                          str(logged["stack"]), "--cloud",
                          str(logged["cloud"]), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["decided_on"] == (
        f"the cloud file {logged['cloud']}, as it is now, not the cloud as "
        "it was when the decision was made")
    # The request's own narrowing is replayed: cn2 is still ignored.
    assert out["replay"]["hosts"] == 2
    assert out["replay"]["instances"] == []
    assert "instance 1: chosen cn1 -> cn3" in out["changes"]


def test_replay_under_the_same_config_changes_nothing(logged, capsys):
    assert simulate.main(["replay", logged["instances"][1],
                          "--config-file", logged["args"][1]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "result: no valid host (no_candidates) -> no valid host " \
        "(no_candidates)" in out
    assert out[-1] == "would change: nothing (the same outcome, hosts, " \
        "filter counts and best weighed host)"


def test_replay_of_an_unknown_instance_is_status_2(logged, capsys):
    assert simulate.main(["replay", "5b4c0c1e-0000-4000-8000-000000000000",
                          "--config-file", logged["args"][1]]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "gantt-simulate: no decision logged about instance "
        "5b4c0c1e-0000-4000-8000-000000000000 in "
        f"{logged['base'] / 'state' / 'decisions'}"]


def test_the_log_keeps_time_in_order(logged):
    times = [r["time"] for r in logged["records"]]
    assert times == sorted(times) and times[-1] <= time.time()
