"""What filters and weighers see of one scheduling request.

The manager builds one :class:`HostRequest` per select_destinations call
and updates it between the instances of a multi-instance request (the
rows already chosen), so that group filters and weighers see the
request's own earlier picks, as Nova's do.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass
class HostRequest:
    # scheduler.request_spec.RequestSpec
    spec: object
    # scheduler.host_state.HostStateTable (its lock held by the caller)
    table: object
    # oslo.config ConfigOpts with scheduler.conf's options registered
    conf: object
    # Epoch seconds at which the request is judged.
    now: float
    # A rebuild: only filters with RUN_ON_REBUILD run, nothing is claimed.
    rebuild: bool = False
    # Rows chosen for the earlier instances of this request, in order.
    chosen_rows: list = dataclasses.field(default_factory=list)
    # {row: provider summaries of the row's tree} when placement gave
    # them (PCI in placement); filters must cope with its absence.
    summaries: dict = dataclasses.field(default_factory=dict)
    # Memo for values a filter computes once per request (parsed extra
    # specs, image properties); keys are the filter's own.
    memo: dict = dataclasses.field(default_factory=dict)

    def hint(self, name, default=None):
        return self.spec.hint(name, default)

    def hints(self, name):
        """Every value of a scheduler hint (a tuple, maybe empty)."""
        return tuple(self.spec.scheduler_hints.get(name, ()))

    @property
    def group(self):
        return self.spec.instance_group

    def group_hosts(self):
        """Hosts the server group is on, counting this request's picks."""
        hosts = set(self.group.hosts) if self.group else set()
        hosts.update(self.table.hosts[r] for r in self.chosen_rows)
        return hosts

    def chosen_count(self, rows):
        """Per row of ``rows``: how many instances of this request were
        placed on its host so far."""
        if not self.chosen_rows:
            return np.zeros(len(rows), np.int64)
        table = self.table
        picked = {}
        for r in self.chosen_rows:
            host = table.hosts[r]
            picked[host] = picked.get(host, 0) + 1
        # Per table row, then the rows asked: no Python loop over them.
        per_row = np.zeros(table.size, np.int64)
        for host, count in picked.items():
            per_row[list(table.rows_by_host.get(host, ()))] = count
        return per_row[np.asarray(rows, np.int64)]
