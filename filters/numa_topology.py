"""NUMATopologyFilter: do the guest's NUMA cells fit on the node's?

A request without numa_topology passes every host; one with it fails
hosts that report no NUMA topology.

Node topology accepted: a dict ``{"cells": [cell, ...]}``, either plain
or as Nova's compute reports it (the versioned-object primitive, where
each level wraps its fields in ``nova_object.data``). Cell fields read,
all optional but ``id``:

- ``cpuset``: host CPUs for shared (floating) guest CPUs;
- ``pcpuset``: host CPUs for pinned guest CPUs (absent, as in reports
  older than Train: the cpuset serves both);
- ``pinned_cpus``: pcpus already pinned;
- ``cpu_usage``: shared guest CPUs already placed;
- ``memory``, ``memory_usage``: MB;
- ``siblings``: lists of hyperthread siblings;
- ``mempages``: ``[{size_kb, total, used, reserved}]``.

A guest cell fits a host cell, as in Nova's per-cell check:

- memory: with a page size asked, free pages of one size hold it (and it
  is a whole number of pages): that size, or for Nova's symbolic sizes
  the host's smallest (-1, small), any but the smallest (-2, large) or any
  (-3), largest first; a host that lists no page sizes fails such a
  request; otherwise, on a host that lists
  page sizes, it fits in its smallest pages (used ones count as free, it
  may overcommit); otherwise it is no larger than the cell;
- pinned CPUs (cpu_policy dedicated, or the pcpuset of a mixed cell): no
  more than the cell's pcpuset, and no more than those not yet pinned;
  memory no more than the cell's unused memory (no overcommit);
- shared CPUs only: no more than the cell's cpuset, usage plus the
  guest's CPUs within cpuset x cpu_allocation_ratio, and memory usage plus
  the guest's memory within memory x ram_allocation_ratio (the node's
  ratios).

Guest cells go to distinct host cells; we look for such an assignment by
bipartite matching, so a host passes exactly when some assignment of the
guest cells fits. With hw:cpu_policy dedicated and
hw:cpu_thread_policy require (flavor or image), a host with no sibling
threads fails.

Simplifications (Nova does more): pinned CPUs are counted, not placed on
cores, so thread policies isolate and require do not shape the fit;
emulator thread reservations, PCI and network NUMA affinity are not
considered; page sizes are given in KiB (small/large/any are resolved
before the request reaches us). A dedicated guest cell that gives only a
cpuset (older requests) is taken as asking that many pinned CPUs.
"""

import dataclasses

import numpy as np

from filters import base


def object_fields(obj):
    """The fields of a plain dict or of a versioned-object primitive."""
    if isinstance(obj, dict) and "nova_object.data" in obj:
        return obj["nova_object.data"]
    return obj if isinstance(obj, dict) else {}


@dataclasses.dataclass(frozen=True)
class HostCell:
    id: int
    cpus: int
    pcpus: int
    free_pcpus: int
    cpu_usage: int
    memory: int
    memory_usage: int
    mempages: tuple  # ((size_kb, total, used, reserved), ...)
    threads: bool  # has a sibling set of two or more CPUs


def host_cells(topology):
    """The node's cells as HostCell, [] when it reports none."""
    cells = []
    for raw in object_fields(topology).get("cells") or ():
        cell = object_fields(raw)
        cpuset = set(cell.get("cpuset") or ())
        pcpuset = (set(cell.get("pcpuset") or ()) if "pcpuset" in cell
                   else cpuset)
        pinned = set(cell.get("pinned_cpus") or ())
        pages = []
        for page in cell.get("mempages") or ():
            page = object_fields(page)
            pages.append((int(page.get("size_kb", 0)),
                           int(page.get("total", 0)),
                           int(page.get("used", 0)),
                           int(page.get("reserved", 0))))
        cells.append(HostCell(
            id=cell.get("id", len(cells)),
            cpus=len(cpuset), pcpus=len(pcpuset),
            free_pcpus=len(pcpuset - pinned),
            cpu_usage=int(cell.get("cpu_usage") or 0),
            memory=int(cell.get("memory") or 0),
            memory_usage=int(cell.get("memory_usage") or 0),
            mempages=tuple(pages),
            threads=any(len(s) > 1 for s in cell.get("siblings") or ())))
    return cells


@dataclasses.dataclass(frozen=True)
class GuestCell:
    id: int
    shared: int  # floating CPUs
    pinned: int  # dedicated CPUs
    memory: int  # MB
    pagesize: int | None  # KiB


def requested_cells(request):
    """(guest cells, require sibling threads) parsed once per request."""
    key = ("NUMATopologyFilter", "guest")
    found = request.memo.get(key)
    if found is None:
        spec = request.spec
        topology = spec.numa_topology
        extra = spec.flavor.extra_specs
        props = spec.image.properties
        policy = (topology.cpu_policy or extra.get("hw:cpu_policy")
                  or props.get("hw_cpu_policy"))
        cells = []
        for c in topology.cells:
            pinned, shared = len(c.pcpuset), len(c.cpuset)
            if policy == "dedicated" and not pinned:
                pinned, shared = shared, 0
            cells.append(GuestCell(c.id, shared, pinned, c.memory,
                                   c.pagesize))
        policies = {policy, extra.get("hw:cpu_policy"),
                    props.get("hw_cpu_policy")}
        threads = {topology.cpu_thread_policy,
                   extra.get("hw:cpu_thread_policy"),
                   props.get("hw_cpu_thread_policy")}
        need_threads = "dedicated" in policies and "require" in threads
        found = request.memo[key] = (cells, need_threads)
    return found


# Nova's symbolic guest page sizes (hw:mem_page_size small, large, any).
PAGES_SMALL, PAGES_LARGE, PAGES_ANY = -1, -2, -3


def _page_sizes_to_try(pagesize, host):
    """The host page sizes a guest page size request may use, largest
    first, as Nova tries them: small = the smallest, large = every size
    but the smallest, any = every size."""
    sizes = sorted({page[0] for page in host.mempages}, reverse=True)
    if pagesize == PAGES_SMALL:
        return sizes[-1:]
    if pagesize == PAGES_LARGE:
        return sizes[:-1]
    if pagesize == PAGES_ANY:
        return sizes
    return [pagesize]


def page_size_used(guest, host):
    """The host page size (KiB) guest cell ``guest`` would take its
    memory in on host cell ``host``; None when it does not fit there in
    pages, or the host lists no page sizes and none was asked."""
    need_kb = guest.memory * 1024
    if guest.pagesize:
        free = {size: total - used - reserved
                for size, total, used, reserved in host.mempages}
        return next((size for size in _page_sizes_to_try(guest.pagesize,
                                                          host)
                     if need_kb % size == 0
                     and need_kb <= free.get(size, 0) * size), None)
    if host.mempages:
        size, total, _used, reserved = min(host.mempages)
        if need_kb % size == 0 and need_kb <= (total - reserved) * size:
            return size
    return None


def _memory_fits(guest, host):
    if guest.pagesize or host.mempages:
        return page_size_used(guest, host) is not None
    return guest.memory <= host.memory


def fits(guest, host, cpu_ratio, ram_ratio):
    """Whether guest cell ``guest`` fits host cell ``host``."""
    if not _memory_fits(guest, host):
        return False
    if guest.pinned:
        return (guest.pinned <= host.free_pcpus
                and guest.memory <= host.memory - host.memory_usage)
    return (guest.shared <= host.cpus
            and host.cpu_usage + guest.shared <= host.cpus * cpu_ratio
            and host.memory_usage + guest.memory
            <= host.memory * ram_ratio)


def assign(guests, hosts, cpu_ratio, ram_ratio):
    """{guest index: host index} placing every guest cell on its own
    host cell, None when there is none (Kuhn's augmenting paths)."""
    options = [[h for h, host in enumerate(hosts)
                if fits(g, host, cpu_ratio, ram_ratio)] for g in guests]
    owner = {}  # host index -> guest index

    def place(g, seen):
        # A free host cell first, in order (as Nova tries them); only
        # then move an earlier guest cell along.
        for h in options[g]:
            if h not in owner and h not in seen:
                seen.add(h)
                owner[h] = g
                return True
        for h in options[g]:
            if h in seen:
                continue
            seen.add(h)
            if h not in owner or place(owner[h], seen):
                owner[h] = g
                return True
        return False

    for g in range(len(guests)):
        if not place(g, set()):
            return None
    return {g: h for h, g in owner.items()}


def _verdict(request, row):
    """None when ``row`` passes, else why not."""
    guests, need_threads = requested_cells(request)
    table = request.table
    node = table.node(row)
    hosts = host_cells(node.numa_topology) if node is not None else []
    if not hosts:
        return "the guest asks for a NUMA topology; the host reports none"
    if need_threads and not any(h.threads for h in hosts):
        return ("cpu_thread_policy require wants hyperthreads; the host "
                "has no sibling threads")
    if len(guests) > len(hosts):
        return (f"the guest has {len(guests)} NUMA cells; the host only "
                f"{len(hosts)}")
    cpu_ratio = float(table.cpu_allocation_ratio[row])
    ram_ratio = float(table.ram_allocation_ratio[row])
    if assign(guests, hosts, cpu_ratio, ram_ratio) is not None:
        return None
    for g in guests:
        if not any(fits(g, h, cpu_ratio, ram_ratio) for h in hosts):
            return (f"guest NUMA cell {g.id} ({g.shared} shared CPUs, "
                    f"{g.pinned} pinned CPUs, {g.memory} MB) fits no host "
                    f"cell")
    return "the guest NUMA cells do not fit on distinct host cells"


class NUMATopologyFilter(base.BaseFilter):
    name = "NUMATopologyFilter"
    RUN_ON_REBUILD = True

    def mask(self, request, rows):
        if request.spec.numa_topology is None:
            return base.all_pass(rows)
        return np.fromiter((_verdict(request, r) is None for r in rows),
                           bool, count=len(rows))

    def why(self, request, row):
        if request.spec.numa_topology is None:
            return super().why(request, row)
        return _verdict(request, row) or super().why(request, row)
