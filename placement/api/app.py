"""The WSGI application: the pipeline of middleware in front of the
dispatcher, which finds the route and handler and turns failures into
error responses.

Request path, outermost first: the proxy headers of a TLS-terminating
balancer (oslo.middleware's HTTPProxyToWSGI, when ``[oslo_middleware]
enable_proxy_headers_parsing`` is set), metrics (``GET /metrics``),
``/healthcheck``, request id and access log, microversion, CORS (when
configured), authentication, request context, dispatcher.
"""

import dataclasses
import logging

import sqlalchemy as sa
from keystonemiddleware import auth_token
from oslo_middleware import cors, http_proxy_to_wsgi
from oslo_middleware import opts as middleware_opts

from placement import errors as placement_errors
from placement.api import (
    answer_cache,
    auth,
    errors,
    health,
    metrics,
    middleware,
    routes,
    util,
)
from placement.api import policy as policy_mod
from placement.candidates import engine as engine_mod
from placement.db import store as store_mod

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class State:
    """What handlers share: one per application (process)."""

    conf: object
    store: object
    engine: object
    enforcer: object
    # Allocation candidates answers, or None when the cache is off.
    answers: object = None


def register_opts(conf):
    """Options of the libraries the API uses (policy, CORS, keystone
    auth_token)."""
    policy_mod.register_opts(conf)
    conf.register_opts(cors.CORS_OPTS, group="cors")
    for group, opts in middleware_opts.list_opts_http_proxy_to_wsgi():
        conf.register_opts(opts, group=group)
    health.register_opts(conf)
    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)


class Dispatcher:
    def __init__(self, state, router=None):
        self.state = state
        self.router = router or routes.Router()

    def __call__(self, environ, start_response):
        environ[util.STATE_KEY] = self.state
        try:
            response = self._dispatch(environ)
        except errors.ApiError as exc:
            return errors.respond(environ, start_response, exc.status,
                                  exc.detail, exc.code, exc.headers)
        except policy_mod.NotAuthorized as exc:
            return errors.respond(environ, start_response, 403, str(exc))
        except placement_errors.PlacementError as exc:
            failure = errors.from_placement_error(exc)
            return errors.respond(environ, start_response, failure.status,
                                  failure.detail, failure.code)
        except sa.exc.DataError as exc:
            # A value the database cannot store (a NUL in a string on
            # PostgreSQL, a number out of its range): the client's doing.
            LOG.info("database refused a value: %s", exc.orig)
            return errors.respond(environ, start_response, 400,
                                  "The request holds a value the database "
                                  "cannot store.")
        return response(environ, start_response)

    def _dispatch(self, environ):
        _check_content_length(
            environ, self.state.conf.api.max_request_body_size)
        path = _path(environ)
        found = self.router.match(path) if path is not None else None
        if found is None:
            # No detail beyond the title, as in OpenStack Placement.
            raise errors.not_found("")
        template, methods, args = found
        environ[metrics.ROUTE_KEY] = template
        method = environ["REQUEST_METHOD"]
        if method not in methods:
            allowed = ", ".join(methods)
            raise errors.ApiError(
                405, "The method specified is not allowed for this "
                     "resource.", headers={"Allow": allowed})
        chosen = methods[method]
        req = util.Request(environ)
        handler = chosen.handler_for(req.version)
        if handler is None:
            # Below the route's first microversion: OpenStack
            # Placement's bare 404 (or 405), no detail.
            raise errors.ApiError(chosen.otherwise, "")
        environ[util.ROUTE_ARGS_KEY] = ((), args)
        return handler(req)


def _check_content_length(environ, limit):
    """A body needs a declared type; a length must be a number, and no
    more than ``limit`` (413, before any of the body is read; 0: no
    limit). A body of undeclared length is bounded where it is read
    (util.read_body)."""
    length = environ.get("CONTENT_LENGTH")
    if not length:
        return
    try:
        length = int(length)
    except ValueError:
        raise errors.bad_request(
            "content-length header must be an integer") from None
    if limit and length > limit:
        raise util.too_large(limit)
    if length > 0 and not environ.get("CONTENT_TYPE"):
        raise errors.bad_request(
            "content-type header required when content-length > 0")


def _path(environ):
    """PATH_INFO as text (servers hand it over as latin-1 decoded bytes);
    '' is the root too. None when it is not UTF-8."""
    path = environ.get("PATH_INFO", "") or "/"
    try:
        return path.encode("latin-1").decode("utf-8")
    except UnicodeEncodeError:
        # Already text (some in-process clients do this).
        return path
    except UnicodeDecodeError:
        return None


def make_app(conf, store=None, engine=None, policy_mode=None,
             router=None):
    """The REST API as a WSGI application on ``store`` (default: the
    configured database) with one candidates engine. ``router``: another
    route table, for tests."""
    register_opts(conf)
    if store is None:
        store = store_mod.Store.open(conf)
    if engine is None:
        engine = engine_mod.CandidatesEngine(store, conf)
    enforcer = policy_mod.make_enforcer(conf, policy_mode)
    answers = None
    if (conf.api.candidates_cache_entries
            and not conf.placement.randomize_allocation_candidates):
        answers = answer_cache.AnswerCache(
            store, engine, conf.api.candidates_cache_entries)
    state = State(conf=conf, store=store, engine=engine, enforcer=enforcer,
                  answers=answers)
    router = router or routes.Router()
    application = Dispatcher(state, router)
    application = auth.wrap(application, conf)
    if conf.cors.allowed_origin:
        application = cors.CORS(application, conf)
    application = middleware.Microversion(application)
    application = middleware.RequestLog(application)
    application = health.wrap(application, conf)
    if conf.api.metrics:
        application = metrics.Metrics(
            application, metrics.ApiMetrics(),
            lambda path: (health.PATH if path == health.PATH
                          else (router.match(path) or (None,))[0]))
    return http_proxy_to_wsgi.HTTPProxyToWSGI(application, conf)
