"""What every handler needs: the request with its version, context and
application state; body and query validation; JSON responses with the
cache headers of microversion 1.15."""

import datetime
import json
import re
import uuid as uuidlib

import jsonschema
import orjson
import webob

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
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


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
    """Python values of a JSON body; 400 when it is not JSON, or holds
    text that is not Unicode."""
    try:
        data = json.loads(body, parse_constant=_reject_constant)
        if _SURROGATE_ESCAPE.search(body):
            _check_text(data)
    except (ValueError, RecursionError) as exc:
        raise errors.bad_request(f"Malformed JSON: {exc}") from None
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


def validate(data, schema, formats=BODY_FORMATS):
    """What is wrong with ``data`` (jsonschema's full report: the
    message, the failed rule and the schema path), or None."""
    try:
        error = jsonschema.exceptions.best_match(
            _validator(schema, formats).iter_errors(data))
    except RecursionError:
        return "the document is nested too deeply"
    return None if error is None else str(error)


def extract_json(req, schema):
    """The request body, parsed and checked against ``schema``."""
    data = parse_json(req.body)
    problem = validate(data, schema)
    if problem:
        raise errors.bad_request(f"JSON does not validate: {problem}")
    return data


def validate_query(req, schema):
    """Check the query parameters (last value of each) against
    ``schema``."""
    params = dict(req.query.items())
    problem = validate(params, schema, QUERY_FORMATS)
    if problem:
        raise errors.bad_request(
            f"Invalid query string parameters: {problem}")
    return req.query


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
