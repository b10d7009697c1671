"""The REST API over HTTP, as OpenStack Placement's perfload job measures
it, against a gantt-placement-api process on a fresh database.

    .venv/bin/python -m benchmarks.api [--providers 1000] [--runs 3]
        [--workers 2] [--threads 8] [--db URL] [--concurrency 10]
        [--requests 500] [--cache on|off|both]

1. Load: 10 providers to warm up, then ``--providers`` providers, each
   created with four requests (POST the provider, PUT its inventories,
   aggregates and traits: VCPU 32, MEMORY_MB 8192, DISK_GB 8192; one, two
   or three of three aggregates and traits in turn, as perfload's loader
   does), 20 at a time. Reports the time taken.
2. Query: the perfload query (VCPU, DISK_GB and MEMORY_MB, member of the
   aggregate every provider is in, trait HW_CPU_X86_AVX2 that every
   provider has: every provider is a candidate), timed 20 times.
3. Claims: 99 cycles of: ask the query with limit=5, PUT the first
   allocation request for a new consumer (1.39, consumer_generation
   null), then time the query twice.
4. Concurrency: ``--concurrency`` clients sending ``--requests`` requests
   of the query between them (as `ab -c 10 -n 500` does; a new
   connection per request), ``--runs`` times.

The whole sequence runs against a new server and database with the
allocation candidates answer cache ([api] candidates_cache_entries) on,
and again with it off (``--cache both``, the default): with it on,
repeated identical queries between writes are served from the cache, so
the "off" figures are those of computing every answer.

Prints JSON: the inputs, the CPU count, and per cache setting the
medians (and p90s) of each phase, with every run of phase 4.
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

AGGREGATES = [str(uuid.UUID(int=0x14A5C8A3_5A99_4E8F_88BE_00D85FCB1C17)),
              str(uuid.uuid4()), str(uuid.uuid4())]
TRAITS = ["HW_CPU_X86_AVX2", "HW_CPU_X86_SSE2", "STORAGE_DISK_SSD"]
INVENTORY = {
    "MEMORY_MB": {"total": 8192, "min_unit": 128, "max_unit": 8192},
    "DISK_GB": {"total": 8192, "min_unit": 5, "max_unit": 8192},
    "VCPU": {"total": 32, "min_unit": 1, "max_unit": 16},
}
QUERY = ("/allocation_candidates?" + urllib.parse.urlencode({
    "resources": "VCPU:1,DISK_GB:10,MEMORY_MB:256",
    "member_of": AGGREGATES[0], "required": TRAITS[0]}))
HEADERS = {"x-auth-token": "admin", "accept": "application/json",
           "openstack-api-version": "placement latest"}


class Client:
    """One HTTP/1.1 connection, reopened when the server closes it."""

    def __init__(self, port, keep_alive=True):
        self.port = port
        self.keep_alive = keep_alive
        self.conn = None

    def request(self, method, path, body=None):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port)
        headers = dict(HEADERS)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        if not self.keep_alive:
            headers["connection"] = "close"
        try:
            self.conn.request(method, path, data, headers)
            response = self.conn.getresponse()
            payload = response.read()
        except (ConnectionError, http.client.HTTPException):
            self.conn.close()
            self.conn = None
            raise
        if not self.keep_alive or response.getheader("connection") == (
                "close"):
            self.conn.close()
            self.conn = None
        return response.status, payload

    def timed(self, method, path, body=None):
        began = time.perf_counter()
        status, payload = self.request(method, path, body)
        return status, payload, time.perf_counter() - began


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(args, workdir, cache):
    port = _free_port()
    db = args.db or os.path.join(workdir, "placement.sqlite")
    config = os.path.join(workdir, "gantt.conf")
    with open(config, "w") as f:
        f.write(f"[api]\ncandidates_cache_entries = "
                f"{16 if cache else 0}\n")
    command = [os.path.join(os.path.dirname(sys.executable),
                            "gantt-placement-api"),
               "--config-file", config,
               "--port", str(port), "--db", db, "--workers",
               str(args.workers), "--threads", str(args.threads)]
    log = open(os.path.join(workdir, "server.log"), "w")
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: see {workdir}/server.log")
        try:
            if Client(port).request("GET", "/")[0] == 200:
                return proc, port
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("server did not start")
        time.sleep(0.1)


def create_provider(client, index):
    rp = str(uuid.uuid4())
    path = f"/resource_providers/{rp}"
    steps = [
        ("POST", "/resource_providers", {"uuid": rp, "name": rp}),
        ("PUT", path + "/inventories", {"resource_provider_generation": 0,
                                        "inventories": INVENTORY}),
        ("PUT", path + "/aggregates", {
            "resource_provider_generation": 1,
            "aggregates": AGGREGATES[:index % 3 + 1]}),
        ("PUT", path + "/traits", {"resource_provider_generation": 2,
                                   "traits": TRAITS[:index % 3 + 1]}),
    ]
    for method, step_path, body in steps:
        status, payload = client.request(method, step_path, body)
        if status != 200:
            raise RuntimeError(f"{method} {step_path}: {status} {payload}")


def load(port, count, parallel=20):
    local = threading.local()

    def one(index):
        if not hasattr(local, "client"):
            local.client = Client(port)
        create_provider(local.client, index)

    began = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        list(pool.map(one, range(count)))
    return time.perf_counter() - began


def stats(seconds):
    ms = sorted(s * 1000 for s in seconds)
    return {"median_ms": round(statistics.median(ms), 2),
            "p90_ms": round(ms[int(len(ms) * 0.9) - 1], 2),
            "min_ms": round(ms[0], 2), "count": len(ms)}


def time_query(client, times):
    out = []
    candidates = None
    for _ in range(times):
        status, payload, seconds = client.timed("GET", QUERY)
        assert status == 200, payload
        out.append(seconds)
        candidates = payload
    return out, len(json.loads(candidates)["allocation_requests"])


def claim(client):
    status, payload = client.request("GET", QUERY + "&limit=5")
    assert status == 200, payload
    body = json.loads(payload)["allocation_requests"][0]
    body.update(consumer_generation=None, project_id=str(uuid.uuid4()),
                user_id=str(uuid.uuid4()), consumer_type="TEST")
    status, payload, seconds = client.timed(
        "PUT", f"/allocations/{uuid.uuid4()}", body)
    assert status == 204, payload
    return seconds


def concurrent_run(port, concurrency, requests):
    """`ab -c concurrency -n requests`: a new connection per request."""
    latencies = []
    lock = threading.Lock()
    remaining = [requests]

    def worker():
        client = Client(port, keep_alive=False)
        while True:
            with lock:
                if remaining[0] == 0:
                    return
                remaining[0] -= 1
            status, _payload, seconds = client.timed("GET", QUERY)
            assert status == 200
            with lock:
                latencies.append(seconds)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    return {"requests_per_s": round(requests / wall, 1),
            "wall_s": round(wall, 3), **stats(latencies)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--db", help="database URL (default: a new SQLite "
                                     "file)")
    parser.add_argument("--cache", choices=["on", "off", "both"],
                        default="both")
    args = parser.parse_args(argv)
    settings = {"on": [True], "off": [False], "both": [True, False]}
    results = {}
    for cache in settings[args.cache]:
        results["cache_on" if cache else "cache_off"] = run(args, cache)
    print(json.dumps({
        "benchmark": "api (perfload over HTTP)",
        "inputs": {"providers": args.providers + 10, "query": QUERY,
                   "server_workers": args.workers,
                   "server_threads": args.threads,
                   "concurrency": args.concurrency,
                   "requests": args.requests, "runs": args.runs,
                   "database": args.db or "sqlite file"},
        "cpu_count": os.cpu_count(),
        **results,
    }, indent=2))


def run(args, cache):
    workdir = tempfile.mkdtemp(prefix="gantt-bench-api-")
    proc, port = start_server(args, workdir, cache)
    try:
        load(port, 10)
        load_seconds = load(port, args.providers)
        client = Client(port)
        query_times, found = time_query(client, 20)
        claim_times, cycle_query_times = [], []
        for _ in range(99):
            claim_times.append(claim(client))
            cycle_query_times += time_query(client, 2)[0]
        runs = [concurrent_run(port, args.concurrency, args.requests)
                for _ in range(args.runs)]
    finally:
        proc.terminate()
        proc.wait(30)
    return {
        "load": {"providers": args.providers,
                 "seconds": round(load_seconds, 2),
                 "providers_per_s": round(args.providers / load_seconds,
                                          1)},
        "query": {"candidates": found, **stats(query_times)},
        "claims": {"cycles": 99, **stats(claim_times),
                   "query_between_claims": stats(cycle_query_times)},
        "concurrent": {
            "median_requests_per_s": statistics.median(
                r["requests_per_s"] for r in runs),
            "runs": runs},
    }


if __name__ == "__main__":
    main()
