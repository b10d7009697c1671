"""Four scheduler processes on one database claim at once: every
instance they report placed holds its allocation on the host they named,
no host is over-committed, and every slot that fits is used."""

import pytest

from placement import direct
from tests import workers
from tests.scheduler import cloud as cloud_mod
from tests.scheduler import race_worker

WORKERS = 4
REQUESTS = 12  # per worker: 48 asked
HOSTS = 6
VCPUS = 4  # per host, ratio 1: 24 slots of one vCPU


@pytest.mark.parametrize("engine_name", ["postgresql", "mysql"])
def test_four_schedulers_never_over_commit(store, db_url):
    cloud = cloud_mod.Cloud(store)
    placement = direct.PlacementDirect(store)
    hosts = [cloud_mod.add_host(cloud, placement, f"n{i}", vcpus=VCPUS,
                                memory_mb=65536)
             for i in range(HOSTS)]
    reports = workers.run(race_worker.run,
                          [(db_url, REQUESTS)] * WORKERS, timeout=240)
    assert [r["failures"] for r in reports] == [[]] * WORKERS
    placed = {}
    for r in reports:
        placed.update(r["placed"])
    refused = sum(r["refused"] for r in reports)
    told = [(len(r["placed"]), r["refused"]) for r in reports]
    assert len(placed) + refused == WORKERS * REQUESTS, told
    assert len(placed) == HOSTS * VCPUS, told  # every slot used, none twice
    for instance, host in placed.items():
        allocations = placement.get_allocations(instance)
        assert list(allocations.allocations) == [host], instance
    for host in hosts:
        usage = placement.get_provider_usages(host)[1]
        assert usage["VCPU"] == VCPUS
    cloud.close()
