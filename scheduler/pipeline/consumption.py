"""What a placed instance takes from the host state table, and giving it
back when the request fails.

A claimed instance's RAM, disk and vCPUs (and the NUMA cells and PCI
devices it uses) are taken from its host's row at once, so that the
next instance of the request, and the next request before the host
reports again, see them gone.
"""

from __future__ import annotations

from typing import Any

from scheduler import host_devices
from scheduler.pipeline import state as state_mod


class HostConsumption:
    """Takes instances out of the host state table, per request."""

    def __init__(self, table: Any) -> None:
        self.table = table

    def take(self, state: state_mod.RequestState, row: int) -> None:
        """One instance of the request on ``row``."""
        spec = state.spec
        flavor = spec.flavor
        self.table.consume(row, ram_mb=flavor.memory_mb,
                           disk_mb=_disk_mb(spec), vcpus=flavor.vcpus)
        state.consumed.append(row)
        if spec.numa_topology is not None or spec.pci_requests:
            self._take_devices(state, row)

    def _take_devices(self, state: state_mod.RequestState,
                      row: int) -> None:
        """Take the instance's NUMA cells and PCI devices out of the
        row's node record (the record from before is kept for
        give_back)."""
        table = self.table
        node = table.node(row)
        if node is None:
            return
        state.nodes_before.setdefault(row, node)
        table.replace_node(row, host_devices.after_instance(
            state.host_request, node, float(table.cpu_allocation_ratio[row]),
            float(table.ram_allocation_ratio[row])))

    def give_back(self, state: state_mod.RequestState) -> None:
        """Everything the request's instances took so far (once: a
        second call gives back nothing)."""
        flavor = state.spec.flavor
        if state.consumed:
            self.table.consume(
                state.consumed, ram_mb=-flavor.memory_mb,
                disk_mb=-_disk_mb(state.spec), vcpus=-flavor.vcpus,
                instances=-1, io_ops=-1)
        state.consumed = []
        for row, node in state.nodes_before.items():
            self.table.replace_node(row, node)
        state.nodes_before = {}


def _disk_mb(spec: Any) -> int:
    """The local disk an instance of ``spec`` takes: ephemeral and swap,
    and the root disk unless it boots from a volume."""
    flavor = spec.flavor
    disk_gb = flavor.ephemeral_gb + flavor.swap / 1024 + (
        0 if spec.is_bfv else flavor.root_gb)
    return int(disk_gb * 1024)
