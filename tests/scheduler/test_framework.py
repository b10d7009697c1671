"""The filter and weigher framework: the explicit registry, the filter
chain's run-once masks kept by the caller, and a filter's RequestError
reported as the scheduler's InvalidRequestSpec."""

import random
import uuid as uuidlib

import numpy as np
import pytest

from filters import base as filters_base
from filters import compute, json_filter
from placement import direct
from scheduler import errors, framework, manager
from tests.scheduler import cloud as cloud_mod
from weighers import base as weighers_base
from weighers import ram


class OnlyN1(filters_base.BaseFilter):
    """A plugin known to one registry only: passes node n1."""

    name = "OnlyN1"
    run_filter_once_per_request = True

    def mask(self, request, rows):
        return np.array([request.table.nodenames[r] == "n1" for r in rows],
                        bool)


class Refuses(filters_base.BaseFilter):
    name = "Refuses"

    def mask(self, request, rows):
        raise filters_base.RequestError("scheduler_hints.x: not today")


class Lightest(weighers_base.BaseWeigher):
    name = "Lightest"
    multiplier_option = "ram_weight_multiplier"

    def raw(self, request, rows):
        return -request.table.free_ram_mb[rows].astype(float)


def test_discovered_registry_knows_every_builtin_plugin():
    registry = framework.Registry.discover()
    assert registry.filters["ComputeFilter"] is compute.ComputeFilter
    assert registry.filters["JsonFilter"] is json_filter.JsonFilter
    assert registry.weighers["RAMWeigher"] is ram.RAMWeigher
    assert "RAMWeigher" in registry.builtin_weighers
    # The shared maths modules define no plugin.
    assert not {"numa_fit", "pci_fit"} & set(registry.filters)


def test_an_explicit_registry_builds_the_chains(cloud):
    registry = framework.Registry(
        {"OnlyN1": OnlyN1}, {"Lightest": Lightest}, ["Lightest"])
    cloud.set("filter_scheduler", "enabled_filters", ["OnlyN1"])
    cloud.set("filter_scheduler", "weight_classes", ["all"])
    filters = registry.filter_chain(cloud.conf)
    weighers = registry.weigher_chain(cloud.conf)
    assert [type(f) for f in filters.filters] == [OnlyN1]
    assert [type(w) for w in weighers.weighers] == [Lightest]


def test_unknown_names_list_the_registry_s_own():
    registry = framework.Registry({"OnlyN1": OnlyN1}, {}, [])
    conf = type("Conf", (), {})()
    conf.filter_scheduler = type("FS", (), {
        "enabled_filters": ["OnlyN1", "Nope"], "weight_classes": []})()
    with pytest.raises(errors.SchedulerError,
                       match="unknown filter Nope; known: OnlyN1"):
        registry.filter_chain(conf)


def test_all_weighers_means_the_builtin_ones(cloud):
    registry = framework.Registry(
        {}, {"Lightest": Lightest, "RAMWeigher": ram.RAMWeigher},
        ["RAMWeigher"])
    cloud.set("filter_scheduler", "weight_classes",
              ["all", "Lightest", "nova.scheduler.weights.ram.RAMWeigher"])
    assert registry.weigher_names(cloud.conf) == ["RAMWeigher", "Lightest"]


def test_run_once_masks_are_the_caller_s(cloud):
    for name in ("n1", "n2"):
        cloud.node(name)
    chain = framework.FilterChain([OnlyN1(cloud.conf)])
    request = cloud.request()
    rows = cloud.rows("n1", "n2")
    once = {}
    passed, runs = chain.run(request, rows, once, first=True)
    assert cloud.names(passed) == ["n1"]
    assert list(once) == ["OnlyN1"]
    # Later instances reuse the mask; a fresh dict is a fresh request.
    again, _ = chain.run(request, rows, once, first=False)
    assert cloud.names(again) == ["n1"]
    skipped, runs = chain.run(request, rows, {}, first=False)
    assert cloud.names(skipped) == ["n1", "n2"] and runs == []


def test_a_later_instance_s_rows_are_looked_up_in_any_order(cloud):
    for name in ("n0", "n1", "n2", "n1b"):
        cloud.node(name)
    chain = framework.FilterChain([OnlyN1(cloud.conf)])
    request = cloud.request()
    once = {}
    chain.run(request, cloud.rows("n2", "n1", "n0"), once, first=True)
    # Unsorted, repeated, and a row past every row the first instance
    # had (n1b, added after it): only what the filter passed counts.
    later = np.array([cloud.rows("n1b")[0], *cloud.rows("n1", "n0", "n1")])
    passed, runs = chain.run(request, later, once, first=False)
    assert cloud.names(passed) == ["n1", "n1"]
    assert (runs[0].before, runs[0].after) == (4, 2)


def test_a_filter_request_error_is_an_invalid_request_spec(cloud):
    cloud.node("n1")
    chain = framework.FilterChain([Refuses(cloud.conf)])
    with pytest.raises(errors.InvalidRequestSpec) as caught:
        chain.run(cloud.request(), cloud.rows(), {}, first=True)
    error = caught.value
    # Still the filter's own error, with its message.
    assert isinstance(error, filters_base.RequestError)
    assert error.message == "scheduler_hints.x: not today"
    assert str(error) == "scheduler_hints.x: not today"
    assert type(error).__name__ == "RequestError"


def test_the_conversion_keeps_the_filter_s_class_and_attributes():
    original = json_filter.JsonQueryError("scheduler_hints.query: bad")
    original.extra = 42
    converted = errors.from_filter(original)
    assert isinstance(converted, json_filter.JsonQueryError)
    assert isinstance(converted, errors.InvalidRequestSpec)
    assert (converted.message, converted.extra) == (
        "scheduler_hints.query: bad", 42)
    # One class per filter error class.
    assert type(errors.from_filter(original)) is type(converted)


def test_scheduler_uses_the_registry_it_is_given(cloud):
    placement = direct.PlacementDirect(cloud.store)
    for name, memory in (("n0", 16384), ("n1", 4096), ("n2", 8192)):
        cloud_mod.add_host(cloud, placement, name, memory_mb=memory)
    cloud.set("filter_scheduler", "enabled_filters", ["OnlyN1"])
    registry = framework.Registry(
        {"OnlyN1": OnlyN1}, {"RAMWeigher": ram.RAMWeigher},
        ["RAMWeigher"])
    s = manager.Scheduler(cloud.conf, store=cloud.store,
                          rng=random.Random(7), registry=registry,
                          clock=lambda: cloud_mod.NOW)
    try:
        [[chosen]] = s.select_destinations(
            None, {"flavor": {"vcpus": 1, "memory_mb": 512, "root_gb": 1},
                   "project_id": "p", "user_id": "u"},
            [str(uuidlib.uuid4())], return_alternates=False)
    finally:
        s.close()
    assert chosen.nodename == "n1"
