"""Tests of simulation workloads: synthetic generation, traces, errors."""

import collections
import dataclasses
import json
import math

import pytest

from simulation import workload

FLAVORS = {
    "m1.small": {"vcpus": 1, "memory_mb": 2048, "root_gb": 20},
    "m1.medium": {"vcpus": 2, "memory_mb": 4096, "root_gb": 40},
    "m1.large": {"vcpus": 4, "memory_mb": 8192, "root_gb": 80,
                 "extra_specs": {"hw:cpu_policy": "dedicated",
                                 "hw:numa_nodes": 2}},
}


def synthetic(**spec):
    spec.setdefault("creates", 200)
    spec.setdefault("arrival", {"process": "poisson", "rate_per_s": 2.0})
    return {"flavors": FLAVORS, "synthetic": spec}


def creates(wl):
    return [e for e in wl.events if e.kind == "create"]


def deletes(wl):
    return [e for e in wl.events if e.kind == "delete"]


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


# -- synthetic --------------------------------------------------------

EXPONENTIAL = {"distribution": "exponential", "mean_s": 60}


def test_same_seed_gives_same_events():
    doc = synthetic(seed=7, lifetime=EXPONENTIAL, zones={"a": 1, "b": 1},
                    server_groups={"fraction": 0.5, "size": 3})
    first, second = workload.parse(doc), workload.parse(doc)
    assert first.events == second.events
    assert first.groups == second.groups
    assert first.seed == 7


def test_different_seeds_give_different_events():
    one = workload.parse(synthetic(seed=1, lifetime=EXPONENTIAL))
    two = workload.parse(synthetic(seed=2, lifetime=EXPONENTIAL))
    assert [e.time for e in one.events] != [e.time for e in two.events]
    assert [e.flavor for e in one.events] != [e.flavor for e in two.events]


def test_seed_argument_overrides_document(tmp_path):
    path = write(tmp_path / "w.yaml", json.dumps(synthetic(seed=1)))
    overridden = workload.read(path, seed=2)
    assert overridden.seed == 2
    assert overridden.events == workload.parse(synthetic(seed=2)).events
    assert overridden.events != workload.read(path).events


def test_seed_defaults_to_zero():
    assert workload.parse(synthetic()).seed == 0
    assert (workload.parse(synthetic()).events
            == workload.parse(synthetic(seed=0)).events)


def test_counts_order_and_names():
    wl = workload.parse(synthetic(creates=1000, lifetime=EXPONENTIAL))
    made, gone = creates(wl), deletes(wl)
    assert len(made) == 1000
    assert len(gone) == 1000
    times = [e.time for e in wl.events]
    assert times == sorted(times)
    assert made[0].instance == "i0000001"
    assert made[-1].instance == "i0001000"
    assert len({e.instance for e in made}) == 1000
    born = {}
    for position, event in enumerate(wl.events):
        if event.kind == "create":
            born[event.instance] = (position, event.time)
        else:
            assert event.instance in born
            assert born[event.instance][1] <= event.time
            assert event.flavor is event.group is event.zone is None
    assert all(e.flavor in FLAVORS for e in made)


def test_forever_has_no_deletes():
    for lifetime in (None, {"distribution": "forever"}):
        doc = synthetic(creates=50)
        if lifetime:
            doc["synthetic"]["lifetime"] = lifetime
        wl = workload.parse(doc)
        assert len(wl.events) == 50
        assert not deletes(wl)


def test_names_widen_for_large_counts():
    names = workload._names("g", 12_345, 4)
    assert names[:2] == ["g00001", "g00002"]
    assert names[-1] == "g12345"
    assert workload._names("i", 3, 7) == ["i0000001", "i0000002",
                                          "i0000003"]


def test_mix_follows_the_weights():
    doc = synthetic(creates=30_000,
                    mix={"m1.small": 6, "m1.medium": 3, "m1.large": 1})
    counts = collections.Counter(e.flavor for e in workload.parse(doc)
                                 .events)
    assert counts["m1.small"] / 30_000 == pytest.approx(0.6, abs=0.02)
    assert counts["m1.medium"] / 30_000 == pytest.approx(0.3, abs=0.02)
    assert counts["m1.large"] / 30_000 == pytest.approx(0.1, abs=0.02)


def test_mix_leaves_out_unlisted_flavors():
    doc = synthetic(creates=2000, mix={"m1.large": 1})
    assert {e.flavor for e in workload.parse(doc).events} == {"m1.large"}


def test_default_mix_uses_every_flavor_evenly():
    counts = collections.Counter(
        e.flavor for e in workload.parse(synthetic(creates=9000)).events)
    assert set(counts) == set(FLAVORS)
    assert min(counts.values()) > 2700


def test_poisson_arrivals_have_the_rate():
    wl = workload.parse(synthetic(creates=20_000, arrival={
        "process": "poisson", "rate_per_s": 4.0}))
    assert wl.events[0].time > 0
    assert wl.events[-1].time / 20_000 == pytest.approx(0.25, rel=0.05)


def test_fixed_arrival_times_are_exact():
    wl = workload.parse(synthetic(creates=101, arrival={
        "process": "fixed", "interval_s": 0.5}))
    assert [e.time for e in wl.events] == [i * 0.5 for i in range(101)]


def test_fixed_lifetime_is_exact_and_creates_come_first_on_ties():
    wl = workload.parse(synthetic(
        creates=10, arrival={"process": "fixed", "interval_s": 1},
        lifetime={"distribution": "fixed", "seconds": 3}))
    born = {e.instance: e.time for e in creates(wl)}
    assert all(e.time == born[e.instance] + 3 for e in deletes(wl))
    at_three = [(e.kind, e.instance) for e in wl.events if e.time == 3]
    assert at_three == [("create", "i0000004"), ("delete", "i0000001")]


def test_lognormal_lifetime_has_the_median():
    wl = workload.parse(synthetic(creates=5000, lifetime={
        "distribution": "lognormal", "median_s": 600, "sigma": 1.0}))
    born = {e.instance: e.time for e in creates(wl)}
    lives = sorted(e.time - born[e.instance] for e in deletes(wl))
    assert len(lives) == 5000
    assert lives[0] > 0
    assert lives[2500] == pytest.approx(600, rel=0.1)


def test_server_groups_sizes_and_policies():
    wl = workload.parse(synthetic(creates=4000, server_groups={
        "fraction": 0.3, "size": 4,
        "policies": {"anti-affinity": 3, "affinity": 1}}))
    members = collections.defaultdict(list)
    for position, event in enumerate(creates(wl)):
        if event.group is not None:
            members[event.group].append(position)
    assert set(members) == set(wl.groups)
    assert sum(map(len, members.values())) / 4000 == pytest.approx(
        0.3, abs=0.03)
    names = sorted(members)
    assert names[0] == "g0001"
    assert all(len(members[n]) == 4 for n in names[:-1])
    assert 1 <= len(members[names[-1]]) <= 4
    # Groups fill in order: g0001's members all come before g0002's.
    firsts = [members[n][0] for n in names]
    assert firsts == sorted(firsts)
    policies = collections.Counter(wl.groups.values())
    assert set(policies) == {"anti-affinity", "affinity"}
    assert policies["anti-affinity"] / len(names) == pytest.approx(
        0.75, abs=0.1)


def test_server_groups_default_to_anti_affinity():
    wl = workload.parse(synthetic(server_groups={"fraction": 1,
                                                 "size": 10}))
    assert len(wl.groups) == 20
    assert set(wl.groups.values()) == {"anti-affinity"}
    assert all(e.group is not None for e in wl.events)


def test_zones():
    wl = workload.parse(synthetic(creates=4000, lifetime=EXPONENTIAL,
                                  zones={"east": 1, "west": 3}))
    counts = collections.Counter(e.zone for e in creates(wl))
    assert set(counts) == {"east", "west"}
    assert counts["west"] / 4000 == pytest.approx(0.75, abs=0.03)
    assert all(e.zone is None for e in deletes(wl))
    assert all(e.zone is None for e in workload.parse(synthetic()).events)


def test_adding_zones_keeps_the_other_draws():
    plain = workload.parse(synthetic(seed=3))
    zoned = workload.parse(synthetic(seed=3, zones={"a": 1}))
    assert ([(e.time, e.flavor) for e in plain.events]
            == [(e.time, e.flavor) for e in zoned.events])


def test_generated_events_are_ordinary_events():
    wl = workload.parse(synthetic(creates=3, zones={"z": 1}))
    first = wl.events[0]
    assert type(first) is workload.Event
    assert first == workload.Event(first.time, "create", "i0000001",
                                   first.flavor, None, "z")
    assert isinstance(first.time, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.time = 1.0


def test_flavors_and_describe():
    wl = workload.parse(synthetic(seed=5, creates=100,
                                  lifetime=EXPONENTIAL))
    large = wl.flavors["m1.large"]
    # Extra specs are text, as in Nova.
    assert large.extra_specs == {"hw:cpu_policy": "dedicated",
                                 "hw:numa_nodes": "2"}
    assert large.as_spec() == {
        "name": "m1.large", "vcpus": 4, "memory_mb": 8192, "root_gb": 80,
        "ephemeral_gb": 0, "swap": 0, "extra_specs": large.extra_specs}
    assert list(wl.flavors) == list(FLAVORS)
    summary = wl.describe()
    assert json.loads(json.dumps(summary)) == summary
    assert summary["kind"] == "synthetic"
    assert summary["seed"] == 5
    assert (summary["creates"], summary["deletes"]) == (100, 100)
    assert summary["duration_s"] == wl.events[-1].time
    assert summary["flavors"]["m1.small"]["root_gb"] == 20
    assert summary["groups"] == 0


# -- traces -----------------------------------------------------------

INLINE = {
    "flavors": FLAVORS,
    "groups": {"web": "anti-affinity", "db": "affinity"},
    "events": [
        {"time": 0, "action": "create", "instance": "vm1",
         "flavor": "m1.small", "group": "web", "zone": "east"},
        {"time": 0, "action": "create", "instance": "vm2",
         "flavor": "m1.large"},
        {"time": 30, "action": "delete", "instance": "vm1"},
        {"time": 30, "action": "create", "instance": "vm1",
         "flavor": "m1.medium", "group": "db"},
    ],
}


def test_inline_events():
    wl = workload.parse(INLINE)
    E = workload.Event
    assert wl.events == [
        E(0.0, "create", "vm1", "m1.small", "web", "east"),
        E(0.0, "create", "vm2", "m1.large"),
        E(30.0, "delete", "vm1"),
        E(30.0, "create", "vm1", "m1.medium", "db"),
    ]
    assert wl.groups == {"web": "anti-affinity", "db": "affinity"}
    assert wl.seed is None
    summary = wl.describe()
    assert summary["kind"] == "trace"
    assert (summary["creates"], summary["deletes"]) == (3, 1)
    assert summary["duration_s"] == 30.0
    assert summary["groups"] == 2


TRACE_CSV = """time,action,instance,flavor,group,zone
0,create,vm1,m1.small,web,east
1.5,create,vm2,m1.large,,

30,delete,vm1,,,
"""


def test_yaml_with_csv_trace(tmp_path):
    (tmp_path / "traces").mkdir()
    write(tmp_path / "traces" / "t.csv", TRACE_CSV)
    path = write(tmp_path / "w.yaml",
                 "flavors:\n"
                 "  m1.small: {vcpus: 1, memory_mb: 2048}\n"
                 "  m1.large: {vcpus: 4, memory_mb: 8192}\n"
                 "groups: {web: soft-anti-affinity}\n"
                 "trace: traces/t.csv\n")
    wl = workload.read(path, seed=9)
    E = workload.Event
    assert wl.events == [E(0.0, "create", "vm1", "m1.small", "web", "east"),
                         E(1.5, "create", "vm2", "m1.large"),
                         E(30.0, "delete", "vm1")]
    assert wl.groups == {"web": "soft-anti-affinity"}
    assert wl.seed is None
    assert wl.path == path


def test_json_document(tmp_path):
    path = write(tmp_path / "w.json", json.dumps(INLINE))
    assert workload.read(path).events == workload.parse(INLINE).events


BARE_CSV = """time,action,instance,vcpus,memory_mb,root_gb,swap,flavor,\
group,group_policy
0,create,a,2,4096,20,,,,
1,create,b,2,4096,20,0,,g1,
2,create,c,4.0,8192.0,40,512,big,g1,affinity
3,create,d,2,4096,20,,,g2,
4,delete,a,,,,,,,
5,create,e,4,8192,40,512,big,,
"""


def test_bare_csv_trace(tmp_path):
    path = write(tmp_path / "t.csv", BARE_CSV)
    wl = workload.read(path)
    assert list(wl.flavors) == ["2c-4096m-20g", "big"]
    assert wl.flavors["big"] == workload.Flavor("big", 4, 8192, 40, 0, 512)
    assert [e.flavor for e in creates(wl)] == [
        "2c-4096m-20g", "2c-4096m-20g", "big", "2c-4096m-20g", "big"]
    assert wl.groups == {"g1": "affinity", "g2": "anti-affinity"}
    assert [e.group for e in creates(wl)] == [None, "g1", "g1", "g2", None]
    assert wl.events[4] == workload.Event(4.0, "delete", "a")
    assert wl.seed is None


def test_bare_csv_names_ephemeral_and_swap(tmp_path):
    path = write(tmp_path / "t.csv",
                 "time,action,instance,vcpus,memory_mb,root_gb,"
                 "ephemeral_gb,swap\n0,create,a,1,512,1,10,256\n")
    assert list(workload.read(path).flavors) == ["1c-512m-1g-10e-256s"]


# -- errors -----------------------------------------------------------

SMALL = {"m1.small": {"vcpus": 1, "memory_mb": 512}}
POISSON = {"process": "poisson", "rate_per_s": 1}


def syn(**spec):
    return {"flavors": SMALL,
            "synthetic": {"creates": 5, "arrival": POISSON, **spec}}


def ev(*events, **extra):
    return {"flavors": SMALL, **extra, "events": list(events)}


def mk(time, action, instance, **more):
    if action == "create":
        more.setdefault("flavor", "m1.small")
    return {"time": time, "action": action, "instance": instance, **more}


MALFORMED = [
    # (id, document, field, word in the message)
    ("not-a-mapping", ["a"], "(top)", "mapping"),
    ("no-flavors", {"events": [mk(0, "create", "a")]}, "flavors",
     "required"),
    ("empty-flavors", {"flavors": {}, "synthetic": {}}, "flavors",
     "empty"),
    ("vcpus-zero", {"flavors": {"m1.large": {"vcpus": 0,
                                             "memory_mb": 1}}},
     "flavors.m1.large.vcpus", ">= 1"),
    ("vcpus-text", {"flavors": {"x": {"vcpus": "2", "memory_mb": 1}}},
     "flavors.x.vcpus", "integer"),
    ("flavor-unknown-key", {"flavors": {"x": {"vcpus": 1, "memory_mb": 1,
                                              "disk_gb": 5}}},
     "flavors.x.disk_gb", "allowed"),
    ("unknown-section", {**syn(), "hosts": 3}, "hosts", "allowed"),
    ("no-form", {"flavors": SMALL}, None, "exactly one"),
    ("two-forms", {**syn(), "trace": "t.csv"}, None, "exactly one"),
    ("groups-with-synthetic", {**syn(), "groups": {"g": "affinity"}},
     "groups", "traces"),
    ("creates-zero", syn(creates=0), "synthetic.creates", ">= 1"),
    ("creates-too-many", syn(creates=10**9), "synthetic.creates", "<="),
    ("seed-negative", syn(seed=-1), "synthetic.seed", ">= 0"),
    ("no-arrival", {"flavors": SMALL, "synthetic": {"creates": 5}},
     "synthetic.arrival", "required"),
    ("rate-zero", syn(arrival={"process": "poisson", "rate_per_s": 0}),
     "synthetic.arrival.rate_per_s", "> 0"),
    ("rate-infinite", syn(arrival={"process": "poisson",
                                   "rate_per_s": math.inf}),
     "synthetic.arrival.rate_per_s", "finite"),
    ("rate-missing", syn(arrival={"process": "poisson"}),
     "synthetic.arrival.rate_per_s", "required"),
    ("interval-with-poisson", syn(arrival={**POISSON, "interval_s": 1}),
     "synthetic.arrival.interval_s", "rate_per_s"),
    ("process-unknown", syn(arrival={"process": "bursty"}),
     "synthetic.arrival.process", "poisson or fixed"),
    ("lifetime-unknown", syn(lifetime={"distribution": "weibull"}),
     "synthetic.lifetime.distribution", "lognormal"),
    ("lognormal-no-sigma", syn(lifetime={"distribution": "lognormal",
                                         "median_s": 60}),
     "synthetic.lifetime.sigma", "required"),
    ("mean-negative", syn(lifetime={"distribution": "exponential",
                                    "mean_s": -5}),
     "synthetic.lifetime.mean_s", "> 0"),
    ("forever-with-seconds", syn(lifetime={"distribution": "forever",
                                           "seconds": 5}),
     "synthetic.lifetime.seconds", "allowed"),
    ("mix-unknown-flavor", syn(mix={"m1.huge": 1}), "synthetic.mix.m1.huge",
     "unknown flavor 'm1.huge'"),
    ("mix-zero-weight", syn(mix={"m1.small": 0}), "synthetic.mix.m1.small",
     "> 0"),
    ("group-fraction", syn(server_groups={"fraction": 1.5, "size": 2}),
     "synthetic.server_groups.fraction", "<= 1"),
    ("group-policy", syn(server_groups={"fraction": 0.5, "size": 2,
                                        "policies": {"spread": 1}}),
     "synthetic.server_groups.policies.spread", "anti-affinity"),
    ("zones-empty", syn(zones={}), "synthetic.zones", "empty"),
    ("action", ev(mk(0, "create", "a"), mk(1, "destroy", "a")),
     "events[1].action", "create, delete, reshape"),
    ("time-negative", ev(mk(-1, "create", "a")), "events[0].time", ">= 0"),
    ("time-text", ev(mk("soon", "create", "a")), "events[0].time",
     "number"),
    ("time-goes-back", ev(mk(0, "create", "a"), mk(9, "create", "b"),
                          mk(3, "delete", "a")),
     "events[2].time", "decrease"),
    ("create-live", ev(mk(0, "create", "a"), mk(1, "create", "a")),
     "events[1].instance", "live"),
    ("delete-unknown", ev(mk(0, "create", "a"), mk(1, "delete", "b")),
     "events[1].instance", "never created"),
    ("delete-twice", ev(mk(0, "create", "a"), mk(1, "delete", "a"),
                        mk(2, "delete", "a")),
     "events[2].instance", "deleted already"),
    ("unknown-flavor", ev(mk(0, "create", "a", flavor="m1.tiny")),
     "events[0].flavor", "unknown flavor 'm1.tiny'"),
    ("create-without-flavor", ev({"time": 0, "action": "create",
                                  "instance": "a"}),
     "events[0].flavor", "needs a flavor"),
    ("delete-with-other-flavor", ev(mk(0, "create", "a"),
                                    mk(1, "delete", "a", flavor="m1.big")),
     "events[1].flavor", "created as"),
    ("unknown-group", ev(mk(0, "create", "a", group="g9"),
                         groups={"g1": "affinity"}),
     "events[0].group", "unknown group 'g9'"),
    ("unknown-policy", ev(mk(0, "create", "a"), groups={"g1": "spread"}),
     "groups.g1", "affinity"),
    ("no-events", ev(), "events", "empty"),
    ("event-unknown-key", ev(mk(0, "create", "a", host="h1")),
     "events[0].host", "allowed"),
]


@pytest.mark.parametrize("document,field,word",
                         [c[1:] for c in MALFORMED],
                         ids=[c[0] for c in MALFORMED])
def test_malformed_documents(document, field, word):
    with pytest.raises(workload.WorkloadError) as caught:
        workload.parse(document, path="w.yaml")
    assert caught.value.path == "w.yaml"
    assert caught.value.field == field
    assert word in caught.value.message


YAML_TRACE = ("flavors: {m1.small: {vcpus: 1, memory_mb: 512}}\n"
              "groups: {g1: affinity}\ntrace: t.csv\n")
HEAD = "time,action,instance,flavor,group\n"
BARE_HEAD = "time,action,instance,vcpus,memory_mb,root_gb\n"

MALFORMED_FILES = [
    # (id, YAML or None for a bare CSV, CSV text, file named, field, word)
    ("csv-missing", YAML_TRACE, None, "w.yaml", "trace", "t.csv"),
    ("csv-empty", YAML_TRACE, "", "t.csv", None, "empty"),
    ("csv-no-action-column", YAML_TRACE, "time,instance\n0,a\n", "t.csv",
     "line 1", "action"),
    ("csv-unknown-column", YAML_TRACE, "time,action,instance,vcpus\n",
     "t.csv", "line 1: vcpus", "unknown column"),
    ("csv-header-only", YAML_TRACE, HEAD, "t.csv", None, "no events"),
    ("csv-short-row", YAML_TRACE, HEAD + "0,create,a\n", "t.csv", "line 2",
     "cells"),
    ("csv-action", YAML_TRACE, HEAD + "0,create,a,m1.small,\n\n"
     "1,remove,a,,\n", "t.csv", "line 4: action", "create or delete"),
    ("csv-time", YAML_TRACE, HEAD + "nan,create,a,m1.small,\n", "t.csv",
     "line 2: time", "number"),
    ("csv-time-back", YAML_TRACE, HEAD + "5,create,a,m1.small,\n"
     "4,delete,a,,\n", "t.csv", "line 3: time", "decrease"),
    ("csv-unknown-flavor", YAML_TRACE, HEAD + "0,create,a,m9,\n", "t.csv",
     "line 2: flavor", "unknown flavor 'm9'"),
    ("csv-unknown-group", YAML_TRACE, HEAD + "0,create,a,m1.small,g2\n",
     "t.csv", "line 2: group", "unknown group 'g2'"),
    ("csv-delete-unknown", YAML_TRACE, HEAD + "0,delete,a,,\n", "t.csv",
     "line 2: instance", "never created"),
    ("bare-no-sizes", None, HEAD + "0,create,a,m1,\n", "t.csv", "line 1",
     "vcpus"),
    ("bare-vcpus-zero", None, BARE_HEAD + "0,create,a,0,512,1\n", "t.csv",
     "line 2: vcpus", ">= 1"),
    ("bare-memory-fraction", None, BARE_HEAD + "0,create,a,1,51.5,1\n",
     "t.csv", "line 2: memory_mb", "integer"),
    ("bare-contradiction", None,
     "time,action,instance,flavor,vcpus,memory_mb,root_gb\n"
     "0,create,a,f1,1,512,1\n1,create,b,f1,1,1024,1\n", "t.csv",
     "line 3: memory_mb", "contradicts"),
    ("bare-policy", None, BARE_HEAD[:-1] + ",group,group_policy\n"
     "0,create,a,1,512,1,g,spread\n", "t.csv", "line 2: group_policy",
     "anti-affinity"),
    ("bare-policy-changes", None, BARE_HEAD[:-1] + ",group,group_policy\n"
     "0,create,a,1,512,1,g,affinity\n1,create,b,1,512,1,g,anti-affinity\n",
     "t.csv", "line 3: group_policy", "affinity"),
    ("bare-policy-without-group", None, BARE_HEAD[:-1]
     + ",group,group_policy\n0,create,a,1,512,1,,affinity\n", "t.csv",
     "line 2: group_policy", "needs a group"),
]


@pytest.mark.parametrize("yaml_text,csv_text,named,field,word",
                         [c[1:] for c in MALFORMED_FILES],
                         ids=[c[0] for c in MALFORMED_FILES])
def test_malformed_files(tmp_path, yaml_text, csv_text, named, field,
                         word):
    if csv_text is not None:
        write(tmp_path / "t.csv", csv_text)
    path = (write(tmp_path / "w.yaml", yaml_text) if yaml_text
            else str(tmp_path / "t.csv"))
    with pytest.raises(workload.WorkloadError) as caught:
        workload.read(path)
    assert caught.value.path == str(tmp_path / named)
    assert caught.value.field == field
    assert word in caught.value.message


def test_unreadable_files(tmp_path):
    missing = str(tmp_path / "none.yaml")
    with pytest.raises(workload.WorkloadError, match="none.yaml: No such"):
        workload.read(missing)
    broken = write(tmp_path / "broken.yaml", "flavors: [1, 2\n")
    with pytest.raises(workload.WorkloadError, match="not valid YAML"):
        workload.read(broken)
    empty = write(tmp_path / "empty.yaml", "# nothing\n")
    with pytest.raises(workload.WorkloadError) as caught:
        workload.read(empty)
    assert str(caught.value) == f"{empty}: empty document"


def test_bad_seed_argument(tmp_path):
    path = write(tmp_path / "w.yaml", json.dumps(syn()))
    with pytest.raises(workload.WorkloadError) as caught:
        workload.read(path, seed=-3)
    assert (caught.value.field, caught.value.path) == ("seed", path)


def test_error_text_names_file_and_field():
    error = workload.WorkloadError("w.yaml", "events[3].action", "bad")
    assert str(error) == "w.yaml: events[3].action: bad"
    assert str(workload.WorkloadError("w.yaml", None, "bad")) == (
        "w.yaml: bad")


def test_drain_false_ends_the_run_at_the_last_arrival():
    doc = {"flavors": {"f": {"vcpus": 1, "memory_mb": 512}},
           "synthetic": {"seed": 1, "creates": 200,
                         "arrival": {"process": "fixed", "interval_s": 1},
                         "lifetime": {"distribution": "fixed",
                                      "seconds": 50}}}
    drained = workload.parse(doc)
    assert drained.describe()["deletes"] == 200
    doc["synthetic"]["drain"] = False
    kept = workload.parse(doc)
    # Created at 0..199, each deleted 50 s later: the deletes at 200 s
    # and after (those of creates 150..199) fall past the last arrival.
    assert kept.describe()["deletes"] == 150
    assert kept.events[-1].time == 199
    assert kept.events[:len(kept.events)] == [
        e for e in drained.events if e.time <= 199]


def test_parse_flavors_reads_only_the_flavors():
    flavors = workload.parse_flavors(
        {"flavors": {"f": {"vcpus": 2, "memory_mb": 1024}}}, "w.yaml")
    assert flavors["f"].as_spec()["vcpus"] == 2
    with pytest.raises(workload.WorkloadError) as caught:
        workload.parse_flavors({"flavors": {"f": {"vcpus": 0,
                                                  "memory_mb": 1}}},
                               "w.yaml")
    assert caught.value.field == "flavors.f.vcpus"


def test_deletes_may_repeat_the_create_columns(tmp_path):
    # Exported traces often carry the flavor (or sizes) on every row.
    doc = {"flavors": {"f": {"vcpus": 1, "memory_mb": 512}},
           "groups": {"g": "affinity"},
           "events": [
               {"time": 0, "action": "create", "instance": "a",
                "flavor": "f", "group": "g", "zone": "z"},
               {"time": 1, "action": "delete", "instance": "a",
                "flavor": "f", "group": "g", "zone": "z"}]}
    wl = workload.parse(doc)
    assert wl.events[1] == workload.Event(1.0, "delete", "a")
    path = tmp_path / "t.csv"
    path.write_text("time,action,instance,vcpus,memory_mb,root_gb\n"
                    "0,create,a,1,512,1\n1,delete,a,1,512,1\n")
    wl = workload.read(str(path))
    assert [e.kind for e in wl.events] == ["create", "delete"]
    assert wl.events[1].flavor is None
