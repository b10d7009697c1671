"""Reports of an offline scheduler simulation.

``gantt-simulate run`` produces a report dict (format 1: ``inputs``,
``figures``, ``timing``, ``series``, ``host_fill`` and ``latency_ms``).
This module turns one into a directory a person can read
(``report.json``, one PNG per entry of ``PLOTS`` and a self-contained
``report.html``) and into a short terminal summary, and it compares two
runs (``compare.json``, ``compare.html`` and overlaid PNGs).

The plots themselves are drawn by simulation.plots (PNG) and
simulation.interactive (plotly); compare.html is simulation.compare_page,
its verdicts simulation.verdict.
"""

import json
import os

from simulation import compare_page, html_parts, interactive, plots, verdict
from simulation.html_parts import image as _image
from simulation.html_parts import page as _page
from simulation.html_parts import table as _table
from simulation.plots import fmt as _fmt
from simulation.plots import get as _get
from simulation.plots import keys as _keys

FORMAT = 1
# The zone key of the creates that name none (runner.FailureCounts).
_ANY_ZONE = "(no zone asked)"
PLOTS = ("utilisation", "failures", "host_fill", "stranded", "latency",
         "causes", "groups")
COMPARE_PLOTS = ("utilisation", "failures", "latency", "host_fill")

_SECTIONS = ("inputs", "figures", "timing", "series", "host_fill",
             "latency_ms")
_COUNTS = ("creates", "deletes", "placed", "no_valid_host",
           "claim_attempts", "retries", "conflicts", "live_instances_end")
# Two runs share colours per resource class; the line style tells them
# apart.


# -- loading and checking --------------------------------------------------


def load(path):
    """Read a report.json written by write(); ValueError if it is not."""
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(
            f"{path}: not a simulation report (not JSON: {exc})") from exc
    _check(report, path)
    return report


def _check(report, source):
    """Refuse anything that is not a format-1 report, naming source."""
    if not isinstance(report, dict):
        raise ValueError(
            f"{source}: not a simulation report (not a JSON object)")
    if "format" not in report:
        raise ValueError(
            f"{source}: not a simulation report (no 'format' key)")
    if report["format"] != FORMAT:
        raise ValueError(
            f"{source}: report format {report['format']!r} is not "
            f"supported (expected {FORMAT})")
    missing = [k for k in _SECTIONS if not isinstance(report.get(k), dict)]
    if missing:
        raise ValueError(
            f"{source}: not a simulation report (missing "
            f"{', '.join(missing)})")


def _number(value):
    # bool is an int to Python but never a figure.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


# -- formatting ------------------------------------------------------------


def _fmt_relative(value):
    return "-" if value is None else f"{value * 100:+.1f}%"


def _fmt_change(row):
    """The "change" column: a share moves by points (80% -> 90% is
    +10.0 pts), anything else by its relative change (+12.5%)."""
    if row["unit"] == "fraction":
        return _fmt(row["diff"], "fraction", signed=True)
    return _fmt_relative(row["relative"])


def _shares(mapping):
    """'VCPU 80.0%, MEMORY_MB 60.0%' from {rc: fraction}."""
    if not mapping:
        return "none"
    return ", ".join(f"{rc} {_fmt(v, 'fraction')}"
                     for rc, v in mapping.items())


# -- terminal summary ------------------------------------------------------


def summary(report):
    """A dozen plain-text lines on the run's outcome, for a terminal."""
    inputs, fig, timing = (report["inputs"], report["figures"],
                           report["timing"])
    lines = [
        f"Simulation of {inputs['workload']} on {inputs['cloud']}",
        f"  {inputs['events']} events, {inputs['hosts']} hosts, "
        f"{inputs['schedulers']} schedulers, {_seed(inputs['seed'])}",
        f"Placed {fig['placed']} of {fig['creates']} creates "
        f"({fig['deletes']} deletes); NoValidHost {fig['no_valid_host']}",
        f"Claims: {fig['claim_attempts']} attempts, {fig['retries']} "
        f"retries, {fig['conflicts']} conflicts",
        *_compute_lines(fig.get("compute_events")),
        _first_failure_line(fig["first_failure"]),
        *_why_lines(fig),
        f"Utilisation at end: {_shares(fig['utilisation_end'])}",
        f"Utilisation peak: {_shares(fig['utilisation_peak'])}",
        f"Stranded at end (% of capacity): {_stranded_line(fig)}",
        f"Fits at end: {_fits_line(fig['fits_at_end'])}; "
        f"{fig['live_instances_end']} instances live",
        *_where_lines(fig),
        _decision_line(timing["decision_ms"]),
        f"Throughput: {_fmt(timing['events_per_s'])} events/s "
        f"(wall {_fmt(timing['wall_s'], 's')})",
        _scheduler_time_line(timing["scheduler_s"]),
    ]
    return "\n".join(lines)


def _compute_lines(compute):
    """The compute events' counts (reshapes, hosts down and up), when
    the workload had some; then one line per event."""
    if not compute:
        return []
    done = compute["reshape"]
    parts = [f"{done['events']} reshapes ({done['hosts']} hosts into "
             f"{done['children']} children, "
             f"{done['allocations_moved']} allocations moved"
             + (f", {done['skipped']} hosts without the class"
                if done["skipped"] else "")
             + (f", {done['refused']} refused" if done["refused"] else "")
             + ")"]
    for kind in ("host_down", "host_up"):
        entry = compute[kind]
        parts.append(f"{entry['events']} {kind} ({entry['hosts']} hosts)")
    lines = ["Compute events: " + ", ".join(parts)
             + f"; {compute['hosts_down_end']} hosts down at end"]
    for entry in compute["log"]:
        hosts = entry["hosts"]
        what = (f"{entry['class']} into {entry['children']} children, "
                f"{entry['allocations_moved']} allocations moved"
                if entry["action"] == "reshape"
                else f"{entry['hosts_down_after']} hosts down after")
        lines.append(f"  event {entry['event']} (t={_fmt(entry['time_s'])}"
                     f" s) {entry['action']} {_listing(hosts)}: {what}")
    return lines


def _listing(names, most=5):
    names = list(names)
    if not names:
        return "(no host)"
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def _compute_html(fig):
    compute = fig.get("compute_events")
    if not compute:
        return []
    rows = []
    for entry in compute["log"]:
        detail = (f"{entry['class']} into {entry['children']} children; "
                  f"{entry['allocations_moved']} allocations moved"
                  + (f"; refused on {len(entry['refused'])} hosts"
                     if entry.get("refused") else "")
                  if entry["action"] == "reshape"
                  else f"{entry['hosts_down_after']} hosts down after")
        rows.append((entry["event"], _fmt(entry["time_s"], "s"),
                     entry["action"], _listing(entry["hosts"], 20),
                     detail))
    return ["<h2>Compute events</h2>",
            _table(("event", "time", "action", "hosts", "effect"), rows,
                   text_columns=(2, 3, 4))]


def _seed(seed):
    return "no seed" if seed is None else f"seed {seed}"


def _first_failure_line(first):
    if first is None:
        return "First NoValidHost: none (no request failed)"
    return (f"First NoValidHost at event {first['event']} "
            f"(t={_fmt(first['time_s'], 's')}{_what_failed(first)}): "
            f"{_shares(first['utilisation'])}")


def _what_failed(first):
    """', r1.xlarge, cause MEMORY_MB' of a first failure, where the
    report says (older reports do not)."""
    parts = [first[key] for key in ("flavor", "zone") if first.get(key)]
    if first.get("cause"):
        parts.append(f"cause {first['cause']}")
    return "".join(f", {part}" for part in parts)


def _why_lines(fig):
    """NoValidHost by cause and by flavor, when some create failed."""
    causes = fig.get("no_valid_host_by_cause")
    if not causes:
        return []
    flavors = [
        f"{name} {entry['no_valid_host']} of {entry['creates']} "
        f"({_counts(entry['causes'])})"
        for name, entry in _by_failures(fig["no_valid_host_by_flavor"])]
    lines = [f"NoValidHost by cause: {_counts(causes)}",
             f"NoValidHost by flavor: {', '.join(flavors)}"]
    zones = fig.get("no_valid_host_by_zone") or {}
    if set(zones) - {_ANY_ZONE}:
        asked = [f"{zone} {entry['no_valid_host']} of {entry['creates']}"
                 for zone, entry in zones.items()]
        lines.append(f"NoValidHost by zone asked: {', '.join(asked)}")
    return lines


def _by_failures(by_flavor):
    """(flavor, entry) of the flavors that failed, most failures first."""
    failed = [(name, entry) for name, entry in by_flavor.items()
              if entry["no_valid_host"]]
    return sorted(failed, key=lambda kv: (-kv[1]["no_valid_host"], kv[0]))


def _counts(mapping):
    return ", ".join(f"{key} {count}" for key, count in mapping.items())


def _where_lines(fig):
    """One line per zone, aggregate and cell: hosts, utilisation at the
    end (peak where it was higher), live instances, NoValidHost of the
    creates that asked a zone."""
    groups = ordered_groups(fig.get("groups") or {})
    if not groups:
        return []
    width = max(len(label) for label, _ in groups)
    lines = ["Where (utilisation at end, peak if higher; live instances):"]
    for label, group in groups:
        asked = ""
        if group.get("creates"):
            asked = (f"; NoValidHost {group['no_valid_host']} of "
                     f"{group['creates']} asking it")
        lines.append(f"  {label.ljust(width)}  {group['hosts']:>5} hosts  "
                     f"{_group_shares(group)}; "
                     f"{group['live_instances_end']} live{asked}")
    return lines


def _group_shares(group):
    peak = group.get("utilisation_peak") or {}
    parts = []
    for rc, end in group["utilisation_end"].items():
        top = peak.get(rc, end)
        higher = (f" (peak {_fmt(top, 'fraction')})"
                  if round(top, 3) > round(end, 3) else "")
        parts.append(f"{rc} {_fmt(end, 'fraction')}{higher}")
    return ", ".join(parts) or "no capacity"


_GROUP_KINDS = ("zone", "aggregate", "cell")


def ordered_groups(groups):
    """(label, group) in reading order: zones, aggregates, cells, each
    by name (report.json keeps its keys sorted)."""
    def order(item):
        kind = item[1].get("kind")
        rank = (_GROUP_KINDS.index(kind) if kind in _GROUP_KINDS
                else len(_GROUP_KINDS))
        return rank, item[1].get("name", item[0])
    return sorted(groups.items(), key=order)


def _stranded_line(fig):
    stranded = {rc: entry["fraction_of_capacity"]
                for rc, entry in fig["stranded"].items()}
    return _shares(stranded)


def _fits_line(fits):
    if not fits:
        return "no flavors"
    return ", ".join(f"{name} {count}" for name, count in fits.items())


def _decision_line(decision):
    if not decision["count"]:
        return "Decisions: none"
    return (f"Decisions: p50 {_fmt(decision['p50'], 'ms')}, "
            f"p99 {_fmt(decision['p99'], 'ms')}, "
            f"max {_fmt(decision['max'], 'ms')} "
            f"over {decision['count']} decisions")


def _scheduler_time_line(seconds):
    useful, wasted = seconds["useful"], seconds["wasted"]
    total = useful + wasted
    share = f" ({wasted / total * 100:.1f}% of it wasted)" if total else ""
    return (f"Scheduler time: useful {_fmt(useful, 's')}, "
            f"wasted {_fmt(wasted, 's')}{share}")


_CAPTIONS = {
    "utilisation": "Each line is the share of one resource class's "
                   "capacity in use as the run goes on; the dotted "
                   "vertical line marks the first NoValidHost.",
    "failures": "Cumulative NoValidHost answers (left axis) against "
                "placed and live instances (right axis): where the red "
                "line starts to climb (the dotted line), the cloud "
                "stopped taking the workload.",
    "host_fill": "How many hosts end the run at each fill level, one "
                 "panel per resource class: bars on the right are full "
                 "hosts, bars on the left idle ones.",
    "stranded": "Free capacity at the end per resource class, split "
                "into what some flavor of the workload could still use "
                "and what is stranded on hosts where no flavor fits.",
    "latency": "How long scheduling decisions took, on a log scale; "
               "the dashed and dotted lines mark the median (p50) and "
               "the 99th percentile.",
    "groups": "Utilisation of each zone, aggregate and cell over the "
              "run, one resource class at a time (the menu at the top "
              "right picks it); the dotted line marks the first "
              "NoValidHost.",
    "causes": "NoValidHost per flavor, each bar split by cause: the "
              "resource class no reachable host had room for, or the "
              "filter that removed the last hosts.",
}


# -- HTML ------------------------------------------------------------------

_INPUT_KEYS = ("cloud", "workload", "config", "seed", "schedulers",
               "hosts", "events")


def _inputs_rows(inputs):
    return [(key, _fmt(inputs.get(key))) for key in _INPUT_KEYS]


def _figures_rows(fig):
    first = fig["first_failure"]
    rows = [(key, fig[key]) for key in _COUNTS]
    rows.append(("first NoValidHost (event)",
                 None if first is None else first["event"]))
    rows.append(("first NoValidHost (time)",
                 None if first is None else _fmt(first["time_s"], "s")))
    return rows


def _utilisation_rows(fig):
    first = (fig["first_failure"] or {}).get("utilisation", {})
    rcs = dict.fromkeys([*fig["utilisation_end"], *fig["utilisation_peak"],
                         *fig["stranded"], *first])
    rows = []
    for rc in rcs:
        stranded = fig["stranded"].get(rc, {}).get("fraction_of_capacity")
        rows.append((rc, *(_fmt(v, "fraction") for v in (
            first.get(rc), fig["utilisation_peak"].get(rc),
            fig["utilisation_end"].get(rc), stranded))))
    return rows


def _timing_rows(timing):
    decision, seconds = timing["decision_ms"], timing["scheduler_s"]
    return [
        ("wall time", _fmt(timing["wall_s"], "s")),
        ("events per second", _fmt(timing["events_per_s"])),
        ("decisions", decision["count"]),
        *((f"decision {key}", _fmt(decision[key], "ms"))
          for key in ("p50", "p99", "mean", "max")),
        ("scheduler time, useful", _fmt(seconds["useful"], "s")),
        ("scheduler time, wasted", _fmt(seconds["wasted"], "s")),
    ]


def _flavor_rows(report):
    flavors = report["inputs"].get("flavors") or {}
    fits = report["figures"]["fits_at_end"]
    rows = []
    for name in dict.fromkeys([*flavors, *fits]):
        spec = flavors.get(name, {})
        other = ", ".join(f"{k}={_plain(v)}" for k, v in spec.items()
                          if k not in ("vcpus", "memory_mb", "root_gb"))
        rows.append((name, spec.get("vcpus"), spec.get("memory_mb"),
                     spec.get("root_gb"), other or "-", fits.get(name)))
    return rows


def _plain(value):
    """Nested flavor settings as JSON, which readers know, not repr."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _report_html(report, images):
    fig = report["figures"]
    parts = [
        "<h2>Inputs</h2>",
        _table(("input", "value"), _inputs_rows(report["inputs"]),
               text_columns=(0, 1)),
        "<h2>Figures</h2>",
        _table(("figure", "value"), _figures_rows(fig)),
        _table(("resource class", "at first NoValidHost", "peak", "end",
                "stranded at end"), _utilisation_rows(fig)),
        *_compute_html(fig),
        *_why_html(fig),
        *_where_html(fig),
        "<h2>Timing</h2>",
        _table(("timing", "value"), _timing_rows(report["timing"])),
        "<h2>Fits at end</h2>",
        _table(("flavor", "vCPUs", "memory (MB)", "root disk (GB)",
                "other", "more that fit at end"), _flavor_rows(report),
               text_columns=(0, 4)),
        "<h2>Plots</h2>",
        *_plots_html(report, images),
    ]
    return _page("Scheduler simulation report", parts)


def _plots_html(report, images):
    """The interactive plots (plotly, inline); without plotly, the
    PNGs."""
    if not interactive.available():
        note = ("<p>Install plotly (gantt's 'simulate' extra) for "
                "interactive plots.</p>")
        return [note] + [_image(images[stem], stem, _CAPTIONS[stem])
                         for stem in PLOTS]
    return [html_parts.figure(div, _CAPTIONS[stem])
            for stem, div in interactive.divs(report).items()]


def _why_html(fig):
    """NoValidHost by cause and by flavor, when some create failed."""
    causes = fig.get("no_valid_host_by_cause")
    if not causes:
        return []
    failed = fig["no_valid_host"] or 1
    by_cause = [(cause, count, _fmt(count / failed, "fraction"))
                for cause, count in causes.items()]
    by_flavor = [
        (name, entry["creates"], entry["no_valid_host"],
         _fmt(entry["no_valid_host"] / entry["creates"], "fraction")
         if entry["creates"] else "-", _counts(entry["causes"]) or "-")
        for name, entry in fig["no_valid_host_by_flavor"].items()]
    parts = [
        "<h2>Why builds failed</h2>",
        "<p>The cause of a NoValidHost is the resource class that no "
        "host the request could reach had room for, or else the filter "
        "that removed the last hosts.</p>",
        _table(("cause", "NoValidHost", "share"), by_cause),
        _table(("flavor", "creates", "NoValidHost", "failed", "causes"),
               by_flavor, text_columns=(0, 4)),
    ]
    zones = fig.get("no_valid_host_by_zone") or {}
    if set(zones) - {_ANY_ZONE}:
        parts.append(_table(
            ("zone asked", "creates", "NoValidHost"),
            [(zone, entry["creates"], entry["no_valid_host"])
             for zone, entry in zones.items()]))
    return parts


def _where_html(fig):
    """Per zone, aggregate and cell: one table of counts, one of
    utilisation per class at the first failure, peak and end."""
    groups = ordered_groups(fig.get("groups") or {})
    if not groups:
        return []
    counts = [(label, group["hosts"], group["live_instances_end"],
               group.get("creates"), group.get("no_valid_host"))
              for label, group in groups]
    rcs = list(dict.fromkeys(rc for _, group in groups
                             for rc in group["utilisation_end"]))
    moments = (("utilisation_at_first_failure", "first NoValidHost"),
               ("utilisation_peak", "peak"), ("utilisation_end", "end"))
    shares = [
        (label, *(_fmt((group.get(key) or {}).get(rc), "fraction")
                  for rc in rcs for key, _ in moments))
        for label, group in groups]
    return [
        "<h2>Where</h2>",
        "<p>Zones, aggregates and cells (an aggregate with the same "
        "hosts as a zone is shown once, as the zone). NoValidHost "
        "counts the creates that asked for the zone.</p>",
        _table(("group", "hosts", "live at end", "creates asking it",
                "NoValidHost"), counts),
        _table(("group", *(f"{rc} {moment}" for rc in rcs
                           for _, moment in moments)), shares),
    ]


# -- writing ---------------------------------------------------------------


def _write_bytes(out_dir, name, data):
    path = os.path.join(out_dir, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _write_text(out_dir, name, text):
    return _write_bytes(out_dir, name, text.encode("utf-8"))


def _write_json(out_dir, name, data, sort_keys):
    text = json.dumps(data, indent=2, sort_keys=sort_keys) + "\n"
    return _write_text(out_dir, name, text)


def write(report, out_dir):
    """Write report.json, one PNG per PLOTS entry and report.html.

    Returns {"json": path, "html": path, "plots": {stem: path}}.
    """
    _check(report, "report")
    os.makedirs(out_dir, exist_ok=True)
    json_path = _write_json(out_dir, "report.json", report, sort_keys=True)
    images = {stem: plots.render(plots.PLOTTERS[stem](report))
              for stem in PLOTS}
    pngs = {stem: _write_bytes(out_dir, f"{stem}.png", png)
            for stem, png in images.items()}
    html_path = _write_text(out_dir, "report.html",
                            _report_html(report, images))
    return {"json": json_path, "html": html_path, "plots": pngs}


# -- comparing -------------------------------------------------------------


def _row_specs(reports):
    """(name, unit, path in the report) of every figure compared."""
    fig = ("figures",)
    for key in _COUNTS:
        yield key, "count", (*fig, key)
    first = (*fig, "first_failure")
    yield "first_failure.event", "count", (*first, "event")
    yield "first_failure.time_s", "s", (*first, "time_s")
    for rc in _keys(reports, *first, "utilisation"):
        yield (f"first_failure.utilisation.{rc}", "fraction",
               (*first, "utilisation", rc))
    for group in ("utilisation_peak", "utilisation_end"):
        for rc in _keys(reports, *fig, group):
            yield f"{group}.{rc}", "fraction", (*fig, group, rc)
    for rc in _keys(reports, *fig, "stranded"):
        yield (f"stranded.{rc}", "fraction",
               (*fig, "stranded", rc, "fraction_of_capacity"))
    for flavor in _keys(reports, *fig, "fits_at_end"):
        yield f"fits_at_end.{flavor}", "count", (*fig, "fits_at_end", flavor)
    yield from _breakdown_specs(reports)
    yield "timing.wall_s", "s", ("timing", "wall_s")
    yield "timing.events_per_s", "per_s", ("timing", "events_per_s")
    yield "timing.decisions", "count", ("timing", "decision_ms", "count")
    for key in ("p50", "p99", "mean", "max"):
        yield f"timing.decision_ms.{key}", "ms", ("timing", "decision_ms",
                                                  key)
    for key in ("useful", "wasted"):
        yield f"timing.scheduler_s.{key}", "s", ("timing", "scheduler_s",
                                                 key)


def _breakdown_specs(reports):
    """The rows of the why and where: NoValidHost per cause and per
    flavor, utilisation at the end per zone, aggregate and cell."""
    fig = ("figures",)
    for cause in _keys(reports, *fig, "no_valid_host_by_cause"):
        yield (f"no_valid_host_by_cause.{cause}", "count",
               (*fig, "no_valid_host_by_cause", cause))
    for flavor in _keys(reports, *fig, "no_valid_host_by_flavor"):
        yield (f"no_valid_host_by_flavor.{flavor}", "count",
               (*fig, "no_valid_host_by_flavor", flavor, "no_valid_host"))
    groups = {}
    for report in reports:
        groups.update(ordered_groups(_get(report, *fig, "groups") or {}))
    for label in groups:
        end = (*fig, "groups", label, "utilisation_end")
        for rc in _keys(reports, *end):
            yield f"groups.{label}.{rc}", "fraction", (*end, rc)


def _tidy(value):
    # Float noise (0.9 - 0.8 = 0.09999999999999998) helps nobody.
    return round(value, 12) if isinstance(value, float) else value


def _difference(a, b, unit):
    diff = relative = None
    if a is not None and b is not None:
        diff = _tidy(b - a)
        # A relative change of a share (1% -> 24.7%: +2370%) misleads:
        # shares compare by their difference in points alone.
        if a != 0 and unit != "fraction":
            relative = _tidy((b - a) / abs(a))
    return {"a": a, "b": b, "diff": diff, "relative": relative,
            "unit": unit}


def difference_table(a, b, labels=("A", "B")):
    """The table compare() writes as compare.json.

    rows maps a figure's name to {a, b, diff (b - a), relative
    ((b - a) / |a|, None when a is 0 and for shares, whose diff is in
    points), unit}; a figure only one run has
    is kept with None on the other side.
    """
    rows = {}
    for name, unit, path in _row_specs((a, b)):
        va, vb = _number(_get(a, *path)), _number(_get(b, *path))
        if va is not None or vb is not None:
            rows[name] = _difference(va, vb, unit)
    return {"format": FORMAT, "labels": list(labels),
            "inputs": {"a": a["inputs"], "b": b["inputs"]}, "rows": rows}


def compare(a, b, out_dir, labels=("A", "B"), links=None):
    """Write compare.json, compare.html and compare_<stem>.png.

    links: the href of each run's report.html, for the page to link.
    Returns {"json", "html", "plots": {stem: path}} like write(), plus
    "table": the difference table with the verdicts (for
    compare_summary()).
    """
    labels = tuple(str(label) for label in labels)
    if len(labels) != 2:
        raise ValueError(f"compare needs two labels, got {labels!r}")
    _check(a, labels[0])
    _check(b, labels[1])
    os.makedirs(out_dir, exist_ok=True)
    table = difference_table(a, b, labels)
    table["verdicts"] = verdict.verdicts(a, b, labels)
    # Rows stay in their reading order rather than sorted by name.
    json_path = _write_json(out_dir, "compare.json", table, sort_keys=False)
    images = {stem: plots.render(
        plots.COMPARE_PLOTTERS[stem]((a, b), labels))
              for stem in COMPARE_PLOTS}
    pngs = {stem: _write_bytes(out_dir, f"compare_{stem}.png", png)
            for stem, png in images.items()}
    html_path = _write_text(out_dir, "compare.html", compare_page.render(
        (a, b), table, images, links=links))
    return {"json": json_path, "html": html_path, "plots": pngs,
            "table": table}


def _verdict_lines(table):
    """The verdicts, when the table has them: one line per question
    and the bottom line."""
    found = table.get("verdicts")
    if not found:
        return []
    labels = table["labels"]
    lines = [verdict.bottom_line(found, labels)]
    for q in verdict.QUESTIONS:
        winner = {"a": labels[0], "b": labels[1]}.get(
            found[q]["winner"], found[q]["winner"])
        lines.append(f"  {verdict.TITLES[q]}: {winner}. "
                     f"{found[q]['text']}")
    return lines + [""]


def compare_summary(table):
    """The difference table as aligned plain text."""
    la, lb = table["labels"]
    header = ("figure", la, lb, f"{lb} - {la}", "change")
    lines = [
        (name, _fmt(row["a"], row["unit"]), _fmt(row["b"], row["unit"]),
         _fmt(row["diff"], row["unit"], signed=True),
         _fmt_change(row))
        for name, row in table["rows"].items()]
    width = [max(len(r[i]) for r in (header, *lines)) for i in range(5)]
    ia, ib = table["inputs"]["a"], table["inputs"]["b"]
    out = [f"{la}: {ia['workload']} on {ia['cloud']}",
           f"{lb}: {ib['workload']} on {ib['cloud']}", "",
           *_verdict_lines(table)]
    for row in (header, *lines):
        cells = [row[0].ljust(width[0])]
        cells += [cell.rjust(w) for cell, w in zip(row[1:], width[1:],
                                                   strict=True)]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)
