"""The interactive plots of compare.html: two runs on each plot.

Colour names a resource class, flavor or cause as in report.html; the
line style (solid, dashed) or the bar's pattern names the run. Counts
that depend on the size of a run (hosts per fill level, decisions per
latency bin) are drawn as shares of the run so that two runs compare.
"""

from simulation import interactive
from simulation.interactive import _colour, _go, _layout, _percent
from simulation.plots import keys, share

_DASHES = ("solid", "dash")
_PATTERNS = ("", "/")


def _x(reports):
    """(x of each run, axis title): time unless neither run moved it."""
    serieses = [r["series"] for r in reports]
    if any(interactive._uses_time(s) for s in serieses):
        return [s["time_s"] for s in serieses], "simulated time (s)"
    return [s["event"] for s in serieses], "event"


def utilisation(reports, labels):
    go = _go()
    xs, x_title = _x(reports)
    rcs = keys(reports, "series", "utilisation")
    fig = go.Figure()
    for run, (report, label) in enumerate(zip(reports, labels,
                                              strict=True)):
        for i, rc in enumerate(rcs):
            values = report["series"]["utilisation"].get(rc)
            if values:
                fig.add_trace(go.Scatter(
                    x=xs[run], y=_percent(values), name=f"{rc} ({label})",
                    mode="lines", hovertemplate="%{y:.1f}%",
                    line={"color": _colour(i), "dash": _DASHES[run]}))
    return _layout(fig, "Utilisation per resource class", x_title,
                   "used (% of capacity)", yaxis_range=[0, 102])


def failures(reports, labels):
    go = _go()
    xs, x_title = _x(reports)
    fig = go.Figure()
    for run, (report, label) in enumerate(zip(reports, labels,
                                              strict=True)):
        series = report["series"]
        fig.add_trace(go.Scatter(
            x=xs[run], y=series["no_valid_host"], mode="lines",
            name=f"NoValidHost ({label})",
            line={"color": _colour(3), "dash": _DASHES[run]}))
        fig.add_trace(go.Scatter(
            x=xs[run], y=series["placed"], mode="lines", yaxis="y2",
            name=f"placed ({label})",
            line={"color": _colour(0), "dash": _DASHES[run]}))
    return _layout(
        fig, "NoValidHost and placements over the run (cumulative)",
        x_title, "NoValidHost (requests)",
        yaxis2={"title": "placed instances", "overlaying": "y",
                "side": "right", "rangemode": "tozero"},
        yaxis_rangemode="tozero")


def _grouped(reports, labels, names, value_of, title, x_title, y_title,
             hover):
    """One bar per name and run, runs side by side."""
    go = _go()
    fig = go.Figure()
    for run, (report, label) in enumerate(zip(reports, labels,
                                              strict=True)):
        fig.add_trace(go.Bar(
            x=names, y=[value_of(report, name) for name in names],
            name=label, marker_color=_colour(run),
            marker_pattern_shape=_PATTERNS[run],
            hovertemplate=f"{label.replace('%', '%%')}: {hover}"
                          "<extra></extra>"))
    return _layout(fig, title, x_title, y_title, barmode="group",
                   hovermode="closest", yaxis_rangemode="tozero")


def causes(reports, labels):
    names = keys(reports, "figures", "no_valid_host_by_cause")
    title = "NoValidHost by cause"
    if not names:
        title += ": none in either run"
    return _grouped(
        reports, labels, names,
        lambda r, cause: (r["figures"].get("no_valid_host_by_cause")
                          or {}).get(cause, 0),
        title, "cause", "NoValidHost (requests)", "%{x} %{y}")


def stranded(reports, labels):
    def share(report, rc):
        entry = report["figures"]["stranded"].get(rc) or {}
        return round((entry.get("fraction_of_capacity") or 0.0) * 100, 2)
    return _grouped(
        reports, labels, keys(reports, "figures", "stranded"), share,
        "Stranded at the end: free capacity no flavor can use",
        "resource class", "stranded (% of capacity)", "%{x} %{y:.1f}%")


def fits(reports, labels):
    return _grouped(
        reports, labels, keys(reports, "figures", "fits_at_end"),
        lambda r, flavor: r["figures"]["fits_at_end"].get(flavor, 0),
        "More instances that fit at the end, per flavor", "flavor",
        "instances", "%{x} %{y}")


def _share(counts):
    # Hundredths of a point, as interactive._percent rounds.
    return [round(v, 2) for v in share(counts)]


def latency(reports, labels):
    go = _go()
    fig = go.Figure()
    edges_all = []
    for run, (report, label) in enumerate(zip(reports, labels,
                                              strict=True)):
        hist = report["latency_ms"]
        edges, counts = hist.get("edges") or [], hist.get("counts") or []
        if not counts or len(edges) != len(counts) + 1:
            continue
        edges_all += edges
        shares = _share(counts)
        fig.add_trace(go.Scatter(
            x=edges, y=[*shares, shares[-1]], name=label, mode="lines",
            line={"shape": "hv", "color": _colour(run)},
            hovertemplate="%{y:.1f}% of decisions from %{x:.3g} ms"))
    log = bool(edges_all) and all(e > 0 for e in edges_all)
    for run, (report, label) in enumerate(zip(reports, labels,
                                              strict=True)):
        interactive.mark_quantiles(fig, report["timing"]["decision_ms"],
                                   log, _colour(run), f" ({label})",
                                   row=run)
    return _layout(fig, "Scheduling decision latency",
                   f"decision latency (ms{', log scale' if log else ''})",
                   "decisions (% of the run's)",
                   xaxis_type="log" if log else "linear",
                   hovermode="closest")


def host_fill(reports, labels):
    go = _go()
    rcs = keys(reports, "host_fill")
    fig, cols = interactive.fill_panels(
        rcs, "How full the hosts are at the end")
    for i, rc in enumerate(rcs):
        for run, (report, label) in enumerate(zip(reports, labels,
                                                  strict=True)):
            hist = report["host_fill"].get(rc) or {}
            shape = interactive.bins(hist)
            if shape is None:
                continue
            fig.add_trace(go.Bar(
                x=shape[0], y=_share(hist["counts"]), width=shape[1],
                name=label, marker_color=_colour(run), opacity=0.6,
                legendgroup=label, showlegend=i == 0,
                hovertemplate=f"{label.replace('%', '%%')}: %{{y:.1f}}% "
                              f"of hosts near %{{x:.0f}}% {rc} used"
                              "<extra></extra>"),
                row=i // cols + 1, col=i % cols + 1)
    fig.update_layout(barmode="overlay", showlegend=True,
                      legend={"orientation": "h", "y": -0.2})
    fig.update_yaxes(title_text="hosts (% of the cloud's)", col=1)
    return fig


PLOTS = {
    "utilisation": utilisation,
    "failures": failures,
    "causes": causes,
    "stranded": stranded,
    "fits": fits,
    "latency": latency,
    "host_fill": host_fill,
}


def divs(reports, labels):
    """{stem: HTML fragment}, plotly.js inline in the first only."""
    return interactive.to_divs(
        {stem: plot(reports, labels) for stem, plot in PLOTS.items()},
        prefix="compare")
