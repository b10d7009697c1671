"""Record real traffic, replay it: gantt-scheduler serves
select_destinations over RPC with [recording] on, the cloud exported
before the first request; gantt-simulate replays the trace on that
export with the same config and puts every instance where the scheduler
did."""

import pathlib
import subprocess
import sys
import uuid as uuidlib

import oslo_messaging
import pytest

from gantt.cmd import manage
from placement import direct
from placement.db import store as store_mod
from rpc import server as server_mod
from rpc import service
from scheduler import host_reads, manager
from simulation import cloud as sim_cloud
from simulation import config, recorded_trace, runner
from simulation import workload as workload_mod
from tests.rpc import helpers

CTX = helpers.CONTEXT
SIMULATE = pathlib.Path(sys.executable).parent / "gantt-simulate"

# Hosts of different shapes, in two zones: the weighers have something
# to tell apart, and no two hosts tie.
CLOUD = """
aggregates:
  az-east: {metadata: {availability_zone: east}}
  az-west: {metadata: {availability_zone: west}}
providers:
  - {name: cn-1, compute: {}, aggregates: [az-east],
     inventories: {VCPU: 8, MEMORY_MB: 16384, DISK_GB: 200}}
  - {name: cn-2, compute: {}, aggregates: [az-east],
     inventories: {VCPU: 16, MEMORY_MB: 12288, DISK_GB: 400}}
  - {name: cn-3, compute: {}, aggregates: [az-west],
     inventories: {VCPU: 8, MEMORY_MB: 24576, DISK_GB: 100}}
  - {name: cn-4, compute: {}, aggregates: [az-west],
     inventories: {VCPU: 4, MEMORY_MB: 8192, DISK_GB: 300}}
"""
TOTALS = {"cn-1": (8, 16384, 200), "cn-2": (16, 12288, 400),
          "cn-3": (8, 24576, 100), "cn-4": (4, 8192, 300)}

FLAVORS = {"small": (1, 2048, 20), "large": (4, 8192, 80),
           "huge": (64, 65536, 10)}

# (create, flavor, zone[, in the anti-affinity group]) or (delete, index
# of the create).
TRAFFIC = [
    ("create", "small", None), ("create", "small", None, True),
    ("create", "large", None), ("create", "small", "west"),
    ("create", "small", "east"), ("delete", 1),
    ("create", "large", "east"), ("create", "huge", None),
    ("create", "large", None, True), ("delete", 2),
    ("create", "small", "west"), ("create", "large", "west"),
    ("delete", 4), ("create", "large", None), ("create", "small", None),
    ("create", "small", None, True), ("create", "large", "east"),
    ("create", "small", None, True), ("create", "small", None),
]
GROUP = "7d0c2f5e-52a4-4c55-9a6e-3f1b8e0a9c11"


def _conf_file(tmp_path):
    path = tmp_path / "gantt.conf"
    path.write_text(
        "[placement_database]\n"
        f"connection = sqlite:///{tmp_path / 'gantt.sqlite'}\n"
        "[filter_scheduler]\n"
        "host_subset_size = 1\n"
        "shuffle_best_same_weighed_hosts = false\n"
        "[recording]\n"
        "enabled = true\n"
        f"path = {tmp_path / 'trace.jsonl'}\n")
    return path


class Computes:
    """The compute nodes of the test cloud, telling the scheduler what
    Nova's do after a build or a delete: their figures
    (update_host_info), their instances (the instance casts)."""

    def __init__(self, client, fanout, store):
        self.client = client
        self.fanout = fanout
        self.store = store
        self.live = {}  # instance -> (host, flavor)

    def built(self, instance, host, flavor):
        self.live[instance] = (host, flavor)
        self.fanout.cast(CTX, "update_instance_info", host_name=host,
                         instance_info=helpers.instance(instance, host))
        self._wait(instance, present=True)
        self._report(host)

    def deleted(self, instance):
        host, _ = self.live.pop(instance)
        # Nova's compute removes the allocations, then tells.
        direct.PlacementDirect(self.store).delete_allocations(instance)
        self.fanout.cast(CTX, "delete_instance_info", host_name=host,
                         instance_uuid=instance)
        self._wait(instance, present=False)
        self._report(host)

    def _report(self, host):
        used = [FLAVORS[f] for h, f in self.live.values() if h == host]
        self.client.call(CTX, "update_host_info", host=host, nodename=host,
                         report={
                             "vcpus_used": sum(f[0] for f in used),
                             "memory_mb_used": sum(f[1] for f in used),
                             "local_gb_used": sum(f[2] for f in used),
                             "stats": {"num_instances": str(len(used)),
                                       "io_workload": "0"}})

    def _wait(self, instance, present):
        def applied():
            held = {u for on_host in host_reads.instances(self.store)
                    .values() for u in on_host}
            return (instance in held) == present
        helpers.wait_for(applied, what="the instance cast")


def _spec(flavor, zone, group=None):
    """A conductor's request spec; ``group``: {member: host} of the
    anti-affinity group the instance joins."""
    vcpus, memory_mb, root_gb = FLAVORS[flavor]
    fields = {}
    if group is not None:
        fields["instance_group"] = helpers.nova_object(
            "InstanceGroup", "1.11", {
                "uuid": GROUP, "policy": "anti-affinity",
                "members": sorted(group),
                "hosts": sorted(set(group.values()))})
    return helpers.request_spec(
        flavor=helpers.flavor(vcpus, memory_mb, root_gb, name=flavor),
        availability_zone=zone, **fields)


def _serve_traffic(conf, store):
    """Send TRAFFIC to a gantt-scheduler on the in-process transport;
    the host chosen for each create (None: NoValidHost)."""
    scheduler = manager.Scheduler(conf, store=store)
    transport = helpers.client_transport(conf)
    server = server_mod.build_server(conf, scheduler, transport)
    server.start()
    topic = conf.scheduler.topic
    calls = helpers.raw_client(transport, topic).prepare(version="4.5")
    computes = Computes(
        helpers.raw_client(transport, topic, "1.0", namespace="gantt"),
        helpers.raw_client(transport, topic, fanout=True), store)
    created, chosen, members = [], [], {}
    try:
        for step in TRAFFIC:
            if step[0] == "delete":
                members.pop(created[step[1]], None)
                computes.deleted(created[step[1]])
                continue
            instance = str(uuidlib.uuid4())
            created.append(instance)
            in_group = len(step) > 3
            spec = _spec(*step[1:3], dict(members) if in_group else None)
            chosen.append(_select(calls, instance, spec))
            if chosen[-1] is None:
                continue
            computes.built(instance, chosen[-1], step[1])
            if in_group:
                members[instance] = chosen[-1]
    finally:
        server.stop()
        server.wait()  # and the trace is written out
        transport.cleanup()
        scheduler.close()
    return chosen


def _select(calls, instance, spec):
    try:
        answer = calls.call(CTX, "select_destinations", spec_obj=spec,
                            instance_uuids=[instance], return_objects=True,
                            return_alternates=False)
    except oslo_messaging.RemoteError as exc:
        assert exc.exc_type == "NoValidHost"
        return None
    return answer[0][0]["nova_object.data"]["service_host"]


def _replayed_hosts(monkeypatch, conf_path, cloud_path, workload, seed=0):
    """The host the simulator picks for each create, in order."""
    picks = []
    schedule = manager.Scheduler.schedule

    def watched(self, spec, instance_uuids=None, **kwargs):
        explaining = kwargs.get("explain", False)
        try:
            decision = schedule(self, spec, instance_uuids, **kwargs)
        except manager.NoValidHost:
            if not explaining:
                picks.append(None)
            raise
        if not explaining:
            picks.append(decision.selections[0][0].service_host)
        return decision

    with monkeypatch.context() as patched:
        patched.setattr(manager.Scheduler, "schedule", watched)
        runner.Simulation(config.load(str(conf_path)),
                          sim_cloud.read(str(cloud_path)), workload,
                          runner.Options(seed=seed)).run()
    return picks


@pytest.fixture
def recorded(tmp_path):
    """(gantt.conf, the export taken before the traffic, the trace, the
    hosts the scheduler chose)."""
    conf_path = _conf_file(tmp_path)
    cloud_path = tmp_path / "cloud.yaml"
    cloud_path.write_text(CLOUD)
    snapshot = tmp_path / "snapshot.yaml"
    base = ["--config-file", str(conf_path)]
    assert manage.main(base + ["db", "sync"]) == 0
    assert manage.main(base + ["cloud", "load", str(cloud_path)]) == 0
    assert manage.main(base + ["cloud", "export", str(snapshot)]) == 0
    conf = service.build_conf(base)
    conf.set_override("topic", helpers.unique_topic(), "scheduler")
    store = store_mod.Store.open(conf)
    try:
        chosen = _serve_traffic(conf, store)
    finally:
        store.dispose()
    return conf_path, snapshot, tmp_path / "trace.jsonl", chosen


def test_the_replay_puts_every_instance_where_the_scheduler_did(
        recorded, monkeypatch):
    conf_path, snapshot, trace, chosen = recorded
    # The traffic is worth replaying: several hosts, and a refusal.
    assert None in chosen and len(set(chosen) - {None}) >= 3
    recording = recorded_trace.load(trace)
    workload = recording.workload
    creates = [e.instance for e in workload.events if e.kind == "create"]
    assert [recording.outcomes[i] for i in creates] == chosen
    assert sum(e.kind == "delete" for e in workload.events) == 3
    assert workload.groups == {GROUP: "anti-affinity"}
    # The group's members went to different hosts, and the last one,
    # with room left on a member's host only, was refused.
    in_group = [chosen[i] for i, e in enumerate(
        e for e in workload.events if e.kind == "create") if e.group]
    assert in_group[-1] is None
    assert len(set(in_group[:-1])) == len(in_group[:-1]) == 3
    assert _replayed_hosts(monkeypatch, conf_path, snapshot,
                           workload) == chosen
    # And the replay would tell: packing puts them elsewhere.
    pack = conf_path.with_name("pack.conf")
    pack.write_text("[filter_scheduler]\nram_weight_multiplier = -1.0\n")
    assert _replayed_hosts(monkeypatch, pack, snapshot, workload) != chosen


def test_gantt_simulate_runs_and_compares_a_recorded_trace(recorded,
                                                           tmp_path):
    conf_path, snapshot, trace, chosen = recorded
    out = tmp_path / "report"
    done = subprocess.run(
        [str(SIMULATE), "run", "--cloud", str(snapshot), "--workload",
         str(trace), "--config-file", str(conf_path), "--out", str(out),
         "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = runner.outcome(__import__("json").loads(
        (out / "report.json").read_text()))
    figures = report["figures"]
    assert (figures["placed"], figures["no_valid_host"], figures["deletes"]) \
        == (len(chosen) - chosen.count(None), chosen.count(None), 3)
    pack = tmp_path / "pack.conf"
    pack.write_text("[filter_scheduler]\nram_weight_multiplier = -1.0\n")
    done = subprocess.run(
        [str(SIMULATE), "compare", str(conf_path), str(pack), "--cloud",
         str(snapshot), "--workload", str(trace), "--out",
         str(tmp_path / "compare")], capture_output=True, text=True,
        timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "compare" / "compare.json").exists()


def test_a_bad_trace_is_one_line_and_exit_2(recorded, tmp_path):
    _, snapshot, trace, _ = recorded
    lines = trace.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    # The second create loses its flavor.
    broken = [line.replace('"flavor":', '"flavour":', 1)
              if i == 2 else line for i, line in enumerate(lines)]
    bad.write_text("\n".join(broken) + "\n")
    done = subprocess.run(
        [str(SIMULATE), "run", "--cloud", str(snapshot), "--workload",
         str(bad), "--out", str(tmp_path / "out"), "--no-progress"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"gantt-simulate: {bad}: line 3: flavor: missing; it is required"]


def test_the_recorded_trace_is_a_workload_file(recorded):
    _, _, trace, chosen = recorded
    workload = workload_mod.read(trace)
    assert workload.describe()["creates"] == len(chosen)
    assert set(workload.flavors) == set(FLAVORS)
