"""What every handler needs: the request with its version, context and
application state; body and query validation; JSON responses with the
cache headers of microversion 1.15."""

import collections
import datetime
import json
import re
import uuid as uuidlib

import jsonschema
import orjson
import webob
import webob.request

from placement import errors as placement_errors
from placement.api import auth, errors, microversion
from placement.api import policy as policy_mod

STATE_KEY = "placement.state"
ROUTE_ARGS_KEY = "wsgiorg.routing_args"
JSON = "application/json"
CACHE_HEADERS_SINCE = (1, 15)


def is_uuid_like(value):
    """A UUID in any form uuid.UUID reads: dashed or not, any case,
    braces or urn:uuid: prefix."""
    if not isinstance(value, str):
        return False
    try:
        canonical = uuidlib.UUID(value)
    except ValueError:
        return False
    bare = value.lower()
    for part in ("urn:", "uuid:", "{", "}", "-"):
        bare = bare.replace(part, "")
    return canonical.hex == bare


def is_dashed_uuid(value):
    """The canonical 8-4-4-4-12 form only (query parameters)."""
    if not isinstance(value, str) or len(value) != 36:
        return False
    try:
        uuidlib.UUID(value)
    except ValueError:
        return False
    return all(value[i] == "-" for i in (8, 13, 18, 23))


BODY_FORMATS = jsonschema.FormatChecker(formats=())
BODY_FORMATS.checks("uuid")(is_uuid_like)
QUERY_FORMATS = jsonschema.FormatChecker(formats=())
QUERY_FORMATS.checks("uuid")(is_dashed_uuid)


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def as_utc(stamp):
    """Database timestamps are naive UTC."""
    if stamp is None:
        return None
    if stamp.tzinfo is None:
        return stamp.replace(tzinfo=datetime.timezone.utc)
    return stamp


def latest(stamps):
    """The latest of ``stamps`` (None ignored), or now."""
    found = [as_utc(s) for s in stamps if s is not None]
    return max(found) if found else utcnow()


class Request(webob.Request):
    """A webob request inside the application pipeline."""

    @property
    def version(self):
        return self.environ[microversion.ENVIRON_KEY]

    def since(self, major_minor):
        return self.version >= major_minor

    @property
    def context(self):
        return self.environ[auth.CONTEXT_KEY]

    @property
    def state(self):
        return self.environ[STATE_KEY]

    def arg(self, name):
        return self.environ[ROUTE_ARGS_KEY][1][name]

    @property
    def query(self):
        """The query string as a webob MultiDict; 400 when it is not
        UTF-8."""
        try:
            return self.GET
        except UnicodeDecodeError:
            raise errors.bad_request(
                "Invalid query string parameters: the query string is not "
                "valid UTF-8.") from None

    def authorize(self, rule, target=None):
        ctx = self.context
        if target is None:
            target = {"project_id": ctx.project_id, "user_id": ctx.user_id}
        policy_mod.authorize(self.state.enforcer, ctx, rule, target)

    def url_for(self, path):
        """``path`` under the application's mount point."""
        return self.script_name + path


# Content negotiation


def require_json_content(req):
    """415 unless the body is declared as JSON."""
    content_type = req.content_type
    if content_type != JSON:
        raise errors.ApiError(
            415, f"The media type {content_type or 'None'} is not "
                 f"supported, use {JSON}")


def check_accept(req):
    """406 when an Accept header excludes JSON."""
    if req.accept and not req.accept.acceptable_offers([JSON]):
        raise errors.ApiError(406, f"Only {JSON} is provided")


# Validation


def _reject_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


# A \uD800-\uDFFF escape: JSON can name half a surrogate pair, which
# is no character and cannot be stored.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _check_text(value):
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key)
            _check_text(item)
    elif isinstance(value, list):
        for item in value:
            _check_text(item)


def parse_json(body):
    """Python values of a JSON body; 400 when it is not UTF-8 JSON, or
    holds text that is not Unicode.

    The one place request bodies are decoded. Strictly as UTF-8, as
    OpenStack Placement does: json.loads would take bytes as UTF-16 or
    UTF-32 too, and let through the encoded halves of surrogate pairs
    (b"\\xed\\xa0\\x80"), which no database can store."""
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
        data = json.loads(text, parse_constant=_reject_constant)
        if _SURROGATE_ESCAPE.search(text):
            _check_text(data)
    except (ValueError, RecursionError) as exc:
        # UnicodeError is a ValueError: the message names the byte.
        raise errors.bad_request(
            f"Malformed JSON: {errors.clip(exc, 1024)}") from None
    return data


_VALIDATORS = {}


def _validator(schema, formats):
    """A compiled validator per schema object (schemas are module
    constants or memoised per version, so ids are stable)."""
    key = (id(schema), id(formats))
    found = _VALIDATORS.get(key)
    if found is None or found[0] is not schema:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        found = (schema, cls(schema, format_checker=formats))
        _VALIDATORS[key] = found
    return found[1]


# How much of a value validation messages show: about this many
# characters of its strings, the first items of a list or object, and
# containers this deep.
_ECHO_BUDGET = 1024
_ECHO_ITEMS = 8
_ECHO_DEPTH = 4


def _echoed(value, budget=None, depth=0):
    """``value`` cut down to what a message may repeat of it: strings
    clipped, lists and objects shortened, deep ones elided, until
    ``budget`` (a one-item list: the characters left) is spent."""
    if budget is None:
        budget = [_ECHO_BUDGET]
    if isinstance(value, str):
        clipped = errors.clip(value, max(min(errors.MAX_ECHO, budget[0]),
                                         16))
        budget[0] -= len(clipped)
        return clipped
    if not isinstance(value, (list, dict)):
        return value
    if depth >= _ECHO_DEPTH:
        return "[...]" if isinstance(value, list) else "{...}"
    items = value.items() if isinstance(value, dict) else enumerate(value)
    out = {} if isinstance(value, dict) else []
    for count, (key, item) in enumerate(items):
        if count == _ECHO_ITEMS or budget[0] <= 0:
            left = f"({len(value) - count} more)"
            if isinstance(out, dict):
                out["..."] = left
            else:
                out.append("..." + left)
            break
        item = _echoed(item, budget, depth + 1)
        if isinstance(out, dict):
            out[_echoed(key, budget, depth + 1)] = item
        else:
            out.append(item)
    return out


def _report(error):
    """jsonschema's report on ``error`` (the message, the failed rule,
    the schema and the instance), with what it repeats of the request
    cut down (``_echoed``)."""
    error.message = errors.clip(error.message, 2 * errors.MAX_ECHO)
    error.instance = _echoed(error.instance)
    error.path = error.relative_path = collections.deque(
        errors.clip(part, 64) if isinstance(part, str) else part
        for part in error.relative_path)
    return str(error)


def validate(data, schema, formats=BODY_FORMATS):
    """What is wrong with ``data`` (jsonschema's full report: the
    message, the failed rule and the schema path), or None."""
    try:
        error = jsonschema.exceptions.best_match(
            _validator(schema, formats).iter_errors(data))
        return None if error is None else _report(error)
    except RecursionError:
        return "the document is nested too deeply"


MAX_BODY_OPTION = "[api] max_request_body_size"


def too_large(limit):
    return errors.ApiError(
        413, f"The request body is larger than {limit} bytes, the most "
             f"this service accepts ({MAX_BODY_OPTION}).")


def read_body(req):
    """The request body, at most ``[api] max_request_body_size`` bytes
    of it (413 beyond). A declared length is checked before anything is
    read (see app.Dispatcher); a body without one (chunked) is read no
    further than one byte past the limit. 400 when the body ends before
    its declared length."""
    limit = req.state.conf.api.max_request_body_size
    length = req.content_length
    try:
        if not limit:
            return req.body
        if length is not None:
            if length > limit:
                raise too_large(limit)
            return req.body
        body = req.body_file.read(limit + 1)
    except webob.request.DisconnectionError:
        raise errors.bad_request(
            f"The request body ended before the {length} bytes its "
            f"content-length header declares.") from None
    if len(body) > limit:
        raise too_large(limit)
    return body


def extract_json(req, schema, then=None):
    """The request body, parsed and checked against ``schema`` (OpenStack
    Placement's, so that a refusal reads the same), and once that holds
    against ``then`` when given: gantt's stricter schema, for what
    Placement lets through and then fails on."""
    data = parse_json(read_body(req))
    for each in (schema, then):
        problem = validate(data, each) if each is not None else None
        if problem:
            raise errors.bad_request(f"JSON does not validate: {problem}")
    return data


# Query parameters that may be repeated, with or without a group
# suffix. Every value counts for member_of (from 1.24; before, its
# parser answers OpenStack Placement's own 400), required (from 1.39)
# and same_subtree. One value wins for limit and group_policy (the
# first) and for required before 1.39 (the last), as OpenStack
# Placement's own API tests ask; every value is checked all the same.
# Any other parameter given twice is a 400, where Placement checks the
# last value and uses one of them.
_REPEATABLE = ("limit", "group_policy", "same_subtree")
_REPEATABLE_PREFIXES = ("member_of", "required")


def _repeatable(key):
    return key in _REPEATABLE or key.startswith(_REPEATABLE_PREFIXES)


def validate_query(req, schema):
    """Check the query parameters against ``schema``: the last value of
    each first, as OpenStack Placement does (so that the report is the
    same), then every other value of a parameter that may be repeated;
    a parameter that takes one value and is given twice is a 400."""
    query = req.query
    params = dict(query.items())
    problem = validate(params, schema, QUERY_FORMATS)
    if problem:
        raise errors.bad_request(
            f"Invalid query string parameters: {problem}")
    counts = collections.Counter(query.keys())
    for key, value in query.items():
        if counts[key] == 1:
            continue
        if not _repeatable(key):
            raise errors.bad_request(
                f"Query parameter '{errors.clip(key, 64)}' may be "
                f"specified only once.",
                placement_errors.ILLEGAL_DUPLICATE_QUERYPARAM)
        if value != params[key]:
            problem = validate({**params, key: value}, schema,
                               QUERY_FORMATS)
            if problem:
                raise errors.bad_request(
                    f"Invalid query string parameters: {problem}")
    return query


# Responses


def dumps(body):
    """JSON bytes. orjson: candidate answers run to hundreds of kilobytes
    and the standard encoder takes several times as long."""
    try:
        return orjson.dumps(body)
    except TypeError:
        # Integers past 64 bits (echoed from a request) and the like.
        return json.dumps(body).encode("utf-8")


def json_response(req, body, status=200, last_modified=None,
                  cache_headers=True):
    """A JSON response; from microversion 1.15 with cache-control:
    no-cache and last-modified (``last_modified``, or now)."""
    response = webob.Response(body=dumps(body), status=status,
                              content_type=JSON, charset=None)
    if cache_headers:
        add_cache_headers(req, response, last_modified)
    return response


def empty_response(req, status=204, location=None, last_modified=None,
                   cache_headers=False):
    response = webob.Response(status=status)
    del response.content_type
    response.content_length = 0 if status != 204 else None
    if location is not None:
        response.location = location
    if cache_headers:
        add_cache_headers(req, response, last_modified)
    return response


def add_cache_headers(req, response, last_modified=None):
    if req.since(CACHE_HEADERS_SINCE):
        response.cache_control = "no-cache"
        response.last_modified = as_utc(last_modified) or utcnow()
