"""benchmarks.instructions: reading callgrind's dumps into figures a
request, and a real run under valgrind on a small cloud."""

import json
import subprocess
import sys

import pytest

from benchmarks import instructions

DUMP = """\
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 1234
cmd:  python instruction_segments.py
part: 2

desc: I1 cache:
desc: Timerange: Basic block 10 - 20
desc: Trigger: Client Request: {label}

positions: line
events: {events}
summary: {summary}

fl=(1) x.c
fn=(1) f
0 5

totals: {totals}
"""


def _dump(tmp_path, name, label, events, totals):
    path = tmp_path / name
    path.write_text(DUMP.format(label=label, events=events,
                                summary=totals, totals=totals))
    return path


def test_a_dump_gives_its_label_and_totals(tmp_path):
    path = _dump(tmp_path, "cg.out.1", "decision:20", "Ir", "7000000")
    assert instructions.read_dump(path) == ("decision:20",
                                            {"Ir": 7000000})


def test_a_dump_missing_events_is_refused(tmp_path):
    path = tmp_path / "cg.out.1"
    path.write_text("# callgrind format\ntotals: 5\n")
    with pytest.raises(ValueError, match="not a callgrind dump"):
        instructions.read_dump(path)


def test_figures_per_request_and_the_logs_extra():
    events = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr",
              "DLmw")

    def cache(ir, first, last):
        return dict(zip(events, (ir, 0, 0, first, 0, 0, last, 0, 0),
                        strict=True))

    dumps = [
        (None, {"Ir": 10}),  # the dump at exit: no segment's
        ("settle:10", cache(5000, 100, 1)),  # measured first, left out
        ("decision:10", cache(1000, 100, 1)),
        ("decision_logged:10", cache(1100, 110, 1)),
        ("ten_instances:2", cache(1200, 60, 2)),
        ("decision_logged:10", cache(1060, 104, 1)),
        ("decision:10", cache(1000, 100, 1)),
        ("ten_instances:2", cache(1300, 60, 2)),
    ]
    out = instructions.summarise(instructions.per_request(dumps))
    assert out["decision"]["Ir"] == {"median": 100, "lowest": 100,
                                     "highest": 100}
    assert out["decision_logged"]["Ir"] == {"median": 108, "lowest": 106,
                                            "highest": 110}
    assert out["ten_instances"]["Ir"]["median"] == 625
    # Ir + 10 x first-level misses + 100 x last-level misses, a request.
    assert out["decision"]["estimated_cycles"]["median"] == 100 + 100 + 10
    assert out["decision_log_extra_percent"]["Ir"] == 8.0
    assert out["decision_log_extra_percent"]["first_level_misses"] == 7.0


def test_an_unknown_label_is_refused():
    with pytest.raises(ValueError, match="unknown segment label"):
        instructions.per_request([("decision", {"Ir": 1})])


def test_a_missing_compiler_is_one_line_and_exit_2(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.instructions", "--sizes", "5"],
        capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin", "CC": str(tmp_path / "no-cc")})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        f"benchmarks.instructions: no C compiler: {tmp_path / 'no-cc'} "
        "not found (set CC)")
    assert done.stdout == ""


def test_bad_sizes_are_refused():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.instructions", "--sizes", "x"],
        capture_output=True, text=True)
    assert done.returncode == 2
    assert "--sizes: numbers, comma-separated" in done.stderr


def test_a_real_run_counts_every_segment():
    """valgrind, a small cloud: each segment counted, a ten-instance
    request costs more than a one-instance one, and the log adds."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.instructions", "--sizes", "20",
         "--decisions", "3", "--rounds", "1"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)["results"]["20"]
    one = out["decision"]["Ir"]["median"]
    assert one > 100000
    assert out["ten_instances"]["Ir"]["median"] > 3 * one
    assert out["decision_logged"]["Ir"]["median"] > one
    assert out["decision_log_extra_percent"]["Ir"] > 0
