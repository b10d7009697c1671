"""The report's "why and where": NoValidHost by flavor and cause, figures
per zone, aggregate and cell, the first failure, the unknown zone
warning, points in compare and the class that limits capacity.

Every expected figure is worked out by hand from a cloud of one or two
hosts, in the comments next to it.
"""

import json

import pytest
import yaml

from simulation import capacity, cli, runner
from simulation import report as report_mod
from tests.simulation import helpers

# e1 (zone east): 4 vCPUs, 8 GiB. w1 (zone west): 8 vCPUs, 20 GiB.
# Allocation ratios are 1: a flat host's inventories are plain totals.
HOSTS = {"e1": {"VCPU": 4, "MEMORY_MB": 8192, "DISK_GB": 100},
         "w1": {"VCPU": 8, "MEMORY_MB": 20480, "DISK_GB": 100}}
ZONES = {"e1": "east", "w1": "west"}
FLAVORS = {"tiny": {"vcpus": 1, "memory_mb": 1024, "root_gb": 1},
           "fat": {"vcpus": 1, "memory_mb": 8192, "root_gb": 1}}


def _events():
    """Creates, one a second, with what each one meets."""
    plan = [
        # 1-4: e1's four vCPUs are taken (memory 4 of 8 GiB).
        *[("tiny", "east", None)] * 4,
        # 5: east has no vCPU left: NoValidHost, cause VCPU.
        ("tiny", "east", None),
        # 6-7: w1 takes two fats: 16 of its 20 GiB.
        ("fat", "west", None), ("fat", "west", None),
        # 8: 4 GiB left on w1, a fat asks 8: cause MEMORY_MB.
        ("fat", "west", None),
        # 9: the group's first member goes to w1 (17 GiB, 3 vCPUs) ...
        ("tiny", "west", "g1"),
        # 10: ... and its second finds w1 the only host of west: the
        # anti-affinity filter removes it.
        ("tiny", "west", "g1"),
        # 11: room is still there for a tiny outside the group (18 GiB,
        # 4 vCPUs): the explanation claimed nothing.
        ("tiny", "west", None),
    ]
    events = []
    for i, (flavor, zone, group) in enumerate(plan):
        event = {"time": i, "action": "create", "instance": f"vm{i + 1}",
                 "flavor": flavor, "zone": zone}
        if group:
            event["group"] = group
        events.append(event)
    return events


@pytest.fixture(scope="module")
def ran():
    cloud = helpers.flat_cloud(HOSTS, zones=ZONES)
    wl = helpers.workload(FLAVORS, events=_events(),
                          groups={"g1": "anti-affinity"})
    return helpers.simulate(cloud, wl)


def test_no_valid_host_by_cause(ran):
    figures = ran["figures"]
    assert figures["placed"] == 8 and figures["no_valid_host"] == 3
    # Ties go by name.
    assert figures["no_valid_host_by_cause"] == {
        "MEMORY_MB": 1, "ServerGroupAntiAffinityFilter": 1, "VCPU": 1}


def test_no_valid_host_by_flavor(ran):
    by_flavor = ran["figures"]["no_valid_host_by_flavor"]
    assert by_flavor["tiny"] == {
        "creates": 8, "no_valid_host": 2,
        "causes": {"ServerGroupAntiAffinityFilter": 1, "VCPU": 1}}
    assert by_flavor["fat"] == {"creates": 3, "no_valid_host": 1,
                                "causes": {"MEMORY_MB": 1}}


def test_no_valid_host_by_zone_asked(ran):
    assert ran["figures"]["no_valid_host_by_zone"] == {
        "east": {"creates": 5, "no_valid_host": 1},
        "west": {"creates": 6, "no_valid_host": 2}}


def test_first_failure_says_what_failed_and_why(ran):
    first = ran["figures"]["first_failure"]
    assert (first["event"], first["flavor"], first["zone"],
            first["cause"]) == (5, "tiny", "east", "VCPU")
    # e1 full of vCPUs, half its memory; w1 empty: of 12 vCPUs, 4 used.
    assert first["utilisation"]["VCPU"] == pytest.approx(4 / 12)


def test_figures_per_zone_and_cell(ran):
    groups = ran["figures"]["groups"]
    # az-east and az-west hold the same hosts as the zones: shown once.
    assert set(groups) == {"zone east", "zone west", "cell cell1"}
    east, west, cell = (groups[k] for k in ("zone east", "zone west",
                                            "cell cell1"))
    assert (east["hosts"], east["live_instances_end"]) == (1, 4)
    assert east["utilisation_end"] == {"VCPU": 1.0, "MEMORY_MB": 0.5,
                                       "DISK_GB": 0.04}
    assert (east["creates"], east["no_valid_host"]) == (5, 1)
    # w1: 2 fats and 2 tinies: 4 of 8 vCPUs, 18 of 20 GiB, 4 GB disk.
    assert (west["hosts"], west["live_instances_end"]) == (1, 4)
    assert west["utilisation_end"] == {"VCPU": 0.5, "MEMORY_MB": 0.9,
                                       "DISK_GB": 0.04}
    assert (west["creates"], west["no_valid_host"]) == (6, 2)
    # At the first failure (event 5) only e1 was used.
    assert east["utilisation_at_first_failure"]["VCPU"] == 1.0
    assert west["utilisation_at_first_failure"]["VCPU"] == 0.0
    # The cell has both hosts: 8 of 12 vCPUs, 22 of 28 GiB. A request
    # names no cell: no creates or failures of its own.
    assert cell["hosts"] == 2 and cell["live_instances_end"] == 8
    assert cell["utilisation_end"]["VCPU"] == pytest.approx(8 / 12)
    assert cell["utilisation_end"]["MEMORY_MB"] == pytest.approx(
        (4 * 1024 + 2 * 8192 + 2 * 1024) / (8192 + 20480))
    assert cell["creates"] is None and cell["no_valid_host"] is None


def test_peak_per_group_is_the_highest_sample(ran):
    west = ran["figures"]["groups"]["zone west"]
    # Memory only grows on w1: its peak is its end.
    assert west["utilisation_peak"]["MEMORY_MB"] == pytest.approx(0.9)
    series = ran["series"]["groups"]["zone west"]["MEMORY_MB"]
    assert series[0] == 0.0 and series[-1] == pytest.approx(0.9)


def test_summary_prints_the_breakdowns(ran):
    ran = dict(ran, inputs=dict(ran["inputs"], cloud="c.yaml",
                                workload="w.yaml"))
    text = report_mod.summary(ran)
    assert ("First NoValidHost at event 5 (t=4.00 s, tiny, east, "
            "cause VCPU)") in text
    assert ("NoValidHost by cause: MEMORY_MB 1, "
            "ServerGroupAntiAffinityFilter 1, VCPU 1") in text
    assert ("NoValidHost by flavor: tiny 2 of 8 "
            "(ServerGroupAntiAffinityFilter 1, VCPU 1), "
            "fat 1 of 3 (MEMORY_MB 1)") in text
    assert "NoValidHost by zone asked: east 1 of 5, west 2 of 6" in text
    east = next(line for line in text.splitlines()
                if line.strip().startswith("zone east"))
    assert "VCPU 100.0%" in east and "4 live" in east
    assert "NoValidHost 1 of 5 asking it" in east


def test_report_html_has_the_breakdowns_and_interactive_plots(ran,
                                                               tmp_path):
    ran = dict(ran, inputs=dict(ran["inputs"], cloud="c.yaml",
                                workload="w.yaml", config=None))
    paths = report_mod.write(ran, str(tmp_path))
    page = open(paths["html"], encoding="utf-8").read()
    for text in ("Why builds failed", "ServerGroupAntiAffinityFilter",
                 "Where", "zone west", "cell cell1",
                 'id="plot-groups"', 'id="plot-causes"',
                 "first NoValidHost (event 5: tiny, VCPU)"):
        assert text in page, text
    for stem in ("causes", "groups"):
        assert open(paths["plots"][stem], "rb").read(4) == b"\x89PNG"


def test_the_breakdowns_are_reproducible(ran):
    # Asking the scheduler why draws no random number and claims
    # nothing: a second run is the same, figure for figure.
    cloud = helpers.flat_cloud(HOSTS, zones=ZONES)
    wl = helpers.workload(FLAVORS, events=_events(),
                          groups={"g1": "anti-affinity"})
    again = helpers.simulate(cloud, wl)
    assert runner.outcome(again) == runner.outcome(ran)


def test_compare_lists_the_breakdowns(ran):
    table = report_mod.difference_table(ran, ran)
    rows = table["rows"]
    assert rows["no_valid_host_by_cause.VCPU"]["a"] == 1
    assert rows["no_valid_host_by_flavor.fat"]["b"] == 1
    west = rows["groups.zone west.MEMORY_MB"]
    assert (west["a"], west["diff"], west["unit"]) == (
        pytest.approx(0.9), 0, "fraction")


def test_a_claim_lost_to_another_scheduler_is_its_own_cause():
    # One vCPU, two schedulers on the same view: both pick h1, the
    # second's claim loses, and fresh state leaves no host.
    cloud = helpers.flat_cloud(
        {"h1": {"VCPU": 1, "MEMORY_MB": 4096, "DISK_GB": 100}})
    wl = helpers.workload(FLAVORS, events=[
        {"time": i, "action": "create", "instance": f"vm{i}",
         "flavor": "tiny"} for i in range(2)])
    figures = helpers.simulate(cloud, wl, schedulers=2)["figures"]
    assert figures["no_valid_host_by_cause"] == {"claims lost": 1}
    assert figures["conflicts"] == 1


# -- compare: shares move by points ------------------------------------------


def test_compare_gives_shares_as_points():
    a, b = _tiny_report(10, 0.01), _tiny_report(15, 0.247)
    table = report_mod.difference_table(a, b)
    row = table["rows"]["utilisation_end.VCPU"]
    assert row["diff"] == pytest.approx(0.237)
    assert row["relative"] is None
    line = next(line for line in report_mod.compare_summary(table)
                .splitlines() if line.startswith("utilisation_end.VCPU"))
    # Not +2370.0%: 1% to 24.7% is 23.7 points.
    assert line.split()[-4:] == ["+23.7", "pts", "+23.7", "pts"]
    placed = table["rows"]["placed"]
    assert placed["relative"] == pytest.approx(0.5)    # 10 -> 15


def _tiny_report(placed, vcpu_end):
    return {"format": 1, "inputs": {"cloud": "c", "workload": "w"},
            "figures": {"placed": placed, "first_failure": None,
                        "utilisation_end": {"VCPU": vcpu_end}},
            "timing": {}, "series": {}, "host_fill": {},
            "latency_ms": {}}


# -- capacity: the class that limits the count ------------------------------


def test_runs_out_first_names_the_class_that_limits_the_count():
    # a: vCPUs for 10, disk for 4 -> 4, stopped by disk.
    # b: vCPUs for none (1 of 2), disk for 100 -> 0.
    # VCPU alone allows 10, disk alone 104; the 4 that fit end on disk.
    cloud = helpers.flat_cloud(
        {"a": {"VCPU": 20, "MEMORY_MB": 65536, "DISK_GB": 40},
         "b": {"VCPU": 1, "MEMORY_MB": 65536, "DISK_GB": 1000}},
        zones={"a": "east", "b": "east"})
    sim = helpers.opened(cloud)
    try:
        result = cli.capacity_report(
            sim.schedulers[0], sim.conf, "f",
            {"vcpus": 2, "memory_mb": 1024, "root_gb": 10})
    finally:
        sim.close()
    east = next(r for r in result["groups"] if r["group"] == "zone east")
    assert east["fits"] == 4
    assert east["fits_by_class"] == {"VCPU": 10, "MEMORY_MB": 128,
                                     "DISK_GB": 104}
    assert east["runs_out_first"] == "DISK_GB"


def test_capacity_lists_cells_by_name():
    sim = helpers.opened(helpers.flat_cloud(HOSTS, zones=ZONES))
    try:
        view = capacity.CloudView(sim.schedulers[0])
        groups = view.groups()
    finally:
        sim.close()
    assert groups["cell cell1"].tolist() == [True, True]
    assert groups["zone east"].tolist() == [True, False]


# -- the unknown zone warning -----------------------------------------------


def _files(tmp_path, strict):
    cloud = {"aggregates": {"az-east": {"metadata": {
                 "availability_zone": "east"}}},
             "providers": [{"name": "h1", "compute": {"cell": "cell1"},
                            "aggregates": ["az-east"],
                            "inventories": HOSTS["w1"]}]}
    workload = {"flavors": FLAVORS, "events": [
        {"time": 0, "action": "create", "instance": "a", "flavor": "tiny",
         "zone": "east"},
        {"time": 1, "action": "create", "instance": "b", "flavor": "tiny",
         "zone": "south"},
        {"time": 2, "action": "create", "instance": "c", "flavor": "tiny",
         "zone": "south"}]}
    conf = "[scheduler]\nstrict_availability_zones = %s\n" % strict
    out = {}
    for name, data in (("cloud.yaml", cloud), ("workload.yaml", workload)):
        (tmp_path / name).write_text(yaml.safe_dump(data))
        out[name] = str(tmp_path / name)
    (tmp_path / "zones.conf").write_text(conf)
    out["zones.conf"] = str(tmp_path / "zones.conf")
    return out


@pytest.mark.parametrize("strict", [False, True], ids=["nova-rule", "strict"])
def test_a_zone_no_host_is_in_warns_before_the_run(tmp_path, capsys,
                                                   strict):
    files = _files(tmp_path, strict)
    out = tmp_path / "report"
    code = cli.main(["run", "--cloud", files["cloud.yaml"], "--workload",
                     files["workload.yaml"], "--config-file",
                     files["zones.conf"], "--out", str(out),
                     "--no-progress"])
    assert code == 0    # the run goes on
    warnings = [line for line in capsys.readouterr().err.splitlines()
                if line.startswith("gantt-simulate: warning: ")]
    assert len(warnings) == 1
    line = warnings[0]
    for text in (files["workload.yaml"], "2 creates ask",
                 "availability zone 'south'", files["cloud.yaml"],
                 "(zones: east)"):
        assert text in line, text
    figures = json.loads((out / "report.json").read_text())["figures"]
    if strict:
        assert "fail with NoValidHost" in line
        assert figures["no_valid_host_by_cause"] == {
            "availability zone 'south' has no hosts": 2}
    else:
        assert "any host" in line
        assert figures["placed"] == 3


# -- causes the run's cloud above does not show -----------------------------


@pytest.mark.parametrize("trait, cause", [
    # Room for all of it, but placement has no candidate: the scheduler
    # is asked again and says so.
    ("HW_CPU_X86_AVX512F", "no candidates (traits, aggregates or trees)"),
    # A trait placement does not know: the scheduler's own words.
    ("CUSTOM_GPU", "No such trait(s): CUSTOM_GPU."),
], ids=["known-trait", "unknown-trait"])
def test_a_trait_no_host_has_leaves_no_candidates(trait, cause):
    cloud = helpers.flat_cloud({"h1": HOSTS["w1"]})
    flavors = {"gpu": {"vcpus": 1, "memory_mb": 1024, "root_gb": 1,
                       "extra_specs": {f"trait:{trait}": "required"}}}
    wl = helpers.workload(flavors, events=[
        {"time": 0, "action": "create", "instance": "a", "flavor": "gpu"}])
    figures = helpers.simulate(cloud, wl)["figures"]
    assert figures["no_valid_host_by_cause"] == {cause: 1}


@pytest.mark.parametrize("message, expected", [
    ("no valid host for instance 1 of 1: 250 candidate hosts; "
     "ComputeFilter removed 2, ServerGroupAntiAffinityFilter removed 248",
     "ServerGroupAntiAffinityFilter"),
    ("no valid host for instance 1 of 1: 0 candidate hosts", None),
    ("no valid host for instance 1 of 1: 3 candidate hosts; "
     "ComputeFilter removed 1; 2 passed the filters but none could be "
     "claimed", None),
    ("no valid host: availability zone 'south' has no hosts", None),
], ids=["filter-emptied", "no-candidates", "claims-lost", "empty-zone"])
def test_the_filter_that_removed_the_last_hosts(message, expected):
    assert runner.filter_that_emptied(message) == expected
