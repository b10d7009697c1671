"""``make demo``'s scheduler part: gantt-scheduler and a conductor in one
process, on the embedded default transport (kombu+memory).

    python -m rpc.demo [--config-file F]

Starts the scheduler service (rpc.service.run, the same code
gantt-scheduler runs) in a background thread on the cloud in
``[placement_database] connection``, sends a handful of
select_destinations calls through rpc.client.SchedulerClient (each claims
for new instances), prints every Selection with its alternates and
allocation request, then stops the service the way SIGTERM does and
checks that it stopped cleanly. Exit status 0 when every call answered as
expected, 1 otherwise.
"""

import json
import sys
import threading
import time
import uuid

from oslo_log import log as logging

from placement import direct
from placement.db import store as store_mod
from rpc import client as client_mod
from rpc import service
from scheduler import errors

SMALL = {"name": "m1.small", "vcpus": 1, "memory_mb": 2048, "root_gb": 10}
# (title, spec, instances, whether a host must be found)
CALLS = [
    ("one m1.small", {"flavor": SMALL}, 1, True),
    ("three m1.small at once (all or nothing)",
     {"flavor": SMALL, "num_instances": 3}, 3, True),
    ("one m1.small in zone east", {"flavor": SMALL,
                                   "availability_zone": "east"}, 1, True),
    ("one m1.small with dedicated CPUs (PCPU)",
     {"flavor": dict(SMALL, extra_specs={"hw:cpu_policy": "dedicated"})},
     1, True),
    ("one 1 TB-memory flavor: no host can take it",
     {"flavor": dict(SMALL, name="m1.huge", memory_mb=1048576)}, 1, False),
]


class _Stop:
    """What rpc.service.serve waits on, fired here instead of by a
    signal."""

    def __init__(self):
        self.event = threading.Event()
        self.signum = 0

    def wait(self):
        self.event.wait()
        return self.signum

    def set(self):
        self.event.set()


def _wait_ready(client, thread, seconds=30):
    """Ping until the service answers; False when it died first."""
    deadline = time.monotonic() + seconds
    while thread.is_alive():
        try:
            client.ping(None, "ready?")
            return True
        except client_mod.SchedulerTimeout:
            if time.monotonic() > deadline:
                raise
    return False


def _names(placement):
    return {p.uuid: p.name for p in placement.list_providers()}


def _show_selection(label, sel, names):
    print(f"  {label:9s} {sel.service_host} / {sel.nodename} "
          f"(cell {sel.cell_uuid}, zone {sel.availability_zone})")
    if sel.allocation_request:
        wanted = json.loads(sel.allocation_request)["allocations"]
        parts = [f"{names.get(rp, rp)}: " + ", ".join(
                 f"{rc} {n}" for rc, n in sorted(a["resources"].items()))
                 for rp, a in sorted(wanted.items())]
        print("            " + "; ".join(parts))


def run_calls(client, placement):
    """Send CALLS; whether every one answered as expected."""
    names = _names(placement)
    context = {"project_id": "demo", "user_id": "make-run",
               "request_id": "req-" + str(uuid.uuid4())}
    ok = True
    for title, spec, count, placeable in CALLS:
        spec = dict(spec, project_id="demo", user_id="make-run")
        instances = [str(uuid.uuid4()) for _ in range(count)]
        print(f"\nselect_destinations: {title}")
        try:
            answer = client.select_destinations(context, spec, instances)
        except errors.NoValidHost as exc:
            print(f"  NoValidHost: {exc}")
            ok &= not placeable
            continue
        if not placeable or len(answer) != count:
            print(f"  expected {count} placements, got {len(answer)}")
            ok = False
            continue
        for instance, selections in zip(instances, answer, strict=True):
            print(f" instance {instance}")
            _show_selection("chosen", selections[0], names)
            for alternate in selections[1:]:
                _show_selection("alternate", alternate, names)
    return ok


def main(argv=None):
    conf = service.build_conf(sys.argv[1:] if argv is None else argv)
    logging.setup(conf, "gantt")
    # The schema first, as gantt-scheduler does before its workers start.
    store_mod.Store.open(conf).dispose()
    stop = _Stop()
    outcome = {}
    thread = threading.Thread(
        target=lambda: outcome.update(code=service.run(conf, stop)),
        name="gantt-scheduler")
    thread.start()
    placement = direct.PlacementDirect.open(conf)
    client = client_mod.SchedulerClient(conf, timeout=30)
    # Pings give up soon when the service is not there (yet).
    conf.set_override("rpc_response_timeout", 2)
    ok = False
    try:
        if not _wait_ready(client, thread):
            print("gantt-scheduler failed to start (see the log above)")
            return 1
        print(f"gantt-scheduler is up on {conf.transport_url} "
              f"(topic {conf.scheduler.topic}, exchange "
              f"{conf.control_exchange})")
        ok = run_calls(client, placement)
    finally:
        client.close()
        placement.close()
        stop.set()
        thread.join(conf.graceful_shutdown_timeout + 5)
    stopped = not thread.is_alive() and outcome.get("code") == 0
    print("\ngantt-scheduler stopped cleanly" if stopped
          else "\ngantt-scheduler did not stop cleanly")
    return 0 if ok and stopped else 1


if __name__ == "__main__":
    sys.exit(main())
