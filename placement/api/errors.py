"""Error responses of the REST API.

Every error body has the form the OpenStack API guidelines give::

    {"errors": [{"status": 404, "title": "Not Found",
                 "detail": "...", "request_id": "req-...",
                 "code": "placement.undefined_code"}]}

``code`` appears from microversion 1.23. The body follows the request's
Accept header (JSON unless the client asked for HTML or plain text), as
webob's HTTP exceptions do; handlers raise :class:`ApiError` and never
build error responses themselves.

A detail never runs past ``MAX_DETAIL`` characters, and the validation
messages of :mod:`placement.api.util` cut each value they echo from the
request to ``MAX_ECHO``: an error stays small whatever the request
holds.
"""

import webob.exc

from placement import errors as placement_errors
from placement.api import microversion

# Where a handler leaves the error code of its failure.
CODE_KEY = "placement.error_code"
REQUEST_ID_KEY = "openstack.request_id"
CODES_SINCE = (1, 23)

# The longest detail an error response carries. Room for jsonschema's
# report on the largest body schema (POST /reshaper's, about 15,000
# characters); anything longer is cut in the middle.
MAX_DETAIL = 32 * 1024
# The longest value from the request that a detail repeats.
MAX_ECHO = 256


class ApiError(Exception):
    """A failure to report with ``status``; ``detail`` is the message and
    ``code`` the placement error code (default: placement.undefined_code).
    """

    def __init__(self, status, detail, code=None, headers=None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code
        self.headers = headers or {}


def bad_request(detail, code=None):
    return ApiError(400, detail, code)


def not_found(detail, code=None):
    return ApiError(404, detail, code)


def conflict(detail, code=None):
    return ApiError(409, detail, code)


def clip(text, limit=MAX_ECHO):
    """``text`` (as a string), or when it is longer than ``limit`` its
    head and tail around a note of how much was left out."""
    text = str(text)
    if len(text) <= limit:
        return text
    keep = max(limit // 2, 1)
    return (f"{text[:keep]}...({len(text) - 2 * keep} characters left "
            f"out)...{text[-keep:]}")


def _text(detail):
    """``detail`` as text that encodes: half a surrogate pair (from a
    header an in-process caller set, say) is shown as its escape."""
    try:
        detail.encode("utf-8")
    except UnicodeEncodeError:
        return detail.encode("utf-8", "backslashreplace").decode("utf-8")
    return detail


def from_placement_error(exc, detail=None, status=None):
    """An ApiError for an error of the objects layer, keeping its code."""
    code = exc.code if exc.code != placement_errors.DEFAULT else None
    return ApiError(status or exc.http_status, detail or exc.message, code)


def json_formatter(body, status, title, environ):
    """The guideline error body, for webob's HTTP exceptions."""
    status_code = int(status.split(None, 1)[0])
    error = {
        "status": status_code,
        "title": title,
        "detail": webob.exc.strip_tags(body),
    }
    request_id = environ.get(REQUEST_ID_KEY)
    if request_id:
        error["request_id"] = request_id
    version = environ.get(microversion.ENVIRON_KEY)
    if version is not None and version >= CODES_SINCE:
        error["code"] = environ.get(CODE_KEY, placement_errors.DEFAULT)
    if status_code == 406 and version is None:
        # The version could not be negotiated: say which ones exist.
        error["min_version"] = microversion.MIN_VERSION
        error["max_version"] = microversion.MAX_VERSION
    return {"errors": [error]}


def to_response(environ, status, detail, code=None, headers=None):
    """A webob HTTP exception (itself a WSGI app) for the failure."""
    if code is not None:
        environ[CODE_KEY] = code
    cls = webob.exc.status_map.get(status, webob.exc.HTTPBadRequest)
    exc = cls(_text(clip(detail, MAX_DETAIL)), json_formatter=json_formatter)
    for name, value in (headers or {}).items():
        exc.headers[name] = value
    return exc


def respond(environ, start_response, status, detail, code=None,
            headers=None):
    """Send the error response for ``status`` and ``detail``."""
    return to_response(environ, status, detail, code, headers)(
        environ, start_response)


def standalone(status, detail, request_id, version=None, code=None):
    """The error response for ``status`` and ``detail`` as a webob
    Response, for a request that never reached the application (the HTTP
    server refused it): JSON, with ``request_id`` and, when the request
    named a ``version`` (a microversion_parse Version), that one."""
    environ = {REQUEST_ID_KEY: request_id, "HTTP_ACCEPT": "application/json"}
    if version is not None:
        environ[microversion.ENVIRON_KEY] = version
    request = webob.Request.blank("/", environ=environ)
    return request.get_response(
        to_response(request.environ, status, detail, code))
