"""Claims racing on three controllers that each write to their own
Galera node (multi-writer), through gantt-placement-api: the smallest of
issue 40's runs, and the first measurement of gantt on a database
cluster.

    python -m benchmarks.ha_claims [--claims 300] [--capacity 100]

Three namespaces (benchmarks.ha_topology) each run a Galera node
(benchmarks.ha_galera) and a gantt-placement-api on it. One provider
with ``--capacity`` VCPU; clients on the bridge send ``--claims``
one-VCPU allocations for new consumers, spread over the three APIs at
once. Galera certifies concurrent commits on different nodes at COMMIT
and refuses the losers with error 1213, which gantt's store retries.
Printed as JSON: answers by status, the provider's usage read back from
every node, and whether it equals the claims that succeeded and stays
within capacity (the invariant: no over-commit, no lost claim).
"""

import argparse
import collections
import concurrent.futures
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

import requests

from benchmarks import ha_galera, ha_topology

HOSTS = ["c1", "c2", "c3"]
API_PORT = 8778
HEADERS = {"x-auth-token": "admin",
           "openstack-api-version": "placement 1.39"}


def _api(net, host, root, database, db_retry_count):
    config = root / f"{host}.conf"
    config.write_text(
        f"[placement_database]\nconnection = mysql+pymysql://root@"
        f"{net.address(host)}:{ha_galera.PORT}/{database}\n"
        "sync_on_startup = false\n"
        + (f"db_retry_count = {db_retry_count}\n" if db_retry_count else "")
        + f"[api]\nbind_host = {net.address(host)}\nbind_port = {API_PORT}\n"
        "workers = 1\nthreads = 8\nmetrics = false\n")
    log = open(root / f"{host}-api.log", "w")
    return net.popen(host, [str(pathlib.Path(sys.executable).parent
                                / "gantt-placement-api"),
                            "--config-file", str(config)],
                     stdout=log, stderr=subprocess.STDOUT)


def _wait_up(url, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if requests.get(url + "/healthcheck", timeout=2).ok:
                return
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not come up")
        time.sleep(0.3)


def run(claims, capacity, db_retry_count=None, keep_logs=None):
    root = pathlib.Path(tempfile.mkdtemp(prefix="gantt-ha-claims-"))
    apis = []
    with ha_topology.Topology(HOSTS) as net:
        cluster = ha_galera.GaleraCluster(net, HOSTS, root / "galera")
        try:
            cluster.start()
            with cluster.connect("c1") as conn, conn.cursor() as cur:
                cur.execute("CREATE DATABASE gantt")
            sync = root / "sync.conf"
            sync.write_text(
                f"[placement_database]\nconnection = mysql+pymysql://root@"
                f"{net.address('c1')}:{ha_galera.PORT}/gantt\n")
            subprocess.run(
                [str(pathlib.Path(sys.executable).parent / "gantt-manage"),
                 "--config-file", str(sync), "db", "sync"], check=True)
            apis = [_api(net, host, root, "gantt", db_retry_count)
                    for host in HOSTS]
            urls = [f"http://{net.address(h)}:{API_PORT}" for h in HOSTS]
            for u in urls:
                _wait_up(u)
            rp = str(uuid.uuid4())
            requests.post(urls[0] + "/resource_providers", headers=HEADERS,
                          json={"name": "ha-node", "uuid": rp},
                          timeout=10).raise_for_status()
            requests.put(
                f"{urls[1]}/resource_providers/{rp}/inventories",
                headers=HEADERS, timeout=10, json={
                    "resource_provider_generation": 0,
                    "inventories": {"VCPU": {"total": capacity}}}
            ).raise_for_status()

            def claim(i):
                consumer = str(uuid.uuid4())
                started = time.monotonic()
                answer = requests.put(
                    f"{urls[i % 3]}/allocations/{consumer}",
                    headers=HEADERS, timeout=60, json={
                        "allocations": {rp: {"resources": {"VCPU": 1}}},
                        "project_id": str(uuid.UUID(int=1)),
                        "user_id": str(uuid.UUID(int=2)),
                        "consumer_generation": None,
                        "consumer_type": "INSTANCE"})
                return answer.status_code, time.monotonic() - started

            started = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(24) as pool:
                answers = list(pool.map(claim, range(claims)))
            seconds = time.monotonic() - started
            statuses = collections.Counter(status for status, _ in answers)
            usage = {}
            for host, u in zip(HOSTS, urls, strict=True):
                usage[host] = requests.get(
                    f"{u}/resource_providers/{rp}/usages", headers=HEADERS,
                    timeout=10).json()["usages"].get("VCPU", 0)
            retried = sum(
                (root / f"{h}-api.log").read_text().count("Deadlock")
                for h in HOSTS)
            made = statuses.get(204, 0)
            errors = [line for h in HOSTS for line in
                      (root / f"{h}-api.log").read_text().splitlines()
                      if " ERROR " in line]
            return {
                "claims_sent": claims, "capacity": capacity,
                "answers_by_status": dict(sorted(statuses.items())),
                "usage_per_node": usage,
                "usage_equals_successes": all(
                    v == made for v in usage.values()),
                "within_capacity": all(v <= capacity
                                       for v in usage.values()),
                "longest_claim_s": round(max(s for _, s in answers), 3),
                "seconds": round(seconds, 2),
                "deadlock_lines_in_api_logs": retried,
                "api_error_lines": len(errors),
                "first_api_error": errors[0][:400] if errors else None,
            }
        finally:
            for proc in apis:
                proc.terminate()
                proc.wait(30)
            cluster.stop()
            if keep_logs:
                pathlib.Path(keep_logs).mkdir(parents=True, exist_ok=True)
                for log in root.glob("*-api.log"):
                    shutil.copy(log, keep_logs)
            shutil.rmtree(root, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ha_claims")
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--capacity", type=int, default=100)
    parser.add_argument("--db-retry-count", type=int,
                        help="[placement_database] db_retry_count of the "
                             "APIs (default: gantt's)")
    parser.add_argument("--keep-logs", metavar="DIR",
                        help="copy the APIs' logs there")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.claims, args.capacity, args.db_retry_count,
                         args.keep_logs), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
