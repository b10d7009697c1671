"""ServerGroupAntiAffinityFilter: members of an anti-affinity server group
go to hosts holding fewer than max_server_per_host of them (group rule,
default 1). A host's count is the group's members it holds plus this
request's earlier picks on it. The host already holding the instance
being scheduled passes (a resize may stay put). Requests without a group,
or with another policy, pass everywhere."""

import numpy as np

from filters import base, host_utils

POLICY = "anti-affinity"


def _counts(request, rows):
    """Per row: group members on the host, this request's picks too."""
    return request.group_member_counts(rows) + request.chosen_count(rows)


def _limit(group):
    return group.rules.get("max_server_per_host", 1)


class ServerGroupAntiAffinityFilter(base.BaseFilter):
    name = "ServerGroupAntiAffinityFilter"
    # Not once per request: each pick adds a member to a host.

    def mask(self, request, rows):
        group = request.group
        if group is None or group.policy != POLICY:
            return np.ones(len(rows), bool)
        passes = _counts(request, rows) < _limit(group)
        moving = request.spec.instance_uuid
        if moving:
            table = request.table
            passes |= host_utils.hosts_mask(
                table, host_utils.hosts_holding(table, [moving]), rows)
        return passes

    def why(self, request, row):
        count = _counts(request, np.array([row]))[0]
        return (f"anti-affinity: host {request.table.hosts[row]} holds "
                f"{count} member(s) of the group, max_server_per_host is "
                f"{_limit(request.group)}")
