"""Random requests at every route: no request gets a 5xx, and a request
that fails (4xx) leaves every table exactly as it was (every engine).

Bodies are random JSON, random bytes, or valid bodies with random parts
replaced, so that the search reaches past the schemas into the objects
and the database; paths, query strings, microversions and headers are
random too, mixed with values that name things that exist.
"""

import json
import os
import urllib.parse
import uuid as uuidlib

import pytest
import webob
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placement.api import routes
from placement.objects import (
    aggregates,
    allocations,
    inventories,
    providers,
    resource_classes,
    traits,
)
from tests.functional import api_helpers

RP = str(uuidlib.UUID(int=1))
CHILD = str(uuidlib.UUID(int=2))
CONSUMER = str(uuidlib.UUID(int=3))
AGG = str(uuidlib.UUID(int=4))
OTHER = str(uuidlib.UUID(int=5))

# Strings that have broken servers: NUL (PostgreSQL refuses it), long
# ones (column limits), non-ASCII, and a lone surrogate (not Unicode).
ODD = st.sampled_from(["a\x00b", "x" * 300, "CUSTOM_" + "A" * 300, "ü",
                       "\U0001f600", " ", "%", "\\", "'"])
TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | ODD
NAMES = st.sampled_from(["VCPU", "DISK_GB", "MEMORY_MB", "CUSTOM_GOLD",
                         "CUSTOM_NEW", "HW_CPU_X86_AVX", "vcpu", ""])
UUIDS = st.sampled_from([RP, CHILD, CONSUMER, AGG, OTHER, RP.upper(),
                         RP.replace("-", ""), "not-a-uuid"])

JSON_LEAF = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
             | st.floats(allow_nan=False, allow_infinity=False)
             | TEXT | NAMES | UUIDS | st.just("\ud800"))
JSON = st.recursive(JSON_LEAF, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(TEXT | NAMES | UUIDS, inner,
                                      max_size=3), max_leaves=8)


def _allocation_body():
    return {"allocations": {RP: {"resources": {"VCPU": 1}}},
            "project_id": "p", "user_id": "u", "consumer_generation": None,
            "consumer_type": "INSTANCE", "mappings": {"": [RP]}}


# A valid body per (method, route) to mutate.
TEMPLATES = {
    ("POST", "/resource_providers"): {
        "name": "new", "uuid": OTHER, "parent_provider_uuid": RP},
    ("PUT", "/resource_providers/{uuid}"): {
        "name": "renamed", "parent_provider_uuid": None},
    ("POST", "/resource_providers/{uuid}/inventories"): {
        "resource_class": "DISK_GB", "total": 100, "reserved": 1,
        "min_unit": 1, "max_unit": 10, "step_size": 1,
        "allocation_ratio": 1.5},
    ("PUT", "/resource_providers/{uuid}/inventories"): {
        "resource_provider_generation": 1,
        "inventories": {"VCPU": {"total": 8}, "DISK_GB": {"total": 10}}},
    ("PUT", "/resource_providers/{uuid}/inventories/{resource_class}"): {
        "resource_provider_generation": 1, "total": 8, "reserved": 0},
    ("PUT", "/resource_providers/{uuid}/aggregates"): {
        "aggregates": [AGG, OTHER], "resource_provider_generation": 1},
    ("PUT", "/resource_providers/{uuid}/traits"): {
        "traits": ["CUSTOM_GOLD", "HW_CPU_X86_AVX"],
        "resource_provider_generation": 1},
    ("POST", "/resource_classes"): {"name": "CUSTOM_NEW"},
    ("PUT", "/resource_classes/{name}"): {"name": "CUSTOM_NEWER"},
    ("PUT", "/allocations/{consumer_uuid}"): _allocation_body(),
    ("POST", "/allocations"): {CONSUMER: _allocation_body()},
    ("POST", "/reshaper"): {
        "inventories": {RP: {"resource_provider_generation": 1,
                             "inventories": {"VCPU": {"total": 8}}}},
        "allocations": {CONSUMER: _allocation_body()}},
}

QUERY_KEYS = st.sampled_from([
    "resources", "resources1", "resources_X", "required", "required1",
    "member_of", "member_of1", "in_tree", "in_tree1", "limit",
    "group_policy", "root_required", "same_subtree", "name", "uuid",
    "project_id", "user_id", "consumer_type", "associated", "bogus"])
QUERY_VALUES = st.sampled_from([
    "VCPU:1", "VCPU:1,DISK_GB:1", "VCPU:0", "VCPU:99999999999999999999999",
    "VCPU", ":", "", "CUSTOM_GOLD", "!CUSTOM_GOLD", "in:CUSTOM_GOLD,X",
    f"in:{AGG}", f"!{AGG}", f"!in:{AGG},{OTHER}", AGG, RP, "none",
    "isolate", "1", "0", "-1", "_X,1", "true", "startswith:CUSTOM",
    "in:VCPU", "all", "unknown", "INSTANCE"]) | TEXT



@st.composite
def mostly(draw, usual, odd, odds=0.15):
    """``usual``, or now and then ``odd``: most requests should get past
    the first checks to reach the deeper ones. (A coin from st.randoms:
    st.one_of would pick the odd branch far more often.)"""
    coin = draw(st.randoms(use_true_random=False)).random()
    return draw(odd if coin < odds else usual)


VERSIONS = mostly(st.sampled_from(
    ["latest"] + [f"1.{n}" for n in range(40)]), st.none() | TEXT)
CONTENT_TYPES = mostly(st.just("application/json"), st.sampled_from(
    ["application/json; charset=utf-8", "text/plain", None]))
ACCEPTS = mostly(st.just("application/json"), st.sampled_from(
    ["*/*", "text/html", "text/plain", ""]))


def _fill(template, draw):
    """The route template with each {field} drawn."""
    values = {
        "uuid": draw(mostly(st.sampled_from([RP, CHILD]), UUIDS | TEXT)),
        "resource_class": draw(mostly(NAMES, TEXT)),
        "name": draw(mostly(NAMES, TEXT)),
        "consumer_uuid": draw(mostly(st.sampled_from([CONSUMER, OTHER]),
                                     UUIDS | TEXT)),
    }
    path = template
    for field, value in values.items():
        path = path.replace("{%s}" % field,
                            urllib.parse.quote(value, safe="") or "x")
    return path


@st.composite
def _mutated(draw, value, depth=0):
    """``value``, often intact, else with random parts replaced, dropped
    or added."""
    if depth > 3 or draw(st.integers(0, 5)) == 0:
        return draw(JSON)
    action = draw(st.sampled_from(["keep", "keep", "replace", "drop",
                                   "add"]))
    if action == "keep":
        return value
    if isinstance(value, dict) and value:
        out = dict(value)
        key = draw(st.sampled_from(sorted(out)))
        if action == "replace":
            out[key] = draw(_mutated(out[key], depth + 1))
        elif action == "drop":
            del out[key]
        else:
            out[draw(TEXT | NAMES)] = draw(JSON)
        return out
    if isinstance(value, list) and value:
        out = list(value)
        index = draw(st.integers(0, len(out) - 1))
        out[index] = draw(_mutated(out[index], depth + 1))
        return out
    return draw(JSON_LEAF)


@st.composite
def requests(draw):
    template = draw(st.sampled_from(sorted(routes.ROUTES)))
    method = draw(mostly(st.sampled_from(sorted(routes.ROUTES[template])),
                         st.sampled_from(["GET", "PUT", "POST", "DELETE",
                                          "PATCH", "OPTIONS"])))
    path = _fill(template, draw)
    query = draw(mostly(st.just([]), st.lists(
        st.tuples(QUERY_KEYS, QUERY_VALUES), min_size=1, max_size=4)))
    if template in ("/allocation_candidates", "/resource_providers"):
        query = [("resources", draw(QUERY_VALUES))] + query
    kind = draw(mostly(st.just("mutated"),
                       st.sampled_from(["none", "bytes", "json"])))
    body = None
    if kind == "bytes":
        body = draw(st.binary(max_size=40))
    elif kind == "json":
        body = json.dumps(draw(JSON)).encode()
    elif (method, template) in TEMPLATES:
        body = json.dumps(draw(_mutated(
            TEMPLATES[(method, template)]))).encode()
    if body is not None and draw(st.integers(0, 5)) == 0:
        # Big numbers as JSON has them, past any integer column.
        body = body.replace(b"1", b"1" + b"0" * draw(st.integers(0, 25)))
    headers = {"accept": draw(ACCEPTS)}
    version = draw(VERSIONS)
    if version is not None:
        headers["openstack-api-version"] = f"placement {version}"
    content_type = draw(CONTENT_TYPES)
    if content_type and body is not None:
        headers["content-type"] = content_type
    return method, path, query, body, headers


def _seed(store):
    resource_classes.ensure(store, "CUSTOM_GOLD")
    traits.ensure(store, "CUSTOM_GOLD")
    providers.create(store, "root", uuid=RP)
    providers.create(store, "child", uuid=CHILD, parent_uuid=RP)
    inventories.replace_all(store, RP, None, [
        inventories.Inventory("VCPU", 8),
        inventories.Inventory("CUSTOM_GOLD", 4)])
    traits.set_for_provider(store, RP, None, ["CUSTOM_GOLD"])
    aggregates.set_for_provider(store, RP, [AGG])
    allocations.replace(store, [allocations.ConsumerAllocations(
        CONSUMER, {RP: {"VCPU": 2}}, "p", "u", consumer_type="INSTANCE")])


@pytest.fixture
def fuzz_app(store):
    _seed(store)
    app, engine = api_helpers.make_app(store)
    yield app
    engine.close()


# GANTT_FUZZ_EXAMPLES=5000 GANTT_FUZZ_RANDOM=1 explores further.
@settings(max_examples=int(os.environ.get("GANTT_FUZZ_EXAMPLES", 250)),
          deadline=None,
          derandomize=not os.environ.get("GANTT_FUZZ_RANDOM"),
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(request=requests())
def test_no_request_fails_the_server(store, fuzz_app, request):
    method, path, query, body, headers = request
    full = path + ("?" + urllib.parse.urlencode(query) if query else "")
    before = api_helpers.snapshot(store)
    req = webob.Request.blank(full, method=method)
    req.headers["x-auth-token"] = "admin"
    for name, value in headers.items():
        req.headers[name] = value
    if body is not None:
        req.body = body
    response = req.get_response(fuzz_app)
    assert response.status_int < 500, (method, full, body, response.text)
    if response.status_int >= 400:
        assert api_helpers.snapshot(store) == before, (
            method, full, body, response.status)
