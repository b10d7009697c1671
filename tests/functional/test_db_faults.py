"""Database restarts and failovers cost latency, not failures.

PostgreSQL and MariaDB run for real; tests/fault_proxy.py sits on the
wire between the store and the server and cuts connections as a restart
does: all at once, for a while, or in the middle of a COMMIT.
"""

import contextlib
import threading
import time

import pytest
import sqlalchemy as sa

from placement import errors
from placement.db import migration, tables
from placement.db import store as store_mod
from placement.objects import consumers, providers, traits
from tests import databases, fault_proxy
from tests.functional import alloc_helpers as h

SERVERS = ("postgresql", "mysql")


@pytest.fixture(scope="module", params=SERVERS)
def server(request):
    """A scratch database on a real server, and a proxy in front of it."""
    yield from _server(request.param)


def _server(engine):
    try:
        url = databases.create_scratch(engine)
    except Exception as exc:  # any connection failure
        databases.unavailable(engine, str(exc).splitlines()[0])
    setup = sa.create_engine(url)
    migration.sync(setup)
    setup.dispose()
    target = sa.make_url(url)
    proxy = fault_proxy.FaultProxy(target.host, target.port)
    yield engine, url, proxy
    proxy.close()
    databases.drop_scratch(engine, url)


@pytest.fixture
def store(server):
    yield from _store(server)


def _store(server):
    engine, url, proxy = server
    conf = databases.make_conf(proxy.url(url), {
        ("placement_database", "sync_on_startup"): False,
        ("placement_database", "retry_interval"): 0.05,
        ("placement_database", "db_max_retry_interval"): 0.2,
        ("placement_database", "max_retries"): 40,
    })
    store = store_mod.Store(conf)
    databases.wipe(store.engine)
    migration.seed(store.engine)
    yield store
    databases.wipe(store.engine)
    store.dispose()



def test_a_read_survives_its_connections_being_cut(store, server):
    proxy = server[2]
    providers.create(store, "before")
    proxy.cut()
    # The pooled connection is dead; the read runs again on a new one.
    assert [p.name for p in providers.list_all(store)] == ["before"]


def test_a_read_waits_for_a_database_that_comes_back(store, server):
    proxy = server[2]
    providers.create(store, "waited")
    proxy.refuse(1.0)
    began = time.monotonic()
    assert [p.name for p in providers.list_all(store)] == ["waited"]
    assert time.monotonic() - began >= 0.9


def test_a_write_cut_before_commit_is_made_once(store, server):
    proxy = server[2]
    proxy.arm(fault_proxy.COMMIT[server[0]], fault_proxy.BEFORE)
    providers.create(store, "once")
    assert not proxy.armed  # the cut happened
    assert [p.name for p in providers.list_all(store)] == ["once"]


def test_a_write_whose_commit_answer_is_lost_is_not_made_twice(store,
                                                               server):
    # The server committed; the store finds the change log rows it wrote
    # instead of creating the provider again (which would be a 409).
    proxy = server[2]
    proxy.arm(fault_proxy.COMMIT[server[0]], fault_proxy.AFTER)
    made = providers.create(store, "committed")
    assert not proxy.armed
    assert [p.uuid for p in providers.list_all(store)] == [made.uuid]


def test_a_write_that_logs_nothing_is_reported_not_repeated(store, server):
    proxy = server[2]
    proxy.arm(fault_proxy.COMMIT[server[0]], fault_proxy.AFTER)
    with pytest.raises(errors.CommitOutcomeUnknown) as raised:
        traits.ensure(store, "CUSTOM_MAYBE")
    assert raised.value.http_status == 503
    # It did commit; nothing ran it a second time.
    assert traits.exists(store, "CUSTOM_MAYBE")


def _claim(store, rp):
    """A claim for a new consumer (a second run of it would be refused:
    the consumer would exist); the consumer."""
    consumer = h.new_uuid()
    h.write(store, consumer, {rp: {"VCPU": 1}}, generation=None)
    return consumer


@pytest.mark.parametrize("when", [fault_proxy.BEFORE, fault_proxy.AFTER])
def test_a_claim_whose_pipelined_commit_is_cut_is_made_once(store, server,
                                                            when):
    """On PostgreSQL a claim's COMMIT goes with its writes (on MySQL on
    its own). Cut before it reaches the server, the transaction never
    committed and the claim is made on a new connection; cut after the
    server answered, the transaction's id (the change log rows on MySQL)
    tells it committed and the claim is not run again. Either way: one
    claim, one generation bump."""
    _claim_once_through(store, server, when)


def test_a_claim_cut_off_by_a_partition_is_made_once(store, server):
    """The claim's connection is cut as its COMMIT is sent, and the
    server's side is left open (a partition: the session waits in the
    transaction, holding its locks, unaware its client is gone). The
    store ends that session, finds the transaction did not commit (by
    its id on PostgreSQL, by its change log rows on MySQL), and makes the
    claim on a new connection, without waiting out its retries."""
    with _partitions_ended(server[2]):
        _claim_once_through(store, server, fault_proxy.PARTITION)


def test_a_write_cut_off_by_a_partition_is_made_once(store, server):
    """The same for a write that sends COMMIT on its own (a provider's
    creation, on both engines): its session is ended, its change log
    rows are not there, and it is made again, once."""
    engine, _url, proxy = server
    with _partitions_ended(proxy):
        proxy.arm(fault_proxy.COMMIT[engine], fault_proxy.PARTITION)
        began = time.monotonic()
        made = providers.create(store, "partitioned")
        assert time.monotonic() - began < 5  # the retries allow 8 s
        assert not proxy.armed
    assert [p.uuid for p in providers.list_all(store)] == [made.uuid]


def test_a_write_cut_off_before_its_commit_does_not_wait_on_itself(store,
                                                                   server):
    """A partition cuts a write after its first statements ran (the
    provider's row is in, its unique name locked) and before COMMIT. The
    store ends the old session, which could never commit, so the write
    made again on a new connection does not wait on its locks."""
    engine, _url, proxy = server
    with _partitions_ended(proxy):
        proxy.arm(b"INSERT INTO provider_changes", fault_proxy.PARTITION)
        began = time.monotonic()
        made = providers.create(store, "cut-before-commit")
        assert time.monotonic() - began < 5
        assert not proxy.armed
    assert [p.uuid for p in providers.list_all(store)] == [made.uuid]


def test_rows_that_took_a_lost_writes_numbers_are_not_its_own(
        store, server, monkeypatch):
    """A write cut off at COMMIT that never committed, whose change log
    numbers another write then takes (as a Galera cluster's nodes do
    once a node falls out of the primary component: its rolled-back
    auto-increment numbers come round again on the others): the rows
    with those numbers are not the lost write's, so it is made again,
    once, instead of being reported made."""
    engine, url, proxy = server
    direct = sa.create_engine(url)
    taken = []

    def take_numbers_then_look(txn, changes):
        if not taken:
            rows = [{"seq": seq, "resource_provider_id": rp_id,
                     "changed_at": store_mod.utcnow(), "usage_only": False}
                    for seq, rp_id in zip(changes.seqs,
                                          sorted(changes.touched()),
                                          strict=True)]
            with direct.begin() as conn:
                conn.execute(tables.provider_changes.insert(), rows)
            taken.extend(changes.seqs)
        return looked(txn, changes)

    looked = store_mod._logged
    monkeypatch.setattr(store_mod, "_logged", take_numbers_then_look)
    try:
        with _partitions_ended(proxy):
            proxy.arm(fault_proxy.COMMIT[engine], fault_proxy.PARTITION)
            made = providers.create(store, "numbers-taken")
            assert not proxy.armed
    finally:
        direct.dispose()
    assert taken  # the store did ask its change log
    assert [p.uuid for p in providers.list_all(store)] == [made.uuid]


@contextlib.contextmanager
def _partitions_ended(proxy):
    """The sessions a partition left waiting end after 20 s, and when
    the block ends: a store that failed to end them would otherwise wait
    on their locks for good (and so would the teardown's wipe)."""
    timer = threading.Timer(20, proxy.end_partitions)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        proxy.end_partitions()


def _claim_once_through(store, server, when):
    engine, _url, proxy = server
    rp = h.provider(store, "cn1", VCPU=8)
    before = h.gen(store, rp)
    proxy.arm({"postgresql": fault_proxy.PIPELINED_COMMIT,
               "mysql": fault_proxy.COMMIT["mysql"]}[engine], when)
    began = time.monotonic()
    consumer = _claim(store, rp)
    assert time.monotonic() - began < 5  # the retries allow 8 s
    assert not proxy.armed  # the cut happened
    assert consumers.get(store, consumer).generation == 1
    assert h.resources_of(store, consumer) == {rp: {"VCPU": 1}}
    assert h.gen(store, rp) == before + 1


def test_writes_go_on_through_an_outage(store, server):
    """Writers keep writing while the connections are cut and the server
    refuses new ones for a second: every write is made, once."""
    proxy = server[2]
    names = [f"rp-{i}" for i in range(40)]
    failures = []

    def write(batch):
        for name in batch:
            try:
                providers.create(store, name)
            except Exception as exc:  # reported below
                failures.append((name, exc))

    threads = [threading.Thread(target=write, args=(names[i::2],))
               for i in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(0.05)
    proxy.refuse(1.0)
    for thread in threads:
        thread.join(60)
    assert failures == []
    assert sorted(p.name for p in providers.list_all(store)) == sorted(
        names)


def test_retries_are_bounded(server):
    engine, url, proxy = server
    conf = databases.make_conf(proxy.url(url), {
        ("placement_database", "sync_on_startup"): False,
        ("placement_database", "retry_interval"): 0.05,
        ("placement_database", "db_inc_retry_interval"): False,
        ("placement_database", "max_retries"): 3,
    })
    store = store_mod.Store(conf)
    try:
        proxy.refuse(5.0)
        began = time.monotonic()
        with pytest.raises(sa.exc.OperationalError):
            providers.list_all(store)
        # Three waits of 0.05 s, then the error.
        assert 0.1 <= time.monotonic() - began < 3
    finally:
        proxy.refuse(0)
        store.dispose()


def test_the_api_answers_503_when_the_database_stays_away(server):
    """Past max_retries the REST API says the database is unreachable
    (503, placement's error body), without a traceback."""
    import webob

    from placement.api import app as app_mod
    engine, url, proxy = server
    conf = databases.make_conf(proxy.url(url), {
        ("placement_database", "sync_on_startup"): False,
        ("placement_database", "retry_interval"): 0.05,
        ("placement_database", "db_inc_retry_interval"): False,
        ("placement_database", "max_retries"): 2,
    })
    application = app_mod.make_app(conf)
    try:
        proxy.refuse(5.0)
        request = webob.Request.blank("/resource_providers", headers={
            "x-auth-token": "admin",
            "openstack-api-version": "placement 1.23"})
        response = request.get_response(application)
        assert response.status_int == 503
        [error] = response.json["errors"]
        assert "database cannot be reached" in error["detail"]
    finally:
        proxy.refuse(0)
