"""gantt-placement-api: serve the Placement REST API.

    gantt-placement-api [--config-file F] [--host H] [--port N]
                        [--workers N] [--threads N] [--db URL|PATH]
                        [--policy legacy|secure|open] [--cors]

The server is gunicorn: a pre-forking master with ``--workers`` processes
(each with its own connection pool and candidates index, so that the
processes use every core) of ``--threads`` threads each. The schema is
brought up to date once, in the master, before the workers start.

``--db`` takes a database URL or an SQLite file path. ``--policy``
chooses the default rules: ``legacy`` (the old admin-only defaults also
pass), ``secure`` (only the new role-based defaults) or ``open`` (every
rule allowed to any authenticated caller except admin_api; for test
harnesses). ``--cors`` allows origin http://valid.example.com with header
openstack-api-version, for the conformance harness; real deployments set
``[cors]`` in the config file.
"""

import gc
import os
import sys

from gunicorn.app import base as gunicorn_base
from oslo_config import cfg
from oslo_log import log as logging

from placement import conf as conf_mod
from placement.api import app as app_mod
from placement.api import policy as policy_mod
from placement.db import store as store_mod

LOG = logging.getLogger(__name__)

CORS_TEST_ORIGIN = "http://valid.example.com"
CORS_TEST_HEADERS = ["openstack-api-version"]

CLI_OPTS = [
    cfg.HostAddressOpt("host", help="Listen address (default: [api] "
                                    "bind_host)."),
    cfg.PortOpt("port", help="Listen port (default: [api] bind_port)."),
    cfg.IntOpt("workers", min=1,
               help="Server processes (default: [api] workers)."),
    cfg.IntOpt("threads", min=1,
               help="Threads per process (default: [api] threads)."),
    cfg.StrOpt("db", help="Database URL, or the path of an SQLite file "
                          "(default: [placement_database] connection)."),
    cfg.StrOpt("policy", choices=policy_mod.MODES,
               help="Default policy rules: legacy, secure or open (see "
                    "the command's help)."),
    # dest: the [cors] option group already answers to conf.cors.
    cfg.BoolOpt("cors", dest="test_cors", default=False,
                help="Allow CORS requests from http://valid.example.com "
                     "with header openstack-api-version (tests)."),
]


def database_url(value):
    if "://" in value:
        return value
    return "sqlite:///" + os.path.abspath(value)


def build_conf(argv):
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    app_mod.register_opts(conf)
    logging.register_options(conf)
    logging.set_defaults(default_log_levels=(
        logging.get_default_log_levels() + ["alembic=WARN"]))
    conf.register_cli_opts(CLI_OPTS)
    conf(argv, project="gantt", prog="gantt-placement-api")
    if conf.db:
        conf.set_override("connection", database_url(conf.db),
                          group="placement_database")
    if conf.test_cors:
        conf.set_override("allowed_origin", [CORS_TEST_ORIGIN], group="cors")
        conf.set_override("allow_headers", CORS_TEST_HEADERS, group="cors")
    return conf


class Server(gunicorn_base.BaseApplication):
    """gunicorn with its settings from our options; the application is
    built in each worker, after the fork."""

    def __init__(self, conf):
        self.conf = conf
        super().__init__()

    def load_config(self):
        conf = self.conf
        settings = {
            "bind": f"{conf.host or conf.api.bind_host}:"
                    f"{conf.port or conf.api.bind_port}",
            "workers": conf.workers or conf.api.workers,
            "threads": conf.threads or conf.api.threads,
            "worker_class": "gthread",
            "proc_name": "gantt-placement-api",
            "accesslog": None,
            "errorlog": "-",
            "loglevel": "warning",
            "keepalive": 5,
            "graceful_timeout": 10,
        }
        for name, value in settings.items():
            self.cfg.set(name, value)

    def load(self):
        conf = self.conf
        # The schema was synced by the master; workers only connect.
        store = store_mod.Store(conf)
        app = app_mod.make_app(conf, store=store, policy_mode=conf.policy)
        # What is loaded now lives as long as the worker: keep it out of
        # the collector's passes. A large answer (the candidates of a
        # thousand providers) is tens of thousands of short-lived dicts
        # without cycles; with the default young-generation threshold
        # (700) the collector walks them over and over while they are
        # built, which doubled the time of such requests. Collections
        # still happen, less often.
        gc.collect()
        gc.freeze()
        gc.set_threshold(50_000, 20, 20)
        return app


def prepare_database(conf):
    store = store_mod.Store.open(conf)
    store.dispose()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        conf = build_conf(argv)
    except cfg.Error as exc:
        print(f"gantt-placement-api: {exc}", file=sys.stderr)
        return 2
    logging.setup(conf, "gantt")
    prepare_database(conf)
    Server(conf).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
