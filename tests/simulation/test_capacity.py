"""Capacity arithmetic, checked by hand on tiny clouds."""

import numpy as np
import pytest

from cloudfile import loader
from simulation import capacity, cli
from tests.simulation import helpers

SMALL = {"vcpus": 2, "memory_mb": 4096, "root_gb": 10}


@pytest.fixture
def two_hosts():
    # h1: VCPU room for 4 smalls, memory for 4, disk for 10 -> 4.
    # h2: VCPU for 2, memory for 8, disk for 10 -> 2.
    cloud = helpers.flat_cloud(
        {"h1": {"VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100},
         "h2": {"VCPU": 4, "MEMORY_MB": 32768, "DISK_GB": 100}},
        zones={"h1": "east", "h2": "west"})
    sim = helpers.opened(cloud)
    yield sim
    sim.close()


def test_fits_per_host_and_in_all(two_hosts):
    view = capacity.CloudView(two_hosts.schedulers[0])
    resources = capacity.flavor_resources(SMALL, two_hosts.conf,
                                          two_hosts.schedulers[0].table)
    assert resources == {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 10}
    fits, by_class, _ = view.host_fits(resources)
    assert sorted(fits.tolist()) == [2, 4]
    fit = view.group_fit(resources)
    assert fit.fits == 6
    assert fit.by_class == {"VCPU": 6, "MEMORY_MB": 12, "DISK_GB": 20}
    assert fit.limiting == "VCPU"


def test_capacity_report_per_zone(two_hosts):
    result = cli.capacity_report(two_hosts.schedulers[0], two_hosts.conf,
                                 "small", SMALL)
    rows = {r["group"]: r for r in result["groups"]}
    assert rows["all hosts"]["fits"] == 6
    assert rows["zone east"]["fits"] == 4
    assert rows["zone west"]["fits"] == 2
    # West runs out of vCPUs, east of vCPUs and memory at once (4 each):
    # the tie goes to the first name.
    assert rows["zone west"]["runs_out_first"] == "VCPU"
    assert rows["zone east"]["fits_by_class"]["MEMORY_MB"] == 4
    assert rows["aggregate az-east"]["fits"] == 4
    text = cli.render_capacity(result)
    assert "zone west" in text and "runs out first" in text


def test_usage_counts_against_room_and_strands_the_rest(two_hosts):
    sim = two_hosts
    # Take all of h2's vCPUs: its 32 GB of memory can no longer be used.
    sim.schedulers[0].placement.put_allocations(
        "9a4b3c1e-0000-4000-8000-000000000001",
        {sim.view.scheduler.table.uuids[
            sim.view.host_rows[1]]: {"resources": {"VCPU": 4}}},
        project_id="p", user_id="u", consumer_generation=None)
    view = capacity.CloudView(sim.schedulers[0])
    names = [sim.schedulers[0].table.hosts[r] for r in view.host_rows]
    assert names == ["h1", "h2"]
    fits, _, _ = view.host_fits({"VCPU": 2, "MEMORY_MB": 4096})
    assert fits.tolist() == [4, 0]
    stranded = view.stranded([{"VCPU": 2, "MEMORY_MB": 4096}])
    assert stranded["MEMORY_MB"] == (16384 + 32768, 32768)
    assert stranded["VCPU"] == (8, 0)
    usage = view.utilisation()
    assert usage["VCPU"] == pytest.approx(4 / 12)
    fill = view.fill()
    assert fill["VCPU"].tolist() == [0.0, 1.0]


def test_nested_trees_add_up_per_provider_with_units():
    # Two NUMA nodes with 3 VCPUs each: a 2-vCPU flavor fits once per
    # node (2 in all), not 3 times on the 6 the tree holds.
    doc = {"providers": [
        {"name": "h", "compute": {}, "inventories": {"DISK_GB": 100},
         "children": [
             {"name": "h-n0", "inventories": {"VCPU": 3,
                                               "MEMORY_MB": 8192}},
             {"name": "h-n1", "inventories": {
                 "VCPU": 3, "MEMORY_MB": {"total": 8192,
                                           "max_unit": 2048}}}]}]}
    sim = helpers.opened(loader.parse(doc, "nested"))
    try:
        view = capacity.CloudView(sim.schedulers[0])
        fits, by_class, _ = view.host_fits(
            {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 10})
        assert by_class["VCPU"].tolist() == [2]
        # 4096 MB is above h-n1's max_unit: only h-n0 counts, twice.
        assert by_class["MEMORY_MB"].tolist() == [2]
        assert fits.tolist() == [2]
        totals = view.totals()
        assert totals["VCPU"] == (6.0, 0.0)
    finally:
        sim.close()


def test_sharing_storage_bounds_the_hosts_that_draw_on_it():
    doc = {
        "aggregates": {"rack": "4a8e9a52-0f1d-4d87-9a56-6f5d2a1c0b99"},
        "providers": [
            {"name": "h1", "compute": {}, "aggregates": ["rack"],
             "inventories": {"VCPU": 16, "MEMORY_MB": 65536}},
            {"name": "h2", "compute": {}, "aggregates": ["rack"],
             "inventories": {"VCPU": 16, "MEMORY_MB": 65536}},
            {"name": "pool", "aggregates": ["rack"],
             "traits": ["MISC_SHARES_VIA_AGGREGATE"],
             "inventories": {"DISK_GB": 50}}]}
    sim = helpers.opened(loader.parse(doc, "sharing"))
    try:
        view = capacity.CloudView(sim.schedulers[0])
        assert view.size == 2
        resources = {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 10}
        fit = view.group_fit(resources)
        # 8 + 8 by vCPUs, but the pool holds 5 disks of 10 GB.
        assert fit.fits == 5
        assert fit.limiting == "DISK_GB"
        assert np.isinf(view.host_fits(resources)[1]["DISK_GB"]).all()
    finally:
        sim.close()
