"""Compute-side workload events (reshape, host_down, host_up): parsed
and checked like the other events, played through the compute node's
report client, and counted in the report. Expected values are worked
out by hand on a cloud of two hosts with 4 VGPU each."""

import json
import subprocess
import sys

import pytest
import yaml

from compute import placement_port
from simulation import config, report, runner
from simulation import workload as workload_mod
from tests.simulation import helpers

# One vGPU each: a host holds four.
FLAVORS = {"g": {"vcpus": 1, "memory_mb": 512,
                 "extra_specs": {"resources:VGPU": "1"}}}
HOST = {"VCPU": 16, "MEMORY_MB": 16384, "VGPU": 4}


def _cloud():
    return helpers.flat_cloud({"cn-1": HOST, "cn-2": HOST})


def _reshape(time, **where):
    return {"time": time, "action": "reshape", "class": "VGPU",
            "children": 2, **(where or {"hosts": ["cn-1", "cn-2"]})}


def _opened(wl):
    sim = runner.Simulation(config.load(None), _cloud(), wl,
                            runner.Options(check_every=1))
    sim.open_cloud()
    return sim


def _tree(sim, host):
    """{provider name: {rc: (total, used)}} of ``host``'s tree."""
    port = placement_port.DirectPort(sim.schedulers[0].placement)
    root = next(h.uuid for h in sim.cloud.hosts if h.host == host)
    out = {}
    for provider in port.read_tree(root):
        used = {}
        for amounts in port.provider_consumers(provider.uuid).values():
            for rc, amount in amounts.items():
                used[rc] = used.get(rc, 0) + amount
        out[provider.name] = {rc: (inv["total"], used.get(rc, 0))
                              for rc, inv in provider.inventories.items()}
    return out


# -- the reshape ----------------------------------------------------------


def test_reshape_moves_every_allocation_onto_the_children():
    # Three creates spread: two on one host, one on the other; then both
    # hosts split VGPU=4 into two children of 2.
    wl = helpers.workload(FLAVORS, helpers.creates("g", 3) + [_reshape(5)])
    sim = _opened(wl)
    try:
        out = sim._replay()
        trees = {h: _tree(sim, h) for h in ("cn-1", "cn-2")}
    finally:
        sim.close()
    for host, tree in trees.items():
        assert "VGPU" not in tree[host]  # the root gave it up
        assert tree[f"{host}-vgpu0"]["VGPU"][0] == 2
        assert tree[f"{host}-vgpu1"]["VGPU"][0] == 2
    on_children = sum(tree[name]["VGPU"][1] for tree in trees.values()
                      for name in tree if "VGPU" in tree[name])
    assert on_children == 3  # none lost (conservation checked too)
    done = out["figures"]["compute_events"]
    assert done["reshape"] == {"events": 1, "hosts": 2, "children": 4,
                               "allocations_moved": 3, "skipped": 0,
                               "refused": 0}
    assert done["log"][0]["event"] == 4


def test_after_a_reshape_creates_land_on_the_children_until_full():
    wl = helpers.workload(FLAVORS, helpers.creates("g", 3) + [_reshape(5)]
                          + helpers.creates("g", 6, start=10))
    out = helpers.simulate(_cloud(), wl)
    fig = out["figures"]
    # 8 vGPUs in all: 8 placed, the ninth refused for want of VGPU.
    assert fig["placed"] == 8 and fig["no_valid_host"] == 1
    assert fig["no_valid_host_by_cause"] == {"VGPU": 1}
    assert fig["utilisation_end"]["VGPU"] == 1.0


def test_reshape_with_several_schedulers_loses_nothing():
    # Conservation is checked after every event; the second scheduler
    # learns of the new tree at its next sync.
    wl = helpers.workload(FLAVORS, helpers.creates("g", 3) + [_reshape(5)]
                          + helpers.creates("g", 6, start=10))
    out = helpers.simulate(_cloud(), wl, schedulers=2)
    fig = out["figures"]
    assert fig["placed"] == 8 and fig["no_valid_host"] == 1
    assert fig["compute_events"]["reshape"]["allocations_moved"] == 3


def test_reshape_uneven_split_gives_the_remainder_to_the_first_child():
    wl = helpers.workload(FLAVORS, [
        {"time": 0, "action": "reshape", "hosts": ["cn-1"],
         "class": "VGPU", "children": 3}])
    sim = _opened(wl)
    try:
        sim._replay()
        tree = _tree(sim, "cn-1")
        other = _tree(sim, "cn-2")
    finally:
        sim.close()
    assert [tree[f"cn-1-vgpu{k}"]["VGPU"][0] for k in range(3)] == [2, 1, 1]
    assert other == {"cn-2": {"VCPU": (16, 0), "MEMORY_MB": (16384, 0),
                              "VGPU": (4, 0)}}


def test_a_host_without_the_class_is_skipped_and_counted():
    wl = helpers.workload(FLAVORS, [_reshape(0), _reshape(1)])
    out = helpers.simulate(_cloud(), wl)
    done = out["figures"]["compute_events"]["reshape"]
    # The second finds no VGPU on the roots any more.
    assert done["hosts"] == 2 and done["skipped"] == 2
    assert out["figures"]["compute_events"]["log"][1]["skipped"] == [
        "cn-1", "cn-2"]


def test_reshape_by_fraction_is_deterministic_for_a_seed():
    wl = helpers.workload(FLAVORS, [_reshape(0, fraction=0.5)])
    a = helpers.simulate(_cloud(), wl, seed=3)
    b = helpers.simulate(_cloud(), wl, seed=3)
    assert runner.outcome(a) == runner.outcome(b)
    log = a["figures"]["compute_events"]["log"]
    assert len(log[0]["hosts"]) == 1  # half of two hosts


# -- host down and up -----------------------------------------------------


def test_host_down_sends_creates_to_the_other_then_fails_when_full():
    wl = helpers.workload(FLAVORS, [
        {"time": 0, "action": "host_down", "hosts": ["cn-2"]},
        *helpers.creates("g", 5, start=1),
        {"time": 10, "action": "host_up", "hosts": ["cn-2"]},
        *helpers.creates("g", 2, start=11)])
    sim = _opened(wl)
    try:
        out = sim._replay()
        hosts = [host for _, _, host, _, _ in sim.live.values()]
    finally:
        sim.close()
    fig = out["figures"]
    # Four fit on cn-1, the fifth finds only the host that is down.
    assert hosts[:4] == ["cn-1"] * 4
    assert hosts[4:] == ["cn-2", "cn-2"]  # after host_up
    assert fig["placed"] == 6 and fig["no_valid_host"] == 1
    assert fig["no_valid_host_by_cause"] == {"ComputeFilter": 1}
    assert fig["first_failure"]["event"] == 6
    done = fig["compute_events"]
    assert done["host_down"] == {"events": 1, "hosts": 1}
    assert done["host_up"] == {"events": 1, "hosts": 1}
    assert done["hosts_down_end"] == 0


def test_all_hosts_down_refuses_every_create():
    wl = helpers.workload(FLAVORS, [
        {"time": 0, "action": "host_down", "fraction": 1.0},
        *helpers.creates("g", 2, start=1)])
    out = helpers.simulate(_cloud(), wl)
    fig = out["figures"]
    assert fig["placed"] == 0 and fig["no_valid_host"] == 2
    assert fig["compute_events"]["hosts_down_end"] == 2
    assert fig["compute_events"]["log"][0]["hosts"] == ["cn-1", "cn-2"]


def test_host_down_with_several_schedulers():
    wl = helpers.workload(FLAVORS, [
        {"time": 0, "action": "host_down", "hosts": ["cn-1"]},
        *helpers.creates("g", 6, start=1)])
    out = helpers.simulate(_cloud(), wl, schedulers=2)
    fig = out["figures"]
    assert fig["placed"] == 4 and fig["no_valid_host"] == 2


def test_summary_and_html_show_the_compute_events():
    wl = helpers.workload(FLAVORS, helpers.creates("g", 2) + [
        _reshape(5), {"time": 6, "action": "host_down",
                      "hosts": ["cn-2"]}])
    out = helpers.simulate(_cloud(), wl)
    out["inputs"].update(workload="w.yaml", cloud="c.yaml")
    text = report.summary(out)
    assert ("Compute events: 1 reshapes (2 hosts into 4 children, 2 "
            "allocations moved), 1 host_down (1 hosts), 0 host_up "
            "(0 hosts); 1 hosts down at end") in text
    assert "reshape cn-1, cn-2: VGPU into 2 children" in text


def test_a_workload_without_them_reports_as_before():
    wl = helpers.workload(FLAVORS, helpers.creates("g", 2))
    out = helpers.simulate(_cloud(), wl)
    assert "compute_events" not in out["figures"]
    assert "Compute events" not in report.summary(
        {**out, "inputs": {**out["inputs"], "workload": "w",
                           "cloud": "c"}})


# -- parsing and validation -------------------------------------------------


def test_synthetic_compute_events_go_in_at_their_time():
    wl = helpers.workload(FLAVORS, synthetic={
        "creates": 10, "arrival": {"process": "fixed", "interval_s": 1},
        "compute_events": [
            {"time": 3, "action": "host_down", "hosts": ["cn-1"]},
            {"time": 0.5, "action": "reshape", "fraction": 0.5,
             "class": "VGPU"}]})
    kinds = [e.kind for e in wl.events]
    assert kinds[1] == "reshape" and kinds[4] == "host_down"
    assert kinds.count("create") == 10
    assert wl.describe()["compute_events"] == {
        "reshape": 1, "host_down": 1, "host_up": 0}
    assert wl.describe()["deletes"] == 0


@pytest.mark.parametrize("event, field, words", [
    ({"time": 0, "action": "reshape", "hosts": ["cn-1"]},
     "events[0].class", "missing; it is required"),
    ({"time": 0, "action": "host_down"}, "events[0]",
     "exactly one of hosts or fraction"),
    ({"time": 0, "action": "host_down", "hosts": ["a"], "fraction": 0.5},
     "events[0]", "has hosts and fraction"),
    ({"time": 0, "action": "host_up", "fraction": 1.5},
     "events[0].fraction", ""),
    ({"time": 0, "action": "reshape", "hosts": ["a"], "class": "VGPU",
      "children": 0}, "events[0].children", ""),
    ({"time": 0, "action": "host_down", "hosts": ["a"], "instance": "x"},
     "events[0]", "instance"),
])
def test_bad_compute_events_name_the_field(event, field, words):
    with pytest.raises(workload_mod.WorkloadError) as caught:
        workload_mod.parse({"flavors": FLAVORS, "events": [event]},
                           "w.yaml")
    message = str(caught.value)
    assert message.startswith(f"w.yaml: {field}")
    assert words in message


def test_compute_events_must_keep_time_order():
    with pytest.raises(workload_mod.WorkloadError,
                       match=r"events\[1\].time: 0 is before 5"):
        workload_mod.parse({"flavors": FLAVORS, "events": [
            *helpers.creates("g", 1, start=5),
            {"time": 0, "action": "host_down", "hosts": ["a"]}]}, "w.yaml")


def test_an_unknown_host_is_named_before_the_run():
    wl = workload_mod.parse({"flavors": FLAVORS, "events": [
        {"time": 0, "action": "host_down", "hosts": ["cn-9"]}]}, "w.yaml")
    with pytest.raises(workload_mod.WorkloadError,
                       match=r"w.yaml: events\[0\].hosts: unknown host "
                             r"'cn-9'; hosts: cn-1, cn-2"):
        helpers.simulate(_cloud(), wl)


# -- gantt-simulate ---------------------------------------------------------


def _files(tmp_path, events):
    cloud = {"providers": [
        {"name": name, "inventories": HOST, "compute": {"cell": "cell1"}}
        for name in ("cn-1", "cn-2")]}
    (tmp_path / "cloud.yaml").write_text(yaml.safe_dump(cloud))
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(
        {"flavors": FLAVORS, "events": events}))
    return ["--cloud", str(tmp_path / "cloud.yaml"), "--workload",
            str(tmp_path / "w.yaml")]


def _simulate(args):
    return subprocess.run(
        [sys.executable, "-m", "simulation.cli", "run", *args,
         "--no-progress"], capture_output=True, text=True, timeout=300)


def test_gantt_simulate_runs_a_workload_with_compute_events(tmp_path):
    args = _files(tmp_path, [
        *helpers.creates("g", 3), _reshape(5),
        {"time": 6, "action": "host_down", "hosts": ["cn-1"]},
        *helpers.creates("g", 4, start=10),
        {"time": 20, "action": "host_up", "hosts": ["cn-1"]},
        *helpers.creates("g", 2, start=21)])
    done = _simulate([*args, "--out", str(tmp_path / "out")])
    assert done.returncode == 0, done.stderr
    assert "Compute events: 1 reshapes (2 hosts into 4 children, 3 " \
           "allocations moved)" in done.stdout
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    fig = data["figures"]
    # cn-1 holds two, cn-2 one; with cn-1 down, cn-2 takes three more
    # and the fourth fails; back up, cn-1 takes two.
    assert fig["placed"] == 8 and fig["no_valid_host"] == 1
    assert fig["no_valid_host_by_cause"] == {"ComputeFilter": 1}
    assert [e["action"] for e in fig["compute_events"]["log"]] == [
        "reshape", "host_down", "host_up"]
    assert "Compute events" in (tmp_path / "out" / "report.html") \
        .read_text()


def test_gantt_simulate_exits_2_on_an_unknown_host(tmp_path):
    args = _files(tmp_path, [
        {"time": 0, "action": "reshape", "hosts": ["cn-7"],
         "class": "VGPU"}])
    done = _simulate([*args, "--out", str(tmp_path / "out")])
    assert done.returncode == 2
    assert "w.yaml: events[0].hosts: unknown host 'cn-7'" in done.stderr
