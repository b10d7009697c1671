"""Calling the REST API in process: an application on a test store and
a small client."""

import json
import socketserver
import threading
import urllib.parse
from wsgiref import simple_server

import sqlalchemy as sa
import webob

from placement.api import app as app_mod
from placement.candidates import engine as engine_mod
from placement.db import tables


def make_app(store, policy_mode="legacy", cors=False, router=None):
    """The WSGI application on ``store`` (and its engine, to close)."""
    conf = store.conf
    app_mod.register_opts(conf)
    if cors:
        conf.set_override("allowed_origin", ["http://valid.example.com"],
                          group="cors")
    engine = engine_mod.CandidatesEngine(store, conf)
    return app_mod.make_app(conf, store=store, engine=engine,
                            policy_mode=policy_mode, router=router), engine


class Client:
    """Requests with an admin token, JSON in and out."""

    def __init__(self, app, version="latest", token="admin"):
        self.app = app
        self.version = version
        self.token = token

    def request(self, method, path, body=None, version=None, query=None,
                headers=None, raw=None, content_type="application/json"):
        if query:
            path += "?" + urllib.parse.urlencode(query, doseq=True)
        req = webob.Request.blank(path, method=method)
        req.headers["accept"] = "application/json"
        if self.token is not None:
            req.headers["x-auth-token"] = self.token
        version = version or self.version
        if version:
            req.headers["openstack-api-version"] = f"placement {version}"
        if raw is not None:
            req.body = raw
        elif body is not None:
            req.body = json.dumps(body).encode()
        if (raw is not None or body is not None) and content_type:
            req.content_type = content_type
        for name, value in (headers or {}).items():
            req.headers[name] = value
        return req.get_response(self.app)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("PUT", path, body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)


def snapshot(store):
    """Every row of every table, to compare before and after."""
    with store.engine.connect() as conn:
        return {name: sorted(
            tuple(str(v) for v in row) for row in conn.execute(
                sa.select(table)))
            for name, table in sorted(tables.metadata.tables.items())}


class _ThreadingWSGIServer(socketserver.ThreadingMixIn,
                           simple_server.WSGIServer):
    daemon_threads = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


def serve_http(store, wrap=None):
    """The REST API on ``store`` (behind ``wrap(app)`` when given),
    served over HTTP by threads of this process at a loopback URL:
    (url, app, stop)."""
    app, engine = make_app(store)
    served = wrap(app) if wrap is not None else app
    server = simple_server.make_server(
        "127.0.0.1", 0, served, server_class=_ThreadingWSGIServer,
        handler_class=_QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop():
        server.shutdown()
        server.server_close()
        thread.join(10)
        engine.close()

    return f"http://127.0.0.1:{server.server_port}", app, stop
