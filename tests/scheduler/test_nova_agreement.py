"""gantt's filters and weighers against Nova 34's own, on the hosts and
requests of tests/scheduler/fixtures/nova_agreement (hand-picked edge
cases and seeded random ones; README.md there says how Nova's answers
were recorded). Each test builds every case of one fixture file in one
cloud (host names are unique across cases), runs gantt on each case's
hosts and lists the cases where gantt and Nova disagree: the list must
be empty."""

import contextlib
import itertools
import json
import pathlib

import numpy as np
import pytest

from filters import compute_capabilities, json_filter, metrics, numa_fit
from filters import numa_topology as nt
from placement import direct
from scheduler import framework, host_devices, manager
from tests.scheduler import cloud as cloud_mod
from tests.scheduler.cloud import uuid_of
from weighers import (
    build_failure,
    cpu,
    disk,
    hypervisor_version,
    io_ops,
    num_instances,
    ram,
)
from weighers import metrics as metrics_weigher

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "nova_agreement"

WEIGHERS = {
    "RAMWeigher": ram.RAMWeigher,
    "DiskWeigher": disk.DiskWeigher,
    "CPUWeigher": cpu.CPUWeigher,
    "IoOpsWeigher": io_ops.IoOpsWeigher,
    "NumInstancesWeigher": num_instances.NumInstancesWeigher,
    "HypervisorVersionWeigher": hypervisor_version.HypervisorVersionWeigher,
    "BuildFailureWeigher": build_failure.BuildFailureWeigher,
    "MetricsWeigher": metrics_weigher.MetricsWeigher,
}


def approx(value):
    """Nova's numbers, to rounding (a mapping of mappings too)."""
    if isinstance(value, dict) and any(isinstance(v, dict)
                                       for v in value.values()):
        return {k: approx(v) for k, v in value.items()}
    return pytest.approx(value, rel=1e-9, abs=1e-9)


def load(cloud, name):
    """The cases of fixture file ``name``, every host and aggregate of
    them written to ``cloud``."""
    cases = json.loads((FIXTURES / name).read_text())["cases"]
    for case in cases:
        for node, report in case["nodes"].items():
            cloud.node(node, **report)
        for agg in case.get("aggregates", ()):
            cloud.aggregate(agg["name"], agg["hosts"], **agg["metadata"])
    cloud.rows()  # the table, which registers the options
    return cases


@contextlib.contextmanager
def configured(cloud, case):
    """The case's (group, option, value) overrides, for the block."""
    conf = case.get("conf", ())
    for group, option, value in conf:
        cloud.set(group, option, value)
    try:
        yield
    finally:
        for group, option, _value in conf:
            cloud.conf.clear_override(option, group=group)


def gantt_spec(spec):
    """A fixture's request in gantt's JSON form: its flavor has the
    test cloud's defaults for what the case leaves out."""
    spec = dict(spec)
    spec["flavor"] = {**cloud_mod.FLAVOR, **spec.get("flavor", {})}
    return spec


def run_filter(cloud, cls, case, spec=None):
    """{node: passes} of gantt's filter over the case's hosts, or the
    error the request fails with."""
    names = list(case["nodes"])
    with configured(cloud, case):
        request = cloud.request(gantt_spec(
            case["spec"] if spec is None else spec))
        try:
            mask = cls(cloud.conf).mask(request, cloud.rows(*names))
        except json_filter.JsonQueryError as exc:
            return exc
    return dict(zip(names, mask.tolist(), strict=True))


def weigh(cloud, case, names):
    """({node: total weight}, {weigher: {node: multiplier}})."""
    nodes = list(case["nodes"])
    with configured(cloud, case):
        request = cloud.request(gantt_spec(case["spec"]))
        rows = cloud.rows(*nodes)
        weighers = [WEIGHERS[n](cloud.conf) for n in names]
        total, _ = framework.weigh(request, rows, weighers)
        multipliers = {n: dict(zip(nodes, w.multipliers(request, rows)
                                   .tolist(), strict=True))
                       for n, w in zip(names, weighers, strict=True)}
    return dict(zip(nodes, total.tolist(), strict=True)), multipliers


def nova_filter_outcome(answers):
    """Nova's answers per host as gantt gives them: the request fails
    (an error) when Nova raised for any host."""
    errors = {v for v in answers.values() if isinstance(v, str)}
    return errors or answers


def same_filter(got, nova):
    want = nova_filter_outcome(nova)
    if isinstance(want, set):
        return isinstance(got, json_filter.JsonQueryError)
    return got == want


# -- free disk ------------------------------------------------------------

def test_free_disk_as_nova(cloud):
    cases = load(cloud, "disk.json")
    table = cloud.table
    wrong = []
    for case in cases:
        nova = case["nova"]
        free = {n: int(table.free_disk_mb[cloud.rows(n)[0]])
                for n in case["nodes"]}
        if free != nova["free_disk_mb"]:
            wrong.append((case["id"], "free_disk_mb", free))
        weights, _ = weigh(cloud, case, ["DiskWeigher"])
        if weights != approx(nova["DiskWeigher"]):
            wrong.append((case["id"], "DiskWeigher", weights))
        for query, answers in zip(case["queries"], nova["JsonFilter"],
                                  strict=True):
            spec = {"scheduler_hints": {"query": [json.dumps(query)]}}
            got = run_filter(cloud, json_filter.JsonFilter, case, spec)
            if not same_filter(got, answers):
                wrong.append((case["id"], query, got))
        for extra, answers in zip(case["extra_specs"],
                                  nova["ComputeCapabilitiesFilter"],
                                  strict=True):
            spec = {"flavor": {"extra_specs": extra}}
            got = run_filter(
                cloud, compute_capabilities.ComputeCapabilitiesFilter,
                case, spec)
            if not same_filter(got, answers):
                wrong.append((case["id"], extra, got))
    assert len(cases) >= 60
    assert wrong == [], "\n".join(map(repr, wrong))


# -- weight multipliers from aggregates -------------------------------------

def test_aggregate_multipliers_as_nova(cloud):
    cases = load(cloud, "multipliers.json")
    wrong = []
    for case in cases:
        weights, multipliers = weigh(cloud, case, case["weighers"])
        if multipliers != approx(case["nova"]["multipliers"]):
            wrong.append((case["id"], "multipliers", multipliers))
        if weights != approx(case["nova"]["weights"]):
            wrong.append((case["id"], "weights", weights))
    # The cases do exercise what the fix is about: some host has an
    # aggregate value that is not a number next to one that is.
    assert any(c["id"] == "mult-bad-and-good" for c in cases)
    assert wrong == [], "\n".join(map(repr, wrong))


# -- metrics ------------------------------------------------------------------

def _setting(case):
    return next(v for g, o, v in case["conf"] if o == "weight_setting")


def _held(case, node):
    """The node's weighed metrics as Nova's host state holds them."""
    return case["nova"]["values"][node]


def test_metrics_as_nova(cloud):
    cases = load(cloud, "metrics.json")
    wrong, errors = [], 0
    for case in cases:
        nova = case["nova"]
        got = run_filter(cloud, metrics.MetricsFilter, case)
        if got != nova["MetricsFilter"]:
            wrong.append((case["id"], "MetricsFilter", got))
        # The values the weigher reads are Nova's (scaled, whole).
        setting = metrics_weigher.parse_setting(_setting(case), "test")
        nodes = list(case["nodes"])
        with configured(cloud, case):
            rows = cloud.rows(*nodes)
            for name, _ratio in setting:
                read = metrics_weigher.as_nova_reads(
                    name, cloud.table.metric(name)[rows])
                want = [_held(case, n).get(name, np.nan) for n in nodes]
                if not np.array_equal(read, np.asarray(want, float),
                                      equal_nan=True):
                    wrong.append((case["id"], name, read.tolist()))
        if "error" in nova["MetricsWeigher"]:
            # required = true and a host lacks a metric: Nova fails the
            # request, gantt weighs the host weight_of_unavailable (the
            # weigher's docstring says so).
            errors += 1
            continue
        weights, _ = weigh(cloud, case, ["MetricsWeigher"])
        if weights != approx(nova["MetricsWeigher"]["weights"]):
            wrong.append((case["id"], "MetricsWeigher", weights))
    assert errors < len(cases) // 2
    assert wrong == [], "\n".join(map(repr, wrong))


# -- JsonFilter -------------------------------------------------------------

def test_json_filter_as_nova(cloud):
    cases = load(cloud, "json_filter.json")
    wrong = []
    for case in cases:
        got = run_filter(cloud, json_filter.JsonFilter, case)
        if not same_filter(got, case["nova"]):
            wrong.append((case["id"], case["spec"], got, case["nova"]))
    failing = [c for c in cases
               if isinstance(nova_filter_outcome(c["nova"]), set)]
    assert 10 <= len(failing) < len(cases) // 2
    assert wrong == [], "\n".join(map(repr, wrong))


def test_json_filter_error_names_the_query_and_the_stat(cloud):
    cases = {c["id"]: c for c in load(cloud, "json_filter.json")}
    case = cases["json-stat-text-vs-number"]
    error = run_filter(cloud, json_filter.JsonFilter, case)
    assert isinstance(error, json_filter.JsonQueryError)
    text = error.message
    assert text.startswith('scheduler_hints.query: ["<", '
                           '"$stats.num_instances", 5]: cannot be '
                           'evaluated on host json-stat-text-vs-number-n')
    assert "$stats.num_instances='" in text
    assert "'<' not supported" in text


# -- ComputeCapabilitiesFilter -----------------------------------------------

def test_compute_capabilities_as_nova(cloud):
    cases = load(cloud, "capabilities.json")
    wrong, raised = [], 0
    for case in cases:
        got = run_filter(cloud, compute_capabilities.
                         ComputeCapabilitiesFilter, case)
        # Where Nova raises (a numeric operator on text: the request
        # fails), the host fails here (filters.extra_specs_ops says so).
        want = {n: v is True for n, v in case["nova"].items()}
        raised += any(isinstance(v, str) for v in case["nova"].values())
        if got != want:
            wrong.append((case["id"], case["spec"], got, case["nova"]))
    assert raised < len(cases) // 4
    passed = sum(v is True for c in cases for v in c["nova"].values())
    assert 0 < passed < sum(len(c["nova"]) for c in cases)
    assert wrong == [], "\n".join(map(repr, wrong))


# -- NUMATopologyFilter and what a placed instance takes ----------------------

def assignable(fits):
    """Whether Nova's per-cell answers allow each guest cell its own
    host cell."""
    return any(all(fits[g][h] for g, h in enumerate(perm))
               for perm in itertools.permutations(range(len(fits[0])),
                                                  len(fits)))


def _pair_fits(request, node, table, row):
    guests = numa_fit.requested_cells(request)[0]
    hosts = numa_fit.host_cells(node.numa_topology)
    cpu_ratio = float(table.cpu_allocation_ratio[row])
    ram_ratio = float(table.ram_allocation_ratio[row])
    return [[numa_fit.fits(g, h, cpu_ratio, ram_ratio) for h in hosts]
            for g in guests]


def _usage(node):
    out = []
    for raw in node.numa_topology["cells"]:
        cell = numa_fit.object_fields(raw)
        out.append({
            "id": cell["id"],
            "memory_usage": int(cell.get("memory_usage") or 0),
            "cpu_usage": int(cell.get("cpu_usage") or 0),
            "pinned_cpus": sorted(cell.get("pinned_cpus") or ()),
            "mempages": {str(p["size_kb"]): p["used"]
                         for p in cell.get("mempages") or ()}})
    return out


def _has_threads(node):
    return any(len(s) > 1 for c in node.numa_topology["cells"]
               for s in c.get("siblings") or ())


def _chosen(request, node, table, row):
    guests = numa_fit.requested_cells(request)[0]
    hosts = numa_fit.host_cells(node.numa_topology)
    got = numa_fit.assign(guests, hosts,
                          float(table.cpu_allocation_ratio[row]),
                          float(table.ram_allocation_ratio[row]),
                          numa_fit.pci_per_cell(node.pci_device_pools),
                          False)
    return [hosts[got[g]].id for g in range(len(guests))]


def test_numa_topology_as_nova(cloud):
    cases = load(cloud, "numa.json")
    table = cloud.table
    wrong, compared, unconsumed, quirks = [], 0, 0, []
    for case in cases:
        request = cloud.request(gantt_spec(case["spec"]))
        first = run_filter(cloud, nt.NUMATopologyFilter, case)
        for name, nova in case["nova"].items():
            row = int(cloud.rows(name)[0])
            node = table.node(row)
            if _pair_fits(request, node, table, row) != nova["fits"]:
                wrong.append((name, "fits"))
            ideal = assignable(nova["fits"])
            if nova["passes"] != ideal:
                # Nova's walk over permutations (see the filter's
                # docstring): gantt gives the per-cell answer.
                quirks.append(name)
                if first[name] != ideal:
                    wrong.append((name, "quirk", first[name]))
                continue
            if first[name] != nova["passes"]:
                wrong.append((name, "passes", first[name]))
            if not nova["passes"]:
                continue
            if not nova["consumed"]:
                # Nova failed to take the instance out (a host cell
                # without page sizes): gantt takes it out all the same.
                unconsumed += 1
                continue
            hosts = numa_fit.host_cells(node.numa_topology)
            guests = numa_fit.requested_cells(request)[0]
            order = [hosts[h].id for h in numa_fit.preference(
                guests, hosts,
                numa_fit.pci_per_cell(node.pci_device_pools))]
            if order != nova["order"]:
                wrong.append((name, "order", order))
            if _chosen(request, node, table, row) != nova["first_fit"]:
                wrong.append((name, "chosen"))
            if (nova["chosen"] != nova["first_fit"]
                    or nova["pagesizes"] != nova["fresh_pagesizes"]):
                # Nova's walk put a cell elsewhere, or fixed a symbolic
                # page size on a cell it tried first: gantt takes the
                # first assignment its per-cell answers allow, and the
                # size found on the cell chosen.
                quirks.append(name)
                continue
            compared += 1
            after = host_devices.after_instance(
                request, node, float(table.cpu_allocation_ratio[row]),
                float(table.ram_allocation_ratio[row]))
            got = _usage(after)
            if _has_threads(node):
                # Nova packs pinned CPUs onto sibling threads; gantt
                # takes as many, lowest first.
                for cells in (got, nova["cells"]):
                    for cell in cells:
                        cell["pinned_cpus"] = len(cell["pinned_cpus"])
            if got != nova["cells"]:
                wrong.append((name, "cells", got))
            table.replace_node(row, after)
            again = run_filter(cloud, nt.NUMATopologyFilter, case)[name]
            if _pair_fits(request, after, table, row) != nova["fits_again"]:
                wrong.append((name, "fits again"))
            want = (nova["passes_again"]
                    if nova["passes_again"] == assignable(
                        nova["fits_again"])
                    else assignable(nova["fits_again"]))
            if again != want:
                wrong.append((name, "passes again", again))
    assert compared >= 50 and unconsumed < compared // 2
    assert 1 <= len(quirks) <= 15
    assert wrong == [], "\n".join(map(repr, wrong))


def test_json_query_error_fails_select_destinations(cloud):
    # Nova's select_destinations fails with the filter's error; gantt's
    # fails with JsonQueryError (RPC callers get InvalidRequest), having
    # claimed nothing.
    placement = direct.PlacementDirect(cloud.store)
    uuids = [cloud_mod.add_host(cloud, placement, f"h{i}",
                                stats={"num_instances": "3"})
             for i in range(2)]
    cloud.set("filter_scheduler", "enabled_filters", ["JsonFilter"])
    scheduler = manager.Scheduler(cloud.conf, store=cloud.store,
                                  clock=lambda: cloud_mod.NOW)
    try:
        spec = gantt_spec({"project_id": "p", "user_id": "u",
                           "scheduler_hints": {"query": [
                               '["<", "$stats.num_instances", 5]']}})
        with pytest.raises(json_filter.JsonQueryError,
                           match="cannot be evaluated on host h"):
            scheduler.select_destinations(None, spec, [uuid_of("i1"),
                                                       uuid_of("i2")])
    finally:
        scheduler.close()
    for uuid in uuids:
        assert not any(placement.get_provider_usages(uuid)[1].values())
