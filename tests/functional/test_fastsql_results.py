"""Rows from placement.db.fastsql hold the same Python values as
SQLAlchemy's results (every engine): datetimes, booleans, floats and the
JSON text columns come back converted, not as the driver's raw values."""

import datetime

import sqlalchemy as sa

from placement.db import fastsql, tables
from placement.objects import providers
from scheduler import host_records, host_tables

_cn = host_tables.compute_nodes
_svc = host_tables.compute_services
_rp = tables.resource_providers


def _both(store, statement, params):
    fast = fastsql.Fast(statement)

    def read(txn):
        return (fast.rows(txn, params),
                [tuple(r) for r in txn.execute(statement, params).all()])
    return store.read(read)


def test_rows_match_sqlalchemy_results(store):
    rp = providers.create(store, "n1")
    host_records.upsert_compute_node(
        store, rp.uuid, "h1", "n1", vcpus=8, cpu_allocation_ratio=1.5,
        stats={"failed_builds": "2", "x": "y"},
        metrics=[{"name": "cpu.percent", "value": 0.5}])
    host_records.set_service_state(store, "h1", enabled=False,
                                   disabled_reason="maintenance")
    host_records.heartbeat(store, "h1", datetime.datetime(2026, 1, 2, 3, 4))
    checks = [
        (sa.select(_rp).where(_rp.c.uuid == sa.bindparam("u")),
         {"u": rp.uuid}),
        (sa.select(_cn).where(_cn.c.host == sa.bindparam("h")),
         {"h": "h1"}),
        (sa.select(_svc).where(_svc.c.host == sa.bindparam("h")),
         {"h": "h1"}),
    ]
    for statement, params in checks:
        fast, reference = _both(store, statement, params)
        assert [tuple(r) for r in fast] == reference
    [node], _ = _both(store, *checks[1])
    assert node.stats == {"failed_builds": "2", "x": "y"}
    assert node.failed_builds == 2
    assert node.cpu_allocation_ratio == 1.5
    assert isinstance(node.created_at, datetime.datetime)
    [service], _ = _both(store, *checks[2])
    assert service.disabled is True or service.disabled == 1
    assert service.last_seen_up == datetime.datetime(2026, 1, 2, 3, 4)
