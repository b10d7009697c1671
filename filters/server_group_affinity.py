"""ServerGroupAffinityFilter: members of an affinity server group go to
the hosts the group is on already, this request's earlier picks
included. The group's first instance may go anywhere. Requests without a
group, or with another policy, pass everywhere."""

import numpy as np

from filters import base, host_utils

POLICY = "affinity"


class ServerGroupAffinityFilter(base.BaseFilter):
    name = "ServerGroupAffinityFilter"
    # Not once per request: each pick joins the group's hosts.

    def mask(self, request, rows):
        group = request.group
        if group is None or group.policy != POLICY:
            return np.ones(len(rows), bool)
        hosts = request.group_hosts()
        if not hosts:
            return np.ones(len(rows), bool)
        return host_utils.hosts_mask(request.table, hosts, rows)

    def why(self, request, row):
        hosts = ", ".join(sorted(request.group_hosts()))
        return (f"affinity: host {request.table.hosts[row]} is not one of "
                f"the group's hosts {hosts}")
