"""The databases tests run against.

SQLite always; PostgreSQL and MySQL/MariaDB when reachable on loopback
(their CI defaults, overridable with GANTT_TEST_POSTGRES_URL and
GANTT_TEST_MYSQL_URL). With CI=true an unreachable server fails the tests
that need it instead of skipping them.

Each server engine gets one scratch database per test session
(gantt_test_<random>), dropped at the end; tests clean up after
themselves through :func:`wipe`.
"""

import contextlib
import os
import uuid

import pytest
import sqlalchemy as sa

from placement import conf as conf_mod
from placement.db import tables
from scheduler import host_tables  # noqa: F401 (its tables join the metadata)

ENGINES = ("sqlite", "postgresql", "mysql")

SERVER_URLS = {
    "postgresql": os.environ.get(
        "GANTT_TEST_POSTGRES_URL",
        "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
    "mysql": os.environ.get(
        "GANTT_TEST_MYSQL_URL", "mysql+pymysql://root@127.0.0.1:3306/test"),
}


def in_ci():
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(engine, reason):
    """Skip locally; fail in CI, where every server must be there."""
    message = f"{engine} is not reachable: {reason}"
    if in_ci():
        pytest.fail(message + " (CI=true: a missing server is a failure)",
                    pytrace=False)
    pytest.skip(message)


def create_scratch(engine):
    """A new empty database on the server; returns its URL."""
    admin_url = sa.make_url(SERVER_URLS[engine])
    name = "gantt_test_" + uuid.uuid4().hex[:12]
    options = {"isolation_level": "AUTOCOMMIT"}
    if engine == "mysql":
        options = {}
    admin = sa.create_engine(admin_url, connect_args=_timeout(engine),
                             **options)
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    admin.dispose()
    return admin_url.set(database=name).render_as_string(hide_password=False)


@contextlib.contextmanager
def migrated_scratch(engine):
    """A scratch database on ``engine`` with gantt's schema, dropped
    after; an unreachable server is :func:`unavailable`."""
    from placement.db import migration
    try:
        url = create_scratch(engine)
    except Exception as exc:  # any connection failure
        unavailable(engine, str(exc).splitlines()[0])
    setup = sa.create_engine(url)
    migration.sync(setup)
    setup.dispose()
    try:
        yield url
    finally:
        drop_scratch(engine, url)


@contextlib.contextmanager
def empty_scratch(engine, tmp_path):
    """The URL of a new, empty database on ``engine`` (SQLite: a file
    in ``tmp_path``), dropped after; an unreachable server is
    :func:`unavailable`."""
    if engine == "sqlite":
        yield f"sqlite:///{tmp_path / 'scratch.sqlite'}"
        return
    try:
        url = create_scratch(engine)
    except Exception as exc:  # any connection failure
        unavailable(engine, str(exc).splitlines()[0])
    try:
        yield url
    finally:
        drop_scratch(engine, url)


def drop_scratch(engine, url):
    admin_url = sa.make_url(SERVER_URLS[engine])
    name = sa.make_url(url).database
    options = {"isolation_level": "AUTOCOMMIT"} if engine != "mysql" else {}
    admin = sa.create_engine(admin_url, connect_args=_timeout(engine),
                             **options)
    with admin.connect() as conn:
        if engine == "postgresql":
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} "
                                 f"WITH (FORCE)")
        else:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}")
    admin.dispose()


def _timeout(engine):
    return {"connect_timeout": 5}


def make_conf(url, overrides=None):
    """A ConfigOpts on ``url``; ``overrides``: {(group, option): value}."""
    conf = conf_mod.new_conf([], default_config_files=[])
    conf.set_override("connection", url, "placement_database")
    for (group, name), value in (overrides or {}).items():
        conf.set_override(name, value, group)
    return conf


# Rows every test leaves behind are removed in this order (children first).
_WIPE_ORDER = ("consumer_group_members", "consumer_groups",
               "allocations", "consumers", "projects", "users",
               "consumer_types", "inventories", "resource_provider_traits",
               "resource_provider_aggregates", "placement_aggregates",
               "provider_changes", "host_aggregate_hosts", "host_aggregates",
               "host_instances", "compute_services", "compute_nodes",
               "host_changes")


_CHANGE_LOGS = ((tables.provider_changes, tables.CHANGES_PRUNED_COUNTER),
                (host_tables.host_changes,
                 host_tables.HOST_CHANGES_PRUNED_COUNTER))


def _pruned_below(engine):
    """{counter: number} that marks every row of each change log, and
    every number an earlier wipe marked, as pruned."""
    counters = tables.counters
    out = {}
    with engine.connect() as conn:
        for log, counter in _CHANGE_LOGS:
            top = conn.scalar(sa.select(sa.func.max(log.c.seq))) or 0
            before = conn.scalar(sa.select(counters.c.value).where(
                counters.c.name == counter)) or 0
            out[counter] = max(top + 1 if top else 0, before)
    return out


def wipe(engine):
    """Delete everything but the standard catalog."""
    rp = tables.resource_providers
    # Sequence numbers go on after a delete: the change logs' rows count
    # as pruned, as they would be on a database that ran this long, or a
    # reader starting after the wipe would take every earlier number for
    # a write in flight. Read apart from the wipe: on SQLite a
    # transaction that reads first cannot always become a writer.
    pruned = _pruned_below(engine)
    with engine.begin() as conn:
        for name in _WIPE_ORDER:
            conn.execute(tables.metadata.tables[name].delete())
        conn.execute(rp.update().values(root_provider_id=None,
                                        parent_provider_id=None))
        conn.execute(rp.delete())
        conn.execute(tables.traits.delete().where(
            tables.traits.c.name.startswith("CUSTOM_")))
        conn.execute(tables.resource_classes.delete().where(
            tables.resource_classes.c.id
            >= tables.MIN_CUSTOM_RESOURCE_CLASS_ID))
        conn.execute(tables.counters.delete())
        for counter, value in pruned.items():
            if value:
                conn.execute(tables.counters.insert().values(
                    name=counter, value=value))
