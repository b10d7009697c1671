"""benchmarks.ha_postgres's self-check: a PostgreSQL primary and a
streaming standby in two network namespaces; the primary is cut off,
the standby promoted, the old primary fenced.

Needs root (namespaces, iptables, servers run as the postgres user),
PostgreSQL 15's binaries and iptables, which is installed with apt-get
when missing. Without them: a failure under CI=true, a skip elsewhere.
"""

import os
import shutil
import subprocess

import pytest

from benchmarks import ha_postgres
from tests import databases


def _missing(why):
    if databases.in_ci():
        pytest.fail(why + " (CI=true: a failure, never a skip)",
                    pytrace=False)
    pytest.skip(why)


def _apt(*words):
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(
        ["apt-get", *words, "-o", "DPkg::Lock::Timeout=300"],
        env=env, capture_output=True, text=True, check=False)


def _require():
    if os.geteuid() != 0:
        _missing("network namespaces and iptables need root")
    if not (ha_postgres.BIN / "postgres").exists():
        _missing(f"no PostgreSQL 15 in {ha_postgres.BIN}")
    if shutil.which("iptables") is None:
        if _apt("install", "-y", "iptables").returncode != 0:
            _apt("update")  # a fresh machine may have no package lists
            _apt("install", "-y", "iptables")
        if shutil.which("iptables") is None:
            _missing("iptables is missing and apt-get could not install it")


def test_failover_keeps_rows_and_one_primary():
    _require()
    figures = ha_postgres.run()
    print(figures)
    assert figures["replication_seen"]
    assert figures["standby_in_recovery"]
    assert [s["state"] for s in figures["streaming"]] == ["streaming"]
    assert figures["p2_primary"]
    assert figures["promote_s"] < 30
    assert figures["p1_processes_after_fence"] == 0
    assert not figures["p1_answers_after_heal"]
    assert figures["rows_after"] == [(1, "p1"), (2, "p2")]
