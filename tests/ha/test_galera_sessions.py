"""gantt's sessions on a three-node MariaDB Galera cluster (Debian's
galera-4, benchmarks.ha_galera): reads wait for the cluster's earlier
commits (wsrep_sync_wait), and a node cut off from the other two (it
answers 1047 to everything) is waited out until it rejoins.

Needs root and galera-4 (installed with apt-get when missing). Without
root: a failure under CI=true, a skip elsewhere.
"""

import logging
import os
import threading
import time

import pytest
import sqlalchemy as sa

from benchmarks import ha_galera, ha_haproxy, ha_topology
from placement.db import migration
from placement.db import store as store_mod
from placement.objects import resource_classes
from tests import databases

HOSTS = ["g1", "g2", "g3"]


def _require():
    if os.geteuid() != 0:
        why = "network namespaces and iptables need root"
        if databases.in_ci():
            pytest.fail(why + " (CI=true: a failure, never a skip)",
                        pytrace=False)
        pytest.skip(why)
    ha_haproxy.ensure_installed(("galera-4", "iptables"))


@pytest.fixture
def cluster(tmp_path):
    _require()
    # A topology of its own: a benchmark run may use the default one.
    with ha_topology.Topology(HOSTS, name="ggs", network="10.79.0") as net:
        galera = ha_galera.GaleraCluster(net, HOSTS, tmp_path / "galera")
        try:
            galera.start()
            with galera.connect("g1") as conn, conn.cursor() as cur:
                cur.execute("CREATE DATABASE gantt")
            engine = sa.create_engine(_url(net, "g1"))
            migration.sync(engine)
            engine.dispose()
            yield net, galera
        finally:
            galera.stop()


def _url(net, host):
    return f"mysql+pymysql://root@{net.address(host)}:{ha_galera.PORT}/gantt"


def _store(net, host, **overrides):
    return store_mod.Store.open(databases.make_conf(_url(net, host), {
        ("placement_database", name): value
        for name, value in overrides.items()}))


def _session_sync_wait(store):
    with store.engine.connect() as conn:
        return conn.exec_driver_sql(
            "SELECT @@session.wsrep_sync_wait").scalar()


def test_reads_wait_for_other_nodes_and_a_minority_is_waited_out(
        cluster, caplog):
    net, galera = cluster
    stores = {host: _store(net, host) for host in HOSTS}
    server_default = _store(net, "g2", wsrep_sync_wait=0)
    try:
        assert _session_sync_wait(stores["g2"]) == 1
        assert _session_sync_wait(server_default) == 0

        # Written through one node, read at once through another.
        for i in range(30):
            resource_classes.create(stores["g1"], f"CUSTOM_SEEN_{i}")
            names = {rc.name for rc in resource_classes.list_all(
                stores["g3"])}
            assert f"CUSTOM_SEEN_{i}" in names

        # g3 cut off from the others: it leaves the primary component.
        for peer in ("g1", "g2"):
            net.cut("g3", peer)
        deadline = time.monotonic() + 60
        while galera.status("g3").get("wsrep_cluster_status") == "Primary":
            assert time.monotonic() < deadline, "g3 stayed in the primary"
            time.sleep(0.2)

        def heal():
            for peer in ("g1", "g2"):
                net.heal("g3", peer)

        healer = threading.Timer(2.0, heal)
        healer.start()
        with caplog.at_level(logging.WARNING):
            resource_classes.create(stores["g3"], "CUSTOM_IN_MINORITY")
        healer.join()
        names = {rc.name for rc in resource_classes.list_all(stores["g1"])}
        assert "CUSTOM_IN_MINORITY" in names
        assert any("1047" in r.getMessage() for r in caplog.records), [
            r.getMessage() for r in caplog.records]
    finally:
        for store in (*stores.values(), server_default):
            store.dispose()
