"""Shared fixtures: a placement store on each database engine.

``store`` runs a test once per engine (sqlite, postgresql, mysql); the
summary at the end says how many database-backed tests ran on each.
"""

import collections
import os
import re

import pytest

from placement.db import migration
from placement.db import store as store_mod
from tests import databases

_ran = collections.Counter()


@pytest.fixture(scope="session")
def server_urls(tmp_path_factory):
    """{engine: url of this session's scratch database}, created lazily."""
    urls = {}
    errors = {}
    yield urls, errors
    for engine, url in urls.items():
        if engine != "sqlite":
            databases.drop_scratch(engine, url)


def _session_url(server_urls, tmp_path_factory, engine):
    urls, errors = server_urls
    if engine in errors:
        databases.unavailable(engine, errors[engine])
    if engine not in urls:
        if engine == "sqlite":
            path = tmp_path_factory.mktemp("sqlite") / "placement.sqlite"
            urls[engine] = f"sqlite:///{path}"
        else:
            try:
                urls[engine] = databases.create_scratch(engine)
            except Exception as exc:  # any connection failure
                errors[engine] = str(exc).splitlines()[0]
                databases.unavailable(engine, errors[engine])
        conf = databases.make_conf(urls[engine])
        setup = store_mod.Store(conf)
        migration.sync(setup.engine)
        setup.dispose()
    return urls[engine]


@pytest.fixture(params=databases.ENGINES)
def engine_name(request):
    return request.param


@pytest.fixture
def db_url(engine_name, server_urls, tmp_path_factory):
    return _session_url(server_urls, tmp_path_factory, engine_name)


@pytest.fixture
def store(db_url):
    """An empty placement store on each engine in turn."""
    # The session set the schema up already.
    conf = databases.make_conf(
        db_url, {("placement_database", "sync_on_startup"): False})
    store = store_mod.Store.open(conf)
    databases.wipe(store.engine)
    migration.seed(store.engine)
    yield store
    databases.wipe(store.engine)
    store.dispose()


@pytest.fixture
def sqlite_store(tmp_path):
    """A placement store in a fresh SQLite file."""
    conf = databases.make_conf(f"sqlite:///{tmp_path / 'placement.sqlite'}")
    store = store_mod.Store.open(conf)
    yield store
    store.dispose()


# Tests that `make test` runs on their own, after the others have run
# two at a time (pytest-xdist): each keeps this 2-core machine busy by
# itself (Nova's test workers, a Nova deployment, three controllers, a
# Galera cluster, racing scheduler processes) or stops a server every
# other test shares (the broker restart, the soak's database restart).
# Marked `serial` here by where they are.
SERIAL = (
    "tests/nova_functional/",
    "tests/nova_stack/",
    "tests/ha/",
    "tests/integration/",
    "tests/deploy/",
    "tests/scheduler/test_group_race.py",
    "tests/scheduler/test_scheduler_race.py",
    "tests/compute/test_reshape_concurrency.py",
    "tests/functional/test_concurrency.py",
    "tests/rpc/test_messaging_floor.py",
    "tests/rpc/test_service.py::test_calls_succeed_after_a_broker_restart",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SERIAL):
            item.add_marker(pytest.mark.serial)


def pytest_make_parametrize_id(config, val, argname):
    """Plain ids for parametrized values: gabbi's pytest plugin (loaded
    for the conformance suites) fails the whole collection on an id with
    spaces, colons or brackets in it ("INTERNALERROR ... KeyError"). A
    string becomes its letters, digits and ``_.-`` runs, shortened."""
    if isinstance(val, str):
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", val).strip("_")[:40] or "empty"
    return None


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        engine = _engine_of(report.nodeid)
        if engine:
            _ran[engine] += 1


def _engine_of(nodeid):
    params = nodeid.rpartition("[")[2].rstrip("]").split("-")
    for engine in databases.ENGINES:
        if engine in params:
            return engine
    return None


def pytest_terminal_summary(terminalreporter):
    if not _ran and not os.environ.get("CI"):
        return
    counts = ", ".join(f"{engine}: {_ran.get(engine, 0)}"
                       for engine in databases.ENGINES)
    terminalreporter.write_sep(
        "=", f"database-backed tests passed per engine: {counts}")
