"""Which of two runs did better, question by question, from their
report dicts alone.

A comparison of sixty figures hides its answer: a config that places
48 more servers may end with nothing fitting anywhere. So each question
an operator asks (how many were placed; how many failed and why; how
much capacity is stranded; how much more still fits) gets its own
verdict, "a", "b", "same" or "mixed" (better on one class or flavor,
worse on another), with the numbers that decide it. Shares are compared
as the page shows them, to a tenth of a point, so that a verdict never
rests on a difference the reader cannot see.
"""

from simulation.plots import fmt

QUESTIONS = ("placed", "failures", "stranded", "fits")
TITLES = {"placed": "Placed", "failures": "Failures and why",
          "stranded": "Stranded capacity at the end",
          "fits": "Fits at the end"}
# The questions as the bottom line names them.
_SHORT = {"placed": "placements", "failures": "failures",
          "stranded": "stranded capacity", "fits": "room left at the end"}


def _shown(share):
    """A share as the page prints it, in tenths of a point."""
    return round((share or 0.0) * 1000)


def _by_count(a, b, fewer_is_better=False):
    if a == b:
        return "same"
    return "a" if (a < b) == fewer_is_better else "b"


def _dominance(pairs, fewer_is_better=False):
    """Winner over several (a, b) pairs: a run better on some and worse
    on none wins; better on some and worse on others is "mixed"."""
    wins = {_by_count(a, b, fewer_is_better) for a, b in pairs} - {"same"}
    if not wins:
        return "same"
    return wins.pop() if len(wins) == 1 else "mixed"


def _placed(a, b, labels):
    fa, fb = a["figures"], b["figures"]
    winner = _by_count(fa["placed"], fb["placed"])
    if winner == "same":
        text = f"Both placed {fa['placed']} of {fa['creates']} creates."
    else:
        hi, lo = (fa, fb) if winner == "a" else (fb, fa)
        name, other = _names(labels, winner)
        text = (f"{name} placed {hi['placed']} of {hi['creates']} creates, "
                f"{hi['placed'] - lo['placed']} more than {other} "
                f"({lo['placed']}).")
    return {"winner": winner, "a": fa["placed"], "b": fb["placed"],
            "creates": [fa["creates"], fb["creates"]], "text": text}


def _causes(fig):
    causes = fig.get("no_valid_host_by_cause") or {}
    return ", ".join(f"{cause} {n}" for cause, n in
                     sorted(causes.items(), key=lambda kv: -kv[1]))


def _failures(a, b, labels):
    fa, fb = a["figures"], b["figures"]
    winner = _by_count(fa["no_valid_host"], fb["no_valid_host"],
                       fewer_is_better=True)
    parts = []
    for label, fig in zip(labels, (fa, fb), strict=True):
        why = _causes(fig)
        first = fig.get("first_failure")
        when = (f", the first at event {first['event']}" if first
                else "")
        parts.append(f"{label}: {fig['no_valid_host']} NoValidHost"
                     + (f" ({why})" if why else "") + when)
    return {"winner": winner, "a": fa["no_valid_host"],
            "b": fb["no_valid_host"],
            "causes": [fa.get("no_valid_host_by_cause") or {},
                       fb.get("no_valid_host_by_cause") or {}],
            "text": "; ".join(parts) + "."}


def _stranded_shares(fig):
    return {rc: entry.get("fraction_of_capacity") or 0.0
            for rc, entry in fig["stranded"].items()}


def _stranded(a, b, labels):
    sa, sb = _stranded_shares(a["figures"]), _stranded_shares(b["figures"])
    rcs = list(dict.fromkeys([*sa, *sb]))
    winner = _dominance([(_shown(sa.get(rc)), _shown(sb.get(rc)))
                         for rc in rcs], fewer_is_better=True)
    differ = [rc for rc in rcs
              if _shown(sa.get(rc)) != _shown(sb.get(rc))]
    if not differ:
        text = ("Both strand the same share of every class: "
                f"{_shares(sa, rcs)}.")
    else:
        text = "Stranded at the end (% of capacity): " + "; ".join(
            f"{rc} {fmt(sa.get(rc, 0.0), 'fraction')} in {labels[0]} vs "
            f"{fmt(sb.get(rc, 0.0), 'fraction')} in {labels[1]}"
            for rc in differ) + "."
    return {"winner": winner, "a": sa, "b": sb, "text": text}


def _shares(shares, rcs):
    return ", ".join(f"{rc} {fmt(shares.get(rc, 0.0), 'fraction')}"
                     for rc in rcs) or "no classes"


def _fits(a, b, labels):
    fa = a["figures"]["fits_at_end"]
    fb = b["figures"]["fits_at_end"]
    flavors = list(dict.fromkeys([*fa, *fb]))
    winner = _dominance([(fa.get(f, 0), fb.get(f, 0)) for f in flavors])
    full = [label for label, fits in zip(labels, (fa, fb), strict=True)
            if flavors and not any(fits.get(f, 0) for f in flavors)]
    notes = (["No flavor fits any more in either run"]
             if len(full) == 2 else
             [f"{label}: no flavor fits any more" for label in full])
    per_flavor = ", ".join(f"{f} {fa.get(f, 0)} vs {fb.get(f, 0)}"
                           for f in flavors) or "no flavors"
    text = (f"More instances that fit ({labels[0]} vs {labels[1]}): "
            f"{per_flavor}.")
    if notes:
        text += " " + "; ".join(notes) + "."
    return {"winner": winner, "a": fa, "b": fb, "text": text}


_JUDGES = {"placed": _placed, "failures": _failures,
           "stranded": _stranded, "fits": _fits}


def _names(labels, winner):
    """(winner's label, the other's)."""
    return (labels[0], labels[1]) if winner == "a" else (labels[1],
                                                          labels[0])


def verdicts(a, b, labels=("A", "B")):
    """{question: {"winner", "a", "b", "text", ...}} for QUESTIONS."""
    return {q: _JUDGES[q](a, b, labels) for q in QUESTIONS}


def bottom_line(found, labels):
    """One sentence over every question: who is better where."""
    by = {"a": [], "b": [], "same": [], "mixed": []}
    for question in QUESTIONS:
        by[found[question]["winner"]].append(_SHORT[question])
    wins = [key for key in ("a", "b", "mixed") if by[key]]
    if wins in (["a"], ["b"]):
        winner = labels[0] if wins == ["a"] else labels[1]
        line = (f"{winner} is the better run: better on "
                f"{_listed(by[wins[0]])}")
        if by["same"]:
            line += f", the same on {_listed(by['same'])}"
        return line + "."
    if not wins:
        return "The runs are the same on every question."
    parts = [f"{label} is better on {_listed(by[key])}"
             for key, label in (("a", labels[0]), ("b", labels[1]))
             if by[key]]
    if by["mixed"]:
        parts.append(f"each is better somewhere on {_listed(by['mixed'])}")
    if by["same"]:
        parts.append(f"they are the same on {_listed(by['same'])}")
    line = "Neither run is better on everything: " + "; ".join(parts)
    return line + "."


def _listed(items):
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]
