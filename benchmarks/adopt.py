"""How long adopting a running cloud takes: gantt-manage placement
import, verify and export, on a cloud of N compute nodes with M
instances each (--instances, default 2).

The OpenStack Placement database is made by placement-manage db sync
(OpenStack Placement 16, in the virtualenv tests/placement16/install.py
makes) and filled by an export from a gantt store holding the cloud
(filling it through Placement's own API would take hours at this size).
Then, timed: the import into an empty gantt database (SQLite file), and
the export back into a second empty Placement database. verify is timed
against Placement 16 serving the source over HTTP when --verify is
given (it asks about 7 GETs a provider of both sides).

    .venv/bin/python -m benchmarks.adopt --hosts 1000,10000
    .venv/bin/python -m benchmarks.adopt --hosts 10000 --instances 10
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid

from gantt.cmd import manage
from placement.adopt import exporter
from placement.db import migration
from placement.db import store as store_mod
from placement.objects import allocations, inventories, providers
from tests import databases
from tests.placement16 import install

Inv = inventories.Inventory
FLAVOR = {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 20}


def _gantt(path):
    conf = databases.make_conf(f"sqlite:///{path}")
    store = store_mod.Store(conf)
    migration.sync(store.engine)
    store.dispose()
    return store_mod.Store.open(conf)


def _cloud(store, hosts, instances):
    def load(txn):
        writes = []
        for i in range(hosts):
            rp = providers.create(txn, f"cn{i}")
            inventories.replace_all(txn, rp.uuid, None, [
                Inv("VCPU", 64), Inv("MEMORY_MB", 262144),
                Inv("DISK_GB", 4096)])
            for _ in range(instances):
                writes.append(allocations.ConsumerAllocations(
                    consumer_uuid=str(uuid.uuid4()),
                    allocations={rp.uuid: dict(FLAVOR)},
                    project_id="bench", user_id="bench",
                    consumer_generation=None))
        allocations.replace(txn, writes)
    store.write(load)


def _placement_db(venv, path, work):
    conf = os.path.join(work, f"{os.path.basename(path)}.conf")
    with open(conf, "w") as f:
        f.write(f"[placement_database]\nconnection = sqlite:///{path}\n")
    subprocess.run([str(venv / "bin" / "placement-manage"), "--config-file",
                    conf, "db", "sync"], check=True, capture_output=True)
    return f"sqlite:///{path}"


def _timed(argv):
    start = time.perf_counter()
    code = manage.main(argv)
    return code, round(time.perf_counter() - start, 2)


def _serve(venv, url):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    drive = os.path.join(os.path.dirname(install.__file__), "drive.py")
    proc = subprocess.Popen([str(venv / "bin" / "python"), drive],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    proc.stdin.write(json.dumps({"url": url, "requests": [], "record": [],
                                 "serve": port}))
    proc.stdin.close()
    proc.stdout.readline()
    return proc, f"http://127.0.0.1:{port}"


def scenario(venv, hosts, instances, verify):
    with tempfile.TemporaryDirectory() as work:
        seed = _gantt(os.path.join(work, "seed.sqlite"))
        _cloud(seed, hosts, instances)
        source = _placement_db(venv, os.path.join(work, "source.sqlite"),
                               work)
        exporter.write(source, seed.read(exporter.read_gantt))
        seed.dispose()
        target = os.path.join(work, "gantt.sqlite")
        _gantt(target).dispose()
        conf = os.path.join(work, "gantt.conf")
        with open(conf, "w") as f:
            f.write(f"[placement_database]\nconnection = "
                    f"sqlite:///{target}\n")
        base = ["--config-file", conf, "placement"]
        out = {"hosts": hosts, "consumers": instances * hosts,
               "allocations": 3 * instances * hosts}
        code, out["dry_run_s"] = _timed(base + ["import", "--from", source,
                                                "--dry-run"])
        code, out["import_s"] = _timed(base + ["import", "--from", source])
        assert code == 0
        if verify:
            proc, endpoint = _serve(venv, source)
            try:
                code, out["verify_s"] = _timed(
                    base + ["verify", "--against", endpoint, "--token",
                            "admin"])
                out["verify_differences"] = code != 0
            finally:
                proc.kill()
                proc.wait()
        back = _placement_db(venv, os.path.join(work, "back.sqlite"), work)
        code, out["export_s"] = _timed(base + ["export", "--to", back])
        assert code == 0
        return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", default="1000,10000")
    parser.add_argument("--instances", type=int, default=2,
                        help="instances (consumers) per host, each with "
                             "three allocations")
    parser.add_argument("--verify", action="store_true",
                        help="also time verify against Placement 16")
    args = parser.parse_args(argv)
    venv = install.placement_venv()
    results = {}
    for hosts in (int(h) for h in args.hosts.split(",")):
        print(f"running {hosts} hosts", file=sys.stderr)
        results[hosts] = scenario(venv, hosts, args.instances, args.verify)
    json.dump({"benchmark": "adopt: placement import, verify, export",
               "inputs": {"hosts": args.hosts, "database": "sqlite files",
                          "instances_per_host": args.instances},
               "cpu_count": os.cpu_count(), "results": results},
              sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
