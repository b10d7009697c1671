"""ServerGroupSoftAffinityWeigher: for a soft-affinity server group,
prefer the hosts that already run more of the group's members.

A host's count is the group members among the instances the table knows
on that host, plus the instances of this request already placed there
(request.chosen_count), so that the instances of a multi-instance
request gather as Nova's do. Other policies (or no group) weigh 0.
"""

import numpy as np

from weighers import base


def member_counts(request, rows, policy):
    """Per row: members of the request's ``policy`` group on its host,
    this request's earlier picks included; all 0 for another policy."""
    group = request.group
    if group is None or group.policy != policy:
        return np.zeros(len(rows))
    known = request.table.instance_counts(group.members, rows)
    return (known + request.chosen_count(rows)).astype(np.float64)


class ServerGroupSoftAffinityWeigher(base.BaseWeigher):
    name = "ServerGroupSoftAffinityWeigher"
    multiplier_option = "soft_affinity_weight_multiplier"

    def raw(self, request, rows):
        return member_counts(request, rows, "soft-affinity")
