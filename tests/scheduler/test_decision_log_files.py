"""The decision log's files: one a process, rotated at max_bytes with
backup_count kept, rotated and removed by age, read back across
processes and rotations, and never a failed request when the disk
says no."""

import logging
import os
import time
import uuid as uuidlib

import orjson
import pytest
from oslo_config import cfg

from placement import conf as placement_conf
from placement import rotating_file
from scheduler import conf as scheduler_conf
from scheduler import decision_listing, decision_log

# Now: the age sweep compares the files' times with the log's clock.
T0 = float(int(time.time()))


class Clock:
    def __init__(self, now=T0):
        self.now = now

    def __call__(self):
        return self.now


def record(at, instance=None, host="n1"):
    """A record as the Scheduler makes them, cut down to what the reader
    and the commands look at."""
    return {"time": at, "request": f"req-{at}",
            "instances": [instance or str(uuidlib.uuid4())], "count": 1,
            "result": "placed", "query": "resources=VCPU:1",
            "candidates": 3, "hosts": 3,
            "placements": [{"index": 0, "chosen": {"host": host,
                                                   "node": host}}],
            "claims": {"attempts": 1, "conflicts": []}, "spec": {}}


def lines(path):
    with open(path, "rb") as f:
        return f.read().splitlines()


def test_the_file_rotates_at_max_bytes_and_keeps_backup_count(tmp_path):
    log = decision_log.DecisionLog(tmp_path, max_bytes=3000,
                                   backup_count=2)
    made = []
    for n in range(40):
        made.append(str(uuidlib.uuid4()))
        log.keep(record(T0 + n, made[-1]))
    log.close()
    path = log.path
    assert decision_log.files(str(tmp_path)) == [
        f"{path}.2", f"{path}.1", path]
    for name in decision_log.files(str(tmp_path)):
        assert os.path.getsize(name) <= 3000
        # Each file says what it is, and which process wrote it.
        assert lines(name)[0].startswith(b'{"decision_log":3,')
    kept = [r["instances"][0] for r in decision_log.read(str(tmp_path))]
    # The newest, in order; the oldest went with the rotations.
    assert kept == made[-len(kept):] and 10 < len(kept) < 40
    assert {r["pid"] for r in decision_log.read(str(tmp_path))} == \
        {os.getpid()}


def test_the_file_rotates_once_its_first_decision_is_half_max_age_old(
        tmp_path):
    clock = Clock()
    log = decision_log.DecisionLog(tmp_path, max_age=100,
                                   backup_count=3, wall=clock)
    log.keep(record(T0))
    clock.now = T0 + 40
    log.keep(record(T0 + 40))
    clock.now = T0 + 60
    log.keep(record(T0 + 60))
    log.close()
    times = [[r["time"] for r in _records(name)]
             for name in decision_log.files(str(tmp_path))]
    assert times == [[T0, T0 + 40], [T0 + 60]]


def test_files_whose_last_decision_is_max_age_old_are_removed(tmp_path):
    clock = Clock()
    # Another process's files, long stopped: one too old, one not.
    old = tmp_path / "decisions.99998.jsonl"
    recent = tmp_path / "decisions.99999.jsonl.1"
    for path, at in ((old, T0 - 101), (recent, T0 - 99)):
        path.write_bytes(b'{"decision_log":1}\n')
        os.utime(path, (at, at))
    unrelated = tmp_path / "notes.txt"
    unrelated.write_text("kept")
    os.utime(unrelated, (T0 - 1000, T0 - 1000))
    log = decision_log.DecisionLog(tmp_path, max_age=100, wall=clock)
    # Swept when the log starts.
    assert not old.exists() and recent.exists() and unrelated.exists()
    log.keep(record(T0))
    log.flush()
    # Later, at a rotation, the other one's turn; never the file being
    # written.
    clock.now = T0 + 60
    os.utime(log.path, (T0, T0))
    log.keep(record(T0 + 60))
    log.close()
    assert not recent.exists()
    assert [r["time"] for r in decision_log.read(str(tmp_path))] == \
        [T0 + 60]


def test_a_file_left_by_another_process_of_the_same_pid_is_set_aside(
        tmp_path):
    # The pid came round again: with an age bound, what the file holds
    # is of unknown age and goes with the backups.
    path = tmp_path / f"decisions.{os.getpid()}.jsonl"
    path.write_bytes(b'{"decision_log":1,"pid":1}\n')
    log = decision_log.DecisionLog(tmp_path, max_age=100, backup_count=1,
                                   wall=Clock())
    log.keep(record(T0))
    log.close()
    assert lines(f"{path}.1") == [b'{"decision_log":1,"pid":1}']
    assert [r["time"] for r in _records(str(path))] == [T0]


def test_a_log_that_cannot_be_written_fails_nothing(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("")
    log = decision_log.DecisionLog(blocker / "decisions")
    with caplog.at_level(logging.ERROR, logger="scheduler.decision_log"):
        log.keep(record(T0))
        log.keep(record(T0 + 1))
    log.close()
    errors = [r for r in caplog.records
              if r.name == "scheduler.decision_log"]
    assert len(errors) == 1
    assert "Cannot write the decision log" in errors[0].getMessage()


def test_the_reader_reads_every_process_oldest_first(tmp_path):
    instance = str(uuidlib.uuid4())
    (tmp_path / "decisions.11.jsonl").write_bytes(
        b'{"decision_log":1,"scheduler":"a","pid":11}\n'
        + _line(record(T0 + 2, instance, "n2"))
        # A line cut short by a crash.
        + b'{"time":' + str(T0 + 3).encode() + b',"instances":["'
        + instance.encode())
    (tmp_path / "decisions.12.jsonl.1").write_bytes(
        b'{"decision_log":1,"scheduler":"b","pid":12}\n'
        + _line(record(T0 + 1, instance, "n1"))
        + _line(record(T0 + 5)))
    found = decision_listing.of_instance(str(tmp_path), instance)
    assert [(r["time"], r["scheduler"], r["pid"]) for r in found] == [
        (T0 + 1, "b", 12), (T0 + 2, "a", 11)]
    assert len(decision_log.ordered(decision_log.read(str(tmp_path)))) == 3


def test_no_directory_is_said_plainly(tmp_path):
    with pytest.raises(decision_log.LogReadError,
                       match="no decision log at"):
        list(decision_log.read(str(tmp_path / "nope")))


def _conf(tmp_path, **options):
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    scheduler_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override("state_path", str(tmp_path))
    for name, value in options.items():
        conf.set_override(name, value, group=decision_log.GROUP)
    return conf


def test_options_and_their_defaults(tmp_path):
    conf = _conf(tmp_path)
    log = decision_log.from_conf(conf)
    try:
        assert conf.decision_log.enabled is True
        assert log.directory == str(tmp_path / "decisions")
        assert log.path == str(
            tmp_path / "decisions" / f"decisions.{os.getpid()}.jsonl")
        assert (log.top_hosts, log.removed_hosts, log.max_age) == (
            5, 10, 14 * 86400)
    finally:
        log.close()
    assert decision_log.from_conf(_conf(tmp_path, enabled=False)) is None


def _line(found):
    return orjson.dumps(found) + b"\n"


def _records(path):
    return [orjson.loads(line) for line in lines(path)[1:]]


def test_batches_of_records_rotate_at_max_bytes_between_two_records(
        tmp_path):
    # More records than rotating_file queues before it writes a batch:
    # the batches that cross max_bytes are cut between two records.
    count = 3 * rotating_file.QUEUED_LINES + 5
    log = decision_log.DecisionLog(tmp_path, max_bytes=10_000,
                                   backup_count=50)
    made = []
    for n in range(count):
        made.append(str(uuidlib.uuid4()))
        log.keep(record(T0 + n, made[-1]))
    log.close()
    names = decision_log.files(str(tmp_path))
    assert len(names) > 3
    for name in names:
        assert os.path.getsize(name) <= 10_000
    assert [r["instances"][0] for r in decision_log.read(str(tmp_path))] \
        == made


def test_a_batch_rotates_by_age_where_its_records_were_made(tmp_path):
    # The file's age counts from when its first record was made, not
    # from when its batch was written out.
    clock = Clock()
    log = decision_log.DecisionLog(tmp_path, max_age=100,
                                   backup_count=3, wall=clock)
    times = []
    for n in range(rotating_file.QUEUED_LINES - 1):
        clock.now = T0 + n
        times.append(clock.now)
        log.keep(record(clock.now))
    log.close()
    found = [[r["time"] for r in _records(name)]
             for name in decision_log.files(str(tmp_path))]
    # Rotated once the first record was more than 50 s old.
    assert found == [times[:51], times[51:]]


def test_records_are_in_the_file_after_a_flush(tmp_path):
    log = decision_log.DecisionLog(tmp_path, flush_interval=3600)
    log.keep(record(T0))
    log.flush()
    assert [r["time"] for r in decision_log.read(str(tmp_path))] == [T0]
    log.close()
