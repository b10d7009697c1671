"""The plotly figures of report.html and compare.html, read as data:
where the latency markers sit, one host-fill panel per class."""

import math

import pytest

from simulation import interactive, interactive_compare
from simulation import report as report_mod
from simulation.plots import fmt
from tests.simulation.test_report import make_report


@pytest.fixture
def from_json(tmp_path):
    """make_report() as report.json gives it back."""
    paths = report_mod.write(make_report(), str(tmp_path))
    return report_mod.load(paths["json"])


def _marks(fig):
    """{label text: (shape x0, annotation x)} of the quantile marks."""
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    notes = list(fig.layout.annotations)
    assert len(lines) == len(notes)
    return {n.text: (s.x0, n.x) for s, n in zip(lines, notes, strict=True)}


def test_latency_marks_sit_at_their_values_on_the_log_axis(from_json):
    fig = interactive.latency(from_json)
    assert fig.layout.xaxis.type == "log"
    decision = from_json["timing"]["decision_ms"]
    marks = _marks(fig)
    assert set(marks) == {f"p50 {fmt(decision['p50'], 'ms')}",
                          f"p99 {fmt(decision['p99'], 'ms')}"}
    for key in ("p50", "p99"):
        line_x, label_x = marks[f"{key} {fmt(decision[key], 'ms')}"]
        # plotly reads a shape's x as data and an annotation's x on a
        # log axis as log10: both must mean the same place.
        assert line_x == decision[key]
        assert label_x == pytest.approx(math.log10(decision[key]))
    # The p50 of 1.5 ms is labelled near 1.5 ms, not at 10**1.5 = 32 ms.
    assert 10 ** marks["p50 1.50 ms"][1] == pytest.approx(1.5)


def test_latency_marks_on_a_linear_axis_take_the_value(from_json):
    from_json["latency_ms"]["edges"][0] = 0.0
    fig = interactive.latency(from_json)
    assert fig.layout.xaxis.type == "linear"
    for line_x, label_x in _marks(fig).values():
        assert label_x == line_x


def test_compare_latency_marks_each_run_at_its_values(from_json):
    other = make_report()
    other["timing"]["decision_ms"].update(p50=0.4, p99=25.0)
    fig = interactive_compare.latency((from_json, other), ("a", "b"))
    marks = _marks(fig)
    assert len(marks) == 4
    for run, label in ((from_json, "a"), (other, "b")):
        for key in ("p50", "p99"):
            value = run["timing"]["decision_ms"][key]
            line_x, label_x = marks[f"{key} {fmt(value, 'ms')} ({label})"]
            assert line_x == value
            assert label_x == pytest.approx(math.log10(value))



def test_host_fill_has_a_panel_per_class_disk_included(from_json):
    fig = interactive.host_fill(from_json)
    classes = list(from_json["host_fill"])
    assert "DISK_GB" in classes
    titles = [a.text for a in fig.layout.annotations]
    assert [t for t in titles if t in classes] == classes
    # One trace per class, each on its own x axis (its own subplot).
    axes = [trace.xaxis for trace in fig.data]
    assert [trace.name for trace in fig.data] == classes
    assert len(set(axes)) == len(classes)
    for trace in fig.data:
        hist = from_json["host_fill"][trace.name]
        assert list(trace.y) == hist["counts"]
        assert len(trace.x) == len(hist["counts"])
        assert sum(trace.y) > 0
    assert fig.layout.barmode != "group"


def test_compare_host_fill_puts_both_runs_on_each_class_panel(from_json):
    fig = interactive_compare.host_fill((from_json, make_report()),
                                        ("a", "b"))
    classes = list(from_json["host_fill"])
    panels = {}
    for trace in fig.data:
        panels.setdefault(trace.xaxis, []).append(trace.name)
    assert len(panels) == len(classes)
    assert all(names == ["a", "b"] for names in panels.values())
    # Shares of the cloud's hosts: each run's bars add up to 100%.
    for trace in fig.data:
        assert sum(trace.y) == pytest.approx(100, abs=0.05)
