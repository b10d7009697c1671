"""Allocations: what each consumer uses of each provider.

A write replaces all the allocations of each consumer it names, for any
number of consumers, in one transaction:

1. the generations of the providers involved are read first;
2. the consumers' current allocations are read, to be deleted;
3. capacity is checked against what remains without them: (total -
   reserved) * allocation_ratio, min_unit, max_unit and step_size. A
   provider already over capacity (its inventory shrank) may keep or
   reduce its usage but not grow it;
4. the old rows are deleted; the provider generations are
   compared-and-set (a provider changed since step 1 makes the store
   retry the whole write on fresh state, up to [placement]
   allocation_conflict_retry_count times), then the consumer generations
   (a mismatch is the caller's conflict);
5. the new rows are inserted. Consumers are created on their first
   allocation and deleted when left with none.

Generation bumps follow OpenStack Placement: every provider named in the
new allocations moves; so do the providers of a consumer whose
allocations are removed by an empty write. A plain delete moves none.
"""

import collections
import dataclasses
import datetime

import sqlalchemy as sa

from placement import errors
from placement.db import fastsql, store, tables
from placement.objects import consumer_groups
from placement.objects import consumers as consumers_mod
from placement.objects import providers as providers_mod

# consumer_generation value meaning "do not check" (before 1.28).
UNCHECKED = object()

_alloc = tables.allocations
_inv = tables.inventories
_rp = tables.resource_providers
_consumer = tables.consumers


# Statements of the claim path, built once: SQLAlchemy then reuses their
# cache keys and compiled forms, which halves the cost of a claim.
def _in(name):
    return sa.bindparam(name, expanding=True)


# One statement reads the providers' generations together with their
# inventory and usage: a single snapshot, so every later compare-and-set
# of those generations guards what was read.
_used = (sa.select(sa.func.sum(_alloc.c.used))
         .where(_alloc.c.resource_provider_id == _rp.c.id)
         .where(_alloc.c.resource_class_id == _inv.c.resource_class_id)
         .scalar_subquery())
_PROVIDER_STATE = fastsql.Fast(
    sa.select(_rp.c.id, _rp.c.uuid, _rp.c.generation,
              _inv.c.resource_class_id, _inv.c.total, _inv.c.reserved,
              _inv.c.min_unit, _inv.c.max_unit, _inv.c.step_size,
              _inv.c.allocation_ratio, _used.label("used"))
    .select_from(_rp.outerjoin(_inv, sa.and_(
        _inv.c.resource_provider_id == _rp.c.id,
        _inv.c.resource_class_id.in_(_in("rc_ids")))))
    .where(_rp.c.uuid.in_(_in("uuids"))))
_PROVIDERS_BY_ID = sa.select(
    _rp.c.id, _rp.c.uuid, _rp.c.generation).where(_rp.c.id.in_(_in("ids")))
_CONSUMERS_BY_UUID = fastsql.Fast(consumers_mod.SELECT.where(
    _consumer.c.uuid.in_(_in("uuids"))))
_ALLOCATIONS_OF_CONSUMERS = fastsql.Fast(sa.select(
    _alloc.c.id, _alloc.c.consumer_id, _alloc.c.resource_provider_id,
    _alloc.c.resource_class_id, _alloc.c.used,
).where(_alloc.c.consumer_id.in_(_in("ids"))))
# The same rows by the consumers' uuids: sent with the reads they would
# otherwise wait for (a pipelined write).
_ALLOCATIONS_OF_CONSUMER_UUIDS = fastsql.Fast(sa.select(
    _alloc.c.id, _alloc.c.consumer_id, _alloc.c.resource_provider_id,
    _alloc.c.resource_class_id, _alloc.c.used,
).select_from(_alloc.join(_consumer, _consumer.c.id == _alloc.c.consumer_id))
    .where(_consumer.c.uuid.in_(_in("uuids"))))
_DELETE_ALLOCATIONS = fastsql.Fast(
    _alloc.delete().where(_alloc.c.id.in_(_in("ids"))))
_ALLOCATION_COLUMNS = ["resource_provider_id", "consumer_id",
                       "resource_class_id", "used", "created_at"]
_INSERT_ALLOCATIONS = fastsql.FastInsert(_alloc, _ALLOCATION_COLUMNS)
# consumer_id given as the consumer's uuid: for consumers whose INSERT
# went in the same pipeline, whose ids are not back yet.
_INSERT_ALLOCATIONS_BY_UUID = fastsql.FastInsert(
    _alloc, _ALLOCATION_COLUMNS,
    found_by={"consumer_id": (_consumer.c.id, _consumer.c.uuid)})
_CONSUMER_COLUMNS = ["uuid", "project_id", "user_id", "consumer_type_id",
                     "generation", "created_at"]
_INSERT_CONSUMER = fastsql.Fast(_consumer.insert(),
                                columns=_CONSUMER_COLUMNS,
                                returning=_consumer.c.id)
_INSERT_CONSUMERS = fastsql.FastInsert(
    _consumer, _CONSUMER_COLUMNS, returning=(_consumer.c.uuid, _consumer.c.id))
_SEND_CONSUMERS = fastsql.FastInsert(_consumer, _CONSUMER_COLUMNS)
_consumer_guard = sa.and_(_consumer.c.id == sa.bindparam("c_id"),
                          _consumer.c.generation == sa.bindparam("c_gen"))
_UPDATE_CONSUMER = fastsql.Fast(
    _consumer.update().where(_consumer_guard).values(
        generation=sa.bindparam("new_gen"), project_id=sa.bindparam("p_id"),
        user_id=sa.bindparam("u_id"), consumer_type_id=sa.bindparam("t_id"),
        updated_at=sa.bindparam("now")))
_DELETE_CONSUMER = fastsql.Fast(_consumer.delete().where(_consumer_guard))


@dataclasses.dataclass(frozen=True)
class ConsumerAllocations:
    """A write of one consumer's allocations. Empty ``allocations``
    removes them all."""

    consumer_uuid: str
    # {provider uuid: {resource class: amount}}
    allocations: dict
    project_id: str | None = None
    user_id: str | None = None
    # None: the consumer must not exist yet; an int: its current
    # generation; UNCHECKED: no check.
    consumer_generation: object = UNCHECKED
    consumer_type: str | None = None
    # A consumer_groups.GroupRule: the group the consumer joins, whose
    # rule the write must keep (checked in its transaction).
    group: object = None


@dataclasses.dataclass(frozen=True)
class ProviderAllocation:
    generation: int
    resources: dict


@dataclasses.dataclass(frozen=True)
class ConsumerView:
    """A consumer's allocations, keyed by provider uuid."""

    consumer: consumers_mod.Consumer | None
    allocations: dict
    last_modified: datetime.datetime | None


def _validate(writes):
    seen = set()
    for write in writes:
        uuid = providers_mod.canonical_uuid(write.consumer_uuid)
        if uuid in seen:
            raise errors.InvalidAllocation(
                f"Consumer {uuid} appears more than once in one write.")
        seen.add(uuid)
        for rp_uuid, resources in write.allocations.items():
            if not resources:
                raise errors.InvalidAllocation(
                    f"Allocation of consumer {uuid} on resource provider "
                    f"{rp_uuid} names no resources.")
            for rc, amount in resources.items():
                if (not isinstance(amount, int) or isinstance(amount, bool)
                        or amount < 1):
                    raise errors.InvalidAllocation(
                        f"Allocation of {rc} on resource provider {rp_uuid} "
                        f"for consumer {uuid} must be a positive integer, "
                        f"not {amount!r}.")


def _check_consumer_generation(write, row):
    given = write.consumer_generation
    if given is UNCHECKED:
        return
    expected = row.generation if row is not None else None
    if given != expected:
        raise errors.ConsumerGenerationConflict(
            write.consumer_uuid, expected, given)


@store.writer(retry_conflicts=True, pipelined=True)
def replace(txn, writes):
    """Replace the allocations of every consumer in ``writes`` (a list of
    ConsumerAllocations) at once. Returns {consumer uuid: new consumer
    generation, or None when the consumer was removed}.

    Three steps, so that nothing is written before everything is known
    to fit: _plan reads (refusing unknown providers and stale consumer
    generations), _check_capacity refuses what does not fit, _apply
    writes. On PostgreSQL the reads travel in one round trip (with
    BEGIN) and the writes, with the change log rows and COMMIT, in
    another (placement.db.pipeline).
    """
    writes = _canonical(writes)
    _validate(writes)
    if not writes:
        return {}
    if any(w.group is not None for w in writes):
        consumer_groups.enforce(txn, writes)
    plan = _plan(txn, writes)
    if plan.new_rows:
        _check_capacity(plan.state, plan.new_rows, plan.old_rows)
    return _apply(txn, plan)


def _canonical(writes):
    """The writes with canonical consumer uuids and plain dicts: provider
    uuids as strings, so that a UUID object and its text name one
    provider."""
    return [dataclasses.replace(
        w, consumer_uuid=providers_mod.canonical_uuid(w.consumer_uuid),
        allocations={str(rp): dict(res) for rp, res in w.allocations.items()})
        for w in writes]


@dataclasses.dataclass
class _Plan:
    """What a replace read, and so what it writes."""

    # (write, rp uuid, rc id, rc, amount), in request order
    new_rows: list
    state: object  # a _ProviderState
    consumers: list  # a _ConsumerPlan per write, in request order
    # The consumers' current allocations (rows of _ALLOCATIONS_OF_CONSUMERS)
    old_rows: list


def _plan(txn, writes):
    """Read what the writes depend on, and check it in the order that
    decides which error a bad write gets: the providers
    (AllocationProviderNotFound), then each consumer in turn
    (ConsumerGenerationConflict, and its project, user and type, created
    when new). The reads go together: the providers' state, the
    consumers, and in a pipeline the consumers' current allocations
    too (elsewhere these are read after, and only for consumers that
    exist)."""
    new_rows = _new_rows(txn, writes)
    uuids = [w.consumer_uuid for w in writes]
    together = txn.pipeline.sends_together
    sent = []
    try:
        with txn.pipeline.reads():
            providers = _send_provider_read(txn, writes, new_rows, sent)
            consumer_rows = _CONSUMERS_BY_UUID.queue(txn, {"uuids": uuids})
            sent.append(consumer_rows)
            if together:
                old = _ALLOCATIONS_OF_CONSUMER_UUIDS.queue(
                    txn, {"uuids": uuids})
                sent.append(old)
        state = _provider_state(writes, providers)
        existing = {row.uuid: row for row in consumer_rows.rows()}
        consumers = [_plan_consumer(txn, w, existing.get(w.consumer_uuid))
                     for w in writes]
        if together:
            old_rows = old.rows()
        elif existing:
            old_rows = _ALLOCATIONS_OF_CONSUMERS.rows(txn, {
                "ids": sorted(row.id for row in existing.values())})
        else:
            old_rows = []
    finally:
        for pending in sent:
            pending.close()
    return _Plan(new_rows, state, consumers, old_rows)


def _new_rows(txn, writes):
    """One (write, rp uuid, rc id, rc, amount) per allocation row to
    insert, in request order (which decides the error of a bad one);
    ResourceClassNotFound for an unknown class."""
    rc_id = txn.catalog.rc_id
    return [(write, rp_uuid, rc_id(txn, rc), rc, amount)
            for write in writes
            for rp_uuid, resources in write.allocations.items()
            for rc, amount in resources.items()]


def _send_provider_read(txn, writes, new_rows, sent):
    """Send the read of the providers' generations, inventory and usage
    in one snapshot (every later compare-and-set guards what it read);
    its Pending (also added to ``sent``), or None when no provider is
    named."""
    wanted = list(dict.fromkeys(rp for w in writes for rp in w.allocations))
    if not wanted:
        return None
    pending = _PROVIDER_STATE.queue(txn, {
        "uuids": wanted, "rc_ids": sorted({r[2] for r in new_rows})})
    sent.append(pending)
    return pending


def _provider_state(writes, pending):
    """The _ProviderState read by ``pending``; AllocationProviderNotFound
    names the first unknown provider."""
    if pending is None:
        return _ProviderState(())
    state = _ProviderState(pending.rows())
    for write in writes:
        for rp_uuid in write.allocations:
            if rp_uuid not in state.by_uuid:
                raise errors.AllocationProviderNotFound(rp_uuid)
    return state


def _apply(txn, plan):
    """Write a checked plan: the old rows go, the generations move
    (providers first, sorted: one lock order for every writer), the new
    rows go in; the index learns the usage change after the commit.
    In a pipeline the writes are sent together, with COMMIT, and the
    server enforces their guards (fastsql.or_fail). Returns {consumer
    uuid: new generation or None}."""
    to_bump = _providers_that_move(txn, plan)
    txn.pipeline.send_writes()
    if plan.old_rows:
        _later(txn, _DELETE_ALLOCATIONS.queue(
            txn, {"ids": [r.id for r in plan.old_rows]}))
    for rp_id in sorted(to_bump):
        rp = to_bump[rp_id]
        providers_mod.bump_generation_later(txn, rp.id, rp.uuid,
                                            rp.generation)
    consumer_ids = _write_consumers(txn, plan.consumers)
    _insert_rows(txn, plan, consumer_ids)
    return {p.write.consumer_uuid: p.new_generation for p in plan.consumers}


def _later(txn, *pending):
    """Close the statements ``pending`` once their results are in: a
    write whose failure, if any, the pipeline's sync raises."""
    def close():
        for sent in pending:
            sent.close()
    txn.pipeline.check_later(close, may_refuse=False)


def _providers_that_move(txn, plan):
    """{id: row with uuid and generation} of the providers whose
    generation moves, as in OpenStack Placement: those allocated to, and
    those of consumers whose allocations are all removed (their
    generations read now: they were not in the snapshot)."""
    to_bump = {rp.id: rp for rp in plan.state.by_uuid.values()}
    emptied = {p.row.id for p in plan.consumers
               if p.row is not None and not p.write.allocations}
    extra = sorted({r.resource_provider_id for r in plan.old_rows
                    if r.consumer_id in emptied} - set(to_bump))
    if extra:
        to_bump.update((row.id, row) for row in txn.execute(
            _PROVIDERS_BY_ID, {"ids": extra}))
    return to_bump


def _insert_rows(txn, plan, consumer_ids):
    """Insert the new allocation rows (one statement) and record the
    usage change of the old and new rows for the index. A consumer whose
    id is not known yet (None: its INSERT is in the same pipeline) is
    named by uuid, and the statement looks its id up."""
    by_uuid = plan.state.by_uuid
    if plan.new_rows:
        by_id = all(consumer_ids[w.consumer_uuid] is not None
                    for w, _rp, _i, _rc, _a in plan.new_rows)
        insert = _INSERT_ALLOCATIONS if by_id else _INSERT_ALLOCATIONS_BY_UUID
        _later(txn, *insert.queue(txn, [
            {"resource_provider_id": by_uuid[rp_uuid].id,
             "consumer_id": (consumer_ids[write.consumer_uuid] if by_id
                             else write.consumer_uuid),
             "resource_class_id": rc_id, "used": amount,
             "created_at": txn.now}
            for write, rp_uuid, rc_id, _rc, amount in plan.new_rows]))
    for r in plan.old_rows:
        txn.changes.add_usage(r.resource_provider_id, r.resource_class_id,
                              -r.used)
    for _write, rp_uuid, rc_id, _rc, amount in plan.new_rows:
        txn.changes.add_usage(by_uuid[rp_uuid].id, rc_id, amount)


class _ProviderState:
    """Rows of _PROVIDER_STATE: providers by uuid, inventory by
    (provider id, class id)."""

    def __init__(self, rows):
        self.by_uuid = {}
        self.inventory = {}
        for row in rows:
            self.by_uuid[row.uuid] = row
            if row.resource_class_id is not None:
                self.inventory[(row.id, row.resource_class_id)] = row


@dataclasses.dataclass
class _ConsumerPlan:
    write: ConsumerAllocations
    row: object  # the existing consumer row, or None
    project_pk: int
    user_pk: int
    type_pk: int | None

    @property
    def new_generation(self):
        if not self.write.allocations:
            return None
        return 1 if self.row is None else self.row.generation + 1


def _plan_consumer(txn, write, row):
    _check_consumer_generation(write, row)
    conf = txn.store.conf.placement
    project_id, user_id = write.project_id, write.user_id
    if project_id is None:
        project_id = conf.incomplete_consumer_project_id
        user_id = conf.incomplete_consumer_user_id
    elif user_id is None:
        user_id = conf.incomplete_consumer_user_id
    type_pk = row.consumer_type_id if row is not None else None
    if write.consumer_type is not None:
        type_pk = consumers_mod.ensure_consumer_type(txn, write.consumer_type)
    return _ConsumerPlan(
        write=write, row=row,
        project_pk=consumers_mod.ensure_project(txn, project_id),
        user_pk=consumers_mod.ensure_user(txn, user_id), type_pk=type_pk)


def _write_consumers(txn, plans):
    """Write the consumer rows in uuid order (one lock order for every
    writer); {uuid: internal id, None for a new consumer whose INSERT
    is in the pipeline, not back yet}. Several consumers that are all new
    (a group of scheduler claims) go in one multi-row INSERT, in that
    order."""
    ordered = sorted(plans, key=lambda p: p.write.consumer_uuid)
    new = [p for p in ordered if p.row is None and p.write.allocations]
    if txn.pipeline.sends_together and new:
        _later(txn, *_SEND_CONSUMERS.queue(
            txn, [_new_consumer(txn, p) for p in new]))
        ids = dict.fromkeys(p.write.consumer_uuid for p in new)
        ids.update((p.write.consumer_uuid, _write_consumer(txn, p))
                   for p in ordered if p.write.consumer_uuid not in ids)
        return ids
    if len(ordered) > 1 and len(new) == len(ordered):
        rows = _INSERT_CONSUMERS.rows(
            txn, [_new_consumer(txn, p) for p in ordered])
        return {row.uuid: row.id for row in rows}
    return {p.write.consumer_uuid: _write_consumer(txn, p) for p in ordered}


def _new_consumer(txn, plan):
    return {"uuid": plan.write.consumer_uuid, "project_id": plan.project_pk,
            "user_id": plan.user_pk, "consumer_type_id": plan.type_pk,
            "generation": 1, "created_at": txn.now}


def _write_consumer(txn, plan):
    """Create, update or delete the consumer row; its internal id."""
    write, row = plan.write, plan.row
    if row is None:
        if not write.allocations:
            return None
        return _INSERT_CONSUMER.insert(txn, _new_consumer(txn, plan))
    guard = {"c_id": row.id, "c_gen": row.generation}
    if not write.allocations:
        statement, params = _DELETE_CONSUMER, guard
    else:
        statement, params = _UPDATE_CONSUMER, {
            **guard, "new_gen": row.generation + 1, "p_id": plan.project_pk,
            "u_id": plan.user_pk, "t_id": plan.type_pk, "now": txn.now}

    txn.pipeline.guard(statement, params, lambda: (
        errors.ConsumerGenerationConflict(write.consumer_uuid, raced=True)))
    return row.id


def _check_capacity(state, new_rows, old_rows):
    """Refuse allocations a provider cannot hold; see the module doc.
    The rows are checked in request order, so the first bad one names
    the error."""
    _check_has_inventory(state, new_rows)
    removed = collections.Counter()
    for r in old_rows:
        removed[(r.resource_provider_id, r.resource_class_id)] += r.used
    asked = collections.Counter()
    for _write, rp_uuid, rc_id, rc, amount in new_rows:
        key = (state.by_uuid[rp_uuid].id, rc_id)
        asked[key] += amount
        inv = state.inventory.get(key)
        if inv is None:
            raise errors.InvalidInventory(rc, rp_uuid)
        _check_fits(inv, rc, rp_uuid, amount, removed[key], asked[key])


def _check_has_inventory(state, new_rows):
    """A provider with no inventory at all (of the classes asked) is
    refused first, naming every class asked and every such provider, as
    OpenStack Placement does."""
    with_inventory = {rp_id for rp_id, _rc in state.inventory}
    missing = [rp_uuid for _w, rp_uuid, _i, _r, _a in new_rows
               if state.by_uuid[rp_uuid].id not in with_inventory]
    if missing:
        classes = sorted({rc for _w, _rp, _i, rc, _a in new_rows})
        raise errors.InvalidInventory(", ".join(classes),
                                      ", ".join(dict.fromkeys(missing)))


def _check_fits(inv, rc, rp_uuid, amount, removed, asked):
    """One row against its inventory: ``amount`` within min_unit,
    max_unit and step_size; ``asked`` (this write's total of the class on
    the provider, so far) within capacity once the writes' consumers'
    ``removed`` usage is gone. A provider already over capacity may keep
    or reduce its usage, not grow it."""
    if (amount < inv.min_unit or amount > inv.max_unit
            or amount % inv.step_size):
        raise errors.ConstraintsViolated(rc, rp_uuid)
    before = int(inv.used or 0)
    used = before - removed
    capacity = (inv.total - inv.reserved) * inv.allocation_ratio
    if capacity >= used + asked:
        return
    if before and used + asked <= before:
        return
    raise errors.CapacityExceeded(rc, rp_uuid, requested=amount,
                                  used=used, capacity=capacity)


@store.reader
def for_consumer(txn, consumer_uuid):
    """The consumer's allocations (a ConsumerView; empty when the consumer
    has none)."""
    consumer_uuid = str(consumer_uuid)
    row = txn.execute(consumers_mod.SELECT.where(
        _consumer.c.uuid == consumer_uuid)).first()
    if row is None:
        return ConsumerView(None, {}, None)
    result = txn.execute(
        sa.select(_rp.c.uuid, _rp.c.generation, _alloc.c.resource_class_id,
                  _alloc.c.used, _alloc.c.created_at, _alloc.c.updated_at)
        .select_from(_alloc.join(_rp,
                                 _rp.c.id == _alloc.c.resource_provider_id))
        .where(_alloc.c.consumer_id == row.id))
    allocations = {}
    last_modified = None
    for r in result:
        entry = allocations.setdefault(
            r.uuid, ProviderAllocation(r.generation, {}))
        entry.resources[txn.catalog.rc_name(txn, r.resource_class_id)] = (
            r.used)
        stamp = r.updated_at or r.created_at
        last_modified = max(filter(None, (last_modified, stamp)))
    return ConsumerView(consumers_mod.from_row(row), allocations,
                        last_modified)


@dataclasses.dataclass(frozen=True)
class ProviderAllocations:
    provider: providers_mod.ResourceProvider
    # {consumer uuid: {resource class: used}}
    allocations: dict
    consumer_generations: dict
    last_modified: datetime.datetime | None


@store.reader
def for_provider(txn, provider_uuid):
    """Every allocation against the provider, by consumer."""
    provider = providers_mod.get(txn, provider_uuid)
    result = txn.execute(
        sa.select(_consumer.c.uuid, _consumer.c.generation,
                  _alloc.c.resource_class_id, _alloc.c.used,
                  _alloc.c.created_at, _alloc.c.updated_at)
        .select_from(_alloc.join(_consumer,
                                 _consumer.c.id == _alloc.c.consumer_id))
        .where(_alloc.c.resource_provider_id == provider.id))
    allocations, generations = {}, {}
    last_modified = None
    for r in result:
        allocations.setdefault(r.uuid, {})[
            txn.catalog.rc_name(txn, r.resource_class_id)] = r.used
        generations[r.uuid] = r.generation
        stamp = r.updated_at or r.created_at
        last_modified = max(filter(None, (last_modified, stamp)))
    return ProviderAllocations(provider, allocations, generations,
                               last_modified)


@store.writer
def delete_for_consumer(txn, consumer_uuid):
    """Remove every allocation of the consumer, and the consumer.
    AllocationsNotFound when it has none. No generation moves."""
    consumer_uuid = str(consumer_uuid)
    # The claim path's precompiled statements: a delete per instance is
    # as hot as a claim (the simulator does as many of each).
    consumer = _CONSUMERS_BY_UUID.first(txn, {"uuids": [consumer_uuid]})
    old_rows = []
    if consumer is not None:
        old_rows = _ALLOCATIONS_OF_CONSUMERS.rows(txn, {"ids": [consumer.id]})
    if not old_rows:
        raise errors.AllocationsNotFound(consumer_uuid)
    _DELETE_ALLOCATIONS.rowcount(txn, {"ids": [r.id for r in old_rows]})
    gone = _DELETE_CONSUMER.rowcount(
        txn, {"c_id": consumer.id, "c_gen": consumer.generation})
    if gone != 1:
        # Rewritten since it was read: read again.
        raise store.RetryTransaction()
    for r in old_rows:
        txn.changes.add_usage(r.resource_provider_id, r.resource_class_id,
                              -r.used)
