"""Allocation writes whose statements travel together (PostgreSQL's
pipeline mode, placement.db.pipeline): the round trips a claim costs,
and the guards checked after the writes were sent: another connection
commits between a write's reads and its writes, on the server engines
(SQLite has one writer at a time, so nothing can come in between)."""

import collections
import tempfile

import pytest
import sqlalchemy as sa

from placement import errors
from placement.db import fastsql
from placement.db import store as store_mod
from placement.objects import allocations, consumers
from tests import databases
from tests.functional import alloc_helpers as h

Write = allocations.ConsumerAllocations
SERVERS = pytest.mark.parametrize("engine_name", ["postgresql", "mysql"])
CLAIM = {"VCPU": 1, "MEMORY_MB": 256}


@pytest.fixture
def rp(store):
    return h.provider(store, "cn1", VCPU=8, MEMORY_MB=4096)


def _round_trips(store, write):
    """Round trips (the server's ReadyForQuery messages, from libpq's
    trace) of ``write()`` on the store's pinned connection."""
    conn = store.engine.connect()
    try:
        with store.pinned(conn), tempfile.TemporaryFile("w+") as trace:
            pgconn = conn.connection.driver_connection.pgconn
            pgconn.trace(trace.fileno())
            try:
                write()
            finally:
                pgconn.untrace()
            trace.seek(0)
            kinds = collections.Counter(
                line.split("\t")[3].split(" ")[0]
                for line in trace.read().splitlines()
                if line.split("\t")[1:2] == ["B"])
    finally:
        conn.close()
    return kinds["ReadyForQuery"]


@pytest.mark.parametrize("engine_name", ["postgresql"])
def test_a_claim_costs_two_round_trips(store, rp):
    """BEGIN with the reads; the writes with the change log rows and
    COMMIT: for a new consumer, and for rewriting one that has
    allocations (its old rows are read with the rest)."""
    consumer = h.new_uuid()
    # The project's and user's ids are cached once read (the first write
    # creates them).
    for _ in range(2):
        h.write(store, h.new_uuid(), {rp: CLAIM})

    def claim(generation):
        return lambda: allocations.replace(store, [Write(
            consumer, {rp: CLAIM}, h.PROJECT, h.USER, generation)])
    assert _round_trips(store, claim(None)) == 2
    assert _round_trips(store, claim(1)) == 2
    assert h.gen(store, rp) == 5
    assert consumers.get(store, consumer).generation == 2


@pytest.mark.parametrize("engine_name", ["postgresql"])
def test_the_pipeline_can_be_turned_off(store, db_url, rp):
    """[placement_database] postgresql_pipeline = false: one statement
    at a time, eight round trips."""
    quiet = store_mod.Store.open(databases.make_conf(db_url, {
        ("placement_database", "sync_on_startup"): False,
        ("placement_database", "postgresql_pipeline"): False}))
    try:
        for _ in range(2):
            h.write(quiet, h.new_uuid(), {rp: CLAIM})
        assert _round_trips(quiet, lambda: h.write(
            quiet, h.new_uuid(), {rp: CLAIM}, generation=None)) == 8
    finally:
        quiet.dispose()


class _Between:
    """Run ``act()`` once, after the first write's reads and capacity
    check and before its writes are sent; count the tries (reads)."""

    def __init__(self, monkeypatch, act):
        self.calls = self.tries = 0
        check_capacity, plan = allocations._check_capacity, allocations._plan

        def check(*args):
            check_capacity(*args)
            self.calls += 1
            if self.calls == 1:
                act()

        def count_tries(*args):
            self.tries += 1
            return plan(*args)
        monkeypatch.setattr(allocations, "_check_capacity", check)
        monkeypatch.setattr(allocations, "_plan", count_tries)


def _commit(store, sql, **params):
    """Commit ``sql`` on a connection of its own."""
    with store.engine.begin() as conn:
        conn.execute(sa.text(sql), params)


@SERVERS
def test_provider_changed_after_the_read_is_retried(store, rp, monkeypatch):
    """The generation compare-and-set misses its row (on PostgreSQL the
    server fails it, and COMMIT, sent with it, does nothing): the whole
    write runs again on fresh state."""
    before = h.gen(store, rp)
    between = _Between(monkeypatch, lambda: _commit(
        store, "UPDATE resource_providers SET generation = generation + 1"
               " WHERE uuid = :u", u=rp))
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: CLAIM}, generation=None)
    assert (between.tries, between.calls) == (2, 2)
    assert h.gen(store, rp) == before + 2
    assert allocations.for_consumer(store, consumer).allocations[rp] \
        .resources == CLAIM


@SERVERS
def test_consumer_rewritten_after_the_read_is_a_conflict(store, rp,
                                                         monkeypatch):
    """The consumer's guarded update misses its row: the caller's
    conflict, and nothing of the write is stored (on PostgreSQL though
    COMMIT was sent with it)."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: CLAIM}, generation=None)
    before = h.gen(store, rp)
    between = _Between(monkeypatch, lambda: _commit(
        store, "UPDATE consumers SET generation = generation + 1"
               " WHERE uuid = :u", u=consumer))
    with pytest.raises(errors.ConsumerGenerationConflict):
        h.write(store, consumer, {rp: {"VCPU": 2, "MEMORY_MB": 512}},
                generation=allocations.UNCHECKED)
    assert between.tries == 1
    assert h.gen(store, rp) == before
    assert consumers.get(store, consumer).generation == 2
    assert allocations.for_consumer(store, consumer).allocations[rp] \
        .resources == CLAIM


@SERVERS
def test_consumer_created_after_the_read_is_a_conflict(store, rp,
                                                       monkeypatch):
    """Another connection creates the same new consumer: the INSERT sent
    in the pipeline fails its unique key when the pipeline settles, the
    write runs again, and its reads find a consumer that must not
    exist (generation 7)."""
    consumer = h.new_uuid()
    h.write(store, h.new_uuid(), {rp: CLAIM}, generation=None)
    with store.engine.connect() as conn:
        project_pk, user_pk = conn.execute(sa.text(
            "SELECT project_id, user_id FROM consumers")).first()
    before = h.gen(store, rp)
    between = _Between(monkeypatch, lambda: _commit(
        store, "INSERT INTO consumers (uuid, project_id, user_id,"
               " generation, created_at) VALUES (:u, :p, :s, 7,"
               " CURRENT_TIMESTAMP)", u=consumer, p=project_pk, s=user_pk))
    with pytest.raises(errors.ConsumerGenerationConflict, match="7"):
        h.write(store, consumer, {rp: CLAIM}, generation=None)
    assert (between.tries, between.calls) == (2, 1)
    assert h.gen(store, rp) == before
    assert consumers.get(store, consumer).generation == 7
    assert allocations.for_consumer(store, consumer).allocations == {}


@pytest.mark.parametrize("engine_name", ["postgresql"])
def test_the_connection_begins_its_own_transactions_again(store, rp):
    """BEGIN went with the first reads (the connection in autocommit mode
    meanwhile); after the write, committed or refused, the connection
    sends its own BEGIN again, so another statement on it is in a
    transaction that rolls back."""
    conn = store.engine.connect()
    try:
        with store.pinned(conn):
            driver = conn.connection.driver_connection
            h.write(store, h.new_uuid(), {rp: CLAIM}, generation=None)
            assert driver.autocommit is False
            with pytest.raises(errors.ConsumerGenerationConflict):
                h.write(store, h.new_uuid(), {rp: CLAIM}, generation=3)
            assert driver.autocommit is False
        with conn.begin() as outer:
            conn.execute(sa.text(
                "UPDATE resource_providers SET generation = 99"
                " WHERE uuid = :u"), {"u": rp})
            outer.rollback()
    finally:
        conn.close()
    assert h.gen(store, rp) == 2


@pytest.mark.parametrize("engine_name", ["postgresql"])
def test_a_connection_lost_after_the_reads_is_not_used_again(store, rp,
                                                             monkeypatch):
    """The server drops the write's connection after its reads (BEGIN was
    among them): the write runs again on a new connection, and the
    broken one, still in autocommit mode, leaves the pool."""
    h.write(store, h.new_uuid(), {rp: CLAIM}, generation=None)
    between = _Between(monkeypatch, lambda: _commit(
        store, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
               " WHERE datname = current_database()"
               " AND state LIKE 'idle in transaction%'"))
    invalidated = []
    sa.event.listen(store.engine, "invalidate",
                    lambda dbapi_conn, record, exc: invalidated.append(
                        dbapi_conn))
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: CLAIM}, generation=None)
    assert (between.tries, between.calls) == (2, 2)
    assert len(invalidated) == 1
    assert allocations.for_consumer(store, consumer).allocations[rp] \
        .resources == CLAIM
    assert h.gen(store, rp) == 3


@pytest.mark.parametrize("engine_name", ["postgresql"])
def test_a_connection_still_in_its_transaction_is_not_given_back(store):
    """Should the transaction that began with the first phase still be
    open when the pipeline is released, the connection cannot leave
    autocommit mode: it is invalidated, never pooled in that mode."""
    conn = store.engine.connect()
    try:
        txn = store_mod.Txn(store, conn, write=True, pipelined=True)
        driver = conn.connection.driver_connection
        with txn.pipeline.reads():
            one = fastsql.Fast(sa.select(sa.literal(1))).queue(txn, {})
        assert one.rows() == [(1,)]
        assert driver.autocommit is True
        assert driver.info.transaction_status.name == "INTRANS"
        txn.pipeline.release()
        assert conn.invalidated
    finally:
        conn.close()


@pytest.mark.parametrize("engine_name", ["postgresql"])
def test_a_statement_run_at_once_follows_the_held_ones(store, rp):
    """Statements queued in a phase are held until it ends; one run at
    once meanwhile sends them first, so it sees what they did, and the
    phase goes on holding what follows."""
    from placement.db import tables
    rps = tables.resource_providers
    by_uuid = rps.c.uuid == sa.bindparam("u")
    bump = fastsql.Fast(sa.update(rps).where(by_uuid).values(
        generation=sa.bindparam("g")))
    read = fastsql.Fast(sa.select(rps.c.generation).where(by_uuid))
    conn = store.engine.connect()
    try:
        txn = store_mod.Txn(store, conn, write=True, pipelined=True)
        conn.begin()
        with txn.pipeline.reads():
            first = bump.queue(txn, {"u": rp, "g": 41})
            assert txn.pipeline.holding
            assert read.rows(txn, {"u": rp}) == [(41,)]
            assert txn.pipeline.holding
            second = bump.queue(txn, {"u": rp, "g": 42})
            later = read.queue(txn, {"u": rp})
        assert (first.rowcount, second.rowcount) == (1, 1)
        assert later.rows() == [(42,)]
        first.close()
        second.close()
        conn.rollback()
        txn.pipeline.release()
    finally:
        conn.close()
    assert h.gen(store, rp) == 1


class _Refused(Exception):
    pass


@pytest.mark.parametrize("engine_name", ["postgresql"])
def test_a_check_made_after_the_sync_keeps_commit_apart(store, rp):
    """A write whose check can only be made once its results are back
    (check_later with may_refuse) is not committed with them: the check
    refuses it and nothing of it is stored."""
    from placement.db import tables
    rps = tables.resource_providers
    move = fastsql.Fast(sa.update(rps).where(
        rps.c.uuid == sa.bindparam("u")).values(generation=77))

    def write(txn):
        txn.pipeline.send_writes()
        sent = move.queue(txn, {"u": rp})

        def check():
            sent.close()
            raise _Refused()
        txn.pipeline.check_later(check)

    with pytest.raises(_Refused):
        store.write(write, pipelined=True)
    assert h.gen(store, rp) == 1


@pytest.mark.parametrize("engine_name", ["postgresql"])
def test_a_guard_run_at_once_raises_what_its_miss_means(store, rp):
    """A compare-and-set the server enforces (fastsql.or_fail), run
    outside a phase: a missed row raises its on_miss exception, not the
    division by zero that refused it; a hit changes the row."""
    from placement.db import tables
    rps = tables.resource_providers
    guard = fastsql.Fast(fastsql.or_fail(sa.update(rps).where(
        rps.c.uuid == sa.bindparam("u"),
        rps.c.generation == sa.bindparam("seen")).values(generation=9)))
    conn = store.engine.connect()
    try:
        txn = store_mod.Txn(store, conn, write=True)
        with conn.begin():
            with pytest.raises(_Refused):
                guard.queue(txn, {"u": rp, "seen": 5},
                            on_miss=_Refused).close()
        with conn.begin():
            assert guard.queue(txn, {"u": rp, "seen": 1},
                               on_miss=_Refused).rows() == [(1,)]
    finally:
        conn.close()
    assert h.gen(store, rp) == 9
