"""NUMA fitting: do a guest's NUMA cells fit on a node's, and where?

The maths NUMATopologyFilter judges hosts by and scheduler.host_devices
takes a placed instance out by: both must agree on which host cells a
guest's cells go to, so both read them from here.

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

A guest cell fits a host cell, as in Nova's per-cell check
(nova.virt.hardware._numa_fit_instance_cell). A cell pins CPUs when its
cpu_policy is dedicated or mixed (a mixed cell may also have shared
CPUs); it shares CPUs unless its policy is dedicated.

- memory, with a page size asked: free pages of one size hold it (and
  it is a whole number of pages): that size, or for Nova's symbolic
  sizes the host's smallest (-1, small), any but the smallest (-2,
  large) or any (-3), largest first; a host that lists no page sizes
  fails such a request;
- memory, no page size asked, on a host that lists page sizes: it is a
  whole number of the smallest pages and fits in them: in all of them
  (used and reserved ones too: it may overcommit) for a cell that only
  shares CPUs, in the free ones for a cell that pins CPUs;
- memory, no page size asked, on a host that lists none: no larger than
  the cell, or than its unused memory for a cell that pins CPUs;
- a cell that pins CPUs: its pinned CPUs no more than the host cell's
  pcpuset not yet pinned;
- a cell that shares CPUs (a mixed one too, even with no shared CPU):
  its shared CPUs no more than the host cell's cpuset, CPU usage plus
  them within cpuset x cpu_allocation_ratio, and memory usage plus its
  memory within memory x ram_allocation_ratio (the node's ratios).

Guest cells go to distinct host cells, and a host fits the guest when
some assignment fits. The assignment chosen (which scheduler.host_devices
takes the instance out of) is Nova's: the first that fits, guest cells
in order, host cells in Nova's order of preference when the host has
more cells than the guest (spreading: the cells with the most unused
memory first, then, for guests that pin, the most free pinnable CPUs,
else the least shared CPU usage; then, when the node reports PCI
devices, the cells with the most devices first for a request that asks
for PCI devices, last otherwise).

Simplifications (Nova does more): pinned CPUs are counted, not placed on
cores, so thread policies isolate and require do not shape the fit;
emulator thread reservations, PCI and network NUMA affinity are not
considered; [compute] packing_host_numa_cells_allocation_strategy is
not read (Nova's default, spreading, is used). A dedicated guest cell
that gives only a cpuset (older requests) is taken as asking that many
pinned CPUs.

Known difference from Nova 34's filter, which fits a guest by trying
permutations of host cells while it changes the guest cells it tries (a
symbolic page size becomes the size found on the first host cell tried,
even one that then fails on CPUs; a cell's id becomes the host cell's)
and caches answers by those ids: for guests of two or more cells, or of
a symbolic page size, Nova may reject a host where an assignment fits,
pass one where none does, or take pages of another size than the one
the chosen cell offers. We judge each pair of cells on its own, as
Nova's per-cell check does.
"""

import dataclasses


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


DEDICATED, MIXED, SHARED = "dedicated", "mixed", "shared"


@dataclasses.dataclass(frozen=True)
class GuestCell:
    id: int
    shared: int  # floating CPUs
    pinned: int  # dedicated CPUs
    memory: int  # MB
    pagesize: int | None  # KiB
    # dedicated, mixed or shared; None: as the CPU counts say.
    cpu_policy: str | None = None

    @property
    def policy(self):
        if self.cpu_policy in (DEDICATED, MIXED):
            return self.cpu_policy
        if self.cpu_policy is None and self.pinned:
            return MIXED if self.shared else DEDICATED
        return SHARED

    @property
    def pins(self):
        """Nova's rules for pinned CPUs apply (no memory overcommit)."""
        return self.policy != SHARED

    @property
    def shares(self):
        """Nova's rules for shared CPUs apply (usage within ratios)."""
        return self.policy != DEDICATED


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
        cell_policy = policy if policy in (DEDICATED, MIXED) else SHARED
        cells = []
        for c in topology.cells:
            pinned, shared = len(c.pcpuset), len(c.cpuset)
            if cell_policy == SHARED:
                pinned = 0
            elif cell_policy == DEDICATED and not pinned:
                pinned, shared = shared, 0
            cells.append(GuestCell(c.id, shared, pinned, c.memory,
                                   c.pagesize, cell_policy))
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


def _pages(host, size):
    """(total, used, reserved) of the first entry of page size ``size``
    in the host cell, None when it lists no such size (Nova reads the
    first)."""
    return next(((total, used, reserved)
                 for size_kb, total, used, reserved in host.mempages
                 if size_kb == size), None)


def _pages_hold(host, size, need_kb, use_free):
    """Nova's can_fit_pagesize: ``need_kb`` is a whole number of pages
    of ``size`` and fits in the free ones (``use_free``) or in all of
    them."""
    pages = _pages(host, size)
    if pages is None or size <= 0 or need_kb % size:
        return False
    total, used, reserved = pages
    avail = total - used - reserved if use_free else total
    return need_kb <= avail * size


def page_size_used(guest, host):
    """The host page size (KiB) guest cell ``guest`` takes its memory in
    on host cell ``host``; None when it does not fit there in pages, or
    the host lists no page sizes."""
    need_kb = guest.memory * 1024
    if guest.pagesize:
        return next((size for size in _page_sizes_to_try(guest.pagesize,
                                                          host)
                     if _pages_hold(host, size, need_kb, True)), None)
    if host.mempages:
        size = min(page[0] for page in host.mempages)
        if _pages_hold(host, size, need_kb, guest.pins):
            return size
    return None


def _memory_fits(guest, host):
    if guest.pagesize or host.mempages:
        return page_size_used(guest, host) is not None
    if guest.pins:
        return guest.memory <= host.memory - host.memory_usage
    return guest.memory <= host.memory


def fits(guest, host, cpu_ratio, ram_ratio):
    """Whether guest cell ``guest`` fits host cell ``host``."""
    if not _memory_fits(guest, host):
        return False
    if guest.pins and guest.pinned > host.free_pcpus:
        return False
    if guest.shares and not (
            guest.shared <= host.cpus
            and host.cpu_usage + guest.shared <= host.cpus * cpu_ratio
            and host.memory_usage + guest.memory
            <= host.memory * ram_ratio):
        return False
    return True


def pci_per_cell(pools):
    """{NUMA node: PCI devices} of a node's PCI pools."""
    counts = {}
    for pool in pools or ():
        node = pool.get("numa_node")
        counts[node] = counts.get(node, 0) + int(pool.get("count", 0))
    return counts


def preference(guests, hosts, pci=None, wants_pci=False):
    """Host cell indices in the order Nova tries them (spreading):
    as reported when the guest has as many cells; else the cells with
    the most unused memory first, then (the last sort decides, the
    earlier ones break its ties) the most free pinnable CPUs for a guest
    that pins, the least shared CPU usage for one that does not; then,
    when the node reports PCI devices (``pci``: pci_per_cell), those
    with the most devices first if ``wants_pci``, last otherwise."""
    order = list(range(len(hosts)))
    if len(hosts) <= len(guests):
        return order
    order.sort(key=lambda h: -(hosts[h].memory - hosts[h].memory_usage))
    if guests[0].pins:
        order.sort(key=lambda h: -hosts[h].free_pcpus)
    else:
        order.sort(key=lambda h: hosts[h].cpu_usage)
    if pci:
        sign = -1 if wants_pci else 1
        order.sort(key=lambda h: sign * pci.get(hosts[h].id, 0))
    return order


def assign(guests, hosts, cpu_ratio, ram_ratio, pci=None,
           wants_pci=False):
    """{guest index: host index} placing every guest cell on its own
    host cell, None when there is none: of the assignments that fit,
    the first in Nova's order (guest cells in order, each on the first
    host cell in ``preference`` order that leaves the others a fit)."""
    options = [[h for h in preference(guests, hosts, pci, wants_pci)
                if fits(g, hosts[h], cpu_ratio, ram_ratio)]
               for g in guests]
    chosen = {}
    for g in range(len(guests)):
        taken = set(chosen.values())
        for h in options[g]:
            if h not in taken and completes(options, g + 1,
                                             taken | {h}):
                chosen[g] = h
                break
        else:
            return None
    return chosen


def completes(options, first, taken):
    """Whether guest cells ``first``... can each get their own host
    cell among those not ``taken`` (Kuhn's augmenting paths)."""
    owner = {}  # host index -> guest index

    def place(g, seen):
        for h in options[g]:
            if h in taken or h in seen:
                continue
            seen.add(h)
            if h not in owner or place(owner[h], seen):
                owner[h] = g
                return True
        return False

    return all(place(g, set()) for g in range(first, len(options)))
