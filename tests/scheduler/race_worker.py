"""A scheduler process for the race test: opens its own store on the
test database, waits for the others, then schedules one instance at a
time and reports what it was told."""

import uuid as uuidlib

from placement.db import store as store_mod
from scheduler import errors, manager
from tests import databases


def run(db_url, requests, barrier, results):
    conf = databases.make_conf(
        db_url, {("placement_database", "sync_on_startup"): False})
    store = store_mod.Store.open(conf)
    scheduler = manager.Scheduler(conf, store=store)
    placed, refused, failures = {}, 0, []
    try:
        scheduler.table.sync()
        barrier.wait(timeout=120)
        for _ in range(requests):
            instance = str(uuidlib.uuid4())
            try:
                [[chosen, *_]] = scheduler.select_destinations(
                    None, {"flavor": {"vcpus": 1, "memory_mb": 512,
                                      "root_gb": 1},
                           "project_id": "p", "user_id": "u"},
                    [instance])
                placed[instance] = chosen.compute_node_uuid
            except errors.NoValidHost:
                refused += 1
            except errors.SchedulerError as exc:
                failures.append(exc.message)
    except Exception as exc:  # reported, so the test can fail with it
        failures.append(repr(exc))
    finally:
        scheduler.close()
        store.dispose()
        results.put({"placed": placed, "refused": refused,
                     "failures": failures})
