"""WSGI entry point for servers other than gantt-placement-api (uwsgi,
mod_wsgi, or gunicorn run directly): ``placement.api.wsgi:application``.

The configuration is read as every gantt command reads it (and checked
the same way: unknown options are logged as warnings); set
GANTT_CONFIG_FILE (in the process environment, or in the WSGI environ
as mod_wsgi's SetEnv puts it) to name the file explicitly. The
application is built on the first request in each server process (after
any fork), not at import.

Workers never migrate the schema: ``gantt-manage db sync`` does, once,
before the server starts (or gantt-placement-api's master, when
``[placement_database] sync_on_startup`` is set). Until the schema is
current every request is answered 503 with a body that says so, and the
next request looks again, so that a sync run after the server started
needs no restart.
"""

import os
import threading

from oslo_config import cfg
from oslo_log import log as logging

from placement import conf as conf_mod
from placement import config_check
from placement.api import app as app_mod
from placement.api import auth, errors, middleware
from placement.db import schema_state
from placement.db import store as store_mod

LOG = logging.getLogger(__name__)
CONFIG_VARIABLE = "GANTT_CONFIG_FILE"


def _read_conf(environ):
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    app_mod.register_opts(conf)
    logging.register_options(conf)
    config_check.register(conf)
    config_file = environ.get(CONFIG_VARIABLE)
    conf([], project="gantt",
         default_config_files=[config_file] if config_file else None)
    return conf


def current_store(conf):
    """A store on the configured database, whose schema must be at the
    head revision already (schema_state.SchemaNotReady otherwise)."""
    store = store_mod.Store(conf)
    try:
        schema_state.require(store)
    except schema_state.SchemaNotReady:
        store.dispose()
        raise
    return store


def init_application(environ=None):
    environ = os.environ if environ is None else environ
    conf = _read_conf(environ)
    logging.setup(conf, "gantt")
    config_check.check(conf, LOG.warning, strict=conf.strict)
    auth.check_conf(conf)
    store = current_store(conf)
    LOG.info("gantt placement WSGI application: %s",
             conf_mod.startup_summary(conf))
    return app_mod.make_app(conf, store=store)


def _unavailable(environ, start_response, reason):
    response = errors.standalone(503, reason, middleware.new_request_id())
    return response(environ, start_response)


def _settings(environ):
    """The process environment, with GANTT_CONFIG_FILE from the request's
    WSGI environ when the server puts it there (mod_wsgi's SetEnv)."""
    settings = dict(os.environ)
    if CONFIG_VARIABLE in environ:
        settings[CONFIG_VARIABLE] = environ[CONFIG_VARIABLE]
    return settings


class _Lazy:
    def __init__(self):
        self._app = None
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        if self._app is None:
            with self._lock:
                if self._app is None:
                    try:
                        self._app = init_application(_settings(environ))
                    except schema_state.SchemaNotReady as exc:
                        LOG.error("%s", exc)
                        # To the client, no database URL.
                        return _unavailable(
                            environ, start_response,
                            f"{exc.state.problem()}; run gantt-manage db "
                            f"sync")
                    except auth.AuthConfigError as exc:
                        LOG.error("%s", exc)
                        return _unavailable(environ, start_response,
                                            str(exc))
        return self._app(environ, start_response)


application = _Lazy()
