"""WSGI entry point for servers other than gantt-placement-api (uwsgi,
mod_wsgi, or gunicorn run directly): ``placement.api.wsgi:application``.

The configuration is read as every gantt command reads it; set
GANTT_CONFIG_FILE to name the file explicitly. The application is built
on the first request in each server process (after any fork), not at
import.
"""

import os
import threading

from oslo_config import cfg
from oslo_log import log as logging

from placement import conf as conf_mod
from placement.api import app as app_mod


def init_application(environ=None):
    environ = os.environ if environ is None else environ
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    app_mod.register_opts(conf)
    logging.register_options(conf)
    config_file = environ.get("GANTT_CONFIG_FILE")
    conf([], project="gantt",
         default_config_files=[config_file] if config_file else None)
    logging.setup(conf, "gantt")
    return app_mod.make_app(conf)


class _Lazy:
    def __init__(self):
        self._app = None
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        if self._app is None:
            with self._lock:
                if self._app is None:
                    self._app = init_application()
        return self._app(environ, start_response)


application = _Lazy()
