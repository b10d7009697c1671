"""``/healthcheck`` (oslo.middleware's Healthcheck) and gantt's check
of the database for it.

The middleware answers ``GET /healthcheck`` (and HEAD) without
authentication from the ``[healthcheck]`` backends: gantt sets
``gantt_database`` by default (beside which operators may add
oslo.middleware's ``disable_by_file`` to drain a node). A server whose
database cannot be reached, or holds no current gantt schema, answers
503 so that a load balancer takes it out.
"""

import logging
import threading

from oslo_context import context as context_mod
from oslo_middleware import healthcheck
from oslo_middleware.healthcheck import opts as healthcheck_opts
from oslo_middleware.healthcheck import pluginbase

from placement.api import middleware
from placement.db import engine as engine_mod
from placement.db import retry, schema_state

LOG = logging.getLogger(__name__)
DATABASE_BACKEND = "gantt_database"


def register_opts(conf):
    conf.register_opts(healthcheck_opts.HEALTHCHECK_OPTS,
                       group="healthcheck")
    conf.set_default("backends", [DATABASE_BACKEND], group="healthcheck")


PATH = "/healthcheck"


def wrap(application, conf):
    """``application`` with ``/healthcheck`` in front of it."""
    return _Route(application, healthcheck.Healthcheck(None, conf))


class _Route:
    """oslo.middleware's Healthcheck answers every request it is given
    (an application to mount at a path, not a filter): only PATH goes
    to it."""

    def __init__(self, application, check):
        self.application = application
        self.check = check

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") == PATH:
            # A context of its own: oslo.log writes the thread's into
            # the check's warnings, which otherwise names the request
            # (and user) this thread served before.
            context_mod.RequestContext(
                request_id=middleware.new_request_id(), overwrite=True)
            return self.check(environ, start_response)
        return self.application(environ, start_response)


class DatabaseCheck(pluginbase.HealthcheckBaseExtension):
    """Healthy when the database answers and its schema is this gantt's.
    It keeps an engine of its own (one connection, opened on the first
    check) so that a check never waits behind the requests' pool."""

    def __init__(self, oslo_conf, conf):
        super().__init__(oslo_conf, conf)
        self._engine = None
        self._lock = threading.Lock()

    def _engine_once(self):
        with self._lock:
            if self._engine is None:
                self._engine = engine_mod.create_engine(self.oslo_conf)
            return self._engine

    def healthcheck(self, server_port):
        # Twice: the kept connection may be one the server dropped since
        # the last check (a database restart), which says nothing of now.
        # The reason names no database URL: the path is public.
        for attempt in (1, 2):
            try:
                state = schema_state.schema_state(self._engine_once())
                if not state.usable:
                    return pluginbase.HealthcheckResult(
                        False, f"{state.problem()}; run gantt-manage db sync")
            except Exception as exc:  # noqa: BLE001 - any failure counts
                self._engine.dispose()
                if attempt == 2:
                    LOG.warning("healthcheck: the database cannot be used: "
                                "%s", retry.first_line(exc))
                    return pluginbase.HealthcheckResult(
                        False, f"the database cannot be used "
                               f"({type(exc).__name__}; see the log)")
            else:
                return pluginbase.HealthcheckResult(True, "database OK")
