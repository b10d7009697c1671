"""What ``gantt-manage cloud show`` prints: providers as trees, with
capacity and usage per resource class, their traits and aggregates,
totals per class, and the compute hosts as the scheduler sees them."""

import dataclasses

from cloudfile import hosts as hosts_mod
from placement.db import store
from placement.objects import (
    aggregates,
    inventories,
    providers,
    traits,
    usages,
)


@dataclasses.dataclass
class Snapshot:
    providers: list  # ResourceProvider, oldest first
    inventories: dict  # {uuid: {rc: Inventory}}
    usages: dict  # {uuid: {rc: used}}
    traits: dict  # {uuid: [names]}
    aggregates: dict  # {uuid: [uuids]}


@store.reader
def snapshot(txn):
    """Everything the report shows, read in one transaction."""
    return Snapshot(providers.list_all(txn), inventories.by_provider(txn),
                    usages.by_provider(txn), traits.by_provider(txn),
                    aggregates.by_provider(txn))


def _in_tree_order(snap):
    """(depth, provider) with each child right under its parent."""
    children = {}
    for rp in snap.providers:
        children.setdefault(rp.parent_provider_uuid, []).append(rp)
    out = []

    def visit(rp, depth):
        out.append((depth, rp))
        for child in children.get(rp.uuid, []):
            visit(child, depth + 1)

    for root in children.get(None, []):
        visit(root, 0)
    return out


def rows(snap):
    """One dict per (provider, resource class), in tree order."""
    out = []
    for depth, rp in _in_tree_order(snap):
        invs = snap.inventories.get(rp.uuid, {})
        used = snap.usages.get(rp.uuid, {})
        if not invs:
            out.append({"provider": rp.name, "uuid": rp.uuid,
                        "depth": depth, "resource_class": None})
        for rc, inv in invs.items():
            capacity = inv.capacity
            out.append({
                "provider": rp.name, "uuid": rp.uuid, "depth": depth,
                "resource_class": rc, "total": inv.total,
                "reserved": inv.reserved,
                "allocation_ratio": inv.allocation_ratio,
                "capacity": capacity, "used": used.get(rc, 0),
                "free": capacity - used.get(rc, 0)})
    return out


def totals(snap):
    """{rc: {"capacity", "used", "free"}} over the whole cloud."""
    out = {}
    for uuid, invs in snap.inventories.items():
        for rc, inv in invs.items():
            entry = out.setdefault(rc, {"capacity": 0, "used": 0})
            entry["capacity"] += inv.capacity
            entry["used"] += snap.usages.get(uuid, {}).get(rc, 0)
    for entry in out.values():
        entry["free"] = entry["capacity"] - entry["used"]
    return out


def host_rows(table):
    """One dict per compute node of a synced scheduler.host_state
    HostStateTable, by host and node name."""
    up = table.service_up()
    out = []
    for row in table.live_rows().tolist():
        node = table.node(row)
        service = table.service(row)
        out.append({
            "host": node.host, "nodename": node.nodename,
            "uuid": node.uuid, "cell_uuid": node.cell_uuid,
            "hypervisor_type": node.hypervisor_type,
            "hypervisor_version": hosts_mod.version_to_str(
                node.hypervisor_version),
            "availability_zone": table.zone(row),
            "aggregates": sorted(a.name for a in table.aggregates_of(row)),
            "up": bool(up[row]), "forced_down": service.forced_down,
            "enabled": not service.disabled,
            "disabled_reason": service.disabled_reason,
            "vcpus": int(table.vcpus_total[row]),
            "vcpus_used": int(table.vcpus_used[row]),
            "free_ram_mb": int(table.free_ram_mb[row]),
            "free_disk_gb": int(table.free_disk_mb[row]) // 1024,
            "instances": len(table.instances_on(row))})
    return sorted(out, key=lambda h: (h["host"], h["nodename"]))


def as_dict(snap, hosts=None):
    """The report as JSON-ready data; ``hosts``: host_rows()."""
    out = {
        "providers": [
            {"uuid": rp.uuid, "name": rp.name, "generation": rp.generation,
             "parent_provider_uuid": rp.parent_provider_uuid,
             "root_provider_uuid": rp.root_provider_uuid,
             "inventories": {rc: inv.values() for rc, inv in
                             snap.inventories.get(rp.uuid, {}).items()},
             "usages": snap.usages.get(rp.uuid, {}),
             "traits": snap.traits.get(rp.uuid, []),
             "aggregates": snap.aggregates.get(rp.uuid, [])}
            for rp in snap.providers],
        "totals": totals(snap),
    }
    if hosts is not None:
        out["hosts"] = hosts
    return out


def _percent(used, capacity):
    return f"{100.0 * used / capacity:5.1f}%" if capacity else "    -"


def _service(host):
    state = "up" if host["up"] else (
        "forced down" if host["forced_down"] else "down")
    if not host["enabled"]:
        state += ", disabled"
        if host["disabled_reason"]:
            state += f" ({host['disabled_reason']})"
    return state


def render_hosts(hosts):
    table = [("HOST", "NODE", "ZONE", "HYPERVISOR", "SERVICE", "AGGREGATES",
              "VCPUS", "FREE_RAM_MB", "FREE_DISK_GB", "INSTANCES")]
    for h in hosts:
        hypervisor = " ".join(p for p in (h["hypervisor_type"],
                                          h["hypervisor_version"]) if p)
        table.append((
            h["host"], h["nodename"], h["availability_zone"],
            hypervisor or "-", _service(h), ", ".join(h["aggregates"]) or "-",
            f"{h['vcpus_used']}/{h['vcpus']}", str(h["free_ram_mb"]),
            str(h["free_disk_gb"]), str(h["instances"])))
    return _columns(table, left=6)


def render(snap, hosts=()):
    """The report as text; ``hosts``: host_rows()."""
    trees = sum(1 for rp in snap.providers if rp.parent_provider_uuid is None)
    aggs = {a for members in snap.aggregates.values() for a in members}
    lines = [f"{len(snap.providers)} providers in {trees} trees, "
             f"{len(aggs)} aggregates", ""]
    table = [("PROVIDER", "CLASS", "TOTAL", "RESERVED", "RATIO", "CAPACITY",
              "USED", "FREE", "USED%")]
    last = None
    for row in rows(snap):
        name = ("  " * row["depth"] + row["provider"]
                if row["uuid"] != last else "")
        last = row["uuid"]
        if row["resource_class"] is None:
            table.append((name, "-", "", "", "", "", "", "", ""))
            continue
        table.append((
            name, row["resource_class"], str(row["total"]),
            str(row["reserved"]), f"{row['allocation_ratio']:g}",
            str(row["capacity"]), str(row["used"]), str(row["free"]),
            _percent(row["used"], row["capacity"])))
    lines += _columns(table, left=2)
    lines += ["", "TOTALS"]
    total_table = [("CLASS", "CAPACITY", "USED", "FREE", "USED%")]
    for rc, t in sorted(totals(snap).items()):
        total_table.append((rc, str(t["capacity"]), str(t["used"]),
                            str(t["free"]), _percent(t["used"],
                                                     t["capacity"])))
    lines += _columns(total_table, left=1)
    lines += ["", "TRAITS AND AGGREGATES"]
    for depth, rp in _in_tree_order(snap):
        parts = []
        if snap.traits.get(rp.uuid):
            parts.append("traits: " + ", ".join(snap.traits[rp.uuid]))
        if snap.aggregates.get(rp.uuid):
            parts.append("aggregates: " + ", ".join(snap.aggregates[rp.uuid]))
        if parts:
            lines.append("  " * depth + f"{rp.name}: " + "; ".join(parts))
    if hosts:
        lines += ["", "COMPUTE HOSTS"] + render_hosts(hosts)
    return "\n".join(lines)


def _columns(table, left):
    """Text columns: the first ``left`` aligned left, the rest right."""
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    out = []
    for r in table:
        cells = [c.ljust(w) if i < left else c.rjust(w)
                 for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
    return out
