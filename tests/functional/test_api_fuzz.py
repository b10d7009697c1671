"""Random requests at every route of the REST API, in process, on every
engine: no request gets a 5xx, every error has the placement error body,
and a request that fails (4xx) leaves every table exactly as it was.

A request is a route of placement/api/routes.py with its path fields
filled (mostly with things that exist), a method (mostly one the route
has), a microversion, headers (some hostile: lying content lengths,
odd media types and version headers), a query string (known parameters,
repeated, with hostile values and raw percent escapes) and a body: one
drawn from the route's real JSON schema at the request's microversion,
a valid example with parts replaced, random JSON, random bytes, or a
valid body made hostile (raw surrogate bytes in a string, UTF-16, deep
nesting, numbers past any column). Most requests are close enough to
valid to reach the objects and the database.

The strategies and checks are shared with benchmarks/api_fuzz.py, which
runs many more of them.
"""

import functools
import io
import json
import os
import urllib.parse
import uuid as uuidlib

import pytest
import webob
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placement.api import microversion, routes
from placement.api.schemas import aggregates as aggregates_schema
from placement.api.schemas import allocations as allocations_schema
from placement.api.schemas import common
from placement.api.schemas import inventories as inventories_schema
from placement.api.schemas import reshaper as reshaper_schema
from placement.api.schemas import resource_classes as rc_schema
from placement.api.schemas import resource_providers as rp_schema
from placement.api.schemas import traits as traits_schema
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
# ones (column limits), non-ASCII, a lone surrogate (not Unicode), markup
# and escapes that a message could echo.
ODD = st.sampled_from([
    "a\x00b", "x" * 300, "CUSTOM_" + "A" * 300, "ü", "\U0001f600", " ",
    "%", "\\", "'", "\ud800", "<b>x</b>", "\r\n", "../..", "x" * 5000,
    "\u202e", "e\u0301"])
TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | ODD
NAMES = st.sampled_from(["VCPU", "DISK_GB", "MEMORY_MB", "CUSTOM_GOLD",
                         "CUSTOM_NEW", "HW_CPU_X86_AVX", "vcpu", ""])
CUSTOM_NAMES = st.sampled_from(["CUSTOM_GOLD", "CUSTOM_NEW",
                                "CUSTOM_NEWER"])
KNOWN_UUIDS = st.sampled_from([RP, CHILD, CONSUMER, AGG, OTHER])
UUIDS = st.sampled_from([RP, CHILD, CONSUMER, AGG, OTHER, RP.upper(),
                         RP.replace("-", ""), "not-a-uuid"])

JSON_LEAF = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
             | st.floats(allow_nan=False, allow_infinity=False)
             | TEXT | NAMES | UUIDS)
JSON = st.recursive(JSON_LEAF, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(TEXT | NAMES | UUIDS, inner,
                                      max_size=3), max_leaves=8)


@st.composite
def mostly(draw, usual, odd, odds=0.15):
    """``usual``, or now and then ``odd``: most requests should get past
    the first checks to reach the deeper ones. (A coin from st.randoms:
    st.one_of would pick the odd branch far more often.)"""
    coin = draw(st.randoms(use_true_random=False)).random()
    return draw(odd if coin < odds else usual)


# Bodies from the real schemas


def _key_strategy(pattern):
    if pattern == common.UUID_KEY:
        return mostly(KNOWN_UUIDS, UUIDS)
    if pattern == common.NAME_PATTERN:
        return mostly(NAMES.filter(bool), TEXT)
    return st.from_regex(pattern, fullmatch=True)


def _string(schema):
    if schema.get("format") == "uuid":
        return mostly(KNOWN_UUIDS, UUIDS)
    pattern = schema.get("pattern")
    if pattern == common.CUSTOM_PATTERN:
        return CUSTOM_NAMES
    if pattern and pattern.startswith(common.NAME_PATTERN):
        return NAMES.filter(bool)
    if pattern:
        return st.from_regex(pattern, fullmatch=True)
    low = schema.get("minLength", 0)
    high = max(low, min(schema.get("maxLength", 12), 12))
    return mostly(st.sampled_from(["new", "p", "u", "root", "child"]),
                  st.text(min_size=low, max_size=high))


def _integer(schema):
    low = schema.get("minimum", 0)
    high = schema.get("maximum", 2**31 - 1)
    return mostly(st.integers(low, min(high, low + 16)),
                  st.integers(low, high))


def _object(schema):
    props = schema.get("properties", {})
    required = set(schema.get("required", ()))
    fixed = st.fixed_dictionaries(
        {k: from_schema(v) for k, v in props.items() if k in required},
        optional={k: from_schema(v) for k, v in props.items()
                  if k not in required})
    patterns = schema.get("patternProperties")
    if not patterns:
        return fixed
    pattern, item = next(iter(patterns.items()))
    extra = st.dictionaries(_key_strategy(pattern), from_schema(item),
                            min_size=schema.get("minProperties", 0),
                            max_size=2)
    return st.builds(lambda a, b: {**a, **b}, fixed, extra)


def from_schema(schema):
    """Values that mostly satisfy ``schema`` (the part of JSON schema
    that placement/api/schemas uses), naming things that exist where the
    schema allows."""
    if "anyOf" in schema:
        return st.one_of([from_schema(s) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kinds = schema.get("type", "object")
    if isinstance(kinds, list):
        return st.one_of([from_schema({**schema, "type": kind})
                          for kind in kinds])
    if kinds == "object":
        return _object(schema)
    if kinds == "array":
        return st.lists(from_schema(schema.get("items", {})),
                        min_size=schema.get("minItems", 0), max_size=3,
                        unique_by=(str if schema.get("uniqueItems")
                                   else None))
    if kinds == "string":
        return _string(schema)
    if kinds == "integer":
        return _integer(schema)
    if kinds == "number":
        return mostly(st.sampled_from([1.0, 1.5, 16.0]),
                      st.floats(0, schema.get("maximum", 1e6)))
    if kinds == "boolean":
        return st.booleans()
    return st.none()


def _rp_body(create):
    def schema(version):
        step = (1, 14) if version >= (1, 14) else (1, 0)
        return rp_schema.body(step, create)
    return schema


def _aggregates_body(version):
    return (aggregates_schema.PUT_1_19 if version >= (1, 19)
            else aggregates_schema.PUT_1_1)


# The JSON schema of each body the API reads, by microversion.
SCHEMAS = {
    ("POST", "/resource_providers"): _rp_body(True),
    ("PUT", "/resource_providers/{uuid}"): _rp_body(False),
    ("POST", "/resource_providers/{uuid}/inventories"):
        lambda version: inventories_schema.POST,
    ("PUT", "/resource_providers/{uuid}/inventories"):
        lambda version: inventories_schema.PUT_ALL,
    ("PUT", "/resource_providers/{uuid}/inventories/{resource_class}"):
        lambda version: inventories_schema.PUT_ONE,
    ("PUT", "/resource_providers/{uuid}/aggregates"): _aggregates_body,
    ("PUT", "/resource_providers/{uuid}/traits"):
        lambda version: traits_schema.PUT_PROVIDER_TRAITS,
    ("POST", "/resource_classes"):
        lambda version: rc_schema.NAME_BODY,
    ("PUT", "/resource_classes/{name}"):
        lambda version: rc_schema.NAME_BODY,
    ("PUT", "/allocations/{consumer_uuid}"):
        lambda version: allocations_schema.put(
            allocations_schema.step(version)),
    ("POST", "/allocations"):
        lambda version: allocations_schema.post(
            allocations_schema.step(version)),
    ("POST", "/reshaper"):
        lambda version: reshaper_schema.post(
            allocations_schema.step(version)),
}


@functools.lru_cache
def _schema_bodies(key, version):
    return from_schema(SCHEMAS[key](version))


def _allocation_body():
    return {"allocations": {RP: {"resources": {"VCPU": 1}}},
            "project_id": "p", "user_id": "u", "consumer_generation": None,
            "consumer_type": "INSTANCE", "mappings": {"": [RP]}}


# A valid body at the latest version per (method, route), to mutate.
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


# Raw bytes that are no text, to put inside a JSON string: the encoded
# half of a surrogate pair, an overlong '/', a lone continuation byte,
# 0xff, and NUL.
RAW_HOSTILE = st.sampled_from([b"a\xed\xa0\x80", b"\xed\xbf\xbf",
                               b"\xc0\xaf", b"\x80", b"\xff", b"\x00"])
MARK = "\U0010fffd-mark"


def _strings(value):
    """The paths to every string leaf of ``value``."""
    if isinstance(value, str):
        yield ()
    elif isinstance(value, dict):
        for key, item in value.items():
            for path in _strings(item):
                yield (key, *path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            for path in _strings(item):
                yield (index, *path)


def _replaced(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    out = list(value)
    out[head] = _replaced(out[head], rest, new)
    return out


@st.composite
def _hostile(draw, value):
    """``value`` as JSON bytes a client should not send."""
    how = draw(st.sampled_from(["raw", "raw", "utf16", "bom", "deep",
                                "number", "duplicate"]))
    text = json.dumps(value)
    if how == "raw":
        paths = list(_strings(value))
        if paths:
            # Raw bytes inside one of the strings (project_id, a name...).
            path = draw(st.sampled_from(paths))
            text = json.dumps(_replaced(value, path, MARK),
                              ensure_ascii=False)
            return text.encode("utf-8", "surrogatepass").replace(
                MARK.encode("utf-8"), draw(RAW_HOSTILE))
        return b'{"name": "a' + draw(RAW_HOSTILE) + b'"}'
    if how == "utf16":
        return text.encode("utf-16")
    if how == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if how == "deep":
        depth = draw(st.sampled_from([100, 1000, 100_000]))
        return b"[" * depth + b"]" * depth
    if how == "number":
        number = draw(st.sampled_from(
            [b"1e999", b"-1e999", b"1" * 5000, b"-0", b"1.0", b"2e1",
             b"9" * 30]))
        return text.encode().replace(b"1", number, 1)
    # The same key twice: the last one counts, as in Python's json.
    if text.startswith("{") and len(text) > 2:
        return b'{"name": "dup", ' + text[1:].encode()
    return text.encode()


# Query strings

QUERY_KEYS = st.sampled_from([
    "resources", "resources1", "resources_X", "required", "required1",
    "member_of", "member_of1", "in_tree", "in_tree1", "limit",
    "group_policy", "root_required", "same_subtree", "name", "uuid",
    "project_id", "user_id", "consumer_type", "associated", "bogus",
    "requiredX", "resourcesX", "in_treeX", "member_ofX", "resources01"])
QUERY_VALUES = st.sampled_from([
    "VCPU:1", "VCPU:1,DISK_GB:1", "VCPU:0", "VCPU:99999999999999999999999",
    "VCPU", ":", "", "CUSTOM_GOLD", "!CUSTOM_GOLD", "in:CUSTOM_GOLD,X",
    f"in:{AGG}", f"!{AGG}", f"!in:{AGG},{OTHER}", AGG, RP, "none",
    "isolate", "1", "0", "-1", "1.5", "_X,1", "true", "startswith:CUSTOM",
    "in:VCPU", "all", "unknown", "INSTANCE", "X,_X", "!!CUSTOM_GOLD",
    "in:", "VCPU:1,VCPU:2", "VCPU:-1", "  VCPU : 1 ", "root"]) | TEXT
# Raw pieces of a query string: escapes that are not UTF-8, or not
# escapes at all.
RAW_QUERY = st.sampled_from([
    "%ED%A0%80", "%FF", "%00", "%zz", "%", "&&", "==", "=", "+", ";",
    "resources=VCPU:1&resources=VCPU:1", "limit=1&limit=1.5",
    "group_policy=bogus&group_policy=none", "limit=-3&limit=5"])


@st.composite
def query_strings(draw, template):
    pairs = draw(mostly(st.just([]), st.lists(
        st.tuples(QUERY_KEYS, QUERY_VALUES), min_size=1, max_size=4)))
    if template in ("/allocation_candidates", "/resource_providers"):
        pairs = [("resources", draw(QUERY_VALUES))] + pairs
    if template == "/usages":
        pairs = [("project_id", draw(mostly(st.just("p"), TEXT)))] + pairs
    # A lone surrogate goes out as the bytes that encode it: no UTF-8.
    parts = ([urllib.parse.urlencode(pairs, errors="surrogatepass")]
             if pairs else [])
    parts += draw(mostly(st.just([]), st.lists(RAW_QUERY, max_size=2)))
    return "&".join(part for part in parts if part)


# Headers

# Each part of a request as usual, or odd. A request has at most two odd
# parts (most have none), so that most requests get past the checks of
# the usual ones to reach the deeper ones.
ODD_VERSIONS = st.none() | TEXT | st.sampled_from([
    "1.99999999999999999999", "1.39, compute 2.1", "2.0", "1.", ".1",
    "-1.0", "1.2.3", "1.0"])
CONTENT_TYPES = (st.just("application/json"), st.sampled_from(
    ["application/json; charset=utf-8", "text/plain", None,
     "application/json; charset=utf-16", "APPLICATION/JSON",
     "application/json;", "multipart/form-data; boundary=x", ""]))
ACCEPTS = (st.just("application/json"), st.sampled_from(
    ["*/*", "text/html", "text/plain", "", None, "application/*",
     "application/json;q=0", "text/html;q=0.1, application/json",
     "garbage;;;"]))
TOKENS = (st.just("admin"), st.sampled_from(
    [None, "", "alice", "alice:demo", "admin:admin", ":", "\u00e9"]))
ODD_METHODS = st.sampled_from(["GET", "PUT", "POST", "DELETE", "PATCH",
                               "OPTIONS", "HEAD", "get", "FOO"])
PARTS = ("method", "path", "version", "accept", "token", "content_type")
# Content-Length lies (in process only: a real server refuses most of
# them before the application sees the request).
LENGTH_LIES = st.sampled_from(["abc", "-1", "1e3", " 2 ", "99999999999",
                               "0", "1", "1000"])

def _fill(template, draw, odd):
    """The route template with each {field} drawn (hostile ones too when
    ``odd``)."""
    def pick(usual):
        return draw(mostly(usual, UUIDS | TEXT, odds=0.5) if odd
                    else usual)

    values = {
        "uuid": pick(st.sampled_from([RP, CHILD])),
        "resource_class": pick(NAMES),
        "name": pick(NAMES | CUSTOM_NAMES),
        "consumer_uuid": pick(st.sampled_from([CONSUMER, OTHER])),
    }
    path = template
    for field, value in values.items():
        path = path.replace("{%s}" % field,
                            urllib.parse.quote(value, safe="",
                                               errors="surrogatepass")
                            or "x")
    return path


def _versions(template, method):
    """Usual microversions for a method of a route: the latest, or one
    from the first that has the method."""
    found = routes.ROUTES[template].get(method)
    since = found.since[1] if found else 0
    return mostly(st.sampled_from(
        [f"1.{n}" for n in range(since, 40)]), st.just("latest"),
        odds=0.3)


def version_of(text):
    """The microversion a header value asks for, as the schemas take it
    (an unusable one as 1.0: the request fails before any body)."""
    if text == "latest":
        return (1, 39)
    try:
        version = microversion.parse(text or "")
    except (microversion.BadVersion, ValueError):
        return (1, 0)
    return (version.major, version.minor)


@st.composite
def bodies(draw, method, template, version):
    key = (method, template)
    kind = draw(mostly(st.sampled_from(["schema", "schema", "template"]),
                       st.sampled_from(["none", "bytes", "json",
                                        "hostile"]), odds=0.3))
    if key not in SCHEMAS and kind in ("schema", "template"):
        return None
    if kind == "none":
        return None if method == "GET" else b""
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    if kind == "json":
        return json.dumps(draw(JSON)).encode()
    value = (draw(_schema_bodies(key, version)) if key in SCHEMAS
             else draw(JSON))
    if kind == "template":
        value = draw(_mutated(TEMPLATES[key]))
    elif draw(st.integers(0, 3)) == 0:
        value = draw(_mutated(value))
    if kind == "hostile":
        return draw(_hostile(value))
    body = json.dumps(value).encode()
    if draw(st.integers(0, 7)) == 0:
        # Big numbers as JSON has them, past any integer column.
        body = body.replace(b"1", b"1" + b"0" * draw(st.integers(0, 25)))
    return body


@st.composite
def requests(draw):
    """(method, path, query string, body bytes or None, headers)."""
    odd = draw(mostly(st.just(frozenset()), st.frozensets(
        st.sampled_from(PARTS), min_size=1, max_size=2), odds=0.4))

    def part(name, choices):
        return draw(choices[name in odd])

    template = draw(st.sampled_from(sorted(routes.ROUTES)))
    method = part("method", (
        st.sampled_from(sorted(routes.ROUTES[template])), ODD_METHODS))
    path = _fill(template, draw, "path" in odd)
    query = draw(query_strings(template))
    header = part("version", (_versions(template, method), ODD_VERSIONS))
    body = draw(bodies(method, template, version_of(header)))
    headers = {"accept": part("accept", ACCEPTS),
               "x-auth-token": part("token", TOKENS)}
    if header is not None:
        headers["openstack-api-version"] = f"placement {header}"
    content_type = part("content_type", CONTENT_TYPES)
    if body is not None:
        headers["content-type"] = content_type
        if draw(st.integers(0, 15)) == 0:
            headers["content-length"] = draw(LENGTH_LIES)
    if draw(st.integers(0, 10)) == 0:
        headers["x-openstack-request-id"] = draw(st.sampled_from(
            ["req-" + str(uuidlib.UUID(int=9)), "req-x", "x" * 300]))
    if draw(st.integers(0, 10)) == 0:
        headers["x-roles"] = draw(st.sampled_from(
            ["admin", "reader", "service", "member,reader", ""]))
    return method, path, query, body, {k: v for k, v in headers.items()
                                       if v is not None}


class _Stream(io.RawIOBase):
    """A request body as a server hands it over: read once, no seeking,
    and a short read where it ends (whatever the declared length)."""

    def __init__(self, data):
        self._data = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self._data.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def send(app, request):
    """The response of ``app`` to ``request``."""
    method, path, query, body, headers = request
    req = webob.Request.blank(path, method=method)
    req.environ["QUERY_STRING"] = query
    if body is not None:
        req.environ["wsgi.input"] = _Stream(body)
        req.environ["CONTENT_LENGTH"] = str(len(body))
    for name, value in headers.items():
        if name == "content-length":
            req.environ["CONTENT_LENGTH"] = value
        elif name == "content-type":
            req.environ["CONTENT_TYPE"] = value
        else:
            req.headers[name] = value
    return req.get_response(app)


def _wants_json(headers):
    return headers.get("accept") in (None, "*/*", "application/json")


def _body_problems(response):
    """What is wrong with the error body of ``response``."""
    try:
        document = json.loads(response.body)
    except ValueError:
        return [f"error body is not JSON: {response.body[:200]!r}"]
    if (not isinstance(document, dict) or set(document) != {"errors"}
            or not isinstance(document["errors"], list)
            or len(document["errors"]) != 1):
        return [f"not a placement error body: {document!r:.200}"]
    error = document["errors"][0]
    found = []
    for key in ("status", "title", "detail", "request_id"):
        if key not in error:
            found.append(f"error without {key}: {error!r:.200}")
    if error.get("status") != response.status_int:
        found.append(f"error status {error.get('status')} in a "
                     f"{response.status_int} response")
    if error.get("request_id") != response.headers.get(
            "x-openstack-request-id"):
        found.append("error request_id is not the response's")
    answered = response.headers.get(microversion.HEADER)
    version = version_of(answered.split()[-1]) if answered else None
    if version is not None and version >= (1, 23):
        if "code" not in error:
            found.append(f"no code at {answered}")
    elif "code" in error:
        found.append(f"a code at {answered}")
    if len(response.body) > 64 * 1024:
        found.append(f"error body of {len(response.body)} bytes")
    return found


def problems(request, response, before, after):
    """What is wrong with ``response`` to ``request``: a 5xx; a 4xx
    without the placement error body (when the client takes JSON and
    the method has a body); a 4xx after which the tables (``after()``)
    differ from ``before``."""
    status = response.status_int
    if status >= 500:
        return [f"{status}: {response.body[:300]!r}"]
    if status < 400:
        return []
    found = []
    if request[0] != "HEAD" and _wants_json(request[4]):
        found += _body_problems(response)
    if after() != before:
        found.append(f"a {status} changed stored state")
    return found


def seed(store):
    """What the requests name: two providers with inventories, traits,
    an aggregate and a consumer."""
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
    seed(store)
    app, engine = api_helpers.make_app(store)
    yield app
    engine.close()


# A few hundred requests per engine, derandomised: the same ones every
# run. GANTT_FUZZ_EXAMPLES=5000 GANTT_FUZZ_RANDOM=1 explores further, and
# benchmarks/api_fuzz.py further still.
@settings(max_examples=int(os.environ.get("GANTT_FUZZ_EXAMPLES", 300)),
          deadline=None,
          derandomize=not os.environ.get("GANTT_FUZZ_RANDOM"),
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(request=requests())
def test_no_request_fails_the_server(store, fuzz_app, request):
    before = api_helpers.snapshot(store)
    response = send(fuzz_app, request)
    found = problems(request, response, before,
                     lambda: api_helpers.snapshot(store))
    assert not found, (request, found)


def test_the_checks_catch_what_they_look_for(sqlite_store):
    """problems() reports a 5xx, a 4xx without the error body, and a
    4xx after which a table changed."""
    request = ("GET", "/", "", None, {})
    same = {"t": []}
    server_error = webob.Response(status=500, body=b"boom")
    assert problems(request, server_error, same, lambda: same)
    html = webob.Response(status=400, body=b"<html></html>")
    html.headers["x-openstack-request-id"] = "req-1"
    assert problems(request, html, same, lambda: same)
    good = webob.Response(status=400, json_body={"errors": [{
        "status": 400, "title": "Bad Request", "detail": "no",
        "request_id": "req-1"}]})
    good.headers["x-openstack-request-id"] = "req-1"
    assert problems(request, good, same, lambda: same) == []
    assert problems(request, good, same, lambda: {"t": [("1",)]}) == [
        "a 400 changed stored state"]
