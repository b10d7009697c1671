"""compare.html: the verdict first, then the plots, then every figure.

The page answers the operator's questions at the top (simulation.verdict),
links each run's own report.html, draws the two runs together with
plotly (PNGs where plotly is missing) and keeps the full difference
table below, folded, its rows named in words rather than JSON keys.
"""

import html

from simulation import html_parts, interactive, interactive_compare
from simulation import verdict as verdict_mod
from simulation.plots import fmt

_CAPTIONS = {
    "utilisation": "Utilisation per resource class (colour) for both "
                   "runs (solid: {0}, dashed: {1}).",
    "failures": "Cumulative NoValidHost (left axis) and placed instances "
                "(right axis): the run whose red line starts later and "
                "stays lower took more of the workload.",
    "causes": "Why creates were refused, in each run: the resource class "
              "no reachable host had room for, or the filter that "
              "removed the last hosts.",
    "stranded": "Free capacity at the end on hosts where no flavor of "
                "the workload fits any more, per class: lower is better.",
    "fits": "How many more instances of each flavor fit at the end: "
            "higher is better.",
    "latency": "Decision latency as a share of each run's decisions, on "
               "a log scale, with each run's p50 (dashed) and p99 "
               "(dotted).",
    "host_fill": "Hosts at each fill level at the end as a share of the "
                 "cloud, one panel per resource class, both runs on "
                 "each panel.",
}
# The PNGs drawn where plotly is missing (report.COMPARE_PLOTS).
_PNG_CAPTIONS = {
    "utilisation": _CAPTIONS["utilisation"],
    "failures": _CAPTIONS["failures"],
    "latency": _CAPTIONS["latency"],
    "host_fill": _CAPTIONS["host_fill"],
}

_COUNT_LABELS = {
    "creates": "creates", "deletes": "deletes", "placed": "placed",
    "no_valid_host": "NoValidHost", "claim_attempts": "claim attempts",
    "retries": "claim retries", "conflicts": "claims lost to another "
                                             "scheduler",
    "live_instances_end": "instances live at the end",
}
_PREFIX_LABELS = (
    ("first_failure.utilisation.", "{} used at the first NoValidHost"),
    ("utilisation_peak.", "{} used at the peak"),
    ("utilisation_end.", "{} used at the end"),
    ("stranded.", "{} stranded at the end"),
    ("fits_at_end.", "more {} that fit at the end"),
    ("no_valid_host_by_cause.", "NoValidHost caused by {}"),
    ("no_valid_host_by_flavor.", "NoValidHost of flavor {}"),
    ("timing.decision_ms.", "decision latency, {}"),
    ("timing.scheduler_s.", "scheduler time, {}"),
)
_FIXED_LABELS = {
    "first_failure.event": "first NoValidHost, event",
    "first_failure.time_s": "first NoValidHost, time",
    "timing.wall_s": "wall time", "timing.events_per_s": "events per "
                                                         "second",
    "timing.decisions": "decisions",
}


def label(name):
    """A difference-table row's name in words."""
    if name in _COUNT_LABELS:
        return _COUNT_LABELS[name]
    if name in _FIXED_LABELS:
        return _FIXED_LABELS[name]
    for prefix, words in _PREFIX_LABELS:
        if name.startswith(prefix):
            return words.format(name[len(prefix):])
    if name.startswith("groups."):
        # groups.<zone, aggregate or cell label>.<class>
        group, _, rc = name[len("groups."):].rpartition(".")
        return f"{group}: {rc} used at the end"
    return name


def _cell(text, key=None, classes=""):
    """A cell; ``key`` becomes data-figure, for readers and tests that
    look a number up."""
    attrs = f' data-figure="{html.escape(key)}"' if key else ""
    attrs += f' class="{classes}"' if classes else ""
    return f"<td{attrs}>{html.escape(text)}</td>"


def _value_text(question, value, creates=None):
    """A run's figure for one question, as the verdict table shows it."""
    if question == "placed":
        return f"{value} of {creates}"
    if question == "failures":
        return str(value)
    if question == "stranded":
        return ", ".join(f"{rc} {fmt(v, 'fraction')}"
                         for rc, v in value.items()) or "-"
    return ", ".join(f"{name} {n}" for name, n in value.items()) or "-"


def _better(winner, labels):
    return {"a": labels[0], "b": labels[1], "same": "same",
            "mixed": "mixed"}[winner]


def verdict_html(found, labels):
    la, lb = labels
    creates = found["placed"]["creates"]
    rows = []
    for q in verdict_mod.QUESTIONS:
        v = found[q]
        rows.append(
            f'<tr data-question="{q}">'
            f"<th>{html.escape(verdict_mod.TITLES[q])}</th>"
            + "".join(
                _cell(_value_text(q, v[run], creates[k]), f"{q}.{run}",
                      f"better-{run}" if v["winner"] == run else "")
                for k, run in enumerate("ab"))
            + _cell(_better(v["winner"], labels), f"{q}.winner")
            + _cell(v["text"], f"{q}.text") + "</tr>")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in
                   ("question", la, lb, "better", "why"))
    line = verdict_mod.bottom_line(found, labels)
    return [
        "<h2>Verdict</h2>",
        f'<p class="bottom-line" id="bottom-line">{html.escape(line)}</p>',
        f'<table class="verdict"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>",
    ]


def _links(labels, links):
    if not links:
        return []
    anchors = " and ".join(
        f'<a href="{html.escape(href)}">{html.escape(name)}</a>'
        for name, href in zip(labels, links, strict=True))
    return [f'<p id="run-links">Each run\'s own report: {anchors}.</p>']


def _fmt_change(row):
    """A share moves by points (80% -> 90% is +10.0 pts), anything else
    by its relative change (+12.5%)."""
    if row["unit"] == "fraction":
        return fmt(row["diff"], "fraction", signed=True)
    relative = row["relative"]
    return "-" if relative is None else f"{relative * 100:+.1f}%"


def _raw_table(table):
    la, lb = table["labels"]
    rows = [(label(name), fmt(row["a"], row["unit"]),
             fmt(row["b"], row["unit"]),
             fmt(row["diff"], row["unit"], signed=True), _fmt_change(row))
            for name, row in table["rows"].items()]
    return [
        f"<details><summary>Every figure of both runs ({len(rows)})"
        "</summary>",
        html_parts.table(("figure", la, lb, f"{lb} - {la}", "change"),
                         rows),
        "</details>"]


def _plots(reports, labels, images):
    if not interactive.available():
        note = ("<p>Install plotly (gantt's 'simulate' extra) for "
                "interactive plots.</p>")
        return [note] + [html_parts.image(
            images[stem], stem, caption.format(*labels))
            for stem, caption in _PNG_CAPTIONS.items()]
    return [html_parts.figure(div, _CAPTIONS[stem].format(*labels))
            for stem, div in
            interactive_compare.divs(reports, labels).items()]


def render(reports, table, images, links=None):
    """compare.html of two reports, their difference table and the
    PNGs (used without plotly); links: each run's report.html."""
    labels = tuple(table["labels"])
    found = table.get("verdicts") or verdict_mod.verdicts(*reports, labels)
    ia, ib = table["inputs"]["a"], table["inputs"]["b"]
    keys = ("cloud", "workload", "config", "seed", "schedulers", "hosts",
            "events")
    inputs = [(key, fmt(ia.get(key)), fmt(ib.get(key))) for key in keys]
    parts = [
        *_links(labels, links),
        *verdict_html(found, labels),
        "<h2>Plots</h2>",
        *_plots(reports, labels, images),
        "<h2>Inputs</h2>",
        html_parts.table(("input", *labels), inputs,
                         text_columns=(0, 1, 2)),
        "<h2>All figures</h2>",
        *_raw_table(table),
    ]
    return html_parts.page(
        f"Scheduler simulation: {labels[0]} vs {labels[1]}", parts)
