"""ServerGroupSoftAntiAffinityWeigher: for a soft-anti-affinity server
group, prefer the hosts that run fewer of the group's members.

The weight is minus the member count of
weighers.soft_affinity.member_counts (this request's earlier picks
included), so that with a positive multiplier emptier hosts win. Other
policies (or no group) weigh 0.
"""

from weighers import base, soft_affinity


class ServerGroupSoftAntiAffinityWeigher(base.BaseWeigher):
    name = "ServerGroupSoftAntiAffinityWeigher"
    multiplier_option = "soft_anti_affinity_weight_multiplier"

    def raw(self, request, rows):
        return -soft_affinity.member_counts(request, rows,
                                            "soft-anti-affinity")
