"""decision_listing: the records `gantt-manage decisions list` shows,
as the whole log read and sorted would give them, found without
decoding the records it does not show."""

import os
import random
import uuid as uuidlib

import orjson
import pytest

from scheduler import decision_listing, decision_log
from tests.scheduler.test_decision_log_files import T0, record


def _line(found):
    return decision_log.encode(found)


def _header(scheduler, pid):
    return orjson.dumps({"decision_log": 3, "scheduler": scheduler,
                         "pid": pid}) + b"\n"


@pytest.fixture
def log(tmp_path):
    """Two processes' files, rotated ones among them, their records
    interleaved in time; the records by time."""
    rng = random.Random(7)
    times = [T0 - 1000 + k for k in range(60)]
    rng.shuffle(times)
    hosts = ["cn1", "cn10", "cn2"]
    made = []
    names = ["decisions.11.jsonl.1", "decisions.11.jsonl",
             "decisions.12.jsonl.2", "decisions.12.jsonl.1",
             "decisions.12.jsonl"]
    for n, name in enumerate(names):
        pid = int(name.split(".")[1])
        chunk = sorted(times[n * 12:(n + 1) * 12])
        body = _header(f"ctl{pid}", pid)
        for at in chunk:
            found = record(at, host=hosts[int(at) % 3])
            if int(at) % 7 == 0:
                found["result"] = "no_valid_host"
                found["error"] = {"cause": "no_candidates", "message": "-"}
                found["placements"] = []
            made.append((at, pid, found))
            body += _line(found)
        (tmp_path / name).write_bytes(body)
        os.utime(tmp_path / name, (chunk[-1], chunk[-1]))
    made.sort(key=lambda m: m[0])
    return tmp_path, made


def _listed(directory, **kwargs):
    with decision_listing.select(str(directory), **kwargs) as found:
        return [(r["time"], r["pid"], r["scheduler"]) for r in found]


def test_every_record_oldest_first_as_the_whole_log_sorted(log):
    directory, made = log
    whole = decision_log.ordered(decision_log.read(str(directory)))
    assert _listed(directory) == [
        (r["time"], r["pid"], r["scheduler"]) for r in whole] == [
        (at, pid, f"ctl{pid}") for at, pid, _ in made]


def test_since_limit_and_filters(log):
    directory, made = log
    start = made[25][0]
    assert _listed(directory, since=start) == [
        (at, pid, f"ctl{pid}") for at, pid, _ in made[25:]]
    assert _listed(directory, limit=4) == [
        (at, pid, f"ctl{pid}") for at, pid, _ in made[-4:]]
    # "cn1" is in every line of cn10 too: the needle finds both, the
    # test on the record keeps cn1's.
    cn1 = [(at, pid, f"ctl{pid}") for at, pid, found in made
           if found["placements"]
           and found["placements"][0]["chosen"]["host"] == "cn1"]
    assert cn1 and _listed(
        directory, needles=[b"cn1"],
        keep=lambda r: any(p["chosen"]["host"] == "cn1"
                           for p in r["placements"])) == cn1
    failed = [(at, pid, f"ctl{pid}") for at, pid, found in made
              if found["result"] == "no_valid_host"]
    assert failed and _listed(
        directory, needles=[b'"result":"no_valid_host"'], since=start,
        limit=2) == [f for f in failed if f[0] >= start][-2:]


@pytest.fixture
def decoded(monkeypatch):
    """The lines decision_log.decode is given, in order."""
    lines = []
    real = decision_log.decode

    def counting(line):
        lines.append(line)
        return real(line)

    monkeypatch.setattr(decision_log, "decode", counting)
    return lines


def test_records_not_shown_are_not_decoded(log, decoded):
    directory, made = log
    assert len(_listed(directory, limit=3)) == 3
    assert len(decoded) == 3
    decoded.clear()
    assert len(_listed(directory, needles=[b'"result":"no_valid_host"'],
                       keep=lambda r: True)) == sum(
        found["result"] == "no_valid_host" for _, _, found in made)
    # Each one twice (checked, then shown), no other line.
    assert {orjson.loads(line)["result"] for line in decoded} == {
        "no_valid_host"}


def test_a_whole_name_and_records_tested_as_written(log, decoded):
    directory, made = log
    tested = []

    def chose_cn1(found):
        tested.append(found)
        return any(p["chosen"]["host"] == "cn1"
                   for p in found["placements"])

    cn1 = [(at, pid, f"ctl{pid}") for at, pid, found in made
           if found["placements"]
           and found["placements"][0]["chosen"]["host"] == "cn1"]
    assert cn1 and _listed(
        directory, needles=[decision_listing.whole("cn1")], keep=chose_cn1,
        raw=True) == cn1
    # cn10's lines do not hold "cn1" whole: only cn1's are tested, as
    # written; only those shown are decoded.
    assert len(tested) == len(cn1)
    assert len(decoded) == len(cn1)


def test_files_last_written_before_since_are_not_read(tmp_path):
    # A file whose time says it was last written an hour before the
    # records it holds cannot be (a record is written after its time
    # is taken): it is passed over unread.
    old = tmp_path / "decisions.5.jsonl.1"
    old.write_bytes(_header("a", 5) + _line(record(T0)))
    os.utime(old, (T0 - 3600, T0 - 3600))
    new = tmp_path / "decisions.5.jsonl"
    new.write_bytes(_header("a", 5) + _line(record(T0 + 1)))
    assert _listed(tmp_path, since=T0 - 1) == [(T0 + 1, 5, "a")]
    # Within the slack kept for a file system's clock, it is read.
    os.utime(old, (T0 - 10, T0 - 10))
    assert _listed(tmp_path, since=T0 - 1) == [(T0, 5, "a"),
                                               (T0 + 1, 5, "a")]


def test_lines_cut_short_or_without_time_first(tmp_path):
    reordered = {"request": "req-x", "time": T0 + 2,
                 "instances": [str(uuidlib.uuid4())], "result": "placed"}
    (tmp_path / "decisions.7.jsonl").write_bytes(
        _header("a", 7) + _line(record(T0 + 3)) + _line(reordered)
        + b"not json\n" + b'{"time":' + str(T0 + 1).encode()
        + b',"request":"cut')
    assert _listed(tmp_path) == [(T0 + 2, 7, "a"), (T0 + 3, 7, "a")]


def test_a_search_reads_lines_as_the_scan_does(tmp_path):
    # A writer restarted on its file (a second header, whose pid and
    # scheduler the file's records are shown with), a line without its
    # time first, one cut short at the end, and the needle in a header
    # (not a record): a search finds what the scan of every line finds.
    reordered = {"request": "req-x", "time": T0 + 2,
                 "instances": [str(uuidlib.uuid4())], "result": "placed",
                 "placements": [{"chosen": {"host": "cn1", "node": "cn1"}}]}
    (tmp_path / "decisions.7.jsonl").write_bytes(
        _header("cn1", 7) + _line(record(T0, host="cn1"))
        + _line(record(T0 + 1, host="cn2")) + _header("cn1", 8)
        + _line(reordered) + _line(record(T0 + 3, host="cn1"))
        + b'{"time":' + str(T0 + 4).encode() + b',"host":"cn1')
    (tmp_path / "decisions.9.jsonl").write_bytes(b"")

    def chose_cn1(found):
        return found["placements"][0]["chosen"]["host"] == "cn1"

    scanned = _listed(tmp_path, keep=chose_cn1)
    assert scanned == [(T0, 8, "cn1"), (T0 + 2, 8, "cn1"),
                       (T0 + 3, 8, "cn1")]
    assert _listed(tmp_path, needles=[decision_listing.whole("cn1")],
                   keep=chose_cn1) == scanned
    assert _listed(tmp_path, needles=[b"req-", b'"cn1"'],
                   keep=chose_cn1, raw=True) == scanned


def test_a_rotation_after_the_scan_moves_nothing(tmp_path):
    current = tmp_path / "decisions.9.jsonl"
    current.write_bytes(_header("a", 9) + _line(record(T0, host="cn1"))
                        + _line(record(T0 + 1, host="cn2")))
    with decision_listing.select(str(tmp_path)) as found:
        # The writer rotates: its file renamed, a new one begun.
        current.rename(tmp_path / "decisions.9.jsonl.1")
        current.write_bytes(_header("a", 9)
                            + _line(record(T0 + 2, host="cn3")) * 3)
        hosts = [r["placements"][0]["chosen"]["host"] for r in found]
    assert hosts == ["cn1", "cn2"]


def test_a_file_under_two_names_is_read_once(tmp_path):
    # As a rotation between two opens would show it: the current file
    # renamed to the first backup's name after that name was opened.
    current = tmp_path / "decisions.9.jsonl"
    current.write_bytes(_header("a", 9) + _line(record(T0)))
    os.link(current, tmp_path / "decisions.9.jsonl.1")
    assert _listed(tmp_path) == [(T0, 9, "a")]


def test_no_directory_is_said_plainly(tmp_path):
    with pytest.raises(decision_log.LogReadError,
                       match="no decision log at"):
        decision_listing.select(str(tmp_path / "nope"))
