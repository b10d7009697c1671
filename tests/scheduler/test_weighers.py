"""Host weighers and their combination, table-driven: each case builds a
small cloud, then checks a weigher's raw values per node and the order
of the nodes it gives alone (best first, ties by name)."""

import dataclasses

import numpy as np
import pytest

from scheduler import errors, framework
from tests.scheduler.cloud import uuid_of
from weighers import (
    base,
    build_failure,
    cpu,
    cross_cell,
    disk,
    image_props,
    io_ops,
    metrics,
    num_instances,
    pci,
    ram,
    soft_affinity,
    soft_anti_affinity,
)
from weighers import hypervisor_version as hv

CELL_A = uuid_of("cell-a")
CELL_B = uuid_of("cell-b")
MEMBERS = [uuid_of(f"m{i}") for i in range(4)]


@dataclasses.dataclass
class Case:
    id: str
    weigher: type
    # nodename -> compute node report (order kept: raw follows it)
    nodes: dict
    raw: list
    order: list
    spec: dict = dataclasses.field(default_factory=dict)
    conf: tuple = ()  # (group, option, value)
    instances: dict = dataclasses.field(default_factory=dict)
    chosen: tuple = ()  # nodenames already picked by this request
    aggregates: tuple = ()  # (name, hosts, metadata)


def _stats(key, *values):
    return {f"n{i + 1}": {"stats": {key: str(v)}}
            for i, v in enumerate(values)}


def _group(policy, members=MEMBERS):
    return {"instance_group": {"policy": policy, "members": list(members)}}


def _metrics(*per_node):
    return {f"n{i + 1}": {"metrics": [{"name": k, "value": v}
                                      for k, v in m.items()]}
            for i, m in enumerate(per_node)}


def _pools(*per_node):
    return {f"n{i + 1}": {"pci_device_pools": [{"count": c} for c in p]}
            for i, p in enumerate(per_node)}


_GROUP_INSTANCES = {"n1": MEMBERS[:2], "n2": [MEMBERS[2], uuid_of("other")]}
_MOVE = {"requested_destination": {"cell": CELL_A,
                                   "allow_cross_cell_move": True}}
_CELLS = {"n1": {"cell_uuid": CELL_A}, "n2": {"cell_uuid": CELL_B},
          "n3": {"cell_uuid": CELL_A}}
# cpu.percent is reported as a fraction and weighed in percent, as
# Nova reads it: 0.2 weighs 20.
_SETTING = ("metrics", "weight_setting", ["cpu.percent=-1.0", "mem=0.5"])

CASES = [
    Case("ram-spread", ram.RAMWeigher,
         {"n1": {"memory_mb": 2048, "memory_mb_used": 1024},
          "n2": {"memory_mb": 4096}, "n3": {"memory_mb": 512}},
         [1024, 4096, 512], ["n2", "n1", "n3"]),
    Case("ram-stack", ram.RAMWeigher,
         {"n1": {"memory_mb": 2048, "memory_mb_used": 1024},
          "n2": {"memory_mb": 4096}, "n3": {"memory_mb": 512}},
         [1024, 4096, 512], ["n3", "n1", "n2"],
         conf=(("filter_scheduler", "ram_weight_multiplier", -1.0),)),
    Case("cpu-ratio-counts", cpu.CPUWeigher,
         {"n1": {"vcpus": 8, "vcpus_used": 2},  # 8 * 4.0 - 2
          "n2": {"vcpus": 4, "cpu_allocation_ratio": 1.0},
          "n3": {"vcpus": 16, "vcpus_used": 30, "cpu_allocation_ratio": 2}},
         [30, 4, 2], ["n1", "n2", "n3"]),
    Case("disk-least-wins", disk.DiskWeigher,
         {"n1": {"local_gb": 100, "local_gb_used": 50},
          "n2": {"local_gb": 100, "disk_available_least": 10},
          "n3": {"local_gb": 200}},
         [50 * 1024, 10 * 1024, 200 * 1024], ["n3", "n1", "n2"]),
    Case("io-ops-quiet-first", io_ops.IoOpsWeigher,
         _stats("io_workload", 3, 0, 5), [3, 0, 5], ["n2", "n1", "n3"]),
    Case("io-ops-busy-first", io_ops.IoOpsWeigher,
         _stats("io_workload", 3, 0, 5), [3, 0, 5], ["n3", "n1", "n2"],
         conf=(("filter_scheduler", "io_ops_weight_multiplier", 2.0),)),
    Case("num-instances-off", num_instances.NumInstancesWeigher,
         _stats("num_instances", 2, 5, 0), [2, 5, 0], ["n1", "n2", "n3"]),
    Case("num-instances-pack", num_instances.NumInstancesWeigher,
         _stats("num_instances", 2, 5, 0), [2, 5, 0], ["n2", "n1", "n3"],
         conf=(("filter_scheduler", "num_instances_weight_multiplier",
                1.0),)),
    Case("num-instances-spread", num_instances.NumInstancesWeigher,
         _stats("num_instances", 2, 5, 0), [2, 5, 0], ["n3", "n1", "n2"],
         conf=(("filter_scheduler", "num_instances_weight_multiplier",
                -1.0),)),
    Case("hypervisor-newest", hv.HypervisorVersionWeigher,
         {"n1": {"hypervisor_version": 2011000},
          "n2": {"hypervisor_version": 6002000}, "n3": {}},
         [2011000, 6002000, 0], ["n2", "n1", "n3"]),
    Case("hypervisor-oldest", hv.HypervisorVersionWeigher,
         {"n1": {"hypervisor_version": 2011000},
          "n2": {"hypervisor_version": 6002000}, "n3": {}},
         [2011000, 6002000, 0], ["n3", "n1", "n2"],
         conf=(("filter_scheduler", "hypervisor_version_weight_multiplier",
                -1.0),)),
    Case("pci-none-asked-avoids-devices", pci.PCIWeigher,
         _pools([3, 1], [], [2, 2, 2]), [96, 100, 94], ["n2", "n1", "n3"]),
    Case("pci-asked-stacks", pci.PCIWeigher,
         _pools([4, 1], [10], [1, 1, 1, 1]), [95, 90, 96],
         ["n3", "n1", "n2"],
         spec={"pci_requests": [{"count": 4,
                                 "spec": [{"vendor_id": "8086"}]}]}),
    Case("pci-many-devices-tie", pci.PCIWeigher,
         _pools([500], [2000]), [1, 1], ["n1", "n2"]),
    Case("soft-affinity-gathers", soft_affinity.ServerGroupSoftAffinityWeigher,
         {"n1": {}, "n2": {}, "n3": {}}, [2, 1, 0], ["n1", "n2", "n3"],
         spec=_group("soft-affinity"), instances=_GROUP_INSTANCES),
    Case("soft-affinity-counts-chosen",
         soft_affinity.ServerGroupSoftAffinityWeigher,
         {"n1": {}, "n2": {}, "n3": {}}, [2, 1, 3], ["n3", "n1", "n2"],
         spec=_group("soft-affinity"), instances=_GROUP_INSTANCES,
         chosen=("n3", "n3", "n3")),
    Case("soft-affinity-other-policy",
         soft_affinity.ServerGroupSoftAffinityWeigher,
         {"n1": {}, "n2": {}, "n3": {}}, [0, 0, 0], ["n1", "n2", "n3"],
         spec=_group("soft-anti-affinity"), instances=_GROUP_INSTANCES),
    Case("soft-affinity-no-group",
         soft_affinity.ServerGroupSoftAffinityWeigher,
         {"n1": {}, "n2": {}}, [0, 0], ["n1", "n2"],
         instances=_GROUP_INSTANCES, chosen=("n2",)),
    Case("soft-anti-affinity-spreads",
         soft_anti_affinity.ServerGroupSoftAntiAffinityWeigher,
         {"n1": {}, "n2": {}, "n3": {}}, [-2, -1, 0], ["n3", "n2", "n1"],
         spec=_group("soft-anti-affinity"), instances=_GROUP_INSTANCES),
    Case("soft-anti-affinity-counts-chosen",
         soft_anti_affinity.ServerGroupSoftAntiAffinityWeigher,
         {"n1": {}, "n2": {}, "n3": {}}, [-2, -1, -2], ["n2", "n1", "n3"],
         spec=_group("soft-anti-affinity"), instances=_GROUP_INSTANCES,
         chosen=("n3", "n3")),
    Case("soft-anti-affinity-other-policy",
         soft_anti_affinity.ServerGroupSoftAntiAffinityWeigher,
         {"n1": {}, "n2": {}, "n3": {}}, [0, 0, 0], ["n1", "n2", "n3"],
         spec=_group("soft-affinity"), instances=_GROUP_INSTANCES),
    Case("build-failures-sink", build_failure.BuildFailureWeigher,
         _stats("failed_builds", 0, 3, 1), [0, 3, 1], ["n1", "n3", "n2"]),
    Case("cross-cell-prefers-source", cross_cell.CrossCellWeigher,
         _CELLS, [1, 0, 1], ["n1", "n3", "n2"], spec=_MOVE),
    Case("cross-cell-not-allowed", cross_cell.CrossCellWeigher,
         _CELLS, [0, 0, 0], ["n1", "n2", "n3"],
         spec={"requested_destination": {"cell": CELL_A}}),
    Case("cross-cell-no-destination", cross_cell.CrossCellWeigher,
         _CELLS, [0, 0, 0], ["n1", "n2", "n3"]),
    Case("cross-cell-unknown-cell", cross_cell.CrossCellWeigher,
         _CELLS, [0, 0, 0], ["n1", "n2", "n3"],
         spec={"requested_destination": {
             "cell": uuid_of("cell-c"), "allow_cross_cell_move": True}}),
    Case("metrics-sum", metrics.MetricsWeigher,
         _metrics({"cpu.percent": 0.2, "mem": 100},
                  {"cpu.percent": 0.5, "mem": 40},
                  {"cpu.percent": 0.1, "mem": 10}),
         [30, -30, -5], ["n1", "n3", "n2"], conf=(_SETTING,)),
    Case("metrics-no-setting", metrics.MetricsWeigher,
         _metrics({"cpu.percent": 0.2}, {}), [0, 0], ["n1", "n2"]),
    Case("metrics-bad-entries-skipped", metrics.MetricsWeigher,
         _metrics({"cpu.percent": 0.2}, {"cpu.percent": 0.5}),
         [20, 50], ["n2", "n1"],
         conf=(("metrics", "weight_setting",
                ["bogus", "cpu.percent=1", "x=abc", "=2"]),)),
    Case("metrics-missing-not-required", metrics.MetricsWeigher,
         _metrics({"cpu.percent": 0.2, "mem": 100}, {"cpu.percent": 0.5}),
         [30, -10000], ["n1", "n2"],
         conf=(_SETTING, ("metrics", "required", False))),
    Case("metrics-missing-required", metrics.MetricsWeigher,
         _metrics({"cpu.percent": 0.2, "mem": 100}, {"cpu.percent": 0.5}),
         [30, -10000], ["n1", "n2"], conf=(_SETTING,)),
    Case("metrics-missing-zero-ratio-ignored", metrics.MetricsWeigher,
         _metrics({"cpu.percent": 0.2, "mem": 100}, {"cpu.percent": 0.5}),
         [-20, -50], ["n1", "n2"],
         conf=(("metrics", "weight_setting", ["cpu.percent=-1", "mem=0"]),
               ("metrics", "required", False))),
    Case("metrics-missing-required-zero-ratio", metrics.MetricsWeigher,
         _metrics({"cpu.percent": 0.2, "mem": 100}, {"cpu.percent": 0.5}),
         [-20, -1], ["n2", "n1"],
         conf=(("metrics", "weight_setting", ["cpu.percent=-1", "mem=0"]),
               ("metrics", "weight_of_unavailable", -1.0))),
    Case("image-props-unknown-zero", image_props.ImagePropertiesWeigher,
         {"n1": {}, "n2": {}}, [0, 0], ["n1", "n2"],
         spec={"image": {"properties": {"hw_machine_type": "q35"}}},
         conf=(("filter_scheduler", "image_props_weight_multiplier", 1.0),),
         instances={"n1": [uuid_of("i1")]}),
]


def _build(cloud, case):
    for group, option, value in case.conf:
        cloud.set(group, option, value)
    for name, report in case.nodes.items():
        cloud.node(name, **report)
    for host, uuids in case.instances.items():
        cloud.instances(host, uuids)
    for name, hosts, metadata in case.aggregates:
        cloud.aggregate(name, hosts, **metadata)
    rows = cloud.rows(*case.nodes)
    chosen = [int(r) for r in cloud.rows(*case.chosen)] if case.chosen \
        else []
    request = cloud.request(case.spec, chosen_rows=chosen)
    return request, rows


def _order(cloud, total, rows):
    names = [cloud.table.nodenames[r] for r in rows]
    return [n for _w, n in sorted(zip(-total, names, strict=True))]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_weigher(cloud, case):
    request, rows = _build(cloud, case)
    weigher = case.weigher(cloud.conf)
    raw = weigher.raw(request, rows)
    assert raw.dtype == np.float64
    assert raw.tolist() == pytest.approx(case.raw)
    total, _ = framework.weigh(request, rows, [weigher])
    assert _order(cloud, total, rows) == case.order


# -- multipliers --------------------------------------------------------

MULTIPLIER_CASES = [
    # (id, weigher, aggregates, conf, expected multipliers of n1, n2, n3)
    ("config-default", ram.RAMWeigher, (), (), [1.0, 1.0, 1.0]),
    ("config-set", cpu.CPUWeigher, (),
     (("filter_scheduler", "cpu_weight_multiplier", 2.5),),
     [2.5, 2.5, 2.5]),
    ("aggregate-lowest-wins", ram.RAMWeigher,
     (("a1", ["n1", "n2"], {"ram_weight_multiplier": 3}),
      ("a2", ["n1"], {"ram_weight_multiplier": 2})),
     (), [2.0, 3.0, 1.0]),
    ("aggregate-other-key-ignored", disk.DiskWeigher,
     (("a1", ["n1"], {"ram_weight_multiplier": 3}),), (), [1.0, 1.0, 1.0]),
    ("aggregate-not-a-number-ignored", disk.DiskWeigher,
     (("a1", ["n1"], {"disk_weight_multiplier": "lots"}),), (),
     [1.0, 1.0, 1.0]),
    ("io-ops-default-negative", io_ops.IoOpsWeigher, (), (),
     [-1.0, -1.0, -1.0]),
    ("metrics-aggregate-key", metrics.MetricsWeigher,
     (("a1", ["n2"], {"metrics_weight_multiplier": 0.5}),),
     (("metrics", "weight_multiplier", 4.0),), [4.0, 0.5, 4.0]),
    ("build-failure-negated", build_failure.BuildFailureWeigher,
     (("a1", ["n3"], {"build_failure_weight_multiplier": 10}),), (),
     [-1e6, -1e6, -10.0]),
    ("soft-affinity-aggregate", soft_affinity.ServerGroupSoftAffinityWeigher,
     (("a1", ["n1"], {"soft_affinity_weight_multiplier": 7}),), (),
     [7.0, 1.0, 1.0]),
    ("num-instances-default-off", num_instances.NumInstancesWeigher, (), (),
     [0.0, 0.0, 0.0]),
]


@pytest.mark.parametrize("wid,weigher,aggs,conf,expected", MULTIPLIER_CASES,
                         ids=[c[0] for c in MULTIPLIER_CASES])
def test_multipliers(cloud, wid, weigher, aggs, conf, expected):
    case = Case(wid, weigher, {"n1": {}, "n2": {}, "n3": {}}, [], [],
                conf=conf, aggregates=aggs)
    request, rows = _build(cloud, case)
    got = weigher(cloud.conf).multipliers(request, rows)
    assert got.tolist() == pytest.approx(expected)


@pytest.mark.parametrize("wid,weigher,aggs,conf,expected", MULTIPLIER_CASES,
                         ids=[c[0] for c in MULTIPLIER_CASES])
def test_weigh_uses_the_multipliers(cloud, wid, weigher, aggs, conf,
                                    expected):
    # framework.weigh takes a single float when no aggregate overrides
    # the option: the totals are those of the per-row multipliers.
    case = Case(wid, weigher, {"n1": {"memory_mb": 1024},
                               "n2": {"memory_mb": 2048},
                               "n3": {"memory_mb": 4096}}, [], [],
                conf=conf, aggregates=aggs)
    request, rows = _build(cloud, case)
    w = weigher(cloud.conf)
    raw = np.asarray(w.raw(request, rows), np.float64)
    if w.minval is not None or w.maxval is not None:
        raw = np.clip(raw, w.minval, w.maxval)
    want = np.asarray(expected) * base.normalize(raw, w.minval, w.maxval)
    total, _ = framework.weigh(request, rows, [w])
    assert total.tolist() == pytest.approx(want.tolist())


def test_a_plugin_may_give_multipliers_per_row(cloud):
    class Halves(ram.RAMWeigher):
        name = "Halves"

        def multipliers(self, request, rows):
            return np.array([0.5, 0.0, 2.0])

    request, rows = _build(cloud, Case(
        "halves", Halves, {"n1": {"memory_mb": 4096},
                           "n2": {"memory_mb": 2048},
                           "n3": {"memory_mb": 1024}}, [], []))
    weigher = Halves(cloud.conf)
    total, explained = framework.weigh(request, rows, [weigher], explain=True)
    # Free RAM over [minval 0, max]: 1, 0.5, 0.25.
    assert total.tolist() == pytest.approx([0.5, 0.0, 0.5])
    assert explained["Halves"]["multiplier"].tolist() == [0.5, 0.0, 2.0]


def test_metrics_zero_ratio_uses_host_multiplier(cloud):
    # A host whose aggregate zeroes the multiplier skips missing metrics.
    case = Case("m", metrics.MetricsWeigher,
                _metrics({"cpu.percent": 0.2, "mem": 100},
                         {"cpu.percent": 0.5}, {"cpu.percent": 0.05}),
                [], [],
                conf=(_SETTING, ("metrics", "required", False)),
                aggregates=(("a1", ["n2"],
                             {"metrics_weight_multiplier": 0}),))
    request, rows = _build(cloud, case)
    raw = metrics.MetricsWeigher(cloud.conf).raw(request, rows)
    assert raw.tolist() == [30.0, -50.0, -10000.0]


# -- normalisation ------------------------------------------------------

NORMALIZE_CASES = [
    ("spread", [1, 3, 5], None, None, [0, 0.5, 1]),
    ("all-equal", [7, 7, 7], None, None, [0, 0, 0]),
    ("one-value", [42], None, None, [0]),
    ("empty", [], None, None, []),
    ("minval-fixed", [5, 10], 0, None, [0.5, 1]),
    ("maxval-fixed", [1, 2], None, 4, [0, 1 / 3]),
    ("negative", [-2, -1, 0], None, None, [0, 0.5, 1]),
    ("bounds-equal", [3, 3], 3, 3, [0, 0]),
]


@pytest.mark.parametrize("nid,values,low,high,expected", NORMALIZE_CASES,
                         ids=[c[0] for c in NORMALIZE_CASES])
def test_normalize(nid, values, low, high, expected):
    got = base.normalize(values, low, high)
    assert list(got) == pytest.approx(expected)


@pytest.mark.parametrize("count", [0, 1], ids=["no-host", "one-host"])
def test_weigh_skips_at_most_one_host(cloud, count):
    for i in range(count):
        cloud.node(f"n{i}", memory_mb=1024 * (i + 1))
    rows = cloud.rows()[:count]
    request = cloud.request()
    total, details = framework.weigh(
        request, rows, [ram.RAMWeigher(cloud.conf)], explain=True)
    assert total.tolist() == [0.0] * count
    assert details == {}


EQUAL_CASES = [
    # No fixed bound: equal values all normalise to 0.
    ("no-bound-zero", hv.HypervisorVersionWeigher, 0.0),
    # minval 0 fixes the low end: equal positive values all reach 1.
    ("minval-one", ram.RAMWeigher, 1.0),
]


@pytest.mark.parametrize("eid,weigher,expected", EQUAL_CASES,
                         ids=[c[0] for c in EQUAL_CASES])
def test_weigh_all_equal(cloud, eid, weigher, expected):
    for name in ("n1", "n2", "n3"):
        cloud.node(name, memory_mb=2048, hypervisor_version=1000)
    rows = cloud.rows("n1", "n2", "n3")
    total, details = framework.weigh(cloud.request(), rows,
                                   [weigher(cloud.conf)], explain=True)
    assert total.tolist() == [expected] * 3
    assert details[weigher.name]["normalized"].tolist() == [expected] * 3


def test_weigh_clamps_to_minval(cloud):
    # Overcommitted free RAM (negative) counts as 0, as Nova clamps it.
    cloud.node("n1", memory_mb=1024, memory_mb_used=2048)
    cloud.node("n2", memory_mb=1024, memory_mb_used=512)
    cloud.node("n3", memory_mb=1024)
    rows = cloud.rows("n1", "n2", "n3")
    total, details = framework.weigh(cloud.request(), rows,
                                   [ram.RAMWeigher(cloud.conf)],
                                   explain=True)
    assert details["RAMWeigher"]["raw"].tolist() == [-1024, 512, 1024]
    assert total.tolist() == pytest.approx([0, 0.5, 1])


# -- explain ------------------------------------------------------------

def test_explain(cloud):
    cloud.node("n1", memory_mb=1024, stats={"io_workload": "4",
                                            "failed_builds": "1"})
    cloud.node("n2", memory_mb=3072, stats={"io_workload": "2"})
    cloud.node("n3", memory_mb=2048)
    cloud.aggregate("a1", ["n3"], ram_weight_multiplier=2)
    rows = cloud.rows("n1", "n2", "n3")
    weighers = [ram.RAMWeigher(cloud.conf), io_ops.IoOpsWeigher(cloud.conf),
                build_failure.BuildFailureWeigher(cloud.conf),
                ram.RAMWeigher(cloud.conf)]
    total, details = framework.weigh(cloud.request(), rows, weighers,
                                   explain=True)
    assert list(details) == ["RAMWeigher", "IoOpsWeigher",
                             "BuildFailureWeigher", "RAMWeigher#2"]
    r = details["RAMWeigher"]
    assert r["raw"].tolist() == [1024, 3072, 2048]
    # minval 0: 1024 / 3072 and 2048 / 3072
    assert r["normalized"].tolist() == pytest.approx([1 / 3, 1, 2 / 3])
    assert r["multiplier"].tolist() == [1, 1, 2]
    assert r["weighted"].tolist() == pytest.approx([1 / 3, 1, 4 / 3])
    io = details["IoOpsWeigher"]
    assert io["normalized"].tolist() == pytest.approx([1, 0.5, 0])
    assert io["weighted"].tolist() == pytest.approx([-1, -0.5, 0])
    bf = details["BuildFailureWeigher"]
    assert bf["weighted"].tolist() == pytest.approx([-1e6, 0, 0])
    summed = sum(d["weighted"] for d in details.values())
    assert total.tolist() == pytest.approx(summed.tolist())
    plain, none = framework.weigh(cloud.request(), rows, weighers)
    assert none is None
    assert plain.tolist() == total.tolist()


# -- image properties (the part that can be computed) --------------------

SCORE_CASES = [
    ("counts-each-instance", {("a", "1"), ("b", "2")},
     [{("a", "1")}, {("a", "1"), ("b", "2")}, {("c", "3")}], {}, 3.0),
    ("setting-weighs", {("a", "1"), ("b", "2")},
     [{("a", "1")}, {("a", "1"), ("b", "2")}], {"b": 5.0}, 5.0),
    ("value-must-match", {("a", "1")}, [{("a", "2")}], {}, 0.0),
    ("no-instances", {("a", "1")}, [], {}, 0.0),
]


@pytest.mark.parametrize("sid,requested,instances,setting,expected",
                         SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_image_props_score(sid, requested, instances, setting, expected):
    assert image_props.score(requested, instances, setting) == expected


def test_image_props_requested_are_strings(cloud):
    spec = cloud.spec(image={"properties": {"hw_numa_nodes": 2,
                                            "os_type": "linux"}})
    assert image_props.requested_properties(spec) == {
        ("hw_numa_nodes", "2"), ("os_type", "linux")}


# -- loading ------------------------------------------------------------

ALL = sorted(["RAMWeigher", "CPUWeigher", "DiskWeigher", "IoOpsWeigher",
              "NumInstancesWeigher", "HypervisorVersionWeigher",
              "PCIWeigher", "ServerGroupSoftAffinityWeigher",
              "ServerGroupSoftAntiAffinityWeigher", "BuildFailureWeigher",
              "CrossCellWeigher", "MetricsWeigher",
              "ImagePropertiesWeigher"])

LOAD_CASES = [
    ("default-all", None, ALL),
    ("named-in-order", ["RAMWeigher", "CPUWeigher"],
     ["RAMWeigher", "CPUWeigher"]),
    ("nova-all", ["nova.scheduler.weights.all_weighers"], ALL),
    ("nova-paths", ["nova.scheduler.weights.ram.RAMWeigher",
                    "nova.scheduler.weights.pci.PCIWeigher"],
     ["RAMWeigher", "PCIWeigher"]),
    ("duplicates-dropped", ["PCIWeigher", "all"],
     ["PCIWeigher"] + [n for n in ALL if n != "PCIWeigher"]),
]


@pytest.mark.parametrize("lid,classes,expected", LOAD_CASES,
                         ids=[c[0] for c in LOAD_CASES])
def test_load(cloud, lid, classes, expected):
    if classes is not None:
        cloud.set("filter_scheduler", "weight_classes", classes)
    loaded = framework.enabled_weighers(cloud.conf)
    assert [w.name for w in loaded] == expected
    assert all(isinstance(w, base.BaseWeigher) for w in loaded)


def test_load_unknown(cloud):
    cloud.set("filter_scheduler", "weight_classes", ["NoSuchWeigher"])
    with pytest.raises(errors.SchedulerError, match="NoSuchWeigher"):
        framework.enabled_weighers(cloud.conf)


def test_a_multiplier_changed_later_is_read(cloud):
    # The weigher keeps its option group's view, not the value.
    case = Case("late", ram.RAMWeigher, {"n1": {}, "n2": {}}, [], [])
    request, rows = _build(cloud, case)
    w = ram.RAMWeigher(cloud.conf)
    assert w.multiplier(request, rows) == 1.0
    cloud.conf.set_override("ram_weight_multiplier", -2.5,
                            "filter_scheduler")
    try:
        assert w.multiplier(request, rows) == -2.5
    finally:
        cloud.conf.clear_override("ram_weight_multiplier",
                                  "filter_scheduler")


@pytest.mark.parametrize("multiplier", [1.0, -1.0, 2.5, -0.0, 0.75, "rows"])
@pytest.mark.parametrize("low", [0.0, -3.0, 1.5])
def test_weighted_sum_is_exactly_that_of_normalize(multiplier, low):
    # The skipped steps (minus 0, times 1 or -1) change no bit: the
    # totals equal the plain normalize-then-multiply sum exactly.
    rng = np.random.default_rng(7)
    total = rng.normal(size=500)
    line = np.concatenate([rng.normal(size=497) * 10 + low,
                           [low, -0.0, 0.0]])
    span = float(line.max() - low)
    if multiplier == "rows":
        multiplier = rng.choice([1.0, -1.0, 0.5], size=len(line))
    want = total + (line - low) / span * multiplier
    scratch = np.empty(len(line))
    framework._add_weighted(total, line, low, span, multiplier, scratch)
    assert total.tobytes() == want.tobytes()
