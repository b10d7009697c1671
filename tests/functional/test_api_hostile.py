"""Hostile input gets a clear 4xx with the placement error body and
changes nothing: text that is not UTF-8, repeated query parameters,
bodies past the size limit or shorter than declared, and values too long
to repeat in a message.

Where a test asserts OpenStack Placement's answer, the expected value is
what openstack-placement 16.0.0 answered to the same request (run in
process on SQLite).
"""

import io
import json
import uuid as uuidlib

import pytest
import webob

from placement import errors as placement_errors
from placement.api import errors
from placement.db import store as store_mod
from placement.objects import (
    aggregates,
    allocations,
    inventories,
    providers,
    traits,
)
from tests import databases
from tests.functional import api_helpers

CONSUMER = str(uuidlib.UUID(int=3))
AGG_A = str(uuidlib.UUID(int=0xA1))
AGG_B = str(uuidlib.UUID(int=0xB2))
SURROGATE = b"\xed\xa0\x80"


def _safe_id(value):
    """A test id without ':' (which the gabbi plugin takes for one of
    its own tests) or '/'."""
    return str(value).replace(":", ".").replace("/", "")


def _error(response):
    body = response.json
    assert set(body) == {"errors"} and len(body["errors"]) == 1
    error = body["errors"][0]
    assert error["status"] == response.status_int
    assert error["request_id"] == response.headers["x-openstack-request-id"]
    return error


def _client(store):
    app, engine = api_helpers.make_app(store)
    return api_helpers.Client(app), engine


@pytest.fixture
def api(store):
    client, engine = _client(store)
    yield client
    engine.close()


def _provider_with_vcpus(api, name="rp1"):
    rp = api.post("/resource_providers", {"name": name}).json["uuid"]
    assert api.put(f"/resource_providers/{rp}/inventories", {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 8}}}).status_int == 200
    return rp


def _allocation_body(rp, project_id=b"p", user_id=b"u"):
    return (b'{"allocations": {"%s": {"resources": {"VCPU": 1}}}, '
            b'"project_id": "%s", "user_id": "%s", '
            b'"consumer_generation": null, "consumer_type": "INSTANCE"}'
            % (rp.encode(), project_id, user_id))


# Text that is not UTF-8


def test_raw_surrogate_bytes_are_a_400_that_changes_nothing(store, api):
    rp = _provider_with_vcpus(api)
    before = api_helpers.snapshot(store)
    writes = [
        ("POST", "/resource_providers", b'{"name": "a' + SURROGATE + b'"}',
         11),
        ("PUT", f"/resource_providers/{rp}",
         b'{"name": "b' + SURROGATE + b'"}', 11),
        ("PUT", f"/allocations/{CONSUMER}",
         _allocation_body(rp, project_id=b"p" + SURROGATE), 102),
        ("PUT", f"/allocations/{CONSUMER}",
         _allocation_body(rp, user_id=b"u" + SURROGATE), 118),
        ("POST", "/allocations", b'{"%s": %s}' % (
            CONSUMER.encode(),
            _allocation_body(rp, project_id=b"p" + SURROGATE)), 143),
        ("POST", "/allocations", b'{"%s": %s}' % (
            CONSUMER.encode(),
            _allocation_body(rp, user_id=b"u" + SURROGATE)), 159),
    ]
    for method, path, raw, position in writes:
        response = api.request(method, path, raw=raw)
        assert response.status_int == 400, (path, response.text)
        # OpenStack Placement 16's words for the same bodies.
        assert _error(response)["detail"].endswith(
            f"Malformed JSON: 'utf-8' codec can't decode byte 0xed in "
            f"position {position}: invalid continuation byte  ")
    assert api_helpers.snapshot(store) == before


def test_escaped_surrogates_are_a_400(store, api):
    # OpenStack Placement 16 answers 500 here (its database refuses the
    # string); gantt says what is wrong.
    rp = _provider_with_vcpus(api)
    before = api_helpers.snapshot(store)
    for raw in (b'{"name": "a\\ud800"}', b'{"name": "\\udfff"}'):
        response = api.post("/resource_providers", raw=raw)
        assert response.status_int == 400
        assert "Malformed JSON" in _error(response)["detail"]
    response = api.put(f"/allocations/{CONSUMER}", raw=_allocation_body(
        rp, project_id=b"p\\ud800"))
    assert response.status_int == 400
    assert api_helpers.snapshot(store) == before


@pytest.mark.parametrize("raw, detail", [
    # Bodies are UTF-8 only, as in OpenStack Placement 16 (same words).
    (json.dumps({"name": "u16"}).encode("utf-16"),
     "Malformed JSON: 'utf-8' codec can't decode byte 0xff in position 0"),
    (b"\xef\xbb\xbf" + json.dumps({"name": "bom"}).encode(),
     "Malformed JSON: Unexpected UTF-8 BOM"),
], ids=["utf-16", "utf-8 bom"])
def test_bodies_are_utf8(sqlite_store, raw, detail):
    client, engine = _client(sqlite_store)
    response = client.post("/resource_providers", raw=raw)
    engine.close()
    assert response.status_int == 400
    assert detail in _error(response)["detail"]


# Repeated query parameters


@pytest.fixture(scope="module")
def cloud(tmp_path_factory):
    """Two providers with VCPU and MEMORY_MB: rp1 has trait CUSTOM_A and
    is in aggregate A; a consumer of each, of two projects and types."""
    path = tmp_path_factory.mktemp("hostile") / "placement.sqlite"
    store = store_mod.Store.open(databases.make_conf(f"sqlite:///{path}"))
    uuids = {}
    for name in ("rp1", "rp2"):
        uuids[name] = providers.create(store, name).uuid
        inventories.replace_all(store, uuids[name], None, [
            inventories.Inventory("VCPU", 8),
            inventories.Inventory("MEMORY_MB", 1024)])
    traits.ensure(store, "CUSTOM_A")
    traits.set_for_provider(store, uuids["rp1"], None, ["CUSTOM_A"])
    aggregates.set_for_provider(store, uuids["rp1"], [AGG_A])
    for n, (name, project, ctype) in enumerate(
            (("rp1", "p1", "INSTANCE"), ("rp2", "p2", "MIGRATION"))):
        allocations.replace(store, [allocations.ConsumerAllocations(
            str(uuidlib.UUID(int=100 + n)), {uuids[name]: {"VCPU": 1}},
            project, "u" + project[1], consumer_type=ctype)])
    client, engine = _client(store)
    yield client, uuids
    engine.close()
    store.dispose()


def _get(cloud, path, version="latest"):
    client, uuids = cloud
    for name, uuid in uuids.items():
        path = path.replace(name.upper(), uuid)
    return client.get(path, version=version)


AC = "/allocation_candidates?resources=VCPU:1&"
TWO_GROUPS = "/allocation_candidates?resources1=VCPU:1&resources2=MEMORY_MB:1&"


@pytest.mark.parametrize("path, version, key, upstream", [
    # What OpenStack Placement 16 does instead, for each.
    (AC[:-1] + "&resources=VCPU:100", "latest", "resources",
     "200, the last wins"),
    (TWO_GROUPS + "resources1=VCPU:100&group_policy=none", "latest",
     "resources1", "200, the last wins"),
    (AC + "in_tree=RP1&in_tree=RP2", "latest", "in_tree",
     "200, the last wins"),
    (AC + "in_tree1=RP1&in_tree1=RP2&resources1=VCPU:1", "1.31",
     "in_tree1", "200, the last wins"),
    (AC + "root_required=CUSTOM_A&root_required=CUSTOM_A", "latest",
     "root_required", "400, the same"),
    ("/resource_providers?name=rp1&name=rp2", "latest", "name",
     "200, the last wins"),
    ("/resource_providers?uuid=RP1&uuid=RP2", "latest", "uuid",
     "200, the last wins"),
    ("/resource_providers?resources=VCPU:100&resources=VCPU:1", "latest",
     "resources", "200, the last wins"),
    ("/resource_providers?in_tree=RP1&in_tree=RP2", "latest", "in_tree",
     "200, the last wins"),
    ("/traits?name=in:CUSTOM_A&name=startswith:HW", "latest", "name",
     "200, the last wins"),
    ("/traits?associated=bogus&associated=true", "latest", "associated",
     "200, the last wins"),
    ("/usages?project_id=p1&project_id=p2", "latest", "project_id",
     "200, the last wins"),
    ("/usages?project_id=p1&user_id=u1&user_id=u2", "latest", "user_id",
     "200, the last wins"),
    ("/usages?project_id=p1&consumer_type=INSTANCE"
     "&consumer_type=MIGRATION", "1.38", "consumer_type",
     "200, the last wins"),
], ids=_safe_id)
def test_a_single_valued_parameter_given_twice_is_a_400(
        cloud, path, version, key, upstream):
    response = _get(cloud, path, version)
    assert response.status_int == 400, response.text
    error = _error(response)
    assert error["detail"].endswith(
        f"Query parameter '{key}' may be specified only once.  ")
    assert error["code"] == placement_errors.ILLEGAL_DUPLICATE_QUERYPARAM


@pytest.mark.parametrize("query, detail", [
    # OpenStack Placement 16: 500 (it checks the last value, reads the
    # first).
    ("limit=1.5&limit=5", "'1.5' does not match '^[1-9][0-9]*$'"),
    # 200 with no candidates.
    ("limit=-3&limit=5", "'-3' does not match '^[1-9][0-9]*$'"),
    # 400, the same words.
    ("limit=5&limit=1.5", "'1.5' does not match '^[1-9][0-9]*$'"),
], ids=_safe_id)
def test_every_limit_is_checked(cloud, query, detail):
    response = _get(cloud, AC + query)
    assert response.status_int == 400
    assert f"Invalid query string parameters: {detail}" in _error(
        response)["detail"]


def test_every_group_policy_is_checked(cloud):
    # OpenStack Placement 16 accepts this one (it checks the last value
    # and uses the first).
    response = _get(cloud, TWO_GROUPS + "group_policy=bogus"
                                        "&group_policy=none")
    assert response.status_int == 400
    assert ("'bogus' is not one of ['none', 'isolate']"
            in _error(response)["detail"])


@pytest.mark.parametrize("path, version, count", [
    # Placement's own API tests ask for these answers (the first limit,
    # the first group_policy, the last required before 1.39); these
    # counts are OpenStack Placement 16's.
    (AC + "limit=1&limit=5", "latest", 1),
    (AC + "limit=5&limit=1", "latest", 2),
    (TWO_GROUPS + "group_policy=none&group_policy=isolate", "latest", 2),
    (TWO_GROUPS + "group_policy=isolate&group_policy=none", "latest", 0),
    (AC + "required=CUSTOM_A&required=!CUSTOM_A", "1.38", 1),
    # Parameters that are many: every value counts.
    (AC + f"member_of={AGG_A}&member_of={AGG_B}", "latest", 0),
    (TWO_GROUPS + "group_policy=none&same_subtree=1,2&same_subtree=1,2",
     "latest", 2),
], ids=_safe_id)
def test_repeated_parameters_placement_takes(cloud, path, version, count):
    response = _get(cloud, path, version)
    assert response.status_int == 200, response.text
    assert len(response.json["allocation_requests"]) == count


def test_required_twice_on_providers(cloud):
    path = "/resource_providers?required=CUSTOM_A&required=!CUSTOM_A"
    names = [p["name"] for p in _get(cloud, path, "1.38").json[
        "resource_providers"]]
    assert names == ["rp2"]  # the last one counts, as upstream
    assert _get(cloud, path, "1.39").json["resource_providers"] == []


# Body size


def _with_limit(store, limit):
    store.conf.set_override("max_request_body_size", limit, group="api")
    return _client(store)


def _stream_request(path, body, length=None, method="POST"):
    """A request whose body comes as from a server: a stream, with
    ``length`` as its content-length (none: a chunked body)."""
    req = webob.Request.blank(path, method=method)
    req.environ["wsgi.input"] = io.BufferedReader(io.BytesIO(body))
    if length is None:
        req.environ.pop("CONTENT_LENGTH", None)
        req.environ["wsgi.input_terminated"] = True
    else:
        req.environ["CONTENT_LENGTH"] = str(length)
    req.environ["CONTENT_TYPE"] = "application/json"
    req.headers.update({"x-auth-token": "admin", "accept": "application/json",
                        "openstack-api-version": "placement latest"})
    return req


def test_a_body_past_the_limit_is_a_413_that_changes_nothing(store):
    client, engine = _with_limit(store, 100)
    before = api_helpers.snapshot(store)
    body = json.dumps({"name": "x" * 100}).encode()
    declared = client.post("/resource_providers", raw=body)
    # Undeclared length (chunked): read no further than past the limit.
    chunked = _stream_request("/resource_providers", body).get_response(
        client.app)
    # A route that reads no body refuses the declared length all the same.
    other = client.request("PUT", "/traits/CUSTOM_BIG", raw=body)
    after = api_helpers.snapshot(store)
    fits = client.post("/resource_providers", {"name": "x" * 70})
    fits_chunked = _stream_request(
        "/resource_providers", json.dumps({"name": "y" * 70}).encode()
    ).get_response(client.app)
    engine.close()
    for response in (declared, chunked, other):
        assert response.status_int == 413, response.text
        assert _error(response)["detail"].endswith(
            "The request body is larger than 100 bytes, the most this "
            "service accepts ([api] max_request_body_size).  ")
    assert after == before
    assert fits.status_int == 200 and fits_chunked.status_int == 200


def test_no_limit_when_zero(sqlite_store):
    client, engine = _with_limit(sqlite_store, 0)
    response = client.post("/resource_providers",
                           {"name": "a", "pad": "x" * 2_000_000})
    engine.close()
    assert response.status_int == 400  # read, and refused by the schema
    assert "Additional properties" in _error(response)["detail"]


def test_the_default_limit_refuses_two_megabytes(sqlite_store):
    client, engine = _client(sqlite_store)
    response = client.post("/resource_providers",
                           {"name": "x" * 2_000_000})
    engine.close()
    assert response.status_int == 413
    assert len(response.body) < 1000


def test_a_body_shorter_than_declared_is_a_400(store):
    client, engine = _client(store)
    before = api_helpers.snapshot(store)
    response = _stream_request("/resource_providers", b'{"name": "x"}',
                               length=100).get_response(client.app)
    engine.close()
    assert response.status_int == 400
    assert _error(response)["detail"].endswith(
        "The request body ended before the 100 bytes its content-length "
        "header declares.  ")
    assert api_helpers.snapshot(store) == before


# What error messages repeat of the request


def test_a_long_value_is_clipped_in_the_message(sqlite_store):
    client, engine = _client(sqlite_store)
    long_name = client.post("/resource_providers",
                            {"name": "x" * 900_000})
    many_keys = client.post("/resource_providers", {
        "name": "a", **{f"key{i}": i for i in range(20_000)}})
    long_items = client.post("/resource_providers", {
        "name": [["y" * 1000] * 100] * 5})
    long_key = client.get("/resource_providers?" + "k" * 5000 + "=1&"
                          + "k" * 5000 + "=2")
    engine.close()
    for response in (long_name, many_keys, long_items, long_key):
        assert response.status_int == 400
        assert len(response.body) < 4000, response.body[:300]
    detail = _error(long_name)["detail"]
    assert "' is too long" in detail
    assert "characters left out" in detail
    assert "Failed validating 'maxLength'" in detail
    assert "(19993 more)" in _error(many_keys)["detail"]
    assert "more)" in _error(long_items)["detail"]


def test_clip():
    assert errors.clip("short") == "short"
    clipped = errors.clip("a" * 50 + "b" * 50, 20)
    assert clipped == "aaaaaaaaaa...(80 characters left out)...bbbbbbbbbb"
    # The whole detail of any error is bounded too.
    environ = {}
    response = errors.to_response(environ, 400, "z" * 100_000)
    assert len(response.detail) < errors.MAX_DETAIL + 100


def test_an_error_that_repeats_half_a_surrogate_pair(sqlite_store):
    # Only an in-process caller can set such a header (servers decode
    # headers as latin-1); the message shows the escape, and no 500.
    client, engine = _client(sqlite_store)
    response = client.get("/", version="\ud800")
    engine.close()
    assert response.status_int == 400
    assert "\\ud800" in _error(response)["detail"]


@pytest.mark.parametrize("raw, detail", [
    (b"[" * 1000 + b"]" * 1000, "Malformed JSON: maximum recursion depth"),
    # Parsed, but too deep to print in full: the message elides it.
    (b'{"name": ' + b"[" * 900 + b"]" * 900 + b"}",
     "On instance['name']:     [[[['[...]']]]]"),
], ids=["deeper than json reads", "deeper than a message shows"])
def test_deep_nesting_is_a_400(sqlite_store, raw, detail):
    # OpenStack Placement 16 answers 500 to both.
    client, engine = _client(sqlite_store)
    response = client.post("/resource_providers", raw=raw)
    engine.close()
    assert response.status_int == 400
    assert detail in _error(response)["detail"].replace("\n", " ")
