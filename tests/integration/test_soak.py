"""The fault soak, bounded: gantt-scheduler with 4 workers and
gantt-placement-api on PostgreSQL (then MariaDB), RabbitMQ, conductor
clients creating and deleting instances, an HTTP client; a broker
restart, a 3-second database server restart and a SIGKILL of a busy
worker (tests/soak_harness.py). benchmarks/soak.py runs it longer.

Restarts the machine's PostgreSQL and MariaDB servers and RabbitMQ's
application (as root): with CI=true a missing tool or server fails.
"""

import json
import os
import shutil

from tests import databases, soak_harness
from tests.rpc import helpers

TOOLS = {"postgresql": ("pg_ctlcluster", "rabbitmqctl"),
         "mysql": ("mysqladmin", "start-stop-daemon")}


def _require(engine):
    helpers.require_rabbit()
    missing = [t for t in TOOLS[engine] if shutil.which(t) is None]
    if missing or os.geteuid() != 0:
        databases.unavailable(engine, f"the soak restarts servers: needs "
                                      f"root and {', '.join(TOOLS[engine])}")


def _soak(tmp_path, engine, schedule, duration):
    _require(engine)
    soak = soak_harness.Soak(tmp_path, engine=engine, hosts=40, workers=4,
                             clients=4)
    try:
        try:
            soak.start()
        except Exception as exc:  # a server that is not there
            databases.unavailable(engine, str(exc).splitlines()[0])
        soak.run(schedule, duration)
        figures = soak.figures()
    finally:
        soak.close()
    print(json.dumps(figures, indent=1, default=str))
    return figures


def _failures(figures, name):
    [fault] = [f for f in figures["faults"] if f["fault"] == name]
    return dict(fault["failures_during"])


def _check(figures):
    assert figures["over_commits"] == 0
    assert figures["lost_claims"] == 0
    assert figures["unexplained_known_to_clients"] == 0
    assert figures["leaked_after_heal"] == 0
    assert figures["outcomes"].get("create: ok", 0) > 100


def test_soak_on_postgresql(tmp_path):
    figures = _soak(tmp_path, "postgresql",
                    [(4, "broker"), (12, "database"), (24, "kill_worker")],
                    32)
    _check(figures)
    # Across the database restart nothing failed: scheduler calls, the
    # clients' own writes and the API's requests all waited.
    assert _failures(figures, "database") == {}


def test_database_restart_on_mariadb(tmp_path):
    figures = _soak(tmp_path, "mysql", [(4, "database")], 14)
    _check(figures)
    assert _failures(figures, "database") == {}
