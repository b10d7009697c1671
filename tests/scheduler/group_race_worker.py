"""A scheduler process for the server-group race test: opens its own
store on the test database, waits for the others, then creates members
of the shared groups (one instance, or two in one request) from several
threads, deleting some of its own members between creates, and reports
where each live member ended."""

import collections
import random
import threading
import uuid as uuidlib

from placement import direct
from placement.db import store as store_mod
from scheduler import errors, group_policies, manager
from tests import databases

FLAVOR = {"vcpus": 1, "memory_mb": 256, "root_gb": 1}


def run(db_url, groups, rounds, threads, seed, barrier, results,
        enforce=True):
    """``groups``: [(uuid, policy, max_server_per_host)]. ``enforce``
    false: claims keep no group rule, as before claim-time enforcement
    (benchmarks.group_race measures what that lets through)."""
    if not enforce:
        group_policies.enforced = lambda state: False
    conf = databases.make_conf(
        db_url, {("placement_database", "sync_on_startup"): False})
    store = store_mod.Store.open(conf)
    scheduler = manager.Scheduler(conf, store=store)
    placement = direct.PlacementDirect(store)
    rng = random.Random(seed)
    live, refused, failures, deleted = {}, [], [], [0]
    lock = threading.Lock()

    def create(group):
        uuid, policy, limit = group
        count = rng.choice((1, 1, 2))
        instances = [str(uuidlib.uuid4()) for _ in range(count)]
        spec = {"flavor": FLAVOR, "num_instances": count,
                "project_id": "p", "user_id": "u",
                "instance_group": {"uuid": uuid, "policy": policy,
                                   "members": instances,
                                   "rules": ({"max_server_per_host": limit}
                                             if limit > 1 else {})}}
        try:
            chosen = scheduler.select_destinations(None, spec, instances)
        except errors.NoValidHost as exc:
            with lock:
                refused.append((uuid, count, str(exc)))
            return
        with lock:
            for instance, (first, *_alternates) in zip(
                    instances, chosen, strict=True):
                live[instance] = (uuid, first.compute_node_uuid)

    def delete_one():
        with lock:
            if not live:
                return
            instance = rng.choice(sorted(live))
            del live[instance]
            deleted[0] += 1
        placement.delete_allocations(instance)

    def serve(mine):
        for group in mine:
            try:
                create(group)
                if rng.random() < 0.25:
                    delete_one()
            except Exception as exc:  # reported: the test fails with it
                with lock:
                    failures.append(repr(exc))

    try:
        scheduler.table.sync()
        barrier.wait(timeout=120)
        order = [g for _ in range(rounds) for g in groups]
        shares = [order[i::threads] for i in range(threads)]
        pool = [threading.Thread(target=serve, args=(share,))
                for share in shares]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    except Exception as exc:
        failures.append(repr(exc))
    finally:
        stats = dict(scheduler.stats)
        scheduler.close()
        store.dispose()
        results.put({"live": live, "refused": refused,
                     "failures": failures, "deleted": deleted[0],
                     "group_conflicts": stats.get("group_conflicts", 0),
                     "claims_lost": stats.get("claims_lost", 0)})


def new_groups(kinds):
    """[(uuid, policy, max_server_per_host)] for ``kinds``: [(policy,
    max_server_per_host, how many groups)]."""
    return [(str(uuidlib.uuid4()), policy, limit)
            for policy, limit, count in kinds for _ in range(count)]


def violations(groups, placement, live):
    """(group, {host: members}) of every group whose live members, read
    from placement's allocations (not from gantt's group records),
    break its policy."""
    hosts_of = collections.defaultdict(list)
    for instance, (group, _host) in live.items():
        where = list(placement.get_allocations(instance).allocations)
        assert len(where) == 1, (instance, where)
        hosts_of[group].append(where[0])
    wrong = []
    for uuid, policy, limit in groups:
        per_host = collections.Counter(hosts_of[uuid])
        if policy == "affinity" and len(per_host) > 1:
            wrong.append((uuid, dict(per_host)))
        if policy == "anti-affinity" and any(
                n > limit for n in per_host.values()):
            wrong.append((uuid, dict(per_host)))
    return wrong
