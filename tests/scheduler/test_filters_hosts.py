"""Host filters over host state, table-driven: each case builds a small
cloud, runs one filter over every node and checks the nodenames that
pass; rejected nodes must be explained, and some cases check the
explanation's words."""

import dataclasses
import datetime
import json

import numpy as np
import pytest

from filters import (
    all_hosts,
    cidr_affinity,
    compute,
    different_host,
    io_ops,
    isolated_hosts,
    json_filter,
    metrics,
    num_instances,
    same_host,
    server_group_affinity,
    server_group_anti_affinity,
    tenant_isolation,
    type_affinity,
)
from tests.scheduler.cloud import NOW, uuid_of

EPOCH = datetime.datetime(1970, 1, 1)


@dataclasses.dataclass
class Case:
    id: str
    # The nodenames that pass.
    passes: list
    # Request fields (RequestSpec dict form) and HostRequest extras.
    spec: dict = dataclasses.field(default_factory=dict)
    chosen: tuple = ()  # nodenames picked earlier in the request
    # (group, option, value) overrides.
    conf: tuple = ()
    # {nodename: words} that why() must say for a rejected node.
    why: dict = dataclasses.field(default_factory=dict)


def params(cases):
    return pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])


def check(cloud, cls, case):
    rows = cloud.rows()  # makes the table, which registers its options
    for group, option, value in case.conf:
        cloud.set(group, option, value)
    chosen = [int(cloud.rows(n)[0]) for n in case.chosen]
    request = cloud.request(case.spec, chosen_rows=chosen)
    flt = cls(cloud.conf)
    mask = flt.mask(request, rows)
    assert mask.dtype == bool and mask.shape == rows.shape
    assert cloud.names(rows, mask) == sorted(case.passes)
    # The same answer for any subset and order of rows.
    subset = rows[::-1][::2]
    assert list(flt.mask(request, subset)) == [
        bool(m) for m in mask[np.searchsorted(rows, subset)]]
    for row in rows[~mask]:
        assert flt.why(request, row)
    for name, words in case.why.items():
        assert name not in case.passes
        text = flt.why(request, int(cloud.rows(name)[0]))
        assert words in text, text


def at(seconds_before_now):
    return EPOCH + datetime.timedelta(seconds=NOW - seconds_before_now)


# -- class flags ----------------------------------------------------------

@pytest.mark.parametrize("cls,once,rebuild", [
    (compute.ComputeFilter, True, False),
    (all_hosts.AllHostsFilter, True, False),
    (io_ops.IoOpsFilter, False, False),
    (io_ops.AggregateIoOpsFilter, False, False),
    (num_instances.NumInstancesFilter, False, False),
    (num_instances.AggregateNumInstancesFilter, False, False),
    (isolated_hosts.IsolatedHostsFilter, True, True),
    (same_host.SameHostFilter, True, False),
    (different_host.DifferentHostFilter, True, False),
    (cidr_affinity.SimpleCIDRAffinityFilter, True, False),
    (server_group_affinity.ServerGroupAffinityFilter, False, False),
    (server_group_anti_affinity.ServerGroupAntiAffinityFilter, False,
     False),
    (tenant_isolation.AggregateMultiTenancyIsolation, True, False),
    (type_affinity.AggregateTypeAffinityFilter, True, False),
    (json_filter.JsonFilter, False, False),
    (metrics.MetricsFilter, False, False),
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_flags(cls, once, rebuild):
    assert cls.name == cls.__name__
    assert cls.run_filter_once_per_request is once
    assert cls.RUN_ON_REBUILD is rebuild


# -- ComputeFilter, AllHostsFilter ----------------------------------------

def services(cloud):
    for name in ("fresh", "quiet", "off", "forced", "stale", "lapsed"):
        cloud.node(name)
    cloud.heartbeat("fresh", at(10))
    cloud.service("off", enabled=False, disabled_reason="maintenance")
    cloud.service("forced", forced_down=True)
    cloud.heartbeat("stale", at(3600))
    cloud.heartbeat("lapsed", at(61))


@params([
    Case("default", ["fresh", "quiet"],
         why={"off": "disabled: maintenance", "forced": "forced down",
              "stale": "last heartbeat 3600s ago",
              "lapsed": "last heartbeat 61s ago"}),
    Case("longer-down-time", ["fresh", "quiet", "lapsed"],
         conf=((None, "service_down_time", 120),)),
])
def test_compute(cloud, case):
    services(cloud)
    check(cloud, compute.ComputeFilter, case)


def test_compute_disabled_without_reason(cloud):
    cloud.node("n1")
    cloud.service("n1", enabled=False)
    check(cloud, compute.ComputeFilter,
          Case("bare", [], why={"n1": "compute service is disabled"}))


def test_all_hosts(cloud):
    services(cloud)
    check(cloud, all_hosts.AllHostsFilter, Case("all", [
        "fresh", "quiet", "off", "forced", "stale", "lapsed"]))


# -- IoOpsFilter, NumInstancesFilter and their aggregate forms ------------

def busy(cloud, stat):
    """Nodes a0, b7, c8, d9 (the stat's value in the name); aggregates:
    high (c8: 9), low (b7: 5, with wide: 10), junk (a0: 1.5)."""
    for name in ("a0", "b7", "c8", "d9"):
        cloud.node(name, stats={stat: str(name[1])})
    cloud.aggregate("high", ["c8"], max_io_ops_per_host=9,
                    max_instances_per_host=9)
    cloud.aggregate("low", ["b7"], max_io_ops_per_host=5,
                    max_instances_per_host=5)
    cloud.aggregate("wide", ["b7"], max_io_ops_per_host=10,
                    max_instances_per_host=10)
    cloud.aggregate("junk", ["a0"], max_io_ops_per_host="1.5",
                    max_instances_per_host="1.5")
    cloud.aggregate("other", ["d9"], availability_zone="az1")


IO = "filter_scheduler", "max_io_ops_per_host"
NUM = "filter_scheduler", "max_instances_per_host"


@params([
    Case("default-8", ["a0", "b7"], why={"c8": "8 I/O heavy operations"}),
    Case("limit-1", ["a0"], conf=((*IO, 1),)),
    Case("limit-0", [], conf=((*IO, 0),), why={"a0": "the limit is 0"}),
    Case("limit-10", ["a0", "b7", "c8", "d9"], conf=((*IO, 10),)),
])
def test_io_ops(cloud, case):
    busy(cloud, "io_workload")
    check(cloud, io_ops.IoOpsFilter, case)


@params([
    # c8 raised to 9; b7 in low (5) and wide (10): the smaller wins; a0's
    # value is no integer: the option applies.
    Case("default-8", ["a0", "c8"], why={"b7": "the limit is 5",
                                          "d9": "the limit is 8"}),
    Case("limit-1", ["a0", "c8"], conf=((*IO, 1),),
         why={"d9": "the limit is 1"}),
    Case("limit-20", ["a0", "c8", "d9"], conf=((*IO, 20),)),
])
def test_aggregate_io_ops(cloud, case):
    busy(cloud, "io_workload")
    check(cloud, io_ops.AggregateIoOpsFilter, case)


@params([
    Case("limit-50", ["a0", "b7", "c8", "d9"]),
    Case("limit-8", ["a0", "b7"], conf=((*NUM, 8),),
         why={"c8": "8 instances on the host, the limit is 8"}),
    Case("limit-1", ["a0"], conf=((*NUM, 1),)),
])
def test_num_instances(cloud, case):
    busy(cloud, "num_instances")
    check(cloud, num_instances.NumInstancesFilter, case)


@params([
    Case("limit-50", ["a0", "c8", "d9"], why={"b7": "the limit is 5"}),
    Case("limit-8", ["a0", "c8"], conf=((*NUM, 8),)),
    Case("limit-1", ["a0", "c8"], conf=((*NUM, 1),)),
])
def test_aggregate_num_instances(cloud, case):
    busy(cloud, "num_instances")
    check(cloud, num_instances.AggregateNumInstancesFilter, case)


def test_num_instances_counts_consumption(cloud):
    # Instances placed earlier in the request count (table.consume).
    busy(cloud, "num_instances")
    cloud.table.consume(cloud.rows("b7"))
    check(cloud, num_instances.NumInstancesFilter,
          Case("consumed", ["a0"], conf=((*NUM, 8),)))


# -- IsolatedHostsFilter --------------------------------------------------

ISO = "filter_scheduler"
ISO_HOSTS = (ISO, "isolated_hosts", ["iso1", "iso2"])
ISO_IMAGES = (ISO, "isolated_images", ["img-iso"])
LOOSE = (ISO, "restrict_isolated_hosts_to_isolated_images", False)
IMG = {"image": {"id": "img-iso"}}
PLAIN = {"image": {"id": "img-plain"}}


@params([
    Case("iso-image", ["iso1", "iso2"], IMG, conf=(ISO_HOSTS, ISO_IMAGES),
         why={"open": "image img-iso is isolated"}),
    Case("plain-image", ["open"], PLAIN, conf=(ISO_HOSTS, ISO_IMAGES),
         why={"iso1": "host iso1 is isolated"}),
    Case("no-image", ["open"], conf=(ISO_HOSTS, ISO_IMAGES)),
    Case("loose-iso-image", ["iso1", "iso2"], IMG,
         conf=(ISO_HOSTS, ISO_IMAGES, LOOSE)),
    Case("loose-plain-image", ["iso1", "iso2", "open"], PLAIN,
         conf=(ISO_HOSTS, ISO_IMAGES, LOOSE)),
    # No isolated images: the restricting form still fences the hosts.
    Case("no-images", ["open"], IMG, conf=(ISO_HOSTS,)),
    Case("no-images-loose", ["iso1", "iso2", "open"], IMG,
         conf=(ISO_HOSTS, LOOSE)),
    Case("nothing-set", ["iso1", "iso2", "open"], IMG),
    # No isolated hosts: isolated images have nowhere to go.
    Case("no-hosts", [], IMG, conf=(ISO_IMAGES,)),
])
def test_isolated_hosts(cloud, case):
    for name in ("iso1", "iso2", "open"):
        cloud.node(name)
    check(cloud, isolated_hosts.IsolatedHostsFilter, case)


def test_isolated_hosts_by_host_not_node(cloud):
    # Two nodes of one isolated host: both are isolated.
    cloud.node("iso1-a", host="iso1")
    cloud.node("iso1-b", host="iso1")
    cloud.node("open")
    check(cloud, isolated_hosts.IsolatedHostsFilter,
          Case("nodes", ["iso1-a", "iso1-b"], IMG,
               conf=(ISO_HOSTS, ISO_IMAGES)))


# -- SameHostFilter, DifferentHostFilter ----------------------------------

U1, U2, U3, GONE = (uuid_of(n) for n in ("u1", "u2", "u3", "gone"))


def holders(cloud):
    """h1 holds u1 (two nodes: h1a, h1b), h2 holds u2 and u3, h3 none."""
    cloud.node("h1a", host="h1")
    cloud.node("h1b", host="h1")
    cloud.node("h2")
    cloud.node("h3")
    cloud.instances("h1", [U1])
    cloud.instances("h2", [U2, U3])


def hints(**values):
    return {"scheduler_hints": {k: list(v) for k, v in values.items()}}


@params([
    Case("no-hint", ["h1a", "h1b", "h2", "h3"]),
    Case("one", ["h1a", "h1b"], hints(same_host=[U1]),
         why={"h2": "holds none of the same_host instances"}),
    Case("any-of", ["h1a", "h1b", "h2"], hints(same_host=[U1, U3])),
    Case("unknown", [], hints(same_host=[GONE])),
    Case("other-hint", ["h1a", "h1b", "h2", "h3"],
         hints(different_host=[U1])),
])
def test_same_host(cloud, case):
    holders(cloud)
    check(cloud, same_host.SameHostFilter, case)


@params([
    Case("no-hint", ["h1a", "h1b", "h2", "h3"]),
    Case("one", ["h2", "h3"], hints(different_host=[U1]),
         why={"h1a": f"holds different_host instance {U1}"}),
    Case("two", ["h3"], hints(different_host=[U1, U2]),
         why={"h2": U2}),
    Case("unknown", ["h1a", "h1b", "h2", "h3"],
         hints(different_host=[GONE])),
])
def test_different_host(cloud, case):
    holders(cloud)
    check(cloud, different_host.DifferentHostFilter, case)


# -- SimpleCIDRAffinityFilter ---------------------------------------------

def addressed(cloud):
    cloud.node("net0", host_ip="10.0.0.5")
    cloud.node("net1", host_ip="10.0.1.5")
    cloud.node("far", host_ip="192.168.0.1")
    cloud.node("v6", host_ip="fd00::5")
    cloud.node("noip")


ALL_IPS = ["net0", "net1", "far", "v6", "noip"]


@params([
    Case("no-hint", ALL_IPS),
    Case("default-24", ["net0"], hints(build_near_host_ip=["10.0.0.1"]),
         why={"net1": "host_ip 10.0.1.5 is outside 10.0.0.0/24",
              "noip": "no host_ip"}),
    Case("cidr-16", ["net0", "net1"],
         hints(build_near_host_ip=["10.0.0.1"], cidr=["/16"])),
    Case("cidr-0", ["net0", "net1", "far"],
         hints(build_near_host_ip=["10.0.0.1"], cidr=["/0"])),
    # The address and cidr are glued as text: "10.0.0.5" + "24" is
    # 10.0.0.524, no address at all.
    Case("no-slash", [], hints(build_near_host_ip=["10.0.0.5"], cidr=["24"]),
         why={"net0": "build_near_host_ip and cidr"}),
    Case("v6", ["v6"], hints(build_near_host_ip=["fd00::1"], cidr=["/64"])),
    Case("bad-ip", [], hints(build_near_host_ip=["nowhere"])),
])
def test_cidr_affinity(cloud, case):
    addressed(cloud)
    check(cloud, cidr_affinity.SimpleCIDRAffinityFilter, case)


# -- server groups --------------------------------------------------------

M1, M2, M3, MOVING = (uuid_of(n) for n in ("m1", "m2", "m3", "moving"))
NODES = ["g1", "g2a", "g2b", "g3", "g4"]


def grouped(cloud):
    """g1 holds member m1 and the moving instance, g2 (nodes g2a, g2b)
    members m2 and m3 and a stranger; g3 and g4 hold nothing."""
    cloud.node("g1")
    cloud.node("g2a", host="g2")
    cloud.node("g2b", host="g2")
    cloud.node("g3")
    cloud.node("g4")
    cloud.instances("g1", [M1, MOVING])
    cloud.instances("g2", [M2, M3, uuid_of("stranger")])


def group(policy, hosts=(), members=(M1, M2, M3), **rules):
    return {"instance_group": {"policy": policy, "hosts": list(hosts),
                               "members": list(members), "rules": rules}}


@params([
    Case("no-group", NODES),
    Case("other-policy", NODES, group("anti-affinity", ["g1"])),
    Case("soft", NODES, group("soft-affinity", ["g1"])),
    Case("first-member", NODES, group("affinity")),
    Case("on-g2", ["g2a", "g2b"], group("affinity", ["g2"]),
         why={"g1": "not one of the group's hosts g2"}),
    Case("two-hosts", ["g1", "g2a", "g2b"], group("affinity", ["g1", "g2"])),
    # The request's first pick fixes where the others go.
    Case("chosen", ["g3"], group("affinity"), chosen=("g3",)),
    Case("chosen-and-hosts", ["g1", "g3"], group("affinity", ["g1"]),
         chosen=("g3",)),
])
def test_group_affinity(cloud, case):
    grouped(cloud)
    check(cloud, server_group_affinity.ServerGroupAffinityFilter, case)


ANTI = "anti-affinity"


@params([
    Case("no-group", NODES),
    Case("other-policy", NODES, group("affinity")),
    Case("soft", NODES, group("soft-anti-affinity")),
    Case("max-1", ["g3", "g4"], group(ANTI),
         why={"g2a": "holds 2 member(s) of the group, max_server_per_host "
                     "is 1"}),
    Case("max-2", ["g1", "g3", "g4"], group(ANTI, max_server_per_host=2)),
    Case("max-3", NODES, group(ANTI, max_server_per_host=3)),
    # Group hosts do not matter, members on hosts do.
    Case("hosts-ignored", ["g3", "g4"], group(ANTI, ["g3"])),
    Case("no-members", NODES, group(ANTI, members=())),
    Case("chosen", ["g4"], group(ANTI), chosen=("g3",),
         why={"g3": "holds 1 member(s)"}),
    Case("chosen-max-2", ["g1", "g3", "g4"],
         group(ANTI, max_server_per_host=2), chosen=("g3",)),
    Case("chosen-twice", ["g1", "g4"], group(ANTI, max_server_per_host=2),
         chosen=("g3", "g3")),
    # The picked node's sibling is on the same host.
    Case("chosen-sibling", ["g1", "g3", "g4"],
         group(ANTI, members=(M2,), max_server_per_host=2),
         chosen=("g2a",)),
    # A move may stay on the host holding the instance.
    Case("moving", ["g1", "g3", "g4"],
         {**group(ANTI), "instance_uuid": MOVING}),
])
def test_group_anti_affinity(cloud, case):
    grouped(cloud)
    check(cloud, server_group_anti_affinity.ServerGroupAntiAffinityFilter,
          case)


# -- AggregateMultiTenancyIsolation, AggregateTypeAffinityFilter ----------

def tenancy(cloud):
    for name in ("t1", "t2", "t3", "t4"):
        cloud.node(name)
    cloud.aggregate("a", ["t1"], filter_tenant_id="p1, p2")
    cloud.aggregate("b", ["t2"], filter_tenant_id="p3")
    cloud.aggregate("c", ["t2"], filter_tenant_id_2="p4")
    cloud.aggregate("d", ["t3"], availability_zone="az1")


@params([
    Case("p1", ["t1", "t3", "t4"], {"project_id": "p1"},
         why={"t2": "project p1 is not among the tenants of the host's "
                    "aggregates (b: p3; c: p4)"}),
    Case("p2-spaced", ["t1", "t3", "t4"], {"project_id": "p2"}),
    Case("p3", ["t2", "t3", "t4"], {"project_id": "p3"}),
    # Keys sharing the prefix add up.
    Case("p4-suffix-key", ["t2", "t3", "t4"], {"project_id": "p4"}),
    Case("stranger", ["t3", "t4"], {"project_id": "p9"}),
    Case("no-project", ["t3", "t4"]),
])
def test_tenant_isolation(cloud, case):
    tenancy(cloud)
    check(cloud, tenant_isolation.AggregateMultiTenancyIsolation, case)


def typed(cloud):
    for name in ("f1", "f2", "f3"):
        cloud.node(name)
    cloud.aggregate("a", ["f1"], instance_type="small, medium")
    cloud.aggregate("b", ["f2"], instance_type="large")
    cloud.aggregate("c", ["f2"], instance_type="small")
    cloud.aggregate("d", ["f3"], availability_zone="az1")


def flavor(name):
    return {"flavor": {"vcpus": 1, "memory_mb": 512, "root_gb": 1,
                       "name": name}}


@params([
    Case("small", ["f1", "f2", "f3"], flavor("small")),
    Case("medium-spaced", ["f1", "f3"], flavor("medium"),
         why={"f2": "flavor medium is not among the instance_type of the "
                    "host's aggregates (b: large; c: small)"}),
    Case("large", ["f2", "f3"], flavor("large")),
    Case("tiny", ["f3"], flavor("tiny")),
])
def test_type_affinity(cloud, case):
    typed(cloud)
    check(cloud, type_affinity.AggregateTypeAffinityFilter, case)


# -- JsonFilter -----------------------------------------------------------

def sized(cloud):
    """Free RAM: small 1024, mid 4096, big 8192 MB; instances 0, 3, 6."""
    for name, used, count, hv in (("small", 7168, 0, None),
                                  ("mid", 4096, 3, 2000),
                                  ("big", 0, 6, 3000)):
        cloud.node(name, memory_mb=8192, memory_mb_used=used,
                   hypervisor_type="QEMU" if name != "big" else "ironic",
                   hypervisor_version=hv,
                   stats={"num_instances": str(count), "tag": name})


def query(q):
    return hints(query=[q if isinstance(q, str) else json.dumps(q)])


ALL_SIZES = ["small", "mid", "big"]


@params([
    Case("no-query", ALL_SIZES),
    Case("empty-list", ALL_SIZES, query([])),
    Case("ge", ["mid", "big"], query([">=", "$free_ram_mb", 4096]),
         why={"small": "($free_ram_mb=1024)"}),
    Case("lt-all-others", ["small"], query(["<", "$free_ram_mb", 2000, 3000])),
    Case("eq", ["mid"], query(["=", "$num_instances", 3])),
    Case("in", ["small", "big"], query(["in", "$num_instances", 0, 6, 9])),
    Case("and", ["mid"], query(["and", [">", "$free_ram_mb", 1024],
                                ["<", "$num_instances", 5]])),
    Case("or", ["small", "big"], query(["or", ["<", "$free_ram_mb", 2048],
                                        [">", "$num_instances", 5]])),
    # A top-level list passes when any item holds.
    Case("not", ["small"], query(["not", [">", "$free_ram_mb", 2048]])),
    Case("not-two", ALL_SIZES, query(["not", True, False])),
    # Inside and/or a list is true when not empty, whatever it holds.
    Case("not-in-and", ALL_SIZES,
         query(["and", ["not", ["=", 1, 1]]])),
    Case("column-truth", ["mid", "big"], query(["and", "$num_instances"])),
    # An unknown name is dropped: one argument left, the comparison fails.
    Case("unknown-name", [], query(["=", "$nope", 1])),
    Case("unknown-in-or", ["big"],
         query(["or", ["=", "$nope", 1], [">", "$num_instances", 5]])),
    # Strings: host by host.
    Case("host", ["mid"], query(["=", "$host", "mid"])),
    Case("stats", ["big"], query(["=", "$stats.tag", "big"])),
    Case("hv-type", ["small", "mid"],
         query(["in", "$hypervisor_type", "QEMU", "kvm"])),
    # A missing hypervisor_version is dropped, not zero.
    Case("hv-missing", ["mid", "big"],
         query(["or", [">=", "$hypervisor_version", 0], "$nope"])),
    Case("mixed", ["mid"], query(["and", ["=", "$stats.tag", "mid"],
                                  [">", "$free_ram_mb", 2048]])),
    Case("str-eq-int", [], query(["=", "$free_ram_mb", "1024"])),
    # Stats are text, as in Nova: equal to text, never to a number.
    Case("stats-text", ["mid"], query(["=", "$stats.num_instances", "3"])),
    Case("stats-not-a-number", [],
         query(["=", "$stats.num_instances", 3])),
])
def test_json(cloud, case):
    sized(cloud)
    check(cloud, json_filter.JsonFilter, case)


@pytest.mark.parametrize("hint,words", [
    ("[>=", "[>=: not valid JSON"),
    (["~", "$free_ram_mb", 1], "unknown operator '~'"),
    (["and", ["=", 1, 1], ["x", 2]], "unknown operator 'x'"),
    ({"a": 1}, "expected a list, got {'a': 1}"),
    # Where Nova's comparison raises, the request fails (as in Nova),
    # naming the host and what the query read there.
    ([">", "$free_ram_mb", "1024"],
     "cannot be evaluated on host small ($free_ram_mb=1024): '>' not "
     "supported between instances of 'int' and 'str'"),
    (["<", "$stats.num_instances", 5],
     "($stats.num_instances='0'): '<' not supported"),
    (["=", "$host.x", 1], "$host.x: 'small' has no key 'x'"),
], ids=["bad-json", "bad-op", "bad-nested-op", "not-a-list", "str-vs-int",
        "stat-vs-int", "key-of-text"])
def test_json_query_that_nova_cannot_run_fails_the_request(cloud, hint,
                                                          words):
    sized(cloud)
    request = cloud.request(query(hint))
    with pytest.raises(json_filter.JsonQueryError) as caught:
        json_filter.JsonFilter(cloud.conf).mask(request, cloud.rows())
    assert caught.value.message.startswith("scheduler_hints.query: ")
    assert words in caught.value.message


def test_json_query_fails_only_when_a_host_runs_it(cloud):
    # Nova evaluates the query per host: with no host left, no error.
    sized(cloud)
    request = cloud.request(query("[>="))
    mask = json_filter.JsonFilter(cloud.conf).mask(
        request, np.zeros(0, np.int64))
    assert mask.shape == (0,)


def test_json_query_given_twice_fails(cloud):
    sized(cloud)
    request = cloud.request(hints(query=['["=", 1, 1]', '["=", 2, 2]']))
    with pytest.raises(json_filter.JsonQueryError, match="given 2 times"):
        json_filter.JsonFilter(cloud.conf).mask(request, cloud.rows())


def test_json_vectorised_matches_row_wise(cloud):
    sized(cloud)
    table = cloud.table
    rows = cloud.rows()
    for q in ([">=", "$free_ram_mb", 4096],
              ["or", ["not", ["<", "$vcpus_total", 8]], "$num_io_ops"],
              ["and", ["in", "$num_instances", 3, 6],
               ["<=", "$free_disk_mb", 200000]]):
        result = json_filter.outcome(json_filter.evaluate(
            q, json_filter.column_lookup(table, rows)))
        assert isinstance(result, np.ndarray)
        assert list(result) == [json_filter.passes_row(q, table, r)
                                for r in rows]


# -- MetricsFilter --------------------------------------------------------

def metered(cloud):
    cloud.node("both", metrics=[{"name": "cpu.percent", "value": 0.5},
                                {"name": "mem.free", "value": 100}])
    cloud.node("cpu", metrics=[{"name": "cpu.percent", "value": 0.2}])
    cloud.node("none")


W = "metrics", "weight_setting"


@params([
    Case("no-setting", ["both", "cpu", "none"]),
    Case("cpu", ["both", "cpu"], conf=((*W, ["cpu.percent=-1.0"]),),
         why={"none": "does not report metric(s) cpu.percent"}),
    Case("two", ["both"], conf=((*W, ["cpu.percent=1", "mem.free=2"]),),
         why={"cpu": "metric(s) mem.free"}),
    Case("unknown", [], conf=((*W, ["disk.io=1"]),)),
    # Entries that do not parse are ignored.
    Case("bad-entries", ["both", "cpu"],
         conf=((*W, ["cpu.percent=1", "mem.free", "disk.io=x"]),)),
])
def test_metrics(cloud, case):
    metered(cloud)
    check(cloud, metrics.MetricsFilter, case)
