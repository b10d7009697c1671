"""What a placed instance takes from a node's NUMA cells and PCI pools
(scheduler.host_devices), checked by hand on small reports."""

import pytest

from filters import numa_fit, pci_fit
from scheduler import host_devices
from scheduler import request_spec as rs


def guest(id=0, shared=0, pinned=0, memory=1024, pagesize=None):
    return numa_fit.GuestCell(id, shared, pinned, memory, pagesize)


def cell(id, cpus=4, pcpus=(), **more):
    return {"id": id, "cpuset": list(range(cpus)), "pcpuset": list(pcpus),
            "memory": 4096, **more}


PAGES = [{"size_kb": 4, "total": 1048576, "used": 10, "reserved": 0},
         {"size_kb": 2048, "total": 1024, "used": 0, "reserved": 0}]

NUMA = {
    "shared-cpus-and-memory": (
        [cell(0, cpu_usage=1, memory_usage=512)], [guest(shared=2)],
        [{"cpu_usage": 3, "memory_usage": 1536}]),
    "pinned-lowest-free-first": (
        [cell(0, pcpus=range(4, 8), pinned_cpus=[4])], [guest(pinned=2)],
        [{"pinned_cpus": [4, 5, 6], "memory_usage": 1024}]),
    "older-report-pins-from-cpuset": (
        [{"id": 0, "cpuset": [0, 1, 2], "memory": 4096}],
        [guest(pinned=1)], [{"pinned_cpus": [0]}]),
    "second-cell-when-first-is-full": (
        [cell(0, pcpus=[0], pinned_cpus=[0]), cell(1, pcpus=[1, 2])],
        [guest(pinned=1)], [{"pinned_cpus": [0]}, {"pinned_cpus": [1]}]),
    "two-guest-cells-two-host-cells": (
        [cell(0, pcpus=[0, 1]), cell(1, pcpus=[2, 3])],
        [guest(0, pinned=2), guest(1, pinned=1)],
        [{"pinned_cpus": [0, 1]}, {"pinned_cpus": [2]}]),
    "large-pages-asked": (
        [cell(0, mempages=PAGES)], [guest(shared=1, pagesize=2048)],
        [{"mempages": [PAGES[0], dict(PAGES[1], used=512)]}]),
    "no-pagesize-takes-smallest-pages": (
        [cell(0, mempages=PAGES)], [guest(shared=1)],
        [{"mempages": [dict(PAGES[0], used=10 + 262144), PAGES[1]]}]),
}


@pytest.mark.parametrize("cells,guests,expected", NUMA.values(),
                         ids=list(NUMA))
def test_numa_after(cells, guests, expected):
    before = {"cells": cells}
    after = host_devices.numa_after(before, guests, 1.0, 1.0)
    for got, want in zip(after["cells"], expected, strict=True):
        for key, value in want.items():
            assert got[key] == value, key
    assert before == {"cells": cells}  # the report itself is not touched


def test_numa_after_reads_and_writes_object_primitives():
    def wrapped(fields):
        return {"nova_object.name": "X", "nova_object.data": fields}

    before = wrapped({"cells": [wrapped(cell(0, pcpus=[5, 6]))]})
    after = host_devices.numa_after(before, [guest(pinned=1)], 1.0, 1.0)
    data = after["nova_object.data"]["cells"][0]["nova_object.data"]
    assert data["pinned_cpus"] == [5]
    assert numa_fit.host_cells(after)[0].free_pcpus == 1


def test_numa_after_is_none_when_the_guest_does_not_fit():
    assert host_devices.numa_after({"cells": [cell(0, pcpus=[0])]},
                                   [guest(pinned=2)], 1.0, 1.0) is None


def needs(*requests):
    spec = rs.RequestSpec.from_dict({
        "flavor": {"vcpus": 1, "memory_mb": 512, "root_gb": 1},
        "pci_requests": [{"count": n, "spec": list(s)}
                         for n, *s in requests]})
    return [pci_fit.Need(r) for r in spec.pci_requests]


VF = {"vendor_id": "8086", "product_id": "1520"}
POOLS = [{"count": 1, "dev_type": "type-PF", **VF},
         {"count": 1, "dev_type": "type-VF", **VF},
         {"count": 2, "tags": {"dev_type": "type-VF"}, **VF},
         {"count": 3, "vendor_id": "10de", "dev_type": "type-PCI"}]

PCI = {
    # PF pools count only for a spec that asks for them.
    "vf-skips-the-pf-pool": (needs((1, VF)), [1, 0, 2, 3]),
    "spread-over-pools-in-order": (needs((2, VF)), [1, 0, 1, 3]),
    "pf-asked": (needs((1, dict(VF, dev_type="type-PF"))), [0, 1, 2, 3]),
    "each-request-takes-its-own": (
        needs((1, VF), (2, {"vendor_id": "10de"})), [1, 0, 2, 1]),
    "never-below-zero": (needs((9, VF)), [1, 0, 0, 3]),
}


@pytest.mark.parametrize("wanted,counts", PCI.values(), ids=list(PCI))
def test_pci_after(wanted, counts):
    after = host_devices.pci_after(POOLS, wanted)
    assert [p["count"] for p in after] == counts
    assert [p["count"] for p in POOLS] == [1, 1, 2, 3]
