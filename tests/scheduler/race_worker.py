"""A scheduler process for the race test: opens its own store on the
test database, waits for the others, then schedules one instance per
request and reports what it was told. With several threads, requests
queue for the scheduler and are claimed in groups
(scheduler.request_groups), as under an RPC server's thread pool."""

import threading
import uuid as uuidlib

from placement.db import store as store_mod
from scheduler import errors, manager
from tests import databases


def run(db_url, requests, threads, barrier, results):
    conf = databases.make_conf(
        db_url, {("placement_database", "sync_on_startup"): False})
    store = store_mod.Store.open(conf)
    scheduler = manager.Scheduler(conf, store=store)
    placed, refused, failures = {}, [0], []
    lock = threading.Lock()

    def one():
        instance = str(uuidlib.uuid4())
        try:
            [[chosen, *_]] = scheduler.select_destinations(
                None, {"flavor": {"vcpus": 1, "memory_mb": 512,
                                  "root_gb": 1},
                       "project_id": "p", "user_id": "u"},
                [instance])
            with lock:
                placed[instance] = chosen.compute_node_uuid
        except errors.NoValidHost:
            with lock:
                refused[0] += 1
        except Exception as exc:  # reported, so the test can fail with it
            with lock:
                failures.append(repr(exc))

    def serve(count):
        for _ in range(count):
            one()

    try:
        scheduler.table.sync()
        barrier.wait(timeout=120)
        share = [requests // threads + (i < requests % threads)
                 for i in range(threads)]
        pool = [threading.Thread(target=serve, args=(n,)) for n in share]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    except Exception as exc:
        failures.append(repr(exc))
    finally:
        grouped = scheduler.stats["grouped_decisions"]
        scheduler.close()
        store.dispose()
        results.put({"placed": placed, "refused": refused[0],
                     "failures": failures, "grouped": grouped})
