"""Server-group policies under a burst, with gantt-scheduler at two
workers: the short form of benchmarks.nova_stack_groups.

Six groups (anti-affinity, anti-affinity with max_server_per_host=2,
affinity), each filled by requests sent together, then two members (or
all) deleted and replaced together, while the other groups do the same;
two scheduler workers decide members of one group at the same moment.
Nova's records (tests/nova_stack/group_burst.py) must show:

- no member ever placed against its group's policy;
- no late-check reschedule: nova-compute checks the policy again
  once it has claimed the instance and sends a build that breaks it
  back to the conductor for an alternate. That check hides an
  anti-affinity race the scheduler lost (the member ends elsewhere, or
  in ERROR when the alternates run out), so a scheduler that keeps the
  policies when it claims leaves it nothing to catch;
- every server ACTIVE (the groups always fit the three hosts).

The figures go to the run's summary either way.

Only with gantt-scheduler: the stack's scheduler is restarted with two
workers for the burst and with one after it.
"""

import pytest

from tests.nova_stack import checks, group_burst

GROUPS = 6
CYCLES = 1
THREADS = 6
SEED = 7
WORKERS = 2


def test_group_policies_hold_with_two_scheduler_workers(scenario):
    stack = scenario.stack
    if stack.scheduler != "gantt":
        pytest.skip("gantt-scheduler's claim-time group policies; "
                    "benchmarks.nova_stack_groups measures nova-scheduler")
    stack.restart_scheduler(WORKERS)
    burst = group_burst.Burst(
        stack, group_burst.plan(GROUPS, CYCLES, SEED), threads=THREADS,
        seed=SEED)
    try:
        burst.prepare()
        burst.run()
        result = burst.report()
    finally:
        try:
            burst.delete_everything(scenario.timeout(
                group_burst.SETTLE_TIMEOUT))
        finally:
            stack.restart_scheduler(1)
    late = result["late_check"]
    checks.NOTES.append(
        f"group burst, gantt-scheduler x{WORKERS}: "
        f"{result['servers_created']} servers, {result['active']} ACTIVE, "
        f"{result['error']['total']} ERROR, {late['reschedules']} "
        f"late-check reschedules ({late['servers_rescheduled']} servers), "
        f"violations {_violated(result) or 'none'}")
    scenario.expect(
        result["servers_created"] and not result["never_settled"]
        and not result["create_requests_failed"],
        f"group burst: every create should be accepted and settle; found "
        f"{group_burst.dumps(result)}")
    scenario.expect(not _violated(result), _said(
        result, f"members placed against their group's policy "
                f"{_violated(result)}"))
    scenario.expect(not late["reschedules"] and not any(
        late["failed_checks_logged"].values()), _said(
        result, f"nova-compute's late check found the policy broken "
                f"{late['failed_checks_logged']} and rescheduled "
                f"{late['servers_rescheduled']} servers"))
    scenario.expect(result["active"] == result["servers_created"], _said(
        result, f"{result['error']['total']} servers in ERROR"))


def _said(result, what):
    return (f"group burst with {WORKERS} gantt-scheduler workers: {what}; "
            f"Nova's records: {group_burst.dumps(result)}")


def _violated(result):
    """{when: {group kind: members in excess}} of the violations found."""
    found = {}
    for when, kinds in result["violations"].items():
        bad = {kind: v["members"] for kind, v in kinds.items()
               if kind != "where" and v["groups"]}
        if bad:
            found[when] = bad
    return found
