"""Tests for simulation.report: the files, the text, compare."""

import base64
import json
import re
import threading

import numpy
import pytest
from matplotlib import image as mpimage

from simulation import plots
from simulation import report as report_mod

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HOSTILE_CLOUD = "/tmp/<b>cloud</b>&co.yaml"


def _fill(counts):
    return {"edges": [i / 20 for i in range(21)], "counts": counts}


def make_report():
    """A small but complete report: three resource classes, a failure."""
    return {
        "format": 1,
        "inputs": {
            "cloud": HOSTILE_CLOUD, "workload": "steady.yaml",
            "config": None, "seed": 7, "schedulers": 2, "hosts": 10,
            "events": 200,
            "flavors": {
                "m1.small": {"vcpus": 1, "memory_mb": 2048, "root_gb": 20},
                "m1.large": {"vcpus": 4, "memory_mb": 8192, "root_gb": 80,
                             "extra_specs": {"hw:cpu_policy": "shared"}},
            },
        },
        "figures": {
            "creates": 150, "deletes": 50, "placed": 140,
            "no_valid_host": 10, "claim_attempts": 146, "retries": 6,
            "conflicts": 4,
            "first_failure": {"event": 120, "time_s": 600.0,
                              "utilisation": {"VCPU": 0.95,
                                              "MEMORY_MB": 0.7,
                                              "DISK_GB": 0.4}},
            "utilisation_end": {"VCPU": 0.8, "MEMORY_MB": 0.6,
                                "DISK_GB": 0.3},
            "utilisation_peak": {"VCPU": 0.97, "MEMORY_MB": 0.72,
                                 "DISK_GB": 0.41},
            "stranded": {
                "VCPU": {"capacity": 320.0, "free": 64.0,
                         "stranded": 16.0, "fraction_of_capacity": 0.05},
                "MEMORY_MB": {"capacity": 1000000.0, "free": 400000.0,
                              "stranded": 100000.0,
                              "fraction_of_capacity": 0.1},
                "DISK_GB": {"capacity": 10000.0, "free": 7000.0,
                            "stranded": 0.0, "fraction_of_capacity": 0.0},
            },
            "fits_at_end": {"m1.small": 30, "m1.large": 2},
            "live_instances_end": 90,
        },
        "timing": {
            "wall_s": 2.5, "events_per_s": 80.0,
            "decision_ms": {"p50": 1.5, "p99": 12.0, "mean": 2.25,
                            "max": 30.0, "count": 146},
            "scheduler_s": {"useful": 0.3, "wasted": 0.1},
        },
        "series": {
            "event": [0, 50, 100, 150, 200],
            "time_s": [0.0, 250.0, 500.0, 750.0, 1000.0],
            "utilisation": {
                "VCPU": [0.0, 0.4, 0.9, 0.95, 0.8],
                "MEMORY_MB": [0.0, 0.3, 0.6, 0.7, 0.6],
                "DISK_GB": [0.0, 0.1, 0.3, 0.4, 0.3],
            },
            "placed": [0, 45, 95, 130, 140],
            "no_valid_host": [0, 0, 0, 6, 10],
            "live": [0, 45, 80, 95, 90],
        },
        "host_fill": {
            "VCPU": _fill([0] * 10 + [1, 1, 2, 2, 1, 1, 0, 1, 0, 1]),
            "MEMORY_MB": _fill([0] * 8 + [1, 2, 2, 2, 1, 1, 1] + [0] * 5),
            "DISK_GB": _fill([0] * 4 + [2, 3, 3, 2] + [0] * 12),
        },
        "latency_ms": {
            "edges": [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0],
            "counts": [5, 40, 70, 25, 5, 1],
        },
    }


def make_empty_report():
    """A run with zero events, one resource class and no flavors."""
    report = make_report()
    report["inputs"].update(events=0, flavors={}, seed=None)
    report["figures"] = {
        "creates": 0, "deletes": 0, "placed": 0, "no_valid_host": 0,
        "claim_attempts": 0, "retries": 0, "conflicts": 0,
        "first_failure": None, "utilisation_end": {"VCPU": 0.0},
        "utilisation_peak": {"VCPU": 0.0},
        "stranded": {"VCPU": {"capacity": 320.0, "free": 320.0,
                              "stranded": 0.0,
                              "fraction_of_capacity": 0.0}},
        "fits_at_end": {}, "live_instances_end": 0,
    }
    report["timing"] = {
        "wall_s": 0.0, "events_per_s": 0.0,
        "decision_ms": {"p50": 0.0, "p99": 0.0, "mean": 0.0, "max": 0.0,
                        "count": 0},
        "scheduler_s": {"useful": 0.0, "wasted": 0.0},
    }
    report["series"] = {"event": [], "time_s": [],
                        "utilisation": {"VCPU": []}, "placed": [],
                        "no_valid_host": [], "live": []}
    report["host_fill"] = {"VCPU": _fill([10] + [0] * 19)}
    report["latency_ms"] = {"edges": [0.1, 1.0, 10.0], "counts": [0, 0]}
    return report


@pytest.fixture
def report():
    return make_report()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """write() of the full report, once for the module, in a thread.

    The thread is how a service would call it: the plots must not need
    pyplot's main-thread state.  Returns (report, write's result).
    """
    out = tmp_path_factory.mktemp("run") / "nested" / "out"
    report = make_report()
    result = {}

    def run():
        try:
            result["paths"] = report_mod.write(report, str(out))
        except Exception as exc:  # re-raised below, in the test thread
            result["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=120)
    if "error" in result:
        raise result["error"]
    return report, result["paths"]


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    a = make_report()
    b = make_report()
    b["figures"]["placed"] = 147
    b["figures"]["no_valid_host"] = 3
    b["figures"]["utilisation_end"]["VCPU"] = 0.9
    b["timing"]["decision_ms"]["p99"] = 9.0
    b["figures"]["fits_at_end"]["m1.small"] = 0
    out = tmp_path_factory.mktemp("cmp")
    return report_mod.compare(a, b, str(out), labels=("before", "<after>"))


def assert_png(path):
    with open(path, "rb") as f:
        assert f.read(8) == PNG_SIGNATURE
    pixels = mpimage.imread(path)
    assert pixels.shape[0] >= 200 and pixels.shape[1] >= 400
    # Something was drawn: ink on the canvas, in many shades (text and
    # lines are antialiased), not a blank or single-colour image.
    shade = pixels[..., :3].sum(axis=2)
    assert (shade < 2.9).mean() > 0.005
    assert len(numpy.unique(shade)) > 20


# -- write -----------------------------------------------------------------


def test_write_creates_every_file(written):
    _, paths = written
    assert set(paths) == {"json", "html", "plots"}
    assert set(paths["plots"]) == set(report_mod.PLOTS)
    assert paths["json"].endswith("report.json")
    assert paths["html"].endswith("report.html")
    for stem, path in paths["plots"].items():
        assert path.endswith(f"{stem}.png")
        assert_png(path)


def test_report_json_round_trips(written):
    original, paths = written
    assert original == make_report()    # write() left it alone
    assert report_mod.load(paths["json"]) == original
    with open(paths["json"]) as f:
        text = f.read()
    assert text == json.dumps(original, indent=2, sort_keys=True) + "\n"


def assert_self_contained(page):
    """Nothing a browser would fetch: plotly.js is inline, once."""
    lower = page.lower()
    assert re.search(r"<script[^>]*\ssrc=", lower) is None
    assert re.search(r"<link[^>]*href=", lower) is None
    assert lower.count("<script") >= 1
    assert page.count("plotly.js v") <= 2   # its banner, one copy


def test_html_is_self_contained_and_escaped(written):
    _, paths = written
    with open(paths["html"], encoding="utf-8") as f:
        page = f.read()
    # Interactive plots replace the PNGs on the page.
    assert "<img " not in page
    assert_self_contained(page)
    for stem in ("utilisation", "failures", "causes", "host_fill",
                 "stranded", "latency"):
        assert f'id="plot-{stem}"' in page, stem
    assert "/tmp/&lt;b&gt;cloud&lt;/b&gt;&amp;co.yaml" in page
    assert "<b>cloud" not in page
    # The tables are there, with values from the report.
    for text in ("Inputs", "Figures", "Timing", "Fits at end",
                 "steady.yaml", "m1.large", "hw:cpu_policy", "95.0%"):
        assert text in page


def test_html_embeds_the_written_pngs_without_plotly(tmp_path,
                                                      monkeypatch):
    monkeypatch.setattr(report_mod.interactive, "available",
                        lambda: False)
    paths = report_mod.write(make_report(), str(tmp_path))
    with open(paths["html"], encoding="utf-8") as f:
        page = f.read()
    with open(paths["plots"]["latency"], "rb") as f:
        latency = base64.b64encode(f.read()).decode()
    assert latency in page
    assert page.count("data:image/png;base64,") == len(report_mod.PLOTS)
    assert "<script" not in page.lower()
    assert "Install plotly" in page


def test_write_refuses_a_non_report(tmp_path):
    with pytest.raises(ValueError, match="format"):
        report_mod.write({"inputs": {}}, str(tmp_path))


# -- summary ---------------------------------------------------------------


def test_summary_states_the_key_figures(report):
    text = report_mod.summary(report)
    lines = text.splitlines()
    assert 8 <= len(lines) <= 16
    for fragment in (
        "Placed 140 of 150 creates", "NoValidHost 10", "6 retries",
        "4 conflicts", "event 120", "VCPU 95.0%",     # at first failure
        "VCPU 80.0%", "MEMORY_MB 60.0%", "DISK_GB 30.0%",   # at end
        "MEMORY_MB 10.0%",                            # stranded
        "m1.small 30", "m1.large 2", "p50 1.50 ms", "p99 12.00 ms",
        "80.00 events/s", "useful 0.3 s", "wasted 0.1 s", "25.0% of it wasted",
        HOSTILE_CLOUD,
    ):
        assert fragment in text, fragment


def test_summary_of_an_empty_run():
    text = report_mod.summary(make_empty_report())
    assert "First NoValidHost: none" in text
    assert "Decisions: none" in text
    assert "Fits at end: no flavors" in text
    assert "no seed" in text
    assert "wasted 0.00 s" in text and "% of it wasted" not in text


# -- edge cases ------------------------------------------------------------


def test_write_an_empty_run(tmp_path):
    report = make_empty_report()
    paths = report_mod.write(report, str(tmp_path))
    for path in paths["plots"].values():
        assert_png(path)
    assert report_mod.load(paths["json"]) == report
    with open(paths["html"], encoding="utf-8") as f:
        assert 'id="plot-utilisation"' in f.read()


def test_clock_that_never_moves_plots_against_events(tmp_path):
    report = make_report()
    report["series"]["time_s"] = [0.0] * 5
    report["figures"]["first_failure"] = None
    report["latency_ms"]["edges"][0] = 0.0   # no log axis possible
    for stem in ("utilisation", "failures", "latency"):
        fig = plots.PLOTTERS[stem](report)
        axes = fig.axes[0]
        if stem == "latency":
            assert axes.get_xscale() == "linear"
        else:
            assert axes.get_xlabel() == "event"
            assert max(axes.get_xlim()) > 150    # event numbers, not 0
        path = tmp_path / f"{stem}.png"
        path.write_bytes(plots.render(fig))
        assert_png(path)


def test_free_split_as_shares_of_capacity(report):
    figures = report["figures"]
    # Of 320: 64 free (20%), 16 of them stranded (5%).
    usable, stranded = plots._free_split(figures, "VCPU")
    assert stranded == pytest.approx(5.0)
    assert usable == pytest.approx(15.0)
    usable, stranded = plots._free_split(figures, "DISK_GB")
    assert (usable, stranded) == (pytest.approx(70.0), 0.0)
    figures["stranded"]["DISK_GB"]["capacity"] = 0.0
    assert plots._free_split(figures, "DISK_GB") == (0.0, 0.0)


# -- compare ---------------------------------------------------------------


def test_compare_table_holds_the_differences(compared):
    rows = compared["table"]["rows"]
    assert rows["placed"] == {"a": 140, "b": 147, "diff": 7,
                              "relative": 0.05, "unit": "count"}
    assert rows["no_valid_host"]["diff"] == -7
    assert rows["no_valid_host"]["relative"] == pytest.approx(-0.7)
    assert rows["utilisation_end.VCPU"]["diff"] == pytest.approx(0.1)
    # A share changes by points, never by a relative change of itself.
    assert rows["utilisation_end.VCPU"]["relative"] is None
    assert rows["timing.decision_ms.p99"]["diff"] == -3.0
    assert rows["timing.decision_ms.p99"]["relative"] == -0.25
    assert rows["fits_at_end.m1.small"]["relative"] == -1.0
    # Same value on both sides: no change, still listed.
    assert rows["retries"] == {"a": 6, "b": 6, "diff": 0, "relative": 0.0,
                               "unit": "count"}
    assert compared["table"]["labels"] == ["before", "<after>"]


def test_compare_relative_is_none_when_a_is_zero(tmp_path):
    a, b = make_report(), make_report()
    a["figures"]["conflicts"] = 0
    b["figures"]["first_failure"] = None
    table = report_mod.difference_table(a, b)
    assert table["rows"]["conflicts"] == {
        "a": 0, "b": 4, "diff": 4, "relative": None, "unit": "count"}
    # Only A failed: the row stays, with nothing to subtract.
    event = table["rows"]["first_failure.event"]
    assert (event["a"], event["b"], event["diff"]) == (120, None, None)


def test_compare_writes_json_html_and_overlaid_pngs(compared):
    assert set(compared["plots"]) == set(report_mod.COMPARE_PLOTS)
    for stem, path in compared["plots"].items():
        assert path.endswith(f"compare_{stem}.png")
        assert_png(path)
    with open(compared["json"]) as f:
        assert json.load(f) == compared["table"]
    with open(compared["html"], encoding="utf-8") as f:
        page = f.read()
    # Interactive plots (plotly inline) replace the PNGs on the page.
    assert "<img " not in page
    assert_self_contained(page)
    for stem in ("utilisation", "failures", "causes", "stranded", "fits",
                 "latency", "host_fill"):
        assert f'id="compare-{stem}"' in page, stem
    assert 'id="bottom-line"' in page
    assert "&lt;after&gt;" in page and "<after>" not in page
    assert "&lt;b&gt;cloud" in page


def test_compare_html_embeds_the_pngs_without_plotly(tmp_path,
                                                     monkeypatch):
    monkeypatch.setattr(report_mod.interactive, "available",
                        lambda: False)
    paths = report_mod.compare(make_report(), make_report(),
                               str(tmp_path))
    page = open(paths["html"], encoding="utf-8").read()
    assert page.count("data:image/png;base64,") == len(
        report_mod.COMPARE_PLOTS)
    assert "<script" not in page.lower()
    assert "Install plotly" in page


def test_compare_an_empty_run_with_a_full_one(tmp_path):
    empty, full = make_empty_report(), make_report()
    result = report_mod.compare(empty, full, str(tmp_path))
    for path in result["plots"].values():
        assert_png(path)
    rows = result["table"]["rows"]
    assert rows["placed"]["relative"] is None
    assert rows["utilisation_end.MEMORY_MB"]["a"] is None
    assert "fits_at_end.m1.small" in rows


def test_compare_summary_lists_the_rows(compared):
    text = report_mod.compare_summary(compared["table"])
    lines = text.splitlines()
    placed = next(line for line in lines if line.startswith("placed "))
    assert re.search(r"140\s+147\s+\+7\s+\+5\.0%$", placed)
    vcpu = next(line for line in lines
                if line.startswith("utilisation_end.VCPU"))
    assert re.search(r"80\.0%\s+90\.0%\s+\+10\.0 pts\s+\+10\.0 pts$", vcpu)
    assert "before" in lines[0] and "<after>" in lines[1]
    header = next(line for line in lines if line.startswith("figure"))
    assert "<after> - before" in header


# -- load ------------------------------------------------------------------


@pytest.mark.parametrize("content", [
    "not json at all",
    "[1, 2, 3]",
    '{"cloud": "x"}',
    '{"format": 99, "inputs": {}}',
    '{"format": 1, "inputs": {}}',
], ids=["not-json", "a-list", "no-format", "future-format",
        "missing-sections"])
def test_load_refuses_what_is_not_a_report(tmp_path, content):
    path = tmp_path / "other.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=re.escape(str(path))):
        report_mod.load(str(path))


def test_load_refuses_binary(tmp_path):
    path = tmp_path / "image.png"
    path.write_bytes(PNG_SIGNATURE + bytes(range(256)))
    with pytest.raises(ValueError, match=re.escape(str(path))):
        report_mod.load(str(path))
