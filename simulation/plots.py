"""The plots of a simulation report, one function per plot.

Each function takes the report dict (or, for comparisons, two reports
and their labels) and returns a ``matplotlib.figure.Figure``; ``render``
makes PNG bytes of it through the Agg canvas, never through pyplot, so
that drawing needs no display, leaves no global state and works from
threads. ``PLOTTERS`` and ``COMPARE_PLOTTERS`` map file stems to them.
"""

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

_FIGSIZE = (7, 3.5)
_DPI = 100
_RUN_STYLES = ("-", "--")
UNIT_SUFFIX = {"s": " s", "ms": " ms", "per_s": "/s"}


def get(tree, *path):
    """tree[path[0]][path[1]]..., or None where a step is missing."""
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return None
        tree = tree[key]
    return tree


def fmt(value, unit="count", signed=False):
    """A value for people: fractions as %, floats to a sensible width.
    ``signed``: a difference, with its sign; a difference of two shares
    is in percentage points, not %."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    sign = "+" if signed else ""
    if unit == "fraction":
        return f"{value * 100:{sign}.1f}" + (" pts" if signed else "%")
    if isinstance(value, float):
        small = 0 < abs(value) < 1
        text = f"{value:{sign}.3g}" if small else f"{value:{sign}.2f}"
    else:
        text = f"{value:+d}" if signed else str(value)
    return text + UNIT_SUFFIX.get(unit, "")


# -- plots: shared helpers -------------------------------------------------


def _figure():
    return Figure(figsize=_FIGSIZE, dpi=_DPI, layout="constrained")


def render(fig):
    """PNG bytes of fig, through the Agg canvas (no pyplot)."""
    buffer = io.BytesIO()
    FigureCanvasAgg(fig).print_png(buffer)
    return buffer.getvalue()


def _note(ax, text):
    """Say on the axes why there is nothing to draw."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center",
            va="center", color="0.4")


def _legend(*axes, outside=False):
    """One legend for axes that may share a plot, if anything is named.

    outside puts it right of the plot, for lines that span the whole
    area and that a legend inside would hide.
    """
    handles, labels = [], []
    for ax in axes:
        h, labs = ax.get_legend_handles_labels()
        handles += h
        labels += labs
    if not handles:
        return
    where = ({"loc": "center left", "bbox_to_anchor": (1.01, 0.5)}
             if outside else {"loc": "best"})
    axes[0].legend(handles, labels, fontsize="small", **where)


def _no_samples(ax, text):
    """An empty plot: say why, and drop x ticks that would mean nothing."""
    _note(ax, text)
    ax.set_xticks([])


def _latency_label(ax):
    log = ax.get_xscale() == "log"
    return f"decision latency (ms{', log scale' if log else ''})"


def _uses_time(*series):
    """Plot against simulated time unless no run advanced the clock."""
    times = [s["time_s"] for s in series if s["time_s"]]
    return bool(times) and all(any(t != 0 for t in ts) for ts in times)


def _x(series, use_time):
    return series["time_s"] if use_time else series["event"]


def _x_label(use_time):
    return "simulated time (s)" if use_time else "event"


def _failure_x(first, use_time):
    if first is None:
        return None
    return first["time_s"] if use_time else first["event"]


def keys(reports, *path):
    """Keys of the dict at path, in order, across all reports."""
    keys = {}
    for report in reports:
        keys.update(dict.fromkeys(get(report, *path) or {}))
    return list(keys)


def _utilisation_axes(ax, use_time):
    """Axes, title and legend of a utilisation-over-time plot (one run's
    or a comparison's)."""
    _percent_axis(ax)
    ax.set_title("Utilisation per resource class")
    ax.set_xlabel(_x_label(use_time))
    ax.set_ylabel("used (% of capacity)")
    _legend(ax, outside=True)


def _percent_axis(ax):
    # A little headroom so a line at 100% is not cut in half.
    ax.set_ylim(0, 102)
    ax.set_yticks(range(0, 101, 20))


def _valid_histogram(hist):
    edges, counts = hist.get("edges") or [], hist.get("counts") or []
    return bool(counts) and len(edges) == len(counts) + 1


def _log_scale(ax, *edge_lists):
    # A log axis cannot show a zero edge; fall back to linear then.
    if all(e > 0 for edges in edge_lists for e in edges):
        ax.set_xscale("log")
        # 0.1, 1, 10 read better than 10^-1, 10^0, 10^1 for milliseconds.
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _rc_panels(rcs):
    """A figure with one panel per resource class, three to a row.

    Resource classes fill hosts at different rates, so each gets its own
    panel rather than bars hiding one another.
    """
    cols = min(max(len(rcs), 1), 3)
    rows = -(-max(len(rcs), 1) // cols)
    height = _FIGSIZE[1] + 2.5 * (rows - 1)
    fig = Figure(figsize=(_FIGSIZE[0], height), dpi=_DPI,
                 layout="constrained")
    axes = fig.subplots(rows, cols, sharex=True, sharey=True,
                        squeeze=False).ravel()
    for ax in axes[len(rcs):]:
        ax.set_visible(False)
    if not rcs:
        axes[0].set_visible(True)
        _note(axes[0], "no host fill recorded")
    return fig, axes


def _host_fill_labels(fig, axes, rcs, ylabel):
    for ax, rc in zip(axes, rcs, strict=False):
        ax.set_title(rc, fontsize="medium")
    axes[0].set_xlim(0, 100)
    axes[0].set_ylim(bottom=0)
    fig.suptitle("How full the hosts are at the end")
    fig.supxlabel("host fill (% of the host's capacity used)",
                  fontsize="medium")
    fig.supylabel(ylabel, fontsize="medium")
    _legend(axes[0])


# -- plots of one report ---------------------------------------------------


def _plot_utilisation(report):
    fig = _figure()
    ax = fig.add_subplot()
    series = report["series"]
    use_time = _uses_time(series)
    utilisation = series["utilisation"]
    if series["event"]:
        for i, rc in enumerate(utilisation):
            ax.plot(_x(series, use_time),
                    [v * 100 for v in utilisation[rc]], color=f"C{i}",
                    label=rc)
    else:
        _no_samples(ax, "no samples: the run had no events")
    failure = _failure_x(report["figures"]["first_failure"], use_time)
    if failure is not None:
        ax.axvline(failure, color="0.2", linestyle=":",
                   label="first NoValidHost")
    _utilisation_axes(ax, use_time)
    return fig


def _plot_failures(report):
    fig = _figure()
    ax = fig.add_subplot()
    right = ax.twinx()
    series = report["series"]
    use_time = _uses_time(series)
    x = _x(series, use_time)
    if x:
        ax.plot(x, series["no_valid_host"], color="C3",
                label="NoValidHost")
        right.plot(x, series["placed"], color="C0", label="placed")
        right.plot(x, series["live"], color="C0", linestyle="--",
                   label="live instances")
    else:
        _no_samples(ax, "no samples: the run had no events")
    failure = _failure_x(report["figures"]["first_failure"], use_time)
    if failure is not None:
        ax.axvline(failure, color="0.2", linestyle=":",
                   label="first NoValidHost")
    _finish_failures(ax, right, use_time, "instances")
    return fig


def _finish_failures(ax, right, use_time, right_label):
    """Axes, titles and legend of a failures plot (one run or two)."""
    for axis in (ax, right):
        axis.set_ylim(bottom=0)
        axis.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("NoValidHost and placements over the run (cumulative)")
    ax.set_xlabel(_x_label(use_time))
    ax.set_ylabel("NoValidHost (requests)")
    right.set_ylabel(right_label)
    _legend(ax, right)


def _plot_host_fill(report):
    rcs = [rc for rc, hist in report["host_fill"].items()
           if _valid_histogram(hist)]
    fig, axes = _rc_panels(rcs)
    for ax, rc in zip(axes, rcs, strict=False):
        hist = report["host_fill"][rc]
        edges = [e * 100 for e in hist["edges"]]
        widths = [hi - lo for lo, hi in zip(edges, edges[1:], strict=False)]
        ax.bar(edges[:-1], hist["counts"], width=widths, align="edge",
               color="C0", edgecolor="white", linewidth=0.5)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    _host_fill_labels(fig, axes, rcs, "hosts")
    return fig


def _free_split(figures, rc):
    """(usable, stranded) free capacity of rc at the end, in % of its
    capacity."""
    entry = figures["stranded"][rc]
    capacity = entry.get("capacity") or 0
    if not capacity:
        return 0.0, 0.0
    stranded_pct = entry["stranded"] / capacity * 100
    free_pct = entry["free"] / capacity * 100
    return max(free_pct - stranded_pct, 0.0), stranded_pct


def _plot_stranded(report):
    fig = _figure()
    ax = fig.add_subplot()
    figures = report["figures"]
    rcs = list(figures["stranded"])
    if rcs:
        usable, stranded = zip(
            *(_free_split(figures, rc) for rc in rcs), strict=True)
        ax.bar(rcs, usable, color="C2", label="free, usable")
        ax.bar(rcs, stranded, bottom=usable, color="C1",
               label="free, stranded")
    else:
        _note(ax, "no stranded capacity recorded")
    ax.set_ylim(bottom=0)
    ax.set_title("Free capacity at the end: usable vs stranded")
    ax.set_xlabel("resource class")
    ax.set_ylabel("free (% of capacity)")
    _legend(ax)
    return fig


def _quantile_lines(ax, decision, color, suffix=""):
    if not decision["count"]:
        return
    for key, style in (("p50", "--"), ("p99", ":")):
        if decision[key] > 0:
            ax.axvline(decision[key], color=color, linestyle=style,
                       label=f"{key} {fmt(decision[key], 'ms')}{suffix}")


def _plot_latency(report):
    fig = _figure()
    ax = fig.add_subplot()
    hist = report["latency_ms"]
    if _valid_histogram(hist) and sum(hist["counts"]):
        ax.stairs(hist["counts"], hist["edges"], fill=True, color="C0",
                  alpha=0.6, label="decisions")
        _log_scale(ax, hist["edges"])
        _quantile_lines(ax, report["timing"]["decision_ms"], "C3")
    else:
        _no_samples(ax, "no scheduling decisions")
    _finish_latency(ax, "decisions")
    return fig


def _finish_latency(ax, ylabel):
    """Axes, title and legend of a latency plot (one run or two)."""
    ax.set_ylim(bottom=0)
    ax.set_title("Scheduling decision latency")
    ax.set_xlabel(_latency_label(ax))
    ax.set_ylabel(ylabel)
    _legend(ax)


def _plot_causes(report):
    """NoValidHost per flavor, each bar stacked by cause."""
    fig = _figure()
    ax = fig.add_subplot()
    figures = report["figures"]
    by_flavor = figures.get("no_valid_host_by_flavor") or {}
    flavors = [name for name, entry in by_flavor.items()
               if entry["no_valid_host"]]
    bottom = [0] * len(flavors)
    for i, cause in enumerate(figures.get("no_valid_host_by_cause") or {}):
        counts = [by_flavor[f]["causes"].get(cause, 0) for f in flavors]
        ax.bar(flavors, counts, bottom=bottom, color=f"C{i}", label=cause)
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    if not flavors:
        _note(ax, "no NoValidHost")
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("NoValidHost per flavor, by cause")
    ax.set_xlabel("flavor")
    ax.set_ylabel("NoValidHost (requests)")
    _legend(ax, outside=True)
    return fig


def _plot_groups(report):
    """Utilisation at the end of each zone, aggregate and cell, a bar
    per resource class."""
    groups = report["figures"].get("groups") or {}
    order = {"zone": 0, "aggregate": 1, "cell": 2}
    labels = sorted(groups, key=lambda label: (
        order.get(groups[label].get("kind"), 3), label))
    rcs = list(dict.fromkeys(rc for label in labels
                             for rc in groups[label]["utilisation_end"]))
    height = _FIGSIZE[1] + 0.25 * max(len(labels) - 6, 0)
    fig = Figure(figsize=(_FIGSIZE[0], height), dpi=_DPI,
                 layout="constrained")
    ax = fig.add_subplot()
    bar = 0.8 / max(len(rcs), 1)
    for i, rc in enumerate(rcs):
        ends = [groups[label]["utilisation_end"].get(rc, 0) * 100
                for label in labels]
        ax.barh([y + i * bar for y in range(len(labels))], ends,
                height=bar, color=f"C{i}", label=rc)
    if not labels:
        _note(ax, "no zones, aggregates or cells")
    ax.set_yticks([y + bar * (len(rcs) - 1) / 2
                   for y in range(len(labels))], labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 102)
    ax.set_title("Utilisation at the end per zone, aggregate and cell")
    ax.set_xlabel("used (% of capacity)")
    _legend(ax, outside=True)
    return fig


PLOTTERS = {
    "utilisation": _plot_utilisation,
    "failures": _plot_failures,
    "host_fill": _plot_host_fill,
    "stranded": _plot_stranded,
    "latency": _plot_latency,
    "causes": _plot_causes,
    "groups": _plot_groups,
}



# -- plots of two reports --------------------------------------------------


def _compare_utilisation(reports, labels):
    fig = _figure()
    ax = fig.add_subplot()
    serieses = [r["series"] for r in reports]
    use_time = _uses_time(*serieses)
    rcs = keys(reports, "series", "utilisation")
    for report, style in zip(reports, _RUN_STYLES, strict=True):
        series = report["series"]
        for i, rc in enumerate(rcs):
            values = series["utilisation"].get(rc)
            if values and series["event"]:
                ax.plot(_x(series, use_time), [v * 100 for v in values],
                        color=f"C{i}", linestyle=style)
        failure = _failure_x(report["figures"]["first_failure"], use_time)
        if failure is not None:
            ax.axvline(failure, color="0.2", linestyle=style, linewidth=0.8)
    # Colour names the resource class and line style the run, so the
    # legend lists each once rather than every pair.
    for i, rc in enumerate(rcs):
        ax.plot([], [], color=f"C{i}", label=rc)
    for label, style in zip(labels, _RUN_STYLES, strict=True):
        ax.plot([], [], color="0.2", linestyle=style, label=label)
    if not any(s["event"] for s in serieses):
        _no_samples(ax, "no samples: neither run had events")
    _utilisation_axes(ax, use_time)
    return fig


def _compare_failures(reports, labels):
    fig = _figure()
    ax = fig.add_subplot()
    right = ax.twinx()
    serieses = [r["series"] for r in reports]
    use_time = _uses_time(*serieses)
    for series, label, style in zip(serieses, labels, _RUN_STYLES,
                                    strict=True):
        x = _x(series, use_time)
        if not x:
            continue
        ax.plot(x, series["no_valid_host"], color="C3", linestyle=style,
                label=f"NoValidHost ({label})")
        right.plot(x, series["placed"], color="C0", linestyle=style,
                   label=f"placed ({label})")
    if not any(s["event"] for s in serieses):
        _no_samples(ax, "no samples: neither run had events")
    _finish_failures(ax, right, use_time, "placed instances")
    return fig


def share(counts):
    """Counts as % of their total, so runs of different size compare."""
    total = sum(counts)
    return [c / total * 100 for c in counts] if total else list(counts)


def _compare_latency(reports, labels):
    fig = _figure()
    ax = fig.add_subplot()
    drawn = []
    for i, (report, label) in enumerate(zip(reports, labels,
                                                strict=True)):
        hist = report["latency_ms"]
        if not (_valid_histogram(hist) and sum(hist["counts"])):
            continue
        ax.stairs(share(hist["counts"]), hist["edges"], color=f"C{i}",
                  linewidth=1.5, label=label)
        _quantile_lines(ax, report["timing"]["decision_ms"], f"C{i}",
                        f" ({label})")
        drawn.append(hist["edges"])
    if drawn:
        _log_scale(ax, *drawn)
    else:
        _no_samples(ax, "no scheduling decisions in either run")
    _finish_latency(ax, "decisions (% of the run's)")
    return fig


def _compare_host_fill(reports, labels):
    rcs = [rc for rc in keys(reports, "host_fill")
           if any(_valid_histogram(r["host_fill"].get(rc) or {})
                  for r in reports)]
    fig, axes = _rc_panels(rcs)
    for ax, rc in zip(axes, rcs, strict=False):
        for i, (report, label) in enumerate(zip(reports, labels,
                                                strict=True)):
            hist = report["host_fill"].get(rc) or {}
            if _valid_histogram(hist):
                ax.stairs(share(hist["counts"]),
                          [e * 100 for e in hist["edges"]], color=f"C{i}",
                          linestyle=_RUN_STYLES[i], linewidth=1.5,
                          label=label)
    _host_fill_labels(fig, axes, rcs, "hosts (% of the cloud's)")
    return fig


COMPARE_PLOTTERS = {
    "utilisation": _compare_utilisation,
    "failures": _compare_failures,
    "latency": _compare_latency,
    "host_fill": _compare_host_fill,
}



