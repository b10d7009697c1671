"""The compute-side events of a simulation: a node that reshapes its
provider tree, a compute service that goes down and comes back.

A reshape goes through the client a compute node uses
(compute.report_client.ReportClient on a DirectPort to the run's
placement): the node reads its tree, takes the class off its root, adds
N child providers sharing it (equal shares, the remainder to the first)
and reports the new tree with one Move per child; the allocations on the
root move by the client's first-fit. ``host_down`` forces the host's
compute service down in the host records (what a missed heartbeat or
``openstack compute service set --down`` does), so ComputeFilter drops
it; ``host_up`` clears it. The schedulers learn of both as of any other
write to their store: at once for the scheduler on the store written,
at its next sync for the others.

Hosts drawn by ``fraction`` come from a generator seeded by the run's
seed, separate from the schedulers' own: the same seed draws the same
hosts, and a workload without these events schedules as before.
"""

import uuid as uuidlib

import numpy as np

from compute import placement_port, reshape
from compute.provider_tree import ProviderTree
from compute.report_client import ReportClient, ReportError
from scheduler import host_records
from simulation import workload as workload_mod

_NAMESPACE = uuidlib.UUID("6b0e2c55-3f7a-4f0e-8d7e-21c9a4d1e0b3")


class ComputeNodes:
    """Plays the compute events of one run on the placement and host
    records of ``store`` (the first scheduler's)."""

    def __init__(self, cloud, placement, store, seed, path):
        self.store = store
        self.path = path
        self.seed = seed
        self.client = ReportClient(placement_port.DirectPort(placement))
        self.port = self.client.port
        self.rng = np.random.Generator(np.random.PCG64([seed, 25]))
        self.nodes = {}  # host -> [root uuid, ...]
        for spec in cloud.hosts:
            self.nodes.setdefault(spec.host, []).append(spec.uuid)
        self.names = sorted(self.nodes)
        self.down = {spec.host for spec in cloud.hosts if spec.forced_down}
        self.log = []
        self.counts = {
            "reshape": {"events": 0, "hosts": 0, "children": 0,
                        "allocations_moved": 0, "skipped": 0,
                        "refused": 0},
            "host_down": {"events": 0, "hosts": 0},
            "host_up": {"events": 0, "hosts": 0},
        }

    def check(self, events):
        """WorkloadError for a host the cloud does not have, before the
        run starts."""
        for event in events:
            for name in event.hosts or ():
                if name not in self.nodes:
                    raise workload_mod.WorkloadError(
                        self.path, f"{event.where}.hosts",
                        f"unknown host {name!r}; hosts: "
                        + workload_mod._listing(self.names))

    # -- playing ----------------------------------------------------------

    def play(self, n, event):
        """Carry out ``event`` (the ``n``th of the run)."""
        if event.kind == "reshape":
            entry = self._reshape(event)
        else:
            entry = self._service(event)
        self.counts[event.kind]["events"] += 1
        self.log.append({"event": n, "time_s": event.time,
                         "action": event.kind, **entry})

    def _chosen(self, event, eligible):
        """The hosts named, or ``fraction`` of ``eligible`` (sorted)
        drawn by the run's generator: at least one when any is."""
        if event.hosts is not None:
            return list(event.hosts)
        eligible = sorted(eligible)
        if not eligible:
            return []
        count = max(1, int(event.fraction * len(eligible) + 0.5))
        picked = self.rng.choice(len(eligible), size=count, replace=False)
        return [eligible[i] for i in sorted(picked.tolist())]

    def _service(self, event):
        down = event.kind == "host_down"
        eligible = (set(self.names) - self.down) if down else self.down
        hosts = self._chosen(event, eligible)
        for host in hosts:
            host_records.set_service_state(self.store, host,
                                           forced_down=down)
            if down:
                self.down.add(host)
            else:
                self.down.discard(host)
        self.counts[event.kind]["hosts"] += len(hosts)
        return {"hosts": hosts, "hosts_down_after": len(self.down)}

    def _reshape(self, event):
        rc = event.resource_class
        if event.hosts is not None:
            hosts = list(event.hosts)
        else:
            hosts = self._chosen(event, [
                h for h in self.names
                if any(rc in self.port.read_tree(r)[r].inventories
                       for r in self.nodes[h])])
        counts = self.counts["reshape"]
        done, moved, skipped, refused = [], 0, [], []
        for host in hosts:
            for root in self.nodes[host]:
                try:
                    got = self._split(root, rc, event.children)
                except (reshape.ReshapeError, ReportError) as exc:
                    refused.append({"host": host, "reason": str(exc)})
                    continue
                if got is None:
                    skipped.append(host)
                    continue
                moved += got
                done.append(host)
        counts["hosts"] += len(done)
        counts["children"] += len(done) * event.children
        counts["allocations_moved"] += moved
        counts["skipped"] += len(skipped)
        counts["refused"] += len(refused)
        entry = {"hosts": done, "class": rc, "children": event.children,
                 "allocations_moved": moved}
        if skipped:
            entry["skipped"] = skipped  # no such inventory on the root
        if refused:
            entry["refused"] = refused
        return entry

    def _split(self, root, rc, children):
        """Split ``rc`` of the root ``root`` into ``children`` new child
        providers through the report client; the allocations moved, or
        None when the root has no inventory of ``rc``."""
        held = self.port.read_tree(root)
        top = held[root]
        inventory = top.inventories.get(rc)
        if inventory is None:
            return None
        if int(inventory["total"]) < children:
            raise reshape.ReshapeError(
                f"{rc} total {inventory['total']} of {top.name} cannot "
                f"be split into {children} children")
        consumers = self.port.provider_consumers(root)
        moving = sum(1 for res in consumers.values() if res.get(rc))
        wanted = ProviderTree(p.copy() for p in held)
        rest = {k: v for k, v in wanted[root].inventories.items()
                if k != rc}
        wanted.update_inventories(root, rest)
        moves = []
        taken = {p.name for p in held}
        for k, share in enumerate(_shares(inventory, children)):
            name = f"{top.name}-{rc.lower()}{k}"
            while name in taken:
                name += "x"
            taken.add(name)
            uuid = str(uuidlib.uuid5(
                _NAMESPACE, f"{self.seed}:{root}:{rc}:{name}"))
            wanted.new_child(name, root, uuid=uuid,
                             inventories={rc: share})
            moves.append(reshape.Move(root, uuid, {rc: share["total"]}))
        self.client.update_from_provider_tree(wanted, moves=moves)
        return moving


def _shares(inventory, parts):
    """The inventory's total and reserved in ``parts`` shares as even as
    whole units allow (the remainder to the first ones); the other
    fields kept, max_unit no more than a share's total."""
    out = []
    for k in range(parts):
        share = dict(inventory)
        for key in ("total", "reserved"):
            whole, extra = divmod(int(inventory.get(key, 0)), parts)
            share[key] = whole + (1 if k < extra else 0)
        share["max_unit"] = max(1, min(int(inventory.get(
            "max_unit", share["total"])), share["total"]))
        share["min_unit"] = min(int(inventory.get("min_unit", 1)),
                                share["max_unit"])
        out.append(share)
    return out
