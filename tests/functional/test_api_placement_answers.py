"""The REST API answers as OpenStack Placement 16 does, on every engine,
where a client could tell them apart:

- schema: a 400 for a body or query string that breaks the schema prints
  the schema part that failed, keys in the order of Placement's own
  schema dicts, at every microversion where a schema changes;
- route: a route used below its first microversion (GET
  /resource_classes/{name} at 1.0 and 1.1), a path that names nothing,
  a method a route lacks: Placement's 404 with nothing past the title,
  its 405 and Allow header;
- echo: an inventory write answers the record as given (allocation_ratio
  1 stays 1, 8.0 stays 8.0; the GET after, from the database, says 1.0
  and 8), and integral floats where integers go are stored as integers.

The expected answers are Placement's own, recorded in
fixtures/placement16/api_answers.json by make_api_answers.py (next to
it). Bodies are compared as JSON text with sorted keys, so that 1 and
1.0 differ.
"""

import json
import pathlib

import pytest

from placement.api import routes
from placement.api.schemas import inventories as inventories_schema
from tests.functional import api_helpers

FIXTURE = (pathlib.Path(__file__).parent / "fixtures" / "placement16"
           / "api_answers.json")
RECORDED = json.loads(FIXTURE.read_text())
CASES = {c["name"]: c for c in RECORDED["cases"]}
HEADERS = RECORDED["headers"]


def _names(group):
    return sorted(n for n, c in CASES.items() if c["group"] == group)


@pytest.fixture
def client(store):
    app, engine = api_helpers.make_app(store)
    # No default version: a request without one is 1.0, as recorded.
    yield api_helpers.Client(app, version=None)
    engine.close()


def _send(client, request):
    method, path, version, body = request
    response = client.request(method, path, body, version=version,
                              headers=HEADERS)
    data = json.loads(response.body) if response.body else None
    if isinstance(data, dict):
        for error in data.get("errors", ()):
            error.pop("request_id", None)
    return [response.status_int, data, response.headers.get("allow")]


def _typed(answer):
    """An answer as text in which 1 and 1.0 differ."""
    return json.dumps(answer, sort_keys=True)


def _replay(client, case):
    for request in case["setup"]:
        status, body, _ = _send(client, request)
        assert status < 300, (request, body)
    return [_send(client, request) for request in case["requests"]]


def _check(client, name):
    case = CASES[name]
    got = _replay(client, case)
    for request, want, have in zip(case["requests"], case["answers"], got,
                                   strict=True):
        assert _typed(have) == _typed(want), request


@pytest.mark.parametrize("name", _names("schema"))
def test_schema_error_is_placements(store, client, name):
    _check(client, name)


@pytest.mark.parametrize("name", _names("route"))
def test_route_error_is_placements(store, client, name):
    _check(client, name)


@pytest.mark.parametrize("name", _names("echo"))
def test_inventory_echo_is_placements(store, client, name):
    _check(client, name)


def test_fixture_shows_the_three_differences():
    """What the recorded answers say, in the terms of the issue."""
    # 1. The schema prints in Placement's order: type, properties,
    # required, then additionalProperties.
    [error] = CASES["rp_post_1.0"]["answers"][0][1]["errors"]
    printed = error["detail"].split(" in schema:", 1)[1]
    assert printed.index("'properties'") < printed.index("'required'") < (
        printed.index("'additionalProperties'"))
    # 2. GET /resource_classes/{name} before 1.2: nothing past the title.
    answers = CASES["rc_show"]["answers"]
    for status, body, _ in answers[:3]:
        assert status == 404
        assert body["errors"][0]["detail"] == (
            "The resource could not be found.\n\n   ")
    assert "No such resource class" in (
        answers[3][1]["errors"][0]["detail"])
    # 3. The ratio echoes as given; the GET after says 1.0.
    written, read = CASES["put_all_ratio_int_1_1.39"]["answers"]
    assert _typed(written[1]["inventories"]["VCPU"]["allocation_ratio"]) \
        == "1"
    assert _typed(read[1]["inventories"]["VCPU"]["allocation_ratio"]) \
        == "1.0"


def test_every_schema_step_is_recorded():
    """Each route with a body or query schema has a recorded 400 at each
    microversion where its schema changes (so a schema built in another
    order at some version cannot pass unseen)."""
    versions = {(c["requests"][0][0], c["requests"][0][1].split("?")[0],
                 c["requests"][0][2])
                for c in CASES.values() if c["group"] == "schema"}
    rp = "/resource_providers/c0ffee00-0000-4000-8000-000000000001"
    consumer = "/allocations/5e000000-0000-4000-8000-000000000001"
    steps = {
        ("POST", "/resource_providers"): ["1.0", "1.14"],
        ("PUT", rp): ["1.0", "1.14"],
        ("GET", "/resource_providers"): ["1.0", "1.3", "1.4", "1.14",
                                         "1.18"],
        ("PUT", rp + "/aggregates"): ["1.1", "1.19"],
        ("GET", "/usages"): ["1.9", "1.38"],
        ("PUT", consumer): ["1.0", "1.8", "1.12", "1.28", "1.34", "1.38"],
        ("POST", "/allocations"): ["1.13", "1.28", "1.34", "1.38"],
        ("GET", "/allocation_candidates"): [
            "1.10", "1.16", "1.17", "1.21", "1.25", "1.31", "1.33", "1.35",
            "1.36"],
        ("POST", "/reshaper"): ["1.30", "1.34", "1.38"],
        ("POST", rp + "/inventories"): ["1.0"],
        ("PUT", rp + "/inventories"): ["1.0"],
        ("PUT", rp + "/inventories/VCPU"): ["1.0"],
        ("PUT", rp + "/traits"): ["1.6"],
        ("GET", "/traits"): ["1.6"],
        ("POST", "/resource_classes"): ["1.2"],
        ("PUT", "/resource_classes/CUSTOM_A"): ["1.2"],
    }
    for (method, path), at in steps.items():
        for version in at:
            assert (method, path, version) in versions


def test_allow_lists_placements_order():
    """A 405's Allow header lists the route's methods in Placement's
    order, which is the order of routes.ROUTES."""
    methods = routes.ROUTES["/resource_providers/{uuid}"]
    assert list(methods) == ["GET", "DELETE", "PUT"]


def test_records_under_other_keys_are_still_checked(store, client):
    """Placement's schema leaves records under keys that are not class
    names unchecked (and answers 500 when one is not an object); gantt
    checks them once Placement's schema holds: a 400, nothing stored."""
    _replay(client, {"setup": CASES["put_all_ratio_absent_1.39"]["setup"],
                     "requests": []})
    before = api_helpers.snapshot(store)
    path = ("/resource_providers/c0ffee00-0000-4000-8000-000000000001"
            "/inventories")
    for record in (5, {"total": 0}):
        status, body, _ = _send(client, ["PUT", path, "1.39", {
            "resource_provider_generation": 0,
            "inventories": {"vcpu": record}}])
        assert status == 400
        detail = body["errors"][0]["detail"]
        assert "JSON does not validate" in detail
        assert "['inventories']['additionalProperties']" in detail
    assert api_helpers.snapshot(store) == before
    assert inventories_schema.PUT_ALL["properties"]["inventories"] == {
        "type": "object", "patternProperties": {
            "^[A-Z0-9_]+$": inventories_schema.RECORD}}
