"""simulation.verdict: who did better, question by question, and the
compare page's labels."""

import copy

from simulation import compare_page, verdict
from tests.simulation.test_report import make_report

LABELS = ("spread.conf", "pack.conf")


def _packed(report):
    """report placing 8 more but ending with nothing that fits and half
    its vCPUs stranded, as issue 39's pack.conf did."""
    b = copy.deepcopy(report)
    fig = b["figures"]
    fig["placed"] += 8
    fig["no_valid_host"] -= 8
    fig["no_valid_host_by_cause"] = {"VCPU": 2}
    fig["stranded"]["VCPU"]["fraction_of_capacity"] = 0.519
    fig["fits_at_end"] = {"m1.small": 0, "m1.large": 0}
    return b


def test_more_placed_but_worse_packing_says_both():
    a = make_report()
    found = verdict.verdicts(a, _packed(a), LABELS)
    assert [found[q]["winner"] for q in verdict.QUESTIONS] == [
        "b", "b", "a", "a"]
    assert found["placed"]["text"] == (
        "pack.conf placed 148 of 150 creates, 8 more than spread.conf "
        "(140).")
    assert "VCPU 5.0% in spread.conf vs 51.9% in pack.conf" in \
        found["stranded"]["text"]
    # Memory and disk strand the same in both: not listed as a change.
    assert "MEMORY_MB" not in found["stranded"]["text"]
    assert "pack.conf: no flavor fits any more" in found["fits"]["text"]
    assert "m1.small 30 vs 0, m1.large 2 vs 0" in found["fits"]["text"]
    line = verdict.bottom_line(found, LABELS)
    assert line == (
        "Neither run is better on everything: spread.conf is better on "
        "stranded capacity and room left at the end; pack.conf is better "
        "on placements and failures.")


def test_the_same_run_twice_is_the_same_everywhere():
    found = verdict.verdicts(make_report(), make_report(), LABELS)
    assert {v["winner"] for v in found.values()} == {"same"}
    assert found["placed"]["text"] == "Both placed 140 of 150 creates."
    assert verdict.bottom_line(found, LABELS) == (
        "The runs are the same on every question.")


def test_better_on_one_class_and_worse_on_another_is_mixed():
    a, b = make_report(), make_report()
    b["figures"]["stranded"]["VCPU"]["fraction_of_capacity"] = 0.01
    b["figures"]["stranded"]["MEMORY_MB"]["fraction_of_capacity"] = 0.2
    b["figures"]["fits_at_end"]["m1.small"] = 31
    found = verdict.verdicts(a, b, LABELS)
    assert found["stranded"]["winner"] == "mixed"
    assert found["fits"]["winner"] == "b"
    assert verdict.bottom_line(found, LABELS).startswith(
        "Neither run is better on everything: pack.conf is better on "
        "room left at the end; each is better somewhere on stranded "
        "capacity")


def test_a_share_difference_the_page_cannot_show_is_no_difference():
    a, b = make_report(), make_report()
    b["figures"]["stranded"]["VCPU"]["fraction_of_capacity"] = 0.05004
    assert verdict.verdicts(a, b, LABELS)["stranded"]["winner"] == "same"
    b["figures"]["stranded"]["VCPU"]["fraction_of_capacity"] = 0.051
    assert verdict.verdicts(a, b, LABELS)["stranded"]["winner"] == "a"


def test_one_run_better_on_every_question_is_named():
    a = make_report()
    b = copy.deepcopy(a)
    b["figures"]["placed"] = 150
    b["figures"]["no_valid_host"] = 0
    b["figures"]["no_valid_host_by_cause"] = {}
    found = verdict.verdicts(a, b, LABELS)
    assert found["failures"]["text"] == (
        "spread.conf: 10 NoValidHost, the first at event 120; pack.conf: "
        "0 NoValidHost, the first at event 120.")
    assert verdict.bottom_line(found, LABELS) == (
        "pack.conf is the better run: better on placements and failures, "
        "the same on stranded capacity and room left at the end.")


def test_row_names_read_as_words():
    assert compare_page.label("no_valid_host") == "NoValidHost"
    assert compare_page.label("stranded.VCPU") == "VCPU stranded at the end"
    assert compare_page.label("fits_at_end.m1.small") == (
        "more m1.small that fit at the end")
    assert compare_page.label("groups.zone east.MEMORY_MB") == (
        "zone east: MEMORY_MB used at the end")
    assert compare_page.label("timing.decision_ms.p99") == (
        "decision latency, p99")
