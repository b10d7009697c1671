"""A small Keystone v3 on a real socket, and a placement API behind a
token check, for the tests of reading a cloud as OpenStack clients do
(placement/adopt/cloud_auth.py).

:class:`Keystone` answers version discovery (GET / and /v3) and POST
/v3/auth/tokens (password or token method): a token in X-Subject-Token
and a catalog whose placement endpoint is what the test sets.
:func:`guarded_placement` serves gantt's REST API on a store and lets
through only requests carrying a token Keystone issued (as
keystonemiddleware would), handing gantt's noauth2 "admin" on.
"""

import http.server
import json
import os
import threading
import uuid

from tests.functional import api_helpers

USER = "alice"
PASSWORD = "s3cret"
PROJECT = "demo"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Keystone:
    """Keystone v3 at ``url`` (e.g. http://127.0.0.1:PORT/v3 is the auth
    URL); ``placement``: the catalog's placement URL (None: no placement
    in the catalog); ``issued``: the tokens given out; ``posts``: the
    bodies of the token requests."""

    def __init__(self, placement=None, region="RegionOne"):
        self.placement = placement
        self.region = region
        self.issued = []
        self.posts = []
        keystone = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                path = self.path.rstrip("/")
                if path in ("", "/v3"):
                    body = {"version": keystone._version()}
                    if path == "":
                        body = {"versions": {"values": [body["version"]]}}
                    self._answer(200 if path else 300, body)
                else:
                    self._answer(404, {"error": {"code": 404}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v3/auth/tokens":
                    return self._answer(404, {"error": {"code": 404}})
                keystone.posts.append(body)
                token = keystone._authenticate(body)
                if token is None:
                    return self._answer(401, {"error": {
                        "code": 401, "title": "Unauthorized",
                        "message": "The request you have made requires "
                                   "authentication."}})
                self._answer(201, {"token": keystone._token_body()},
                             {"X-Subject-Token": token})

            def _answer(self, status, body, headers=None):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      Handler)
        self.server.daemon_threads = True
        self.root = f"http://127.0.0.1:{self.server.server_port}"
        self.auth_url = self.root + "/v3"
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       args=(0.05,), daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)

    def _version(self):
        return {"id": "v3.14", "status": "stable",
                "updated": "2020-04-07T00:00:00Z",
                "links": [{"rel": "self", "href": self.auth_url + "/"}],
                "media-types": [{
                    "base": "application/json",
                    "type": "application/vnd.openstack.identity-v3+json"}]}

    def _authenticate(self, body):
        identity = body.get("auth", {}).get("identity", {})
        methods = identity.get("methods", [])
        if "password" in methods:
            user = identity["password"]["user"]
            if (user.get("name"), user.get("password")) != (USER, PASSWORD):
                return None
        elif "token" in methods:
            if identity["token"]["id"] not in self.issued:
                return None
        else:
            return None
        token = "gAAAA" + uuid.uuid4().hex
        self.issued.append(token)
        return token

    def _token_body(self):
        catalog = []
        if self.placement:
            catalog.append({
                "type": "placement", "name": "placement", "id": "p1",
                "endpoints": [
                    {"id": f"p1-{interface}", "interface": interface,
                     "region": self.region, "region_id": self.region,
                     "url": self.placement}
                    for interface in ("public", "internal", "admin")]})
        catalog.append({
            "type": "identity", "name": "keystone", "id": "k1",
            "endpoints": [{"id": "k1-public", "interface": "public",
                           "region": self.region,
                           "region_id": self.region,
                           "url": self.auth_url}]})
        return {
            "methods": ["password"],
            "expires_at": "2999-01-01T00:00:00.000000Z",
            "issued_at": "2020-01-01T00:00:00.000000Z",
            "user": {"id": "u1", "name": USER,
                     "domain": {"id": "default", "name": "Default"}},
            "project": {"id": "p1", "name": PROJECT,
                        "domain": {"id": "default", "name": "Default"}},
            "roles": [{"id": "r1", "name": "admin"}],
            "catalog": catalog,
        }


class _Guard:
    """keystonemiddleware's part: a token Keystone issued, or 401 (the
    version document at the root excepted)."""

    def __init__(self, app, keystone):
        self.app = app
        self.keystone = keystone
        self.seen = []

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO", "/") in ("", "/"):
            # The version document, open to all (as placement's is).
            return self.app(environ, start_response)
        token = environ.get("HTTP_X_AUTH_TOKEN")
        self.seen.append(token)
        if token not in self.keystone.issued:
            body = json.dumps({"errors": [{
                "status": 401, "title": "Unauthorized",
                "detail": "no valid token"}]}).encode()
            start_response("401 Unauthorized", [
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(body)))])
            return [body]
        environ["HTTP_X_AUTH_TOKEN"] = "admin"
        return self.app(environ, start_response)


def guarded_placement(store, keystone):
    """gantt's REST API on ``store`` over HTTP, taking only tokens
    ``keystone`` issued: (url, guard (its ``seen`` tokens), stop)."""
    guards = []

    def wrap(app):
        guards.append(_Guard(app, keystone))
        return guards[0]

    url, _, stop = api_helpers.serve_http(store, wrap)
    return url, guards[0], stop


def client_env(home, **variables):
    """The environment of a client command run as a user whose HOME is
    ``home``: none of ours OS_* variables or XDG_CONFIG_HOME (openstacksdk
    would find other clouds), this checkout importable, ``variables``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OS_") and k != "XDG_CONFIG_HOME"}
    env.update(HOME=str(home), PYTHONPATH=REPO)
    env.update(variables)
    return env


def os_variables(keystone, password=PASSWORD):
    """The OS_* variables of this Keystone's user, as an openrc sets them."""
    return {"OS_AUTH_URL": keystone.auth_url,
            "OS_USERNAME": USER, "OS_PASSWORD": password,
            "OS_PROJECT_NAME": PROJECT,
            "OS_USER_DOMAIN_NAME": "Default",
            "OS_PROJECT_DOMAIN_NAME": "Default"}
