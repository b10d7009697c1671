"""The decision log's records (scheduler.decision_log): what each filter
removed, the best weighed hosts and each weigher's share of their
weights, the chosen host and alternates, claims and conflicts, the cause
of no valid host; checked against explain's answer for the same
decision. On SQLite, with the Scheduler's real pipeline."""

import json
import math
import os
import uuid as uuidlib

import numpy as np
import orjson
import pytest

from placement import direct
from placement.db import store as store_mod
from scheduler import decision_log, errors, framework, request_spec
from tests.scheduler import cloud as cloud_mod
from tests.scheduler.test_claim_groups import queued_calls
from tests.scheduler.test_manager import FLAVOR, ids, spec


def written(found):
    """A record as the log writes it and reads it back."""
    return decision_log.decode(decision_log.encode(found))


@pytest.fixture
def five(cloud, placement):
    """n0..n4 with 4, 16, 8, 12 and 6 GB: n1 disabled (ComputeFilter
    removes it), n3 isolated (IsolatedHostsFilter removes it)."""
    for i, memory in enumerate([4096, 16384, 8192, 12288, 6144]):
        cloud_mod.add_host(cloud, placement, f"n{i}", memory_mb=memory)
    cloud.service("n1", enabled=False)
    cloud.set("filter_scheduler", "enabled_filters",
              ["ComputeFilter", "IsolatedHostsFilter"])
    cloud.set("filter_scheduler", "isolated_hosts", ["n3"])
    return cloud


def logged(make, **kw):
    s = make()
    s.decisions = decision_log.Capture(**kw)
    return s


def test_a_placed_request_says_where_the_hosts_went(five, make):
    s = logged(make)
    [instance] = ids(1)
    [[chosen, *alternates]] = s.select_destinations(
        {"request_id": "req-1"}, spec(), [instance])
    [found] = s.decisions.records
    record = written(found)
    assert record["request"] == "req-1"
    assert record["instances"] == [instance]
    assert (record["result"], record["count"]) == ("placed", 1)
    assert record["query"].startswith(
        "resources=DISK_GB:10,MEMORY_MB:1024,VCPU:2&")
    # The disabled host is left out by placement already (the
    # COMPUTE_STATUS_DISABLED trait is forbidden only when a compute
    # agent sets it; here the filter does it).
    assert (record["candidates"], record["hosts"]) == (5, 5)
    [placement] = record["placements"]
    assert placement["instance"] == instance
    assert placement["filters"] == [
        {"name": "ComputeFilter", "before": 5, "after": 4,
         "removed": ["n1"]},
        {"name": "IsolatedHostsFilter", "before": 4, "after": 3,
         "removed": ["n3"]}]
    assert placement["passed"] == 3
    # The best weighed first (RAM spreads): n2 (8 GB), n4 (6), n0 (4).
    assert [t["node"] for t in placement["top"]] == ["n2", "n4", "n0"]
    assert placement["chosen"] == {
        "host": chosen.service_host, "node": chosen.nodename,
        "weight": placement["top"][0]["weight"], "rank": 1}
    assert chosen.nodename == "n2"
    assert [(a["node"], a["rank"]) for a in placement["alternates"]] == \
        [(a.nodename, rank) for a, rank in zip(alternates, (2, 3),
                                               strict=True)]
    assert record["claims"] == {"attempts": 1, "conflicts": []}
    # The spec as the caller gave it, the fields left out that take
    # their defaults; a replay reads it back as the same request.
    assert record["spec"] == spec()
    assert request_spec.RequestSpec.from_dict(record["spec"]) == \
        request_spec.RequestSpec.from_dict(spec())


def test_weighers_shares_add_up_to_the_weights_explain_gives(five, make):
    five.aggregate("heavy", ["n2", "n4"], ram_weight_multiplier=3.0)
    s = logged(make)
    decision = s.schedule(spec(), None, explain=True)
    [found] = s.decisions.records
    [explained] = decision.explain["instances"]
    top = written(found)["placements"][0]["top"]
    assert len(top) == 3
    for entry in top:
        # Added up in the weighers' order, to the last bit.
        total = 0.0
        for share in entry["weighers"].values():
            total += share
        assert total == entry["weight"]
        assert entry["weight"] == explained["weights"][entry["node"]]
        for name, share in entry["weighers"].items():
            assert share == explained["weighers"][name]["weighted"][
                entry["node"]]
        # The weighers that gave nothing are left out.
        assert all(share != 0 for share in entry["weighers"].values())
    # The aggregate's multiplier is the per-host one.
    ram = {t["node"]: t["weighers"]["RAMWeigher"] for t in top}
    assert math.isclose(ram["n2"], 3.0)


def test_the_file_holds_the_top_hosts_in_columns(five, make, tmp_path):
    s = make()
    s.decisions = decision_log.DecisionLog(tmp_path)
    s.select_destinations(None, spec(), ids(1))
    s.decisions.close()
    [line] = (tmp_path / os.path.basename(s.decisions.path)
              ).read_bytes().splitlines()[1:]
    raw = orjson.loads(line)["placements"][0]
    top = raw["top"]
    assert top["nodes"] == ["n2", "n4", "n0"]
    # The filters in columns, and the picks by their place in the top.
    assert raw["filters"] == {
        "names": ["ComputeFilter", "IsolatedHostsFilter"],
        "before": [5, 4], "after": [4, 3], "removed": [["n1"], ["n3"]]}
    assert (raw["chosen"], raw["alternates"]) == (0, [1, 2])
    # Only the weighers that told the hosts apart.
    assert "RAMWeigher" in top["weighing"]["names"]
    assert "BuildFailureWeigher" not in top["weighing"]["names"]
    # Read back, the shares are worked out: those the capture made.
    assert decision_log.decode(line)["placements"][0]["top"][0][
        "weighers"]["RAMWeigher"] > 0


def test_a_format_2_record_reads_as_written():
    placement = {
        "filters": [{"name": "ComputeFilter", "before": 2, "after": 1,
                     "removed": ["n1"]}],
        "top": [{"host": "h0", "node": "n0", "weight": 1.0,
                 "weighers": {"RAMWeigher": 1.0}}],
        "chosen": {"host": "h0", "node": "n0", "weight": 1.0, "rank": 1},
        "alternates": [{"host": "h1", "node": "n1"}]}
    line = orjson.dumps({"placements": [placement]})
    assert decision_log.decode(line)["placements"] == [placement]


def test_a_format_1_record_reads_as_written():
    top = [{"host": "h", "node": "n", "weight": 1.5,
            "weighers": {"RAMWeigher": 1.5}}]
    line = orjson.dumps({"placements": [{"top": top}]})
    assert decision_log.decode(line)["placements"][0]["top"] == top


def test_no_valid_host_keeps_the_cause_and_the_filter_that_emptied(
        five, make):
    s = logged(make)
    with pytest.raises(errors.NoValidHost):
        s.select_destinations(None, spec(ignore_hosts=["n0", "n2", "n4"]),
                              ids(1))
    record = written(s.decisions.records[-1])
    assert record["result"] == "no_valid_host"
    assert record["error"]["cause"] == "filtered"
    assert "IsolatedHostsFilter removed 1" in record["error"]["message"]
    [placement] = record["placements"]
    assert placement["filters"] == [
        {"name": "ComputeFilter", "before": 2, "after": 1,
         "removed": ["n1"]},
        {"name": "IsolatedHostsFilter", "before": 1, "after": 0,
         "removed": ["n3"]}]
    assert "chosen" not in placement and "top" not in placement
    assert record["claims"] == {"attempts": 0, "conflicts": []}


def test_a_request_no_host_can_match_is_logged_without_placements(
        five, make):
    s = logged(make)
    five.set("scheduler", "strict_availability_zones", True)
    with pytest.raises(errors.NoValidHost):
        s.select_destinations(None, spec(availability_zone="mars"), ids(1))
    record = written(s.decisions.records[-1])
    assert (record["result"], record["error"]["cause"]) == (
        "no_valid_host", "request")
    assert record["placements"] == [] and record["query"] is None


def test_removed_hosts_are_named_up_to_the_limit(five, make):
    five.service("n0", enabled=False)
    s = logged(make, removed_hosts=1)
    s.select_destinations(None, spec(), ids(1))
    [compute, _] = written(s.decisions.records[-1])["placements"][0][
        "filters"]
    assert compute == {"name": "ComputeFilter", "before": 5, "after": 3,
                       "removed": ["n0"]}


def test_top_hosts_is_how_many_are_kept(five, make):
    s = logged(make, top_hosts=1)
    s.select_destinations(None, spec(), ids(1))
    assert [t["node"] for t in written(s.decisions.records[-1])[
        "placements"][0]["top"]] == ["n2"]


def test_each_instance_of_a_request_has_its_placement(five, make):
    s = logged(make)
    instances = ids(2)
    picks = s.select_destinations(None, spec(num_instances=2), instances)
    record = written(s.decisions.records[-1])
    assert record["count"] == 2 and record["instances"] == instances
    assert [p["instance"] for p in record["placements"]] == instances
    assert [p["chosen"]["node"] for p in record["placements"]] == \
        [one[0].nodename for one in picks]
    for placement, one in zip(record["placements"], picks, strict=True):
        assert [a["node"] for a in placement["alternates"]] == \
            [sel.nodename for sel in one[1:]]
    # One transaction for both.
    assert record["claims"] == {"attempts": 1, "conflicts": []}


@pytest.mark.parametrize("subset, shuffle, top", [
    (1, False, 5), (1, True, 0), (3, False, 5), (3, True, 1)])
def test_picks_are_ranked_among_every_host_that_passed(
        cloud, placement, make, subset, shuffle, top):
    # Six hosts, two pairs of them tied; a host subset pick moves a
    # random one of the best first, out of weight order.
    for i, memory in enumerate([4096, 16384, 8192, 16384, 6144, 8192]):
        cloud_mod.add_host(cloud, placement, f"n{i}", memory_mb=memory)
    cloud.set("filter_scheduler", "host_subset_size", subset)
    cloud.set("filter_scheduler", "shuffle_best_same_weighed_hosts",
              shuffle)
    s = logged(make, top_hosts=top)
    for _ in range(6):
        decision = s.schedule(spec(), None, explain=True)
        weights = decision.explain["instances"][0]["weights"]
        placement_ = written(s.decisions.records[-1])["placements"][0]
        picks = [placement_["chosen"], *placement_["alternates"]]
        assert len(picks) == 3
        for pick in picks:
            assert pick["weight"] == weights[pick["node"]]
            assert pick["rank"] == 1 + sum(
                w > pick["weight"] for w in weights.values())
        assert len(placement_.get("top", ())) == min(top, 6)


def test_a_claim_lost_to_another_writer_is_a_conflict(
        cloud, placement, make):
    uuids = [cloud_mod.add_host(cloud, placement, f"n{i}", memory_mb=m)
             for i, m in enumerate([16384, 8192])]
    s = logged(make)
    s.view()  # reads the cloud
    # Another scheduler, with a store of its own, fills n0; this one
    # decides on its last view.
    other = store_mod.Store.open(cloud.conf)
    try:
        direct.PlacementDirect(other).put_allocations(
            str(uuidlib.uuid4()), {uuids[0]: {"VCPU": 8}},
            project_id="other", user_id="other")
    finally:
        other.dispose()
    decision = s.schedule(spec(), ids(1), refresh=False)
    assert decision.selections[0][0].nodename == "n1"
    record = written(s.decisions.records[-1])
    assert record["claims"] == {
        "attempts": 2, "conflicts": [{"host": "n0", "reason": "no room"}]}
    chosen = record["placements"][0]["chosen"]
    assert (chosen["node"], chosen["rank"]) == ("n1", 2)


def test_a_group_claimed_together_counts_it(cloud, placement, make):
    for i in range(3):
        cloud_mod.add_host(cloud, placement, f"n{i}")
    s = logged(make)
    s.table.sync()
    out = queued_calls(s, [spec(), spec(), spec()])
    records = [written(r) for r in s.decisions.records]
    assert sorted(r["instances"][0] for r in records) == \
        sorted(instance for instance, _ in out)
    assert all(r["claims"] == {"attempts": 1, "conflicts": []}
               for r in records)


def test_a_group_decided_again_alone_says_so(cloud, placement, make):
    # Room for one: both requests pick n0, the group's claim fails and
    # each is decided again alone (scheduler.request_groups).
    cloud_mod.add_host(cloud, placement, "n0", vcpus=2)
    s = logged(make)
    s.table.sync()
    (first, sel), (second, refused) = queued_calls(s, [spec(), spec()])
    assert isinstance(refused, errors.NoValidHost)
    records = {r["instances"][0]: written(r) for r in s.decisions.records}
    assert set(records) == {first, second}
    for instance in (first, second):
        [conflict] = records[instance]["claims"]["conflicts"]
        assert conflict["host"] is None
        assert "decided again alone" in conflict["reason"]
    assert records[first]["claims"]["attempts"] == 2
    assert records[first]["placements"][0]["chosen"]["node"] == "n0"
    assert records[second]["result"] == "no_valid_host"


def test_an_invalid_request_is_not_a_decision(five, make):
    s = logged(make)
    with pytest.raises(errors.InvalidRequestSpec):
        s.select_destinations(None, spec(flavor=dict(
            FLAVOR, extra_specs={"hw:cpu_policy": "nope"})), ids(1))
    assert s.decisions.records == []


def test_a_record_that_cannot_be_made_fails_no_request(five, make, caplog):
    s = make()

    class Broken(decision_log.Capture):
        def keep(self, found):
            raise OSError("disk full")

    s.decisions = Broken()
    [[chosen, *_]] = s.select_destinations(None, spec(), ids(1))
    assert chosen.nodename == "n2"
    assert "Could not log the decision" in caplog.text


def test_shares_with_per_host_multipliers_add_up(five):
    five.aggregate("heavy", ["n2"], ram_weight_multiplier=-2.5)
    registry = framework.Registry.discover()
    chain = registry.weigher_chain(five.conf)
    rows = five.rows("n0", "n2", "n4")
    total, _, weighing = chain.weigh(five.request(spec()), rows, keep=True)
    shares = decision_log.shares(weighing.columns(np.arange(3)))
    for k in range(3):
        added = 0.0
        for value in shares[k].values():
            added += value
        assert added == total[k]
    # n2 has the most free RAM of the three: normalised 1, times its
    # aggregate's multiplier.
    assert shares[1]["RAMWeigher"] == -2.5


def test_kept_weighing_names_and_shares_are_the_explanations(five):
    # The weighers a record lists are named as explain names them, and
    # their shares are explain's weighted values; one that weighed
    # every row 0 is not listed.
    registry = framework.Registry.discover()
    chain = registry.weigher_chain(five.conf)
    rows = five.rows("n0", "n2", "n3", "n4")
    request = five.request(spec())
    _, explained, _ = chain.weigh(request, rows, explain=True)
    total, _, weighing = chain.weigh(request, rows, keep=True)
    columns = weighing.columns([3, 0, 2])
    assert columns["names"]
    assert set(columns["names"]) < set(explained)
    for name, found in explained.items():
        if found["weighted"].any():
            assert name in columns["names"]
    assert "BuildFailureWeigher" not in columns["names"]
    for k, share in zip([3, 0, 2], decision_log.shares(columns),
                        strict=True):
        assert share == {name: found["weighted"][k]
                         for name, found in explained.items()
                         if found["weighted"][k]}
        assert math.fsum(share.values()) == pytest.approx(total[k])


def test_a_record_is_one_json_line(five, make, tmp_path):
    s = make()
    s.decisions = decision_log.DecisionLog(tmp_path)
    instance = ids(1)[0]
    s.select_destinations(None, spec(), [instance])
    s.decisions.close()
    header, line = (tmp_path / s.decisions.path).read_text().splitlines()
    assert json.loads(header)["decision_log"] == decision_log.FORMAT
    assert json.loads(line)["instances"] == [instance]
