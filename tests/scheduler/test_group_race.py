"""Four scheduler processes on one database create members of the same
anti-affinity and affinity groups at once, single and multi-instance,
with deletes between: no group ever breaks its policy, as read back from
placement's allocations (not from gantt's group records), and the
races happened (claims refused for their group and decided again)."""

import pytest

from placement import direct
from tests import workers
from tests.scheduler import cloud as cloud_mod
from tests.scheduler import group_race_worker

WORKERS = 4
THREADS = 3
HOSTS = 6
ROUNDS = 2  # each worker creates into every group this many times
# (policy, max_server_per_host, how many groups)
GROUPS = [("anti-affinity", 1, 6), ("anti-affinity", 2, 3),
          ("affinity", 1, 4)]


def _groups():
    return group_race_worker.new_groups(GROUPS)


@pytest.mark.parametrize("engine_name", ["postgresql", "mysql"])
def test_four_schedulers_keep_every_group_policy(store, db_url):
    cloud = cloud_mod.Cloud(store)
    placement = direct.PlacementDirect(store)
    for i in range(HOSTS):
        cloud_mod.add_host(cloud, placement, f"n{i}", vcpus=64,
                           memory_mb=65536)
    groups = _groups()
    reports = workers.run(
        group_race_worker.run,
        [(db_url, groups, ROUNDS, THREADS, seed) for seed in range(WORKERS)],
        timeout=300)
    assert [r["failures"] for r in reports] == [[]] * WORKERS
    live = {}
    for r in reports:
        live.update(r["live"])
    assert group_race_worker.violations(groups, placement, live) == []
    conflicts = sum(r["group_conflicts"] for r in reports)
    assert conflicts > 0, "no claim ever raced another for its group"
    # Room is never short: an affinity group's host has 64 vCPUs for at
    # most 16 members. An anti-affinity group fills up (6 hosts, 16
    # members asked): only its own filter may refuse it.
    policy = {uuid: p for uuid, p, _limit in groups}
    wrong = [(policy[g], why) for r in reports for g, _n, why in r["refused"]
             if policy[g] == "affinity"
             or "ServerGroupAntiAffinityFilter" not in why]
    assert wrong == []
    cloud.close()
