"""SQLite's data_version tells a scheduler when nobody else committed
(placement.db.data_version): the read before a decision is skipped then,
and never when another process (a second store on the same file) or a
pruned log says otherwise. MySQL has no such counter: without a change
feed its schedulers read every time (PostgreSQL has notifications
instead: test_pg_listen.py)."""

import random
import uuid

import pytest

from placement import direct
from placement.db import data_version
from placement.db import store as store_mod
from scheduler import manager
from tests import databases
from tests.scheduler import cloud as cloud_mod

FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}


@pytest.fixture
def two_stores(tmp_path):
    """Two stores on one SQLite file: a scheduler's and another
    process's."""
    conf = databases.make_conf(f"sqlite:///{tmp_path}/placement.sqlite")
    made = [store_mod.Store.open(conf), store_mod.Store.open(conf)]
    yield made
    for store in made:
        store.dispose()


def scheduler_on(store, **kwargs):
    return manager.Scheduler(store.conf, store=store, rng=random.Random(3),
                             **kwargs)


def add_host(store, name):
    return cloud_mod.add_host(cloud_mod.Cloud(store),
                              direct.PlacementDirect(store), name)


def test_quiet_database_skips_the_read_other_commits_are_read(two_stores):
    ours, theirs = two_stores
    add_host(theirs, "n0")
    s = scheduler_on(ours)
    s.sync()  # loads everything
    s.sync()
    assert s.stats["syncs_skipped"] == 1
    uuid_n1 = add_host(theirs, "n1")
    s.sync()
    assert s.stats["syncs_skipped"] == 1
    assert s.table.row_of(uuid_n1) is not None
    assert cloud_mod.forced_nodename(s, "n1") == "n1"
    s.close()


def test_own_claims_need_no_read(two_stores):
    ours, theirs = two_stores
    add_host(theirs, "n0")  # 8 vCPUs
    s = scheduler_on(ours)
    s.sync()
    for _ in range(8):
        s.select_destinations(None, {"flavor": FLAVOR}, [str(uuid.uuid4())])
    assert s.stats["syncs_skipped"] >= 7
    # Every claim reached the index at its commit: the ninth request is
    # refused without a claim being tried and lost.
    with pytest.raises(manager.NoValidHost):
        s.select_destinations(None, {"flavor": FLAVOR}, [str(uuid.uuid4())])
    assert s.stats["claims_lost"] == 0
    s.close()


def test_two_schedulers_on_one_store_each_read(two_stores):
    ours, theirs = two_stores
    add_host(theirs, "n0")
    first, second = scheduler_on(ours), scheduler_on(ours)
    first.sync()
    second.sync()
    uuid_n1 = add_host(theirs, "n1")
    first.sync()
    first.sync()
    second.sync()
    for s in (first, second):
        assert s.table.row_of(uuid_n1) is not None
        s.close()


def test_max_age_and_failed_reads(two_stores):
    ours, _ = two_stores
    now = [100.0]
    watch = data_version.DataVersionWatch(ours.engine, max_age=1.0,
                                          clock=lambda: now[0])
    assert watch.begin_read()
    assert not watch.begin_read()
    now[0] += 1.5
    assert watch.begin_read()
    watch.read_failed()
    assert watch.begin_read()
    assert not watch.begin_read()


def test_other_engines_read_every_time(store):
    # SQLite: data_version; PostgreSQL: its notifications (their own
    # tests: test_pg_listen.py); MySQL without a feed: none.
    watches = store.open_watches()
    assert len(watches) == {"sqlite": 1, "postgresql": 1,
                            "mysql": 0}[store.backend]
    if store.backend == "postgresql":
        return
    add_host(store, "n0")
    s = scheduler_on(store)
    s.sync()
    s.sync()
    assert s.stats["syncs_skipped"] == (
        1 if store.backend == "sqlite" else 0)
    s.close()
