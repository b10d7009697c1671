"""The application under test for the in-process gabbi runs.

gabbi builds one HTTP client per test when it collects the tests, each
with the WSGI app the intercept factory returns; the fixtures of a YAML
file then start a fresh application (a clean database, the file's policy
mode and CORS setting) that those clients reach through the harness.

SQLite gets a copy of a migrated template file per YAML file; PostgreSQL
and MySQL get one scratch database per session (as tests/databases makes
them), emptied and re-seeded for each file.
"""

import os
import shutil
import tempfile

from placement.api import app as app_mod
from placement.candidates import engine as engine_mod
from placement.db import migration
from placement.db import store as store_mod
from tests import databases

CORS_ORIGIN = "http://valid.example.com"


class Harness:
    def __init__(self, engine_name):
        self.engine_name = engine_name
        self.app = self.store = self.engine = None
        self._scratch = tempfile.mkdtemp(prefix="gantt-gabbi-")
        self._url = None  # the template (SQLite) or scratch database
        self._path = None

    def intercept(self):
        """gabbi's intercept factory: one proxy to whatever application
        the running fixture started."""
        return self._proxy

    def _proxy(self, environ, start_response):
        # httpx's in-process transport hands PATH_INFO over as text;
        # servers (PEP 3333) hand over the UTF-8 bytes as latin-1.
        path = environ.get("PATH_INFO", "")
        environ["PATH_INFO"] = path.encode("utf-8").decode("latin-1")
        return self.app(environ, start_response)

    def available(self):
        """None, or why the database server cannot be used."""
        if self.engine_name == "sqlite" or self._url:
            return None
        try:
            self._url = databases.create_scratch(self.engine_name)
        except Exception as exc:  # any connection failure
            return str(exc).splitlines()[0]
        self._migrate(self._url)
        return None

    def _migrate(self, url):
        store = store_mod.Store(databases.make_conf(url))
        migration.sync(store.engine)
        store.dispose()

    def _fresh_url(self):
        if self.engine_name != "sqlite":
            self.available()
            return self._url
        if self._url is None:
            template = os.path.join(self._scratch, "template.sqlite")
            self._url = f"sqlite:///{template}"
            self._migrate(self._url)
        handle, self._path = tempfile.mkstemp(suffix=".sqlite",
                                              dir=self._scratch)
        os.close(handle)
        shutil.copyfile(self._url[len("sqlite:///"):], self._path)
        return f"sqlite:///{self._path}"

    def start(self, policy_mode, cors):
        self.stop()
        conf = databases.make_conf(
            self._fresh_url(),
            {("placement_database", "sync_on_startup"): False})
        app_mod.register_opts(conf)
        if cors:
            conf.set_override("allowed_origin", [CORS_ORIGIN], group="cors")
            conf.set_override("allow_headers", ["openstack-api-version"],
                              group="cors")
        self.store = store_mod.Store(conf)
        if self.engine_name != "sqlite":
            databases.wipe(self.store.engine)
            migration.seed(self.store.engine)
        self.engine = engine_mod.CandidatesEngine(self.store, conf)
        self.app = app_mod.make_app(conf, store=self.store,
                                    engine=self.engine,
                                    policy_mode=policy_mode)

    def stop(self):
        if self.engine is not None:
            self.engine.close()
        if self.store is not None:
            self.store.dispose()
        if self._path:
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(self._path + suffix):
                    os.unlink(self._path + suffix)
        self.app = self.store = self.engine = self._path = None

    def close(self):
        self.stop()
        if self.engine_name != "sqlite" and self._url:
            databases.drop_scratch(self.engine_name, self._url)
        self._url = None
        shutil.rmtree(self._scratch, ignore_errors=True)
