"""Server-group policies kept at claim time, whatever the number of
schedulers.

The group filters (filters.server_group_*) decide on one process's view:
two schedulers deciding members of one group at once would each see the
other's host free. So every claim of an affinity or anti-affinity
group's member also joins the member to the group's consumer group in
placement (placement.objects.consumer_groups), in the claim's own
transaction: anti-affinity becomes ``spread`` with the group's
``max_server_per_host``, affinity ``together``. Placement refuses a
claim that would break the rule as the group stands in the database,
and says where the members are; the scheduler then learns that
(:func:`learn`) and decides the instance again on it.

What placement counts: the members it recorded that hold allocations
under a host (instances still building included, and both hosts of an
evacuation), plus what the scheduler's own view says of the group's
members (:func:`rule`'s ``known``: an instance a compute reports on a
host whose allocation moved to a migration). Each decision of a group
member also starts from the database's members (:func:`read_members`),
so a race is lost only when two claims cross.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from placement.objects import consumer_groups

# Nova's hard policies and the consumer group rule each becomes.
RULES = {"anti-affinity": consumer_groups.SPREAD,
         "affinity": consumer_groups.TOGETHER}

# How many times one instance is decided again after its claim found
# the group changed (each time on what placement said of it). Each
# refusal means another claim into the group committed, so losing
# again and again is progress elsewhere, not a loop; the bound only
# keeps a call finite. At 3, a request lost 4 times in a row in about
# one run in 30 of tests/scheduler/test_group_race.py (12 threads
# racing into the same groups) and failed with NoValidHost.
REDECISIONS = 10

# Where a request keeps its members' known roots, and that it read the
# database's members already (a re-query places it again).
_KNOWN = "group_policies.known"
_READ = "group_policies.read"


def enforced(state: Any) -> bool:
    """Whether the request's claims keep a group rule: a hard policy of
    a group with a uuid, and instances to claim for."""
    group = state.spec.instance_group
    return bool(group is not None and group.uuid
                and group.policy in RULES and state.instance_uuids
                and not state.rebuild)


def read_members(state: Any, port: Any) -> None:
    """Start the request's view of its group from the database's
    members (those placed by other schedulers included)."""
    memo = state.host_request.memo
    if not enforced(state) or _READ in memo:
        return
    memo[_READ] = True
    placed = port.group_members(state.spec.instance_group.uuid)
    if placed:
        learn(state, placed)


def learn(state: Any, placed: Mapping[str, frozenset[str]]) -> None:
    """Add ``placed`` ({member: root providers}, as placement said) to
    the hosts the request's filters count the group's members on."""
    table = state.host_request.table
    seen = state.host_request.group_seen
    for member, roots in placed.items():
        hosts = {table.hosts[row] for row in
                 (table.row_of(root) for root in roots) if row is not None}
        if hosts:
            seen.setdefault(member, set()).update(hosts)


def rule(state: Any, row: int) -> consumer_groups.GroupRule | None:
    """The rule a claim of one of the request's instances on ``row``
    keeps; None when the request keeps none."""
    if not enforced(state):
        return None
    group = state.spec.instance_group
    request = state.host_request
    known = request.memo.get(_KNOWN)
    if known is None:
        known = request.memo[_KNOWN] = _known(request, group)
    table = request.table
    return consumer_groups.GroupRule(
        group_uuid=group.uuid, policy=RULES[group.policy],
        root=table.uuids[row],
        max_per_root=int(group.rules.get("max_server_per_host", 1)),
        known=known)


def _known(request: Any, group: Any) -> dict[str, frozenset[str]]:
    """{member: root providers of its host} as the scheduler's view has
    them: what the group filters count, so that placement never refuses
    what they would have let through for a reason of this view."""
    table = request.table

    def roots(host: str) -> frozenset[str]:
        return frozenset(table.uuids[r]
                         for r in table.rows_by_host.get(host, ()))

    known = {}
    for member in set(group.members):
        host = table.instance_host.get(member)
        if host is not None:
            known[member] = roots(host)
    if group.policy == "affinity":
        # Nova's own list of the group's hosts, for the first member.
        for host in group.hosts:
            known[f"host:{host}"] = roots(host)
    return {member: where for member, where in known.items() if where}
