"""The simulation run: figures checked by hand on tiny clouds,
conservation at every step, determinism, and schedulers racing."""

import gc

import pytest

from placement.objects import usages
from simulation import config, runner
from tests.simulation import helpers

# Each host holds exactly two of these (vCPUs bind).
FLAVORS = {"half": {"vcpus": 4, "memory_mb": 1024, "root_gb": 10}}
HOST = {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 100}


def _two_hosts(**zones):
    return helpers.flat_cloud({"h1": HOST, "h2": HOST}, zones=zones or None)


def test_a_full_cloud_refuses_the_fifth_and_says_when():
    wl = helpers.workload(FLAVORS, helpers.creates("half", 5))
    out = helpers.simulate(_two_hosts(), wl)
    figures = out["figures"]
    assert figures["creates"] == 5
    assert figures["placed"] == 4
    assert figures["no_valid_host"] == 1
    assert figures["claim_attempts"] == 4
    assert figures["retries"] == 0 and figures["conflicts"] == 0
    first = figures["first_failure"]
    assert first["event"] == 5 and first["time_s"] == 4
    assert first["utilisation"]["VCPU"] == 1.0
    assert first["utilisation"]["MEMORY_MB"] == pytest.approx(4096 / 16384)
    assert figures["utilisation_end"]["DISK_GB"] == pytest.approx(0.2)
    assert figures["fits_at_end"] == {"half": 0}
    # No vCPU left anywhere: all free memory and disk is stranded.
    stranded = figures["stranded"]
    assert stranded["MEMORY_MB"]["stranded"] == 16384 - 4096
    assert stranded["DISK_GB"]["fraction_of_capacity"] == pytest.approx(0.8)
    assert stranded["VCPU"]["stranded"] == 0
    assert stranded["MEMORY_MB"]["capacity"] == 16384
    assert figures["live_instances_end"] == 4
    timing = out["timing"]
    assert timing["decision_ms"]["count"] == 5
    assert timing["scheduler_s"]["wasted"] > 0  # the refused decision


def test_a_delete_makes_room_again():
    events = helpers.creates("half", 4) + [
        {"time": 10, "action": "delete", "instance": "vm2"}] + \
        helpers.creates("half", 1, start=11)
    out = helpers.simulate(_two_hosts(), helpers.workload(FLAVORS, events))
    figures = out["figures"]
    assert (figures["placed"], figures["no_valid_host"]) == (5, 0)
    assert figures["deletes"] == 1
    assert figures["live_instances_end"] == 4
    assert out["series"]["live"][-1] == 4
    assert max(out["series"]["live"]) == 4


def test_deleting_a_refused_instance_is_counted_not_replayed():
    events = helpers.creates("half", 5) + [
        {"time": 9, "action": "delete", "instance": "vm4"},
        {"time": 10, "action": "delete", "instance": "vm0"}]
    out = helpers.simulate(_two_hosts(), helpers.workload(FLAVORS, events))
    figures = out["figures"]
    assert figures["deletes_of_failed"] == 1
    assert figures["live_instances_end"] == 3
    assert figures["fits_at_end"] == {"half": 1}


def test_anti_affinity_groups_spread_and_then_fail():
    events = helpers.creates("half", 3, group="g")
    cloud = helpers.flat_cloud({"h1": {"VCPU": 64, "MEMORY_MB": 65536},
                                "h2": {"VCPU": 64, "MEMORY_MB": 65536}})
    wl = helpers.workload({"half": {"vcpus": 1, "memory_mb": 512}}, events,
                          groups={"g": "anti-affinity"})
    out = helpers.simulate(cloud, wl)
    assert out["figures"]["placed"] == 2
    assert out["figures"]["no_valid_host"] == 1


def test_zones_are_honoured():
    events = helpers.creates("half", 3, zone="east")
    out = helpers.simulate(_two_hosts(h1="east", h2="west"),
                           helpers.workload(FLAVORS, events))
    # East holds two; the third may not go west.
    assert out["figures"]["placed"] == 2
    assert out["figures"]["no_valid_host"] == 1


def _churn(creates=300, seed=3):
    return helpers.workload(
        {"s": {"vcpus": 1, "memory_mb": 1024, "root_gb": 5},
         "l": {"vcpus": 4, "memory_mb": 4096, "root_gb": 20}},
        synthetic={"seed": seed, "creates": creates,
                   "mix": {"s": 3, "l": 1},
                   "arrival": {"process": "poisson", "rate_per_s": 1.0},
                   "lifetime": {"distribution": "exponential",
                                "mean_s": 60},
                   "server_groups": {"fraction": 0.2, "size": 3,
                                     "policies": {"anti-affinity": 1}}})


def _cloud(hosts=6):
    return helpers.flat_cloud({f"h{i}": {"VCPU": 16, "MEMORY_MB": 16384,
                                         "DISK_GB": 200}
                               for i in range(hosts)})


def test_same_seed_same_report_and_conservation_at_every_step():
    # check_every=1: placement's usage equals the live instances' after
    # every single event (ConservationError otherwise).
    a = helpers.simulate(_cloud(), _churn(), check_every=1)
    b = helpers.simulate(_cloud(), _churn(), check_every=1)
    assert runner.outcome(a) == runner.outcome(b)
    assert a["figures"]["no_valid_host"] > 0  # the cloud did fill up
    assert a["figures"]["placed"] + a["figures"]["no_valid_host"] == 300
    c = helpers.simulate(_cloud(), _churn(seed=4), check_every=0)
    assert runner.outcome(c) != runner.outcome(a)


def test_conservation_check_catches_a_lost_allocation():
    wl = helpers.workload(FLAVORS, helpers.creates("half", 2))
    sim = runner.Simulation(config.load(None), _two_hosts(), wl,
                            runner.Options())
    sim.open_cloud()
    try:
        sim._start_counters()
        for n, event in enumerate(wl.events, 1):
            sim._create(n, event)
        sim.check_conservation()
        instance = next(iter(sim.live.values()))[0]
        sim.schedulers[0].placement.delete_allocations(instance)
        with pytest.raises(runner.ConservationError):
            sim.check_conservation()
    finally:
        sim.close()


def test_racing_schedulers_conflict_but_never_over_commit():
    wl = _churn(creates=200)
    out = helpers.simulate(_cloud(4), wl, schedulers=3, check_every=25)
    figures = out["figures"]
    assert out["inputs"]["schedulers"] == 3
    # Three schedulers deciding on the same view pick the same hosts:
    # some claims lose and are retried elsewhere.
    assert figures["conflicts"] > 0
    assert figures["retries"] >= figures["conflicts"]
    assert figures["placed"] + figures["no_valid_host"] == 200
    assert out["timing"]["scheduler_s"]["wasted"] > 0


def test_racing_schedulers_leave_usage_within_capacity(tmp_path):
    wl = _churn(creates=150)
    cloud = _cloud(3)
    sim = runner.Simulation(config.load(None), cloud, wl,
                            runner.Options(schedulers=3))
    sim.open_cloud()
    try:
        sim._start_counters()
        for n, event in enumerate(wl.events, 1):
            if event.kind == "create":
                sim._create(n, event)
            else:
                sim._delete(event)
            if n % 10 == 0:
                for rp in sim.cloud.providers:
                    _, used = usages.for_provider(sim.stores[0], rp.uuid)
                    assert used.get("VCPU", 0) <= 16
                    assert used.get("MEMORY_MB", 0) <= 16384
        sim.check_conservation()
    finally:
        sim.close()


def test_an_empty_workload_reports_zeros():
    wl = helpers.workload(FLAVORS, helpers.creates("half", 1))
    wl.events.clear()
    out = helpers.simulate(_two_hosts(), wl)
    assert out["figures"]["placed"] == 0
    assert out["figures"]["first_failure"] is None
    assert out["timing"]["decision_ms"]["count"] == 0
    assert out["series"]["event"] == [0]


def test_a_configured_change_feed_is_left_out_of_the_scratch_store(
        tmp_path):
    # An operator's production config may name a change feed: the
    # simulator's scratch database must not announce its commits there.
    path = tmp_path / "gantt.conf"
    path.write_text("[placement_database]\n"
                    "change_feed_url = redis://127.0.0.1:1/0\n")
    conf = config.load(str(path))
    sim = helpers.opened(_two_hosts(), conf)
    try:
        assert all(store.change_feed is None for store in sim.stores)
    finally:
        sim.close()
    assert conf.placement_database.change_feed_url == "redis://127.0.0.1:1/0"


def test_the_run_decides_with_its_heap_frozen_and_gives_it_back(
        monkeypatch):
    # As a gantt-scheduler worker: what the run loaded is out of the
    # collector's full passes while it decides, and back after.
    frozen = []
    replay = runner.Simulation._replay

    def watched(self):
        frozen.append(gc.get_freeze_count())
        return replay(self)

    monkeypatch.setattr(runner.Simulation, "_replay", watched)
    before = gc.get_freeze_count()
    out = helpers.simulate(
        _two_hosts(), helpers.workload(FLAVORS, helpers.creates("half", 2)))
    assert out["figures"]["placed"] == 2
    [during] = frozen
    assert during > before
    assert gc.get_freeze_count() == before
