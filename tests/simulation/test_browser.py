"""report.html and compare.html in a real browser (headless chromium):
they load without a console error, every plot is drawn with data, the
latency labels sit at their values, and the numbers the pages show are
those of report.json."""

import json

import pytest
import yaml

from simulation import cli
from simulation.plots import fmt
from tests.simulation import browser as browser_mod

CLOUD = {"providers": [
    {"name": f"h{i}", "compute": {"cell": "cell1"},
     "inventories": {"VCPU": 16, "MEMORY_MB": 65536 if i % 2 else 32768,
                     "DISK_GB": 400}}
    for i in range(6)]}
WORKLOAD = {
    "flavors": {"small": {"vcpus": 2, "memory_mb": 4096, "root_gb": 20},
                "big": {"vcpus": 4, "memory_mb": 16384, "root_gb": 40}},
    "synthetic": {"seed": 5, "creates": 60, "mix": {"small": 2, "big": 1},
                  "arrival": {"process": "fixed", "interval_s": 1},
                  "lifetime": {"distribution": "exponential",
                               "mean_s": 300},
                  "drain": False}}
CONFS = {"spread.conf": "[filter_scheduler]\nram_weight_multiplier = 1.0\n",
         "pack.conf": "[filter_scheduler]\nram_weight_multiplier = -1.0\n"
                      "cpu_weight_multiplier = -1.0\n"}

# Resolves once every plotly div on the page has drawn its SVG.
_RENDERED = """new Promise((resolve, reject) => {
  const start = Date.now();
  (function poll() {
    const divs = [...document.querySelectorAll('div.plotly-graph-div')];
    if (divs.length && divs.every(d => d._fullLayout &&
                                  d.querySelector('.main-svg')))
      return resolve(divs.length);
    if (Date.now() - start > 20000)
      return reject(new Error('plots not drawn'));
    setTimeout(poll, 50);
  })();
})"""
# Per plot: its traces, those without x or y values, those shown (a
# menu may hide some) and those drawn.
_PLOTS = """[...document.querySelectorAll('div.plotly-graph-div')].map(d => ({
  id: d.id, traces: d.data.length,
  shown: d._fullData.filter(t => t.visible === true).length,
  empty: d.data.filter(t => !(t.x && t.x.length && t.y && t.y.length))
               .map(t => t.name),
  drawn: d.querySelectorAll('g.trace').length}))"""
# The two-column tables of report.html as {first cell: second cell}.
_PAIRS = """(() => { const m = {};
  for (const tr of document.querySelectorAll('tr')) {
    const c = tr.querySelectorAll('td');
    if (c.length === 2) m[c[0].textContent] = c[1].textContent;
  } return m; })()"""
# Where the latency plot drew its x axis, lines and labels, in pixels.
_LATENCY = """((id) => {
  const gd = document.getElementById(id), xa = gd._fullLayout.xaxis;
  const left = gd.querySelector('.main-svg').getBoundingClientRect().left;
  const x = r => r.left + r.width / 2;
  return {
    type: xa.type, left: left + xa._offset, log: xa.type === 'log',
    lines: [...gd.querySelectorAll('.shapelayer path')]
             .map(p => x(p.getBoundingClientRect())),
    notes: [...gd.querySelectorAll('g.annotation')].map(a => ({
      text: a.textContent, left: a.getBoundingClientRect().left})),
    // The axis' own mapping, so that the test needs no pixel maths.
    at: %s.map(v => left + xa._offset +
                    xa.l2p(xa.type === 'log' ? Math.log10(v) : v)),
  }; })"""


def _write(path, data):
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return str(path)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """compare's output directory and a headless chromium on it."""
    binary = browser_mod.chromium()
    tmp = tmp_path_factory.mktemp("browser")
    cloud = _write(tmp / "cloud.yaml", CLOUD)
    workload = _write(tmp / "workload.yaml", WORKLOAD)
    confs = [_write(tmp / name, text) for name, text in CONFS.items()]
    out = tmp / "cmp"
    assert cli.main(["compare", *confs, "--cloud", cloud, "--workload",
                     workload, "--out", str(out), "--no-progress"]) == 0
    browser = browser_mod.Browser(binary)
    try:
        yield out, browser
    finally:
        browser.close()


def _open(browser, path):
    page = browser.page("file://" + str(path))
    assert page.evaluate(_RENDERED) > 0
    return page


def _assert_plots_have_data(page, expected_ids):
    plots = page.evaluate(_PLOTS)
    assert {p["id"] for p in plots} >= set(expected_ids)
    for plot in plots:
        assert plot["traces"] > 0, plot
        assert plot["empty"] == [], plot
        assert plot["shown"] > 0, plot
        assert plot["drawn"] >= plot["shown"], plot


def _assert_marks_at(page, div_id, marks):
    """Each {label: value} of marks: its line and its label at the
    value's place on the axis."""
    drawn = page.evaluate(_LATENCY % json.dumps(list(marks.values()))
                          + f"({json.dumps(div_id)})")
    assert drawn["type"] == "log"
    notes = {n["text"]: n["left"] for n in drawn["notes"]}
    assert set(notes) == set(marks)
    for (text, _value), at in zip(marks.items(), drawn["at"], strict=True):
        assert min(abs(x - at) for x in drawn["lines"]) < 2, text
        # The label starts at its line (xanchor left), give or take
        # its padding.
        assert abs(notes[text] - at) < 6, (text, notes[text], at)


def _report(out, run):
    return json.loads((out / run / "report.json").read_text())


def test_report_html_in_a_browser(pages):
    out, browser = pages
    report = _report(out, "a")
    page = _open(browser, out / "a" / "report.html")
    assert page.errors() == []
    _assert_plots_have_data(page, [
        "plot-utilisation", "plot-failures", "plot-causes",
        "plot-host_fill", "plot-stranded", "plot-latency"])
    shown = page.evaluate(_PAIRS)
    fig, decision = report["figures"], report["timing"]["decision_ms"]
    assert shown["placed"] == str(fig["placed"])
    assert shown["no_valid_host"] == str(fig["no_valid_host"])
    assert shown["decision p50"] == fmt(decision["p50"], "ms")
    assert shown["decision p99"] == fmt(decision["p99"], "ms")
    _assert_marks_at(page, "plot-latency", {
        f"{key} {fmt(decision[key], 'ms')}": decision[key]
        for key in ("p50", "p99")})
    # One host-fill panel per class, DISK_GB among them.
    titles = page.evaluate(
        "[...document.querySelectorAll('#plot-host_fill g.annotation')]"
        ".map(a => a.textContent)")
    assert set(report["host_fill"]) <= set(titles)
    assert "DISK_GB" in titles


def _verdict_cell(page, key):
    return page.evaluate(
        f"document.querySelector('[data-figure=\"{key}\"]').textContent")


def test_compare_html_in_a_browser(pages):
    out, browser = pages
    a, b = _report(out, "a"), _report(out, "b")
    page = _open(browser, out / "compare.html")
    assert page.errors() == []
    _assert_plots_have_data(page, [
        f"compare-{stem}" for stem in ("utilisation", "failures", "causes",
                                       "stranded", "fits", "latency",
                                       "host_fill")])
    hrefs = page.evaluate(
        "[...document.querySelectorAll('#run-links a')]"
        ".map(a => a.getAttribute('href'))")
    assert hrefs == ["a/report.html", "b/report.html"]
    assert all((out / href).is_file() for href in hrefs)

    fa, fb = a["figures"], b["figures"]
    for run, fig in (("a", fa), ("b", fb)):
        assert _verdict_cell(page, f"placed.{run}") == (
            f"{fig['placed']} of {fig['creates']}")
        assert _verdict_cell(page, f"failures.{run}") == str(
            fig["no_valid_host"])
        stranded = _verdict_cell(page, f"stranded.{run}")
        for rc, entry in fig["stranded"].items():
            assert f"{rc} {fmt(entry['fraction_of_capacity'], 'fraction')}" \
                in stranded
        fits = _verdict_cell(page, f"fits.{run}")
        assert fits == ", ".join(f"{name} {n}" for name, n in
                                 fig["fits_at_end"].items())
    # Who is better follows from the numbers.
    for question, key, more_is_better in (("placed", "placed", True),
                                          ("failures", "no_valid_host",
                                           False)):
        va, vb = fa[key], fb[key]
        better = ("same" if va == vb else
                  "spread.conf" if (va > vb) == more_is_better
                  else "pack.conf")
        assert _verdict_cell(page, f"{question}.winner") == better
        if better != "same":
            line = page.evaluate(
                "document.getElementById('bottom-line').textContent")
            assert better in line
    marks = {}
    for label, report in (("spread.conf", a), ("pack.conf", b)):
        decision = report["timing"]["decision_ms"]
        for key in ("p50", "p99"):
            marks[f"{key} {fmt(decision[key], 'ms')} ({label})"] = \
                decision[key]
    _assert_marks_at(page, "compare-latency", marks)
    # The folded table names its rows in words.
    rows = page.evaluate(
        "[...document.querySelectorAll('details tbody tr')]"
        ".map(r => r.cells[0].textContent)")
    assert "instances live at the end" in rows
    assert not any(row.startswith("timing.") for row in rows)
    assert len(rows) > 20
