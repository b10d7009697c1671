"""Server-group races between scheduler processes: how many groups end
up breaking their policy, with gantt's claim-time enforcement and
without it (claims that keep no group rule, as every scheduler decided
before it).

Four scheduler processes (three threads each) on one scratch database
create members of shared anti-affinity (max_server_per_host 1 and 2) and
affinity groups, one instance or two per request, deleting some between
creates; the groups' live members are then read back from placement's
allocations. Prints JSON, one object per engine and mode.

    .venv/bin/python -m benchmarks.group_race [--engine postgresql]
        [--engine mysql] [--rounds 3]
"""

import argparse
import collections
import functools
import json
import sys
import time

from placement import direct
from placement.db import store as store_mod
from tests import databases, workers
from tests.scheduler import cloud as cloud_mod
from tests.scheduler import group_race_worker

KINDS = [("anti-affinity", 1, 6), ("anti-affinity", 2, 3), ("affinity", 1, 4)]
HOSTS = 6


def one_run(engine, enforce, rounds, processes, threads):
    with databases.migrated_scratch(engine) as url:
        conf = databases.make_conf(
            url, {("placement_database", "sync_on_startup"): False})
        store = store_mod.Store.open(conf)
        cloud = cloud_mod.Cloud(store)
        placement = direct.PlacementDirect(store)
        for i in range(HOSTS):
            cloud_mod.add_host(cloud, placement, f"n{i}", vcpus=64,
                               memory_mb=65536)
        groups = group_race_worker.new_groups(KINDS)
        target = functools.partial(group_race_worker.run, enforce=enforce)
        start = time.perf_counter()
        reports = workers.run(target, [(url, groups, rounds, threads, seed)
                                       for seed in range(processes)],
                              timeout=600)
        wall = time.perf_counter() - start
        live = {}
        for r in reports:
            live.update(r["live"])
        wrong = group_race_worker.violations(groups, placement, live)
        policy = {uuid: p for uuid, p, _limit in groups}
        refused = collections.Counter(policy[g] for r in reports
                                      for g, _n, _why in r["refused"])
        result = {
            "engine": engine, "claim_time_enforcement": enforce,
            "processes": processes, "threads": threads,
            "groups": len(groups), "live_members": len(live),
            "deleted": sum(r["deleted"] for r in reports),
            "no_valid_host_by_policy": dict(refused),
            "groups_violating": len(wrong),
            "violating_by_policy": dict(collections.Counter(
                policy[g] for g, _where in wrong)),
            "group_conflicts": sum(r["group_conflicts"] for r in reports),
            "failures": [f for r in reports for f in r["failures"]],
            "wall_s": round(wall, 2)}
        cloud.close()
        store.dispose()
        return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", action="append",
                        choices=["postgresql", "mysql"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--threads", type=int, default=3)
    args = parser.parse_args(argv)
    for engine in args.engine or ["postgresql", "mysql"]:
        for enforce in (False, True):
            print(json.dumps(one_run(engine, enforce, args.rounds,
                                     args.processes, args.threads)),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
