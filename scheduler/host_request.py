"""What filters and weighers see of one scheduling request.

The manager builds one :class:`HostRequest` per select_destinations call
and updates it between the instances of a multi-instance request (the
rows already chosen), so that group filters and weighers see the
request's own earlier picks, as Nova's do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from scheduler import host_state, request_spec


@dataclasses.dataclass
class HostRequest:
    spec: request_spec.RequestSpec
    # Its lock held by the caller.
    table: host_state.HostStateTable
    # oslo.config ConfigOpts with scheduler.conf's options registered
    conf: Any
    # Epoch seconds at which the request is judged.
    now: float
    # A rebuild: only filters with RUN_ON_REBUILD run, nothing is claimed.
    rebuild: bool = False
    # Rows chosen for the earlier instances of this request, in order.
    chosen_rows: list[int] = dataclasses.field(default_factory=list)
    # {row: provider summaries of the row's tree} when placement gave
    # them (PCI in placement); filters must cope with its absence.
    summaries: dict[int, Any] = dataclasses.field(default_factory=dict)
    # Memo for values a filter computes once per request (parsed extra
    # specs, image properties); keys are the filter's own.
    memo: dict[Any, Any] = dataclasses.field(default_factory=dict)
    # {member uuid: hosts} of the server group as placement recorded it
    # (scheduler.group_policies): members other schedulers placed, which
    # this process's view may not hold yet.
    group_seen: dict[str, set[str]] = dataclasses.field(default_factory=dict)

    def hint(self, name: str, default: Any = None) -> Any:
        return self.spec.hint(name, default)

    def hints(self, name: str) -> tuple[Any, ...]:
        """Every value of a scheduler hint (a tuple, maybe empty)."""
        return tuple(self.spec.scheduler_hints.get(name, ()))

    @property
    def group(self) -> Any:
        return self.spec.instance_group

    def group_hosts(self) -> set[str]:
        """Hosts the server group is on, counting this request's picks
        and the members placement recorded."""
        hosts = set(self.group.hosts) if self.group else set()
        hosts.update(self.table.hosts[r] for r in self.chosen_rows)
        for _member, where in self._seen_others():
            hosts.update(where)
        return hosts

    def group_member_counts(self, rows: Sequence[int] | npt.NDArray[np.int64]
                            ) -> npt.NDArray[np.int64]:
        """Per row of ``rows``: the server group's members its host
        holds, in this process's view and as placement recorded them
        (each member once per host)."""
        table = self.table
        members = set(self.group.members) if self.group else set()
        counts = table.instance_counts(members, rows)
        extra: dict[str, int] = {}
        where = table.instance_host
        for member, hosts in self._seen_others():
            for host in hosts:
                if member in members and where.get(member) == host:
                    continue  # counted already
                extra[host] = extra.get(host, 0) + 1
        if not extra:
            return counts
        per_row = np.zeros(table.size, np.int64)
        for host, n in extra.items():
            per_row[list(table.rows_by_host.get(host, ()))] = n
        return counts + per_row[np.asarray(rows, np.int64)]

    def _seen_others(self) -> list[tuple[str, set[str]]]:
        """group_seen without the instance being scheduled (a move's own
        instance is not another member)."""
        moving = self.spec.instance_uuid
        return [(m, hosts) for m, hosts in self.group_seen.items()
                if m != moving]

    def chosen_count(self, rows: Sequence[int] | npt.NDArray[np.int64]
                     ) -> npt.NDArray[np.int64]:
        """Per row of ``rows``: how many instances of this request were
        placed on its host so far."""
        if not self.chosen_rows:
            return np.zeros(len(rows), np.int64)
        table = self.table
        picked: dict[str, int] = {}
        for r in self.chosen_rows:
            host = table.hosts[r]
            picked[host] = picked.get(host, 0) + 1
        # Per table row, then the rows asked: no Python loop over them.
        per_row = np.zeros(table.size, np.int64)
        for host, count in picked.items():
            per_row[list(table.rows_by_host.get(host, ()))] = count
        return per_row[np.asarray(rows, np.int64)]
