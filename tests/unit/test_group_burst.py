"""The server-group burst's plan and its counting of Nova's records
(tests/nova_stack/group_burst.py), without a stack."""

import collections
import configparser
import datetime
import pathlib
import random

from tests.nova_stack import configs
from tests.nova_stack import group_burst as gb


def _at(second):
    return datetime.datetime(2026, 1, 1, 0, 0, second)


def test_every_group_of_the_plan_fits_three_hosts():
    for seed in range(20):
        for group in gb.plan(30, 3, seed):
            room = gb.HOSTS * group.limit if group.policy == gb.ANTI \
                else group.size
            assert 2 <= group.size <= room
            assert sum(group.fill) == group.size
            assert len(group.fill) >= 2  # the requests race
            for deleted, refill in group.cycles:
                assert deleted <= group.size
                assert sum(refill) == deleted


def test_split_sends_at_least_two_requests_of_at_most_three():
    rng = random.Random(3)
    for size in range(1, 8):
        for _ in range(50):
            parts = gb.split(size, rng)
            assert sum(parts) == size
            assert max(parts) <= gb.MOST_PER_REQUEST
            assert size == 1 or len(parts) >= 2


def test_the_plan_names_its_kinds():
    kinds = collections.Counter(g.kind for g in gb.plan(30, 2, 1))
    assert kinds == {"anti-affinity": 12, "affinity": 12,
                     "anti-affinity max_server_per_host=2": 6}


def test_excess_members_per_policy():
    hosts = collections.Counter({"a": 3, "b": 1})
    assert gb._excess(gb.ANTI, 1, hosts) == 2
    assert gb._excess(gb.ANTI, 2, hosts) == 1
    assert gb._excess(gb.AFFINITY, 0, hosts) == 1
    assert gb._excess(gb.AFFINITY, 0, collections.Counter({"a": 4})) == 0
    assert gb._excess(gb.ANTI, 1, collections.Counter()) == 0


def test_a_violation_counts_while_both_members_live():
    group = gb.Group("g", gb.ANTI, 1, 2, [1, 1], [])
    # b joined a on host h and was deleted later: a violation then.
    lives = [("h", _at(1), gb.NEVER), ("h", _at(2), _at(9))]
    assert gb._worst_excess(group, lives) == 1
    # c replaced b in the second Nova deleted it: no overlap.
    lives = [("h", _at(1), _at(5)), ("h", _at(5), gb.NEVER)]
    assert gb._worst_excess(group, lives) == 0


def test_an_affinity_split_counts_at_any_time():
    group = gb.Group("g", gb.AFFINITY, 0, 3, [1, 1, 1], [])
    lives = [("a", _at(1), gb.NEVER), ("b", _at(2), _at(4)),
             ("a", _at(5), gb.NEVER)]
    assert gb._worst_excess(group, lives) == 1
    assert gb._worst_excess(group, lives[:1] + lives[2:]) == 0


def test_the_computes_late_check_line_is_recognised():
    line = ("2026-11-28 07:07:11.290 15374 ERROR nova.compute.manager "
            "[None req-8 admin 6f1d - - - -] [instance: "
            "b7e8cd3a-60b2-4810-acab-83936a71a1a9] Failed to build and run "
            "instance: nova.exception.GroupAffinityViolation: Anti-affinity "
            "instance group policy was violated")
    found = gb.RESCHEDULED.search(line)
    assert found.groups() == ("b7e8cd3a-60b2-4810-acab-83936a71a1a9",
                              "Anti-affinity")


def test_uuids_are_checked_before_they_are_inlined():
    assert gb._in_list(["b7e8cd3a-60b2-4810-acab-83936a71a1a9"]) == \
        "('b7e8cd3a-60b2-4810-acab-83936a71a1a9')"
    try:
        gb._in_list(["x' OR 1=1 -- padding padding padding"])
    except ValueError:
        pass
    else:
        raise AssertionError("a non-uuid was inlined")


def test_nova_conf_takes_workers_and_extra_sections():
    text = configs.nova_conf(
        {"api_db": "a", "cell_db": "c", "transport_url": "t"},
        {"placement": 1, "standins": 2}, pathlib.Path("/w"),
        scheduler_workers=2,
        extra={"workarounds": {"disable_group_policy_check_upcall": True},
               "filter_scheduler": {"host_subset_size": 3}})
    conf = configparser.RawConfigParser()
    conf.read_string(text)
    assert conf["scheduler"]["workers"] == "2"
    assert conf["workarounds"]["disable_group_policy_check_upcall"] == "true"
    assert conf["filter_scheduler"]["host_subset_size"] == "3"
    assert conf["filter_scheduler"]["enabled_filters"] == \
        configs.ENABLED_FILTERS
