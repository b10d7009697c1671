"""Reading a trace gantt-scheduler recorded as a simulation workload
(simulation.recorded_trace): what is replayed, what is left out, and
errors that name the file, the line and the field."""

import json

import pytest

from simulation import recorded_trace
from simulation import workload as workload_mod

HEADER = {"trace": "gantt", "format": 1, "started_at": "t0"}
SMALL = {"name": "m1.small", "vcpus": 1, "memory_mb": 2048, "root_gb": 20}


def _create(time, instance, flavor=SMALL, **fields):
    return {"time": time, "action": "create", "instance": instance,
            "flavor": flavor, **fields}


def _delete(time, instance):
    return {"time": time, "action": "delete", "instance": instance}


def _write(path, *items):
    path.write_text("".join(
        (item if isinstance(item, str) else json.dumps(item)) + "\n"
        for item in items))
    return path


def test_creates_and_deletes_become_events(tmp_path):
    path = _write(tmp_path / "t.jsonl", HEADER,
                  _create(0.5, "a", zone="east", host="cn-1"),
                  _create(1.0, "b", group="g1", group_policy="affinity",
                          host=None, error="no valid host"),
                  _delete(2.0, "a"))
    recording = recorded_trace.load(path)
    events = recording.workload.events
    assert [(e.time, e.kind, e.instance, e.flavor, e.group, e.zone)
            for e in events] == [
        (0.5, "create", "a", "m1.small", None, "east"),
        (1.0, "create", "b", "m1.small", "g1", None),
        (2.0, "delete", "a", None, None, None)]
    assert recording.workload.groups == {"g1": "affinity"}
    assert recording.outcomes == {"a": "cn-1", "b": None}
    # gantt-simulate reads it by its name, with no flag.
    assert workload_mod.read(path).events == events


def test_what_the_replay_leaves_out(tmp_path):
    path = _write(tmp_path / "t.jsonl", HEADER,
                  _delete(0, "made-before-recording"),
                  _create(1, "a"), _create(2, "a"),  # a move
                  _create(3, "r", rebuild=True),
                  _create(4, None),  # no instance uuids: nothing claimed
                  _delete(5, "a"))
    recording = recorded_trace.load(path)
    assert [(e.kind, e.instance) for e in recording.workload.events] == [
        ("create", "a"), ("delete", "a")]
    assert recording.skipped == recorded_trace.Skipped(
        rebuilds=1, without_instance=1, moves=1, deletes_of_older=1)


def test_flavors_by_name_and_a_redefined_one_apart(tmp_path):
    bigger = {**SMALL, "memory_mb": 4096}
    unnamed = {"name": None, "vcpus": 2, "memory_mb": 512}
    path = _write(tmp_path / "t.jsonl", HEADER, _create(0, "a"),
                  _create(1, "b", bigger), _create(2, "c"),
                  _create(3, "d", unnamed))
    workload = recorded_trace.read(path)
    assert [e.flavor for e in workload.events] == [
        "m1.small", "m1.small~2", "m1.small", "2c-512m-0g"]
    assert workload.flavors["m1.small~2"].memory_mb == 4096


def test_a_rotated_set_is_read_oldest_first(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(tmp_path / "t.jsonl.2", HEADER, _create(0, "a"))
    _write(tmp_path / "t.jsonl.1", HEADER, _create(1, "b"), _delete(2, "a"))
    _write(path, HEADER, _create(3, "c"))
    assert recorded_trace.files(path) == [
        f"{path}.2", f"{path}.1", str(path)]
    assert [(e.kind, e.instance) for e in recorded_trace.read(
        path).events] == [("create", "a"), ("create", "b"),
                          ("delete", "a"), ("create", "c")]


@pytest.mark.parametrize("line, field, message", [
    ("{not json", "line 2", "not JSON"),
    (json.dumps([1, 2]), "line 2", "must be a mapping"),
    (json.dumps({"time": 1, "action": "create", "instance": "x"}),
     "line 2: flavor", "missing; it is required"),
    (json.dumps(_create(-1, "x")), "line 2: time", "must be >= 0"),
    (json.dumps(_create(1, "x", {"vcpus": 0, "memory_mb": 1})),
     "line 2: flavor.vcpus", "must be >= 1"),
    (json.dumps({"time": 1, "action": "resize", "instance": "x"}),
     "line 2: action", "must be create or delete"),
    (json.dumps({**HEADER, "format": 2}), "line 2: format",
     "must be 1, not 2"),
], ids=["not-json", "not-a-mapping", "no-flavor", "negative-time",
        "zero-vcpus", "unknown-action", "future-format"])
def test_errors_name_the_line_and_field(tmp_path, line, field, message):
    path = _write(tmp_path / "t.jsonl", HEADER, line)
    with pytest.raises(workload_mod.WorkloadError) as caught:
        recorded_trace.read(path)
    assert caught.value.field == field
    assert message in caught.value.message


def test_a_trace_with_nothing_to_replay(tmp_path):
    path = _write(tmp_path / "t.jsonl", HEADER, _delete(0, "older"))
    with pytest.raises(workload_mod.WorkloadError,
                       match="no events to replay"):
        recorded_trace.read(path)
    with pytest.raises(workload_mod.WorkloadError, match="no such file"):
        recorded_trace.read(tmp_path / "missing.jsonl")
