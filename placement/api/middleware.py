"""WSGI middleware of the pipeline: request ids and the access log
(outermost, also turning any unexpected exception into a 500), and
microversion negotiation."""

import logging
import re
import time
import uuid

from oslo_context import context as context_mod

from placement.api import errors, microversion
from placement.db import retry

# OpenStack Placement's logger and line form, so that what parses its
# access lines parses these (time: in seconds, as Nova's API adds it).
LOG = logging.getLogger("placement.requestlog")
REQUEST_ID_HEADER = "x-openstack-request-id"
# Where oslo.context's from_environ() finds the ids.
REQUEST_ID_KEY = "openstack.request_id"
GLOBAL_REQUEST_ID_KEY = "openstack.global_request_id"
_GLOBAL_ID = re.compile(
    r"^req-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$")


def new_request_id():
    return f"req-{uuid.uuid4()}"


class RequestLog:
    """Give the request an id (x-openstack-request-id on the response)
    and a context of its own before anything else runs, default the
    Accept header to JSON so that errors come back as JSON, log one line
    per request, and answer 500 for anything that escapes the
    application.

    oslo.log writes the context of the thread into every line. Set here,
    before authentication, a request refused there (401) logs its own id
    and no identity, never those of the thread's previous request; the
    authenticated context built later keeps the same ids."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        started = time.monotonic()
        request_id = new_request_id()
        environ[errors.REQUEST_ID_KEY] = request_id
        environ[REQUEST_ID_KEY] = request_id
        caller_id = environ.get("HTTP_X_OPENSTACK_REQUEST_ID")
        if caller_id and _GLOBAL_ID.match(caller_id):
            environ[GLOBAL_REQUEST_ID_KEY] = caller_id
        context_mod.RequestContext(
            request_id=request_id,
            global_request_id=environ.get(GLOBAL_REQUEST_ID_KEY),
            overwrite=True)
        if environ.get("HTTP_ACCEPT", "*/*") == "*/*":
            environ["HTTP_ACCEPT"] = "application/json"
        seen = {}

        def start(status, headers, exc_info=None):
            headers.append((REQUEST_ID_HEADER, request_id))
            seen["status"] = status
            seen["length"] = next(
                (value for name, value in headers
                 if name.lower() == "content-length"), "-")
            return start_response(status, headers, exc_info)

        try:
            body = self.application(environ, start)
        except Exception as exc:
            if retry.database_unreachable(exc):
                # The store waited for it as long as max_retries allows.
                LOG.error("%s %s: the database cannot be reached: %s",
                          environ.get("REQUEST_METHOD"), _uri(environ),
                          retry.first_line(exc))
                body = errors.respond(
                    environ, start, 503,
                    "The placement database cannot be reached; try again "
                    "later.")
            else:
                LOG.exception("unexpected error in %s %s",
                              environ.get("REQUEST_METHOD"), _uri(environ))
                body = errors.respond(
                    environ, start, 500,
                    "The server failed to complete the request; the error "
                    "is in its log under this request id.")
        if LOG.isEnabledFor(logging.INFO):
            LOG.info('%s "%s %s" status: %s len: %s microversion: %s '
                     'time: %.6f',
                     environ.get("REMOTE_ADDR", "-"),
                     environ.get("REQUEST_METHOD"), _uri(environ),
                     seen.get("status", "-").split(" ", 1)[0],
                     seen.get("length", "-"),
                     environ.get(microversion.ENVIRON_KEY, "-"),
                     time.monotonic() - started)
        return body


def _uri(environ):
    uri = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
    if environ.get("QUERY_STRING"):
        uri += "?" + environ["QUERY_STRING"]
    return uri


class Microversion:
    """Negotiate the microversion (400 malformed, 406 unknown) and name
    it in the openstack-api-version and vary headers of the response."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        try:
            version = microversion.negotiate(environ)
        except microversion.BadVersion as exc:
            return errors.respond(environ, start_response, 400,
                                  f"Invalid microversion: {exc}")
        except microversion.UnacceptableVersion as exc:
            return errors.respond(environ, start_response, 406,
                                  f"Invalid microversion: {exc}")
        environ[microversion.ENVIRON_KEY] = version
        value = microversion.header_value(version)

        def start(status, headers, exc_info=None):
            headers.append((microversion.HEADER, value))
            headers.append(("vary", microversion.HEADER))
            return start_response(status, headers, exc_info)

        return self.application(environ, start)
