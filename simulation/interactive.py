"""The interactive plots of report.html, drawn with plotly.

Each function takes a report dict and returns a plotly Figure; ``divs``
turns them into HTML fragments for one self-contained page: plotly.js
goes inline once, in the first fragment, so the page needs no network.
The PNGs of simulation.plots stay the plots of the terminal and the
docs; these add what a picture cannot: hover to read a value at an
event, zoom into the moment builds started to fail, hide a line.

plotly comes with the "simulate" extra; ``available()`` says whether it
is installed (report.html falls back to the PNGs without it).
"""

import importlib.util
import math

from simulation.plots import fmt, get

# The colours of simulation.plots (matplotlib's C0..C9), so that a
# class has the same colour in the PNG and on the page.
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
            "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_HEIGHT = 420


def available():
    return importlib.util.find_spec("plotly") is not None


def _go():
    import plotly.graph_objects as go
    return go


def _colour(i):
    return _COLOURS[i % len(_COLOURS)]


def _uses_time(series):
    return any(t != 0 for t in series["time_s"])


def _x(series):
    """(x values, axis title): simulated time unless it never moved."""
    if _uses_time(series):
        return series["time_s"], "simulated time (s)"
    return series["event"], "event"


def _percent(values):
    # Hundredths of a point: what a reader can see, and a page a
    # quarter the size of full floats.
    return [round(v * 100, 2) for v in values]


def _layout(fig, title, x_title, y_title, **more):
    settings = {
        "title": title, "height": _HEIGHT, "hovermode": "x unified",
        "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
        "legend": {"orientation": "h", "y": -0.2},
        "xaxis_title": x_title, "yaxis_title": y_title}
    fig.update_layout(**{**settings, **more})
    return fig


def _mark_first_failure(fig, report):
    """A dotted vertical line at the first NoValidHost, saying what
    failed and why."""
    first = report["figures"].get("first_failure")
    series = report["series"]
    if first is None or not series["event"]:
        return
    at = first["time_s"] if _uses_time(series) else first["event"]
    what = ", ".join(str(first[key]) for key in ("flavor", "cause")
                     if first.get(key))
    text = f"first NoValidHost (event {first['event']}"
    text += f": {what})" if what else ")"
    fig.add_vline(x=at, line_dash="dot", line_color="#333",
                  annotation_text=text, annotation_position="top left")


# -- the plots ---------------------------------------------------------------


def utilisation(report):
    go = _go()
    series = report["series"]
    x, x_title = _x(series)
    fig = go.Figure()
    for i, (rc, values) in enumerate(series["utilisation"].items()):
        fig.add_trace(go.Scatter(
            x=x, y=_percent(values), name=rc, mode="lines",
            line={"color": _colour(i)},
            hovertemplate="%{y:.1f}%"))
    _mark_first_failure(fig, report)
    return _layout(fig, "Utilisation per resource class", x_title,
                   "used (% of capacity)", yaxis_range=[0, 102])


def groups(report):
    """Utilisation over time of each zone, aggregate and cell, one
    resource class at a time (a menu picks the class)."""
    go = _go()
    series = report["series"]
    per_group = series.get("groups") or {}
    labels = [label for label in _ordered(report) if label in per_group]
    rcs = list(dict.fromkeys(rc for label in labels
                             for rc in per_group[label]))
    x, x_title = _x(series)
    fig = go.Figure()
    for k, rc in enumerate(rcs):
        for i, label in enumerate(labels):
            values = per_group[label].get(rc)
            if values:
                fig.add_trace(go.Scatter(
                    x=x, y=_percent(values), name=label, mode="lines",
                    line={"color": _colour(i)}, visible=k == 0,
                    meta=rc, hovertemplate="%{y:.1f}%"))
    buttons = [{"label": rc, "method": "update",
                "args": [{"visible": [t.meta == rc for t in fig.data]},
                         {"title": _groups_title(rc)}]} for rc in rcs]
    _mark_first_failure(fig, report)
    more = {"updatemenus": [{"buttons": buttons, "x": 1.0, "y": 1.15,
                             "xanchor": "right"}]} if len(rcs) > 1 else {}
    return _layout(fig, _groups_title(rcs[0] if rcs else None), x_title,
                   "used (% of capacity)", yaxis_range=[0, 102], **more)


def _groups_title(rc):
    return f"Utilisation per zone, aggregate and cell: {rc or 'none'}"


def _ordered(report):
    # report.py's reading order (zones, aggregates, cells), without
    # importing report (which imports this module).
    order = {"zone": 0, "aggregate": 1, "cell": 2}
    groups = report["figures"].get("groups") or {}
    return sorted(groups, key=lambda label: (
        order.get(groups[label].get("kind"), 3), label))


def failures(report):
    go = _go()
    series = report["series"]
    x, x_title = _x(series)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=series["no_valid_host"],
                             name="NoValidHost", mode="lines",
                             line={"color": _colour(3)}))
    for key, name, dash in (("placed", "placed", "solid"),
                            ("live", "live instances", "dash")):
        fig.add_trace(go.Scatter(x=x, y=series[key], name=name,
                                 mode="lines", yaxis="y2",
                                 line={"color": _colour(0), "dash": dash}))
    _mark_first_failure(fig, report)
    return _layout(
        fig, "NoValidHost and placements over the run (cumulative)",
        x_title, "NoValidHost (requests)",
        yaxis2={"title": "instances", "overlaying": "y", "side": "right",
                "rangemode": "tozero"},
        yaxis_rangemode="tozero")


def causes(report):
    """NoValidHost per flavor, stacked by cause."""
    go = _go()
    by_flavor = report["figures"].get("no_valid_host_by_flavor") or {}
    flavors = [name for name, entry in by_flavor.items()
               if entry["no_valid_host"]]
    causes_ = list(report["figures"].get("no_valid_host_by_cause") or {})
    fig = go.Figure()
    for i, cause in enumerate(causes_):
        fig.add_trace(go.Bar(
            x=flavors, name=cause, marker_color=_colour(i),
            y=[by_flavor[f]["causes"].get(cause, 0) for f in flavors],
            hovertemplate="%{x}: %{y} (" + cause.replace("%", "%%")
                          + ")<extra></extra>"))
    title = "NoValidHost per flavor, by cause"
    if not flavors:
        title += ": none"
    return _layout(fig, title, "flavor", "NoValidHost (requests)",
                   barmode="stack", hovermode="closest")


def fill_panels(rcs, title):
    """A figure with one subplot per resource class, three to a row,
    sharing both axes: classes fill hosts at different rates, and bars
    of one class would hide another's on a shared panel."""
    from plotly.subplots import make_subplots
    cols = min(max(len(rcs), 1), 3)
    rows = -(-max(len(rcs), 1) // cols)
    fig = make_subplots(rows=rows, cols=cols, shared_xaxes="all",
                        shared_yaxes="all", subplot_titles=rcs,
                        horizontal_spacing=0.06, vertical_spacing=0.15)
    fig.update_xaxes(range=[0, 100])
    fig.update_yaxes(rangemode="tozero")
    fig.update_layout(title=title, height=_HEIGHT + 220 * (rows - 1),
                      margin={"l": 60, "r": 20, "t": 80, "b": 50},
                      hovermode="closest", showlegend=False)
    fig.add_annotation(text="host fill (% of the host's capacity used)",
                       x=0.5, y=-0.12, xref="paper", yref="paper",
                       showarrow=False)
    return fig, cols


def bins(hist):
    """(centres, widths) in % of a fill histogram's bins, or None when
    it is not one."""
    edges, counts = hist.get("edges") or [], hist.get("counts") or []
    if not counts or len(edges) != len(counts) + 1:
        return None
    pairs = list(zip(edges, edges[1:], strict=False))
    return ([(lo + hi) * 50 for lo, hi in pairs],
            [(hi - lo) * 100 for lo, hi in pairs])


def host_fill(report):
    go = _go()
    rcs = list(report["host_fill"])
    fig, cols = fill_panels(rcs, "How full the hosts are at the end")
    for i, rc in enumerate(rcs):
        hist = report["host_fill"][rc]
        shape = bins(hist)
        if shape is None:
            continue
        fig.add_trace(go.Bar(
            x=shape[0], y=hist["counts"], width=shape[1], name=rc,
            marker_color=_colour(i),
            hovertemplate=f"%{{y}} hosts near %{{x:.0f}}% {rc} used"
                          "<extra></extra>"),
            row=i // cols + 1, col=i % cols + 1)
    fig.update_yaxes(title_text="hosts", col=1)
    return fig


def stranded(report):
    go = _go()
    figures = report["figures"]
    rcs = list(figures["stranded"])
    usable, stuck = [], []
    for rc in rcs:
        entry = figures["stranded"][rc]
        capacity = entry.get("capacity") or 0
        share = 100 / capacity if capacity else 0.0
        stuck.append(entry["stranded"] * share)
        usable.append(max(entry["free"] * share - stuck[-1], 0.0))
    fig = go.Figure([
        go.Bar(x=rcs, y=usable, name="free, usable",
               marker_color=_colour(2), hovertemplate="%{y:.1f}%"),
        go.Bar(x=rcs, y=stuck, name="free, stranded",
               marker_color=_colour(1), hovertemplate="%{y:.1f}%")])
    return _layout(fig, "Free capacity at the end: usable vs stranded",
                   "resource class", "free (% of capacity)",
                   barmode="stack")


def latency(report):
    go = _go()
    hist = report["latency_ms"]
    edges, counts = hist.get("edges") or [], hist.get("counts") or []
    fig = go.Figure()
    if counts and len(edges) == len(counts) + 1:
        # Stairs: each count held across its bin.
        fig.add_trace(go.Scatter(
            x=edges, y=[*counts, counts[-1]], name="decisions",
            mode="lines", line={"shape": "hv", "color": _colour(0)},
            fill="tozeroy", hovertemplate="%{y} decisions from %{x:.3g} ms"))
    log = bool(edges) and all(e > 0 for e in edges)
    mark_quantiles(fig, report["timing"]["decision_ms"], log, _colour(3))
    return _layout(fig, "Scheduling decision latency",
                   f"decision latency (ms{', log scale' if log else ''})",
                   "decisions", xaxis_type="log" if log else "linear",
                   hovermode="closest")


def axis_x(value, log):
    """Where an annotation at data value ``value`` goes. plotly takes a
    shape's x as data but an annotation's x on a log axis as log10 of
    it, so add_vline's own label lands at 10**value (issue 39)."""
    return math.log10(value) if log else value


def mark_quantiles(fig, decision, log, colour, suffix="", row=0):
    """p50 (dashed) and p99 (dotted) as vertical lines, each labelled
    with its value at the top; ``row`` staggers the labels of a second
    run so that they do not overprint the first's."""
    if not decision["count"]:
        return
    for i, (key, dash) in enumerate((("p50", "dash"), ("p99", "dot"))):
        value = decision[key]
        if value <= 0 and log:
            continue
        fig.add_vline(x=value, line_dash=dash, line_color=colour)
        fig.add_annotation(
            x=axis_x(value, log), y=1 - 0.08 * (2 * row + i), xref="x",
            yref="paper", text=f"{key} {fmt(value, 'ms')}{suffix}",
            showarrow=False, xanchor="left", yanchor="top",
            font={"color": colour}, name=f"{key}{suffix}")


PLOTS = {
    "utilisation": utilisation,
    "groups": groups,
    "failures": failures,
    "causes": causes,
    "host_fill": host_fill,
    "stranded": stranded,
    "latency": latency,
}


def divs(report):
    """{stem: HTML fragment} of every plot; the first carries plotly.js
    inline, so the fragments work in this order on one page only."""
    figs = {stem: plot(report) for stem, plot in PLOTS.items()
            if stem != "groups" or get(report, "series", "groups")}
    return to_divs(figs)


def to_divs(figs, prefix="plot"):
    """{stem: HTML fragment} of plotly figures, plotly.js inline once,
    in the first; each div's id is prefix-stem."""
    out = {}
    for stem, fig in figs.items():
        out[stem] = fig.to_html(
            full_html=False, include_plotlyjs=not out,
            div_id=f"{prefix}-{stem}", default_height=f"{_HEIGHT}px",
            config={"displaylogo": False, "responsive": True})
    return out
