"""The processes of tests/compute/test_reshape_concurrency.py (spawned:
everything here is importable and its arguments picklable).

Each worker opens a store of its own on the test database, waits on the
shared barrier, does its part and puts one report on the results queue:
a dict with "role", what it did, and "crash" (a traceback, or None).
"""

import time
import traceback
import uuid as uuidlib

from compute.placement_port import DirectPort
from compute.provider_tree import ProviderTree
from compute.report_client import GenerationConflictError, ReportClient
from compute.reshape import Move
from placement import direct
from placement.db import store as store_mod
from scheduler import errors, manager
from tests import databases

VGPU_FLAVOR = {"vcpus": 1, "memory_mb": 256, "root_gb": 1,
               "extra_specs": {"resources:VGPU": "1"}}


def _open(db_url):
    conf = databases.make_conf(
        db_url, {("placement_database", "sync_on_startup"): False})
    return conf, store_mod.Store.open(conf)


def _spec():
    return {"flavor": dict(VGPU_FLAVOR), "project_id": "p", "user_id": "u"}


def scheduler_worker(db_url, job, reshaped, barrier, results):
    """Place VGPU instances one at a time with a real Scheduler (claims
    included) while the reshaper runs, until it says it is done (or
    after ``job["max_decisions"]``): at most ``job["max_live"]`` of ours
    at a time, the oldest deleted to make room. Then, once the reshape
    is done, one more decision on the same Scheduler (its caches must
    have the new tree).

    Report: "placed" {instance: compute node uuid} (every instance the
    scheduler said it placed), "placed_at" {instance: time}, "deleted"
    {instance: time} (those deleted again), "after" [instance placed after the
    reshape], "refused", "failures" (SchedulerError messages),
    "during" how many decisions ran while the reshape was under way."""
    report = {"role": "scheduler", "placed": {}, "placed_at": {},
              "deleted": {}, "after": [], "refused": 0,
              "failures": [], "during": 0, "crash": None}
    scheduler = store = None

    def place():
        instance = str(uuidlib.uuid4())
        try:
            [[chosen, *_]] = scheduler.select_destinations(
                None, _spec(), [instance])
        except errors.NoValidHost:
            report["refused"] += 1
            return None
        except errors.SchedulerError as exc:
            report["failures"].append(exc.message)
            return None
        report["placed"][instance] = chosen.compute_node_uuid
        report["placed_at"][instance] = time.time()
        return instance

    try:
        conf, store = _open(db_url)
        scheduler = manager.Scheduler(conf, store=store)
        scheduler.table.sync()
        barrier.wait(timeout=120)
        live = []
        while (not reshaped.is_set()
               and report["during"] < job["max_decisions"]):
            if len(live) >= job["max_live"]:
                # Churn: make room by deleting our oldest instance, as
                # Nova does when one is deleted.
                gone = live.pop(0)
                scheduler.placement.delete_allocations(gone)
                report["deleted"][gone] = time.time()
            instance = place()
            if instance:
                live.append(instance)
            report["during"] += 1
            time.sleep(job["pause"])
        if not reshaped.wait(timeout=job["reshape_timeout"]):
            raise AssertionError("the reshaper did not finish in time")
        instance = place()
        if instance:
            report["after"].append(instance)
    except Exception:  # reported, so the test fails with it
        report["crash"] = traceback.format_exc()
    finally:
        if scheduler is not None:
            scheduler.close()
        if store is not None:
            store.dispose()
        results.put(report)


def wanted_tree(held, root, children):
    """The node ``root`` as ``held`` (placement's tree) has it, without
    VGPU on the root, plus ``children`` [(name, uuid, vgpu total)]."""
    node = held[root]
    tree = ProviderTree()
    tree.new_root(node.name, uuid=root,
                  inventories={rc: dict(fields)
                               for rc, fields in node.inventories.items()
                               if rc != "VGPU"},
                  traits=set(node.traits), aggregates=set(node.aggregates))
    for name, uuid, total in children:
        tree.new_child(name, root, uuid=uuid, inventories={"VGPU": total})
    return tree


def reshaper_worker(db_url, job, reshaped, barrier, results):
    """After ``job["delay"]`` s, reshape each node of ``job["nodes"]``
    ({root uuid: [(child name, child uuid, VGPU total), ...]}): the root's
    VGPU moves to the children, allocations placed by first-fit (no
    named assignments). A generation conflict that outlasts the client's
    own retries is tried again, as a compute agent would at its next
    report. Sets ``reshaped`` when done (even on failure, so the
    schedulers do not wait for nothing).

    Report: "attempts" {root: update_from_provider_tree calls},
    "window" (start, end) of the reshapes."""
    report = {"role": "reshaper", "attempts": {}, "window": None,
              "crash": None}
    store = None
    try:
        _conf, store = _open(db_url)
        port = DirectPort(direct.PlacementDirect(store))
        client = ReportClient(port)
        barrier.wait(timeout=120)
        time.sleep(job["delay"])
        start = time.time()
        for root, children in job["nodes"].items():
            if report["attempts"]:
                time.sleep(job["between"])
            tree = wanted_tree(port.read_tree(root), root, children)
            moves = [Move(root, uuid, {"VGPU": total})
                     for _name, uuid, total in children]
            deadline = time.time() + job["node_timeout"]
            attempts = 0
            while True:
                attempts += 1
                try:
                    client.update_from_provider_tree(tree, moves=moves)
                    break
                except GenerationConflictError:
                    if time.time() > deadline:
                        raise
            report["attempts"][root] = attempts
        report["window"] = (start, time.time())
    except Exception:  # reported, so the test fails with it
        report["crash"] = traceback.format_exc()
    finally:
        reshaped.set()
        if store is not None:
            store.dispose()
        results.put(report)
