"""The conductor-like load of issue 40's runs, in the client namespace:

    python -m benchmarks.ha_conductor --transport-url URL --exchange X
        --topic T --placement URL --seconds S --clients N --out FILE

``--clients`` threads each create and delete instances as Nova's
conductor and computes do: select_destinations over RabbitMQ with
instance uuids (the scheduler claims), a share of multi-instance
requests and of anti-affinity server groups (one request places a whole
group); once placed, each instance is cast to the schedulers
(update_instance_info, as its compute would); a delete removes its
allocations through the placement API (HAProxy's address) and casts
delete_instance_info; the instances of a create that failed (a timeout:
its answer lost, perhaps after a claim) are deleted as a user deletes
an instance in ERROR; at the end each host's instances are cast once
more (sync_instance_info, as computes do periodically). Every call is
recorded with its start, end and outcome; at the end FILE gets JSON:
the calls, the instances the client holds live (host, compute node,
group), the instances whose fate a failed call leaves unknown, and the
groups.
"""

import argparse
import json
import random
import sys
import threading
import time
import uuid as uuidlib

import requests
from oslo_config import cfg

from rpc import client as rpc_client
from rpc import conf as rpc_conf
from scheduler import errors
from tests.rpc import helpers

FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}
HEADERS = {"x-auth-token": "admin",
           "openstack-api-version": "placement 1.39"}


class Conductor:
    def __init__(self, client, placement, seed=0):
        self.client = client
        self.placement = placement
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.calls = []
        self.live = {}  # uuid -> [host, node, group or None]
        self.unknown = set()  # a failed call may or may not have claimed
        self.groups = {}  # group uuid -> member uuids
        self.hosts_seen = set()
        self.stop = threading.Event()

    def _record(self, kind, started, failure, count=1):
        with self.lock:
            self.calls.append({"kind": kind, "started": started,
                               "ended": time.monotonic(),
                               "failure": failure, "instances": count})

    def create(self, rng):
        roll = rng.random()
        group = None
        count = 1
        fields = {}
        if roll < 0.2:
            count = rng.choice((2, 3))
            group = str(uuidlib.uuid4())
            kind = "create_group"
        elif roll < 0.35:
            count = rng.choice((2, 3))
            kind = "create_multi"
        else:
            kind = "create"
        uuids = [str(uuidlib.uuid4()) for _ in range(count)]
        if group:
            fields["instance_group"] = helpers.nova_object(
                "InstanceGroup", "1.11", {
                    "uuid": group, "policy": "anti-affinity",
                    "members": uuids, "hosts": [], "rules": {}})
        spec = helpers.request_spec(num_instances=count,
                                    instance_uuid=uuids[0], **FLAVOR,
                                    **fields)
        started = time.monotonic()
        try:
            answer = self.client.select_destinations(
                helpers.CONTEXT, spec, uuids, return_alternates=True)
        except errors.NoValidHost:
            self._record(kind, started, "NoValidHost", count)
            return
        except rpc_client.SchedulerTimeout:
            self._record(kind, started, "timeout", count)
            self._clean_up(uuids)
            return
        except Exception as exc:  # counted by kind
            self._record(kind, started, type(exc).__name__, count)
            self._clean_up(uuids)
            return
        self._record(kind, started, None, count)
        # Built, its compute reports it; only then can it be deleted.
        for uuid, per_instance in zip(uuids, answer, strict=True):
            self._cast("update_instance_info", per_instance[0].service_host,
                       [uuid])
        with self.lock:
            for uuid, per_instance in zip(uuids, answer, strict=True):
                chosen = per_instance[0]
                self.live[uuid] = [chosen.service_host,
                                   chosen.compute_node_uuid, group]
                self.hosts_seen.add(chosen.service_host)
            if group:
                self.groups[group] = uuids

    def _clean_up(self, uuids):
        """A build whose scheduling failed: the instances end in ERROR
        and are deleted, which removes whatever the scheduler may have
        claimed for them before its answer was lost. One that cannot be
        deleted stays unknown."""
        for uuid in uuids:
            started = time.monotonic()
            failure = "not tried"
            for _ in range(5):
                try:
                    answer = requests.delete(
                        f"{self.placement}/allocations/{uuid}",
                        headers=HEADERS, timeout=60)
                    failure = (None if answer.status_code in (204, 404)
                               else f"HTTP {answer.status_code}")
                except requests.RequestException as exc:
                    failure = type(exc).__name__
                if failure is None:
                    break
                time.sleep(1.0)
            self._record("clean_up", started, failure)
            if failure:
                with self.lock:
                    self.unknown.add(uuid)

    def _cast(self, method, host, arg):
        started = time.monotonic()
        try:
            getattr(self.client, method)(helpers.CONTEXT, host, arg)
        except Exception as exc:  # counted by kind
            self._record("cast", started, type(exc).__name__)
            return
        self._record("cast", started, None)

    def delete(self, rng):
        with self.lock:
            if not self.live:
                return
            uuid = rng.choice(sorted(self.live))
            host, node, group = self.live.pop(uuid)
        started = time.monotonic()
        try:
            answer = requests.delete(f"{self.placement}/allocations/{uuid}",
                                     headers=HEADERS, timeout=60)
            failure = (None if answer.status_code in (204, 404)
                       else f"HTTP {answer.status_code}")
        except requests.RequestException as exc:
            failure = type(exc).__name__
        self._record("delete", started, failure)
        if failure:
            with self.lock:
                self.unknown.add(uuid)
            return
        self._cast("delete_instance_info", host, uuid)

    def work(self, seed):
        rng = random.Random(seed)
        while not self.stop.is_set():
            with self.lock:
                many = len(self.live)
            if many and rng.random() < (0.3 if many < 150 else 0.6):
                self.delete(rng)
            else:
                self.create(rng)

    def run(self, seconds, clients):
        threads = [threading.Thread(target=self.work, args=(i,), daemon=True)
                   for i in range(clients)]
        for thread in threads:
            thread.start()
        time.sleep(seconds)
        self.stop.set()
        for thread in threads:
            thread.join(120)

    def sync_hosts(self):
        """What each compute does now and then (Nova's
        scheduler_instance_sync_interval): tell the schedulers every
        instance it holds, which heals casts the broker lost."""
        on_host = {host: [] for host in self.hosts_seen}
        for uuid, (host, _, _) in self.live.items():
            on_host.setdefault(host, []).append(uuid)
        for host, uuids in sorted(on_host.items()):
            self._cast("sync_instance_info", host, uuids)

    def result(self):
        return {"calls": self.calls, "live": self.live,
                "unknown": sorted(self.unknown), "groups": self.groups}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ha_conductor")
    parser.add_argument("--transport-url", required=True)
    parser.add_argument("--exchange", required=True)
    parser.add_argument("--topic", default="scheduler")
    parser.add_argument("--placement", required=True)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    rpc_conf.register_opts(conf)
    conf.set_override("transport_url", args.transport_url)
    conf.set_override("control_exchange", args.exchange)
    conf.set_override("topic", args.topic, group="scheduler")
    transport = helpers.client_transport(conf)
    conductor = Conductor(rpc_client.SchedulerClient(
        conf, transport=transport, timeout=args.timeout),
        args.placement)
    try:
        conductor.run(args.seconds, args.clients)
        conductor.sync_hosts()
    finally:
        transport.cleanup()
    with open(args.out, "w") as out:
        json.dump(conductor.result(), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
