"""The trace gantt-scheduler records ([recording]): its lines, its size
bound and rotation, its deletes, and that recording never fails a
request."""

import json
import logging
import uuid as uuidlib

import pytest
from oslo_config import cfg

from rpc import recorder as recorder_mod
from rpc import server as server_mod
from scheduler import manager, request_spec
from simulation import recorded_trace
from tests.rpc import helpers

SPEC = request_spec.RequestSpec.from_dict({
    "flavor": {"name": "m1.small", "vcpus": 1, "memory_mb": 2048,
               "root_gb": 20, "extra_specs": {"hw:cpu_policy": "shared"}},
    "availability_zone": "east"})


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _recorder(path, **kwargs):
    return recorder_mod.Recorder(path, **kwargs)


def _placed(recorder, host="cn-1"):
    uuid = str(uuidlib.uuid4())
    recorder.request(SPEC, [uuid], selections=[{"host": host,
                                                "nodename": host}])
    return uuid


def test_a_request_is_a_create_line_per_instance(tmp_path):
    path = tmp_path / "trace.jsonl"
    recorder = _recorder(path)
    a, b = str(uuidlib.uuid4()), str(uuidlib.uuid4())
    spec = request_spec.RequestSpec.from_dict(
        {**SPEC.to_dict(), "num_instances": 2, "is_bfv": True})
    recorder.request(spec, [a, b], error="no valid host", request_id="r1")
    recorder.deleted(a, "cn-1")
    recorder.close()
    header, first, second, delete = _lines(path)
    assert (header["trace"], header["format"]) == ("gantt", 1)
    assert first["flavor"] == {"name": "m1.small", "vcpus": 1,
                               "memory_mb": 2048, "root_gb": 0,
                               "ephemeral_gb": 0, "swap": 0,
                               "extra_specs": {"hw:cpu_policy": "shared"}}
    assert [(x["instance"], x["index"], x["num_instances"], x["host"],
             x["error"], x["request"], x["zone"]) for x in (first, second)] \
        == [(a, 0, 2, None, "no valid host", "r1", "east"),
            (b, 1, 2, None, "no valid host", "r1", "east")]
    # The whole spec once a request; a boot from volume takes no root
    # disk from the host.
    assert first["spec"]["is_bfv"] is True and "spec" not in second
    assert delete == {"time": delete["time"], "action": "delete",
                      "instance": a, "host": "cn-1"}
    assert first["time"] <= second["time"] <= delete["time"]


def test_selections_give_the_chosen_host(tmp_path, sqlite_store):
    helpers.build_cloud(sqlite_store)
    conf = helpers.messaging_conf(conf=sqlite_store.conf)
    scheduler = manager.Scheduler(conf, store=sqlite_store)
    path = tmp_path / "trace.jsonl"
    recorder = _recorder(path)
    uuid = str(uuidlib.uuid4())
    try:
        selections = scheduler.select_destinations(None, SPEC.to_dict() | {
            "availability_zone": None}, [uuid])
    finally:
        scheduler.close()
    recorder.request(SPEC, [uuid], selections=selections)
    recorder.close()
    line = _lines(path)[1]
    chosen = selections[0][0]
    assert (line["host"], line["node"], line["error"]) == (
        chosen.service_host, chosen.nodename, None)


def test_the_file_rotates_at_max_bytes_and_keeps_backup_count(tmp_path):
    path = tmp_path / "trace.jsonl"
    recorder = _recorder(path, max_bytes=8000, backup_count=2)
    made = [_placed(recorder) for _ in range(60)]
    recorder.close()
    names = recorded_trace.files(path)
    assert names == [f"{path}.2", f"{path}.1", str(path)]
    assert not (tmp_path / "trace.jsonl.3").exists()
    for name in names:
        text = open(name).read()
        assert len(text.encode()) <= 8000
        # Each file says what it is.
        assert json.loads(text.splitlines()[0])["trace"] == "gantt"
    # Read back oldest first: the newest instances, in order.
    kept = [e.instance for e in recorded_trace.read(path).events]
    assert kept == made[-len(kept):] and len(kept) > 10


def test_no_backups_starts_the_file_again(tmp_path):
    path = tmp_path / "trace.jsonl"
    recorder = _recorder(path, max_bytes=3000, backup_count=0)
    made = [_placed(recorder) for _ in range(40)]
    recorder.close()
    assert recorded_trace.files(path) == [str(path)]
    assert path.stat().st_size <= 3000
    kept = [e.instance for e in recorded_trace.read(path).events]
    assert kept == made[-len(kept):]


def test_a_restart_appends_and_the_replay_goes_on_in_time(tmp_path):
    path = tmp_path / "trace.jsonl"
    clock = iter([0.0, 5.0, 0.0, 2.0]).__next__
    walls = iter([1000.0, 2000.0]).__next__
    first = _recorder(path, clock=clock, wall=walls)
    a = _placed(first)
    first.close()
    second = _recorder(path, clock=clock, wall=walls)
    b = _placed(second)
    second.close()
    events = recorded_trace.read(path).events
    assert [(e.instance, e.time) for e in events] == [(a, 5.0), (b, 7.0)]


def test_a_sync_that_drops_a_recorded_instance_is_its_delete(tmp_path):
    path = tmp_path / "trace.jsonl"
    recorder = _recorder(path)
    a, b = _placed(recorder, "cn-1"), _placed(recorder, "cn-1")
    c = _placed(recorder, "cn-2")
    recorder.synced("cn-1", [b, str(uuidlib.uuid4())])
    recorder.synced("cn-1", [b])  # once only
    recorder.close()
    deletes = [(x["instance"], x["host"]) for x in _lines(path)
               if x.get("action") == "delete"]
    assert deletes == [(a, "cn-1")]
    assert c  # on another host: not the sync's business


def test_a_trace_that_cannot_be_written_fails_no_request(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("")
    recorder = _recorder(blocker / "trace.jsonl")
    with caplog.at_level(logging.ERROR, logger="rpc.recorder"):
        _placed(recorder)
        _placed(recorder)
    recorder.close()
    errors = [r for r in caplog.records if r.name == "rpc.recorder"]
    assert len(errors) == 1 and "Cannot record" in errors[0].getMessage()


def _conf(**recording):
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    recorder_mod.register_opts(conf)
    for name, value in recording.items():
        conf.set_override(name, value, recorder_mod.GROUP)
    return conf


def test_recording_is_off_by_default(in_process):
    assert _conf().recording.enabled is False
    assert recorder_mod.from_conf(_conf()) is None
    assert in_process.server.recorder is None


def test_recording_needs_a_path():
    with pytest.raises(recorder_mod.RecordingConfigError,
                       match=r"\[recording\] path: required"):
        recorder_mod.from_conf(_conf(enabled=True))


def test_each_worker_records_to_a_file_of_its_own(tmp_path):
    conf = _conf(enabled=True, path=str(tmp_path / "trace.jsonl"))
    one = recorder_mod.from_conf(conf)
    several = recorder_mod.from_conf(conf, workers=4)
    one.close()
    several.close()
    assert one.path == str(tmp_path / "trace.jsonl")
    assert several.path.endswith(".jsonl") and several.path != one.path


def test_the_endpoint_records_deletes_it_learns_of(tmp_path, sqlite_store):
    uuids = helpers.build_cloud(sqlite_store)
    conf = helpers.messaging_conf(conf=sqlite_store.conf)
    scheduler = manager.Scheduler(conf, store=sqlite_store)
    path = tmp_path / "trace.jsonl"
    recorder = _recorder(path)
    endpoint = server_mod.SchedulerEndpoint(scheduler, recorder)
    try:
        placed = [endpoint.select_destinations(
            helpers.CONTEXT, spec_obj=SPEC.to_dict() | {
                "availability_zone": None},
            instance_uuids=[str(uuidlib.uuid4())], return_objects=True)
            for _ in range(2)]
        hosts = [p[0][0].service_host for p in placed]
        recorder.flush()
        created = [x["instance"] for x in _lines(path)[1:]]
        endpoint.delete_instance_info(helpers.CONTEXT, hosts[0], created[0])
        endpoint.sync_instance_info(helpers.CONTEXT, hosts[1], [])
        # A bad cast changes nothing, and records nothing.
        endpoint.delete_instance_info(helpers.CONTEXT, hosts[0], "nope")
    finally:
        scheduler.close()
    recorder.close()
    assert set(hosts) <= set(uuids)
    deletes = [(x["instance"], x["host"]) for x in _lines(path)
               if x.get("action") == "delete"]
    assert deletes == [(created[0], hosts[0]), (created[1], hosts[1])]


def test_buffered_lines_reach_the_file_within_flush_interval(tmp_path):
    path = tmp_path / "trace.jsonl"
    recorder = _recorder(path, flush_interval=0.05)
    try:
        uuid = _placed(recorder)
        helpers.wait_for(lambda: path.exists() and len(_lines(path)) == 2,
                         what="the flush")
        assert _lines(path)[1]["instance"] == uuid
    finally:
        recorder.close()
