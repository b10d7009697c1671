"""Run by the Placement 16 virtualenv's Python (tests/placement16/
install.py), never imported by gantt's tests: OpenStack Placement's own
WSGI application, in this process, on the database named on stdin.

stdin: {"url": SQLAlchemy URL, "requests": [[method, path, version,
body], ...], "record": [[path, version], ...]}. Placement creates its
schema there (its own migrations), answers every request (each must
succeed), then every recorded GET; stdout: {"answers": [[status,
body], ...]} in the order of "record". With "serve": PORT, it then
serves the application over HTTP on 127.0.0.1:PORT until killed
(stdout's first line, the answers, says it is ready).
"""

import json
import os
import sys
import warnings
import wsgiref.simple_server

warnings.filterwarnings("ignore")

import webob  # noqa: E402
from oslo_config import cfg  # noqa: E402

# OpenStack Placement's package, from the virtualenv: not gantt's (this
# file's folder, first on sys.path, holds no "placement").
from placement import conf as placement_conf  # noqa: E402
from placement import db_api, deploy  # noqa: E402


def make_app(url):
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf.set_default("connection", url, group="placement_database")
    conf([], default_config_files=[])
    conf.set_override("auth_strategy", "noauth2", group="api")
    conf.set_override("sync_on_startup", True, group="placement_database")
    conf.set_override("policy_file", "/nonexistent-policy.yaml",
                      group="oslo_policy")
    db_api.configure(conf)
    return deploy.loadapp(conf)


def call(app, method, path, version, body=None):
    request = webob.Request.blank(path, method=method)
    request.headers["x-auth-token"] = "admin"
    request.headers["openstack-api-version"] = f"placement {version}"
    request.headers["accept"] = "application/json"
    if body is not None:
        request.body = json.dumps(body).encode()
        request.content_type = "application/json"
    response = request.get_response(app)
    data = json.loads(response.body) if response.body else None
    return response.status_int, data


def main():
    job = json.load(sys.stdin)
    app = make_app(job["url"])
    for method, path, version, body in job["requests"]:
        status, data = call(app, method, path, version, body)
        if status >= 300:
            sys.exit(f"{method} {path}: {status} {data}")
    answers = [call(app, "GET", path, version)
               for path, version in job["record"]]
    print(json.dumps({"answers": answers}), flush=True)
    if job.get("serve"):
        server = wsgiref.simple_server.make_server(
            "127.0.0.1", job["serve"], app,
            handler_class=_QuietHandler)
        server.serve_forever()


class _QuietHandler(wsgiref.simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


if __name__ == "__main__":
    os.environ.setdefault("OS_PLACEMENT_CONFIG_DIR", "/nonexistent")
    main()
