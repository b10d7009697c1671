"""Four scheduler processes on one database claim at once: every
instance they report placed holds its allocation on the host they named,
no host is over-committed, and every slot that fits is used. With four
threads per process, requests queue and are claimed in groups
(scheduler.request_groups): the same holds."""

import pytest

from placement import direct
from tests import workers
from tests.scheduler import cloud as cloud_mod
from tests.scheduler import race_worker

WORKERS = 4
REQUESTS = 12  # per worker: 48 asked
HOSTS = 6
VCPUS = 4  # per host, ratio 1: 24 slots of one vCPU


@pytest.mark.parametrize("threads", [1, 4], ids=["alone", "grouped"])
@pytest.mark.parametrize("engine_name", ["postgresql", "mysql"])
def test_four_schedulers_never_over_commit(store, db_url, threads):
    cloud = cloud_mod.Cloud(store)
    placement = direct.PlacementDirect(store)
    hosts = [cloud_mod.add_host(cloud, placement, f"n{i}", vcpus=VCPUS,
                                memory_mb=65536)
             for i in range(HOSTS)]
    reports = workers.run(race_worker.run,
                          [(db_url, REQUESTS, threads)] * WORKERS,
                          timeout=240)
    assert [r["failures"] for r in reports] == [[]] * WORKERS
    grouped = sum(r["grouped"] for r in reports)
    assert (grouped > 0) == (threads > 1), grouped
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
