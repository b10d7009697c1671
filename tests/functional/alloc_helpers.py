"""Helpers for the allocation, usage, reshaper and consumer tests, and
the worker process of the concurrency test."""

import random
import time
import traceback

import sqlalchemy as sa

from placement.db import store as store_mod
from placement.db import tables
from placement.objects import allocations, inventories, providers
from tests.functional import objects_helpers

Inventory = inventories.Inventory
Write = allocations.ConsumerAllocations
UNCHECKED = allocations.UNCHECKED

PROJECT = "project-a"
USER = "user-a"


new_uuid = objects_helpers.new_uuid
snapshot = objects_helpers.snapshot
Recorder = objects_helpers.Recorder


def raises_unchanged(store, exc_type, fn, *args, **kwargs):
    """objects_helpers.raises_unchanged, for exactly ``exc_type`` (not a
    subclass of it)."""
    error = objects_helpers.raises_unchanged(store, exc_type, fn, *args,
                                             **kwargs)
    assert type(error) is exc_type
    return error


def provider(store, name, parent=None, **invs):
    """A new provider with inventory ``{rc: total or Inventory}``."""
    rp = providers.create(store, name, parent_uuid=parent)
    if invs:
        inventories.replace_all(store, rp.uuid, rp.generation, [
            v if isinstance(v, Inventory) else Inventory(rc, v)
            for rc, v in invs.items()])
    return rp.uuid


def gen(store, rp_uuid):
    return providers.get(store, rp_uuid).generation


def gens(store, *rp_uuids):
    return [gen(store, u) for u in rp_uuids]


def write(store, consumer, allocs, project=PROJECT, user=USER,
          generation=UNCHECKED, consumer_type=None):
    """Replace one consumer's allocations; its new generation."""
    result = allocations.replace(store, [Write(
        consumer, allocs, project_id=project, user_id=user,
        consumer_generation=generation, consumer_type=consumer_type)])
    return result[providers.canonical_uuid(consumer)]


def resources_of(store, consumer):
    """{provider uuid: {rc: used}} of the consumer."""
    view = allocations.for_consumer(store, consumer)
    return {rp: dict(a.resources) for rp, a in view.allocations.items()}


def rc_id(store, name):
    return store.read(lambda txn: txn.catalog.rc_id(txn, name))


def rp_id(store, rp_uuid):
    return providers.get(store, rp_uuid).id


def count_rows(store, table):
    with store.engine.connect() as conn:
        return conn.execute(
            sa.select(sa.func.count()).select_from(table)).scalar()


def usage_and_capacity(store):
    """{(provider uuid, rc name): (used, capacity)} for every inventory,
    computed in SQL from the tables alone."""
    inv, alloc = tables.inventories, tables.allocations
    rp, rc = tables.resource_providers, tables.resource_classes
    used = (sa.select(sa.func.coalesce(sa.func.sum(alloc.c.used), 0))
            .where(alloc.c.resource_provider_id == inv.c.resource_provider_id)
            .where(alloc.c.resource_class_id == inv.c.resource_class_id)
            .scalar_subquery())
    query = (sa.select(rp.c.uuid, rc.c.name, inv.c.total, inv.c.reserved,
                       inv.c.allocation_ratio, used.label("used"))
             .select_from(inv.join(rp, rp.c.id == inv.c.resource_provider_id)
                          .join(rc, rc.c.id == inv.c.resource_class_id)))
    with store.engine.connect() as conn:
        return {(r.uuid, r.name): (int(r.used), (r.total - r.reserved)
                                   * r.allocation_ratio)
                for r in conn.execute(query)}


# The concurrency test's worker (spawned: everything here is picklable).

ACCEPTED = "accepted"
REFUSALS = ("CapacityExceeded", "ResourceProviderGenerationConflict",
            "ConsumerGenerationConflict")


def _outcome(exc):
    kind = type(exc)
    return f"{kind.__module__}.{kind.__qualname__}: {exc}"


def claim_worker(url, job, barrier, queue):
    """Open a store of our own on ``url`` and race the other workers.

    Phase 1: ``job["claims"]`` claims of one new consumer each on random
    providers of ``job["providers"]``. Phase 2: ``job["rounds"]``
    read-modify-writes of consumers shared by every worker
    (``job["shared"]``) on ``job["spare"]`` providers, each written with
    the consumer generation just read.

    Puts on ``queue`` a dict: "claims" [(consumer, rp uuid, asked,
    outcome)], "window" (start, end) of phase 1, "updates" [(consumer,
    rp uuid, asked, given generation, outcome, new generation)] and
    "crash" (a traceback or None). An outcome is ACCEPTED or
    ``module.ClassName: message``.
    """
    from tests import databases

    report = {"claims": [], "window": None, "updates": [], "crash": None}
    store = None
    try:
        store = store_mod.Store(databases.make_conf(url))
        rng = random.Random(job["seed"])
        barrier.wait(timeout=120)
        start = time.time()
        for _ in range(job["claims"]):
            consumer = new_uuid()
            rp_uuid = rng.choice(job["providers"])
            asked = {"VCPU": rng.randint(1, 4),
                     "MEMORY_MB": rng.choice((512, 1024, 2048)),
                     "DISK_GB": rng.randint(5, 40)}
            try:
                allocations.replace(store, [Write(
                    consumer, {rp_uuid: asked}, project_id="proj",
                    user_id=f"user-{job['seed']}", consumer_generation=None,
                    consumer_type="INSTANCE")])
                outcome = ACCEPTED
            except Exception as exc:
                outcome = _outcome(exc)
            report["claims"].append((consumer, rp_uuid, asked, outcome))
        report["window"] = (start, time.time())
        barrier.wait(timeout=120)
        for _ in range(job["rounds"]):
            consumer = rng.choice(job["shared"])
            seen = allocations.for_consumer(store, consumer).consumer
            given = seen.generation if seen is not None else None
            rp_uuid = rng.choice(job["spare"])
            asked = {"VCPU": rng.randint(1, 3)}
            new = None
            try:
                new = allocations.replace(store, [Write(
                    consumer, {rp_uuid: asked}, project_id="proj",
                    user_id="shared", consumer_generation=given)])[consumer]
                outcome = ACCEPTED
            except Exception as exc:
                outcome = _outcome(exc)
            report["updates"].append(
                (consumer, rp_uuid, asked, given, outcome, new))
    except BaseException:
        report["crash"] = traceback.format_exc()
        barrier.abort()  # the others stop waiting for this one
    finally:
        if store is not None:
            store.dispose()
        queue.put(report)
