"""The REST API's own machinery: pipeline, headers, errors, auth, policy,
CORS and the route table (the upstream gabbi files in tests/conformance
cover the behaviour of each route)."""

import json

import pytest
import webob

from placement.api import app as app_mod
from placement.api import errors, microversion, routes
from tests.functional import api_helpers


@pytest.fixture
def api(sqlite_store):
    app, engine = api_helpers.make_app(sqlite_store)
    yield api_helpers.Client(app)
    engine.close()


def _errors(response):
    body = response.json
    assert set(body) == {"errors"}
    return body["errors"][0]


def test_every_response_names_its_microversion(api):
    for response in (api.get("/"), api.get("/nowhere"),
                     api.get("/resource_providers", version="1.14"),
                     api.delete("/resource_providers")):
        assert response.headers["openstack-api-version"].startswith(
            "placement 1.")
        assert "openstack-api-version" in response.headers.getall("vary")
    plain = api_helpers.Client(api.app, version=None).get("/")
    assert plain.headers["openstack-api-version"] == "placement 1.0"
    assert api.get("/", version="latest").headers[
        "openstack-api-version"] == f"placement {microversion.MAX_VERSION}"


def test_error_body_carries_request_id_and_code_from_1_23(api):
    old = api.get("/resource_providers/nope", version="1.22")
    assert old.status_int == 404
    error = _errors(old)
    assert "code" not in error
    assert error["request_id"] == old.headers["x-openstack-request-id"]
    assert error["request_id"].startswith("req-")
    new = _errors(api.get("/resource_providers/nope", version="1.23"))
    assert new["code"] == "placement.undefined_code"
    assert new["status"] == 404 and new["title"] == "Not Found"
    assert "No resource provider with uuid nope found" in new["detail"]


def test_unknown_and_malformed_versions(api):
    bad = api.get("/", version="1.x")
    assert bad.status_int == 400
    assert "invalid version string" in _errors(bad)["detail"]
    unknown = api.get("/", version="2.0")
    assert unknown.status_int == 406
    error = _errors(unknown)
    assert (error["min_version"], error["max_version"]) == (
        microversion.MIN_VERSION, microversion.MAX_VERSION)


def test_method_not_allowed_lists_methods(api):
    response = api.request("PATCH", "/resource_providers")
    assert response.status_int == 405
    assert response.headers["allow"] == "GET, POST"


def test_route_added_later_is_404_before_its_version(api):
    assert api.get("/traits", version="1.5").status_int == 404
    assert api.get("/traits", version="1.6").status_int == 200
    # DELETE .../inventories answers 405 before 1.5, as upstream does.
    rp = api.post("/resource_providers", {"name": "a"}).json["uuid"]
    assert api.delete(f"/resource_providers/{rp}/inventories",
                      version="1.4").status_int == 405


def test_content_rules(api):
    assert api.post("/resource_providers", raw=b"{}",
                    content_type="text/plain").status_int == 415
    missing = api.post("/resource_providers", raw=b"{}", content_type=None)
    assert missing.status_int == 400
    assert "content-type header required" in _errors(missing)["detail"]
    refused = api.get("/resource_providers",
                      headers={"accept": "text/plain"})
    assert refused.status_int == 406


def test_errors_follow_accept(api):
    html = api.get("/nowhere", headers={"accept": "text/html"})
    assert html.status_int == 404 and html.content_type == "text/html"
    star = api.get("/nowhere", headers={"accept": "*/*"})
    assert star.content_type == "application/json"


def test_location_is_absolute_under_a_mount_point(sqlite_store):
    app, engine = api_helpers.make_app(sqlite_store)
    req = webob.Request.blank("/placement/resource_providers",
                              method="POST",
                              base_url="http://example.net")
    req.script_name, req.path_info = "/placement", "/resource_providers"
    req.headers.update({"x-auth-token": "admin",
                        "openstack-api-version": "placement 1.20"})
    req.body = json.dumps({"name": "mounted"}).encode()
    req.content_type = "application/json"
    response = req.get_response(app)
    engine.close()
    uuid = response.json["uuid"]
    assert response.location == (
        f"http://example.net/placement/resource_providers/{uuid}")
    assert response.json["links"][0]["href"] == (
        f"/placement/resource_providers/{uuid}")


def test_unexpected_exception_is_a_500_with_the_error_body(sqlite_store):
    def broken(req):
        raise RuntimeError("boom")

    app, engine = api_helpers.make_app(
        sqlite_store, router=routes.Router({"/": {"GET": routes.op(broken)}}))
    response = api_helpers.Client(app).get("/")
    engine.close()
    assert response.status_int == 500
    error = _errors(response)
    assert error["status"] == 500
    assert "boom" not in error["detail"]


def test_noauth_needs_a_token_except_at_the_root(api):
    api.token = None
    assert api.get("/").status_int == 200
    assert api.get("/resource_providers").status_int == 401


def test_noauth_roles_and_project_headers(sqlite_store):
    app, engine = api_helpers.make_app(sqlite_store, policy_mode="secure")
    user = api_helpers.Client(app, token="alice:demo")
    assert user.get("/resource_providers").status_int == 403
    reader = user.get("/usages", query={"project_id": "demo"},
                      headers={"x-roles": "reader"})
    assert reader.status_int == 200
    other = user.get("/usages", query={"project_id": "demo"},
                     headers={"x-roles": "reader", "x-project-id": "other"})
    assert other.status_int == 403
    assert user.get("/resource_providers",
                    headers={"x-roles": "service"}).status_int == 200
    engine.close()


def test_policy_file_overrides_a_default(sqlite_store, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text('"placement:resource_providers:list": "!"\n')
    app_mod.register_opts(sqlite_store.conf)
    sqlite_store.conf.set_override("policy_file", str(policy),
                                   group="oslo_policy")
    app, engine = api_helpers.make_app(sqlite_store)
    client = api_helpers.Client(app)
    refused = client.get("/resource_providers")
    assert refused.status_int == 403
    assert "placement:resource_providers:list" in _errors(refused)["detail"]
    assert client.get("/resource_classes").status_int == 200
    engine.close()


def test_open_policy_allows_everything_but_admin_api(sqlite_store):
    app, engine = api_helpers.make_app(sqlite_store, policy_mode="open")
    user = api_helpers.Client(app, token="bob")
    assert user.get("/resource_providers").status_int == 200
    assert user.post("/resource_providers",
                     {"name": "by-bob"}).status_int == 200
    engine.close()


def test_cors_when_configured(sqlite_store):
    app, engine = api_helpers.make_app(sqlite_store, cors=True)
    client = api_helpers.Client(app)
    allowed = client.get("/", headers={"origin": "http://valid.example.com"})
    assert allowed.headers["access-control-allow-origin"] == (
        "http://valid.example.com")
    other = client.get("/", headers={"origin": "http://other.example.com"})
    assert "access-control-allow-origin" not in other.headers
    engine.close()


def test_keystone_strategy_puts_auth_token_in_front(sqlite_store):
    conf = sqlite_store.conf
    app_mod.register_opts(conf)
    conf.set_override("auth_strategy", "keystone", group="api")
    conf.set_override("www_authenticate_uri", "http://keystone.invalid/v3",
                      group="keystone_authtoken")
    app, engine = api_helpers.make_app(sqlite_store)
    client = api_helpers.Client(app, token=None)
    assert client.get("/").status_int == 200
    refused = client.get("/resource_providers")
    assert refused.status_int == 401
    assert "keystone.invalid" in refused.headers["www-authenticate"]
    engine.close()


def test_error_helpers_keep_codes():
    from placement import errors as placement_errors
    exc = placement_errors.InventoryInUse(["VCPU"], "rp")
    failure = errors.from_placement_error(exc)
    assert (failure.status, failure.code) == (409, exc.code)
    plain = errors.from_placement_error(
        placement_errors.ResourceClassNotFound("X"))
    assert (plain.status, plain.code) == (404, None)


def test_register_opts_is_idempotent(sqlite_store):
    app_mod.register_opts(sqlite_store.conf)
    app_mod.register_opts(sqlite_store.conf)
    assert sqlite_store.conf.cors.allowed_origin is None


def test_wsgi_entry_point_reads_the_named_config(tmp_path):
    from placement.api import wsgi
    config = tmp_path / "gantt.conf"
    config.write_text(
        f"[placement_database]\n"
        f"connection = sqlite:///{tmp_path / 'placement.sqlite'}\n"
        f"[api]\ncandidates_cache_entries = 0\n")
    _sync(config)
    app = wsgi.init_application({"GANTT_CONFIG_FILE": str(config)})
    response = api_helpers.Client(app).post("/resource_providers",
                                            {"name": "from-wsgi"})
    assert response.status_int == 200
    assert (tmp_path / "placement.sqlite").exists()


def _sync(config):
    from gantt.cmd import manage
    assert manage.main(["--config-file", str(config), "db", "sync"]) == 0


def engine_has_tables(path):
    import sqlite3
    with sqlite3.connect(path) as db:
        return bool(db.execute(
            "SELECT name FROM sqlite_master WHERE type='table'").fetchall())


def test_wsgi_workers_do_not_migrate_503_until_db_sync(tmp_path,
                                                      monkeypatch):
    from placement.api import wsgi
    config = tmp_path / "gantt.conf"
    config.write_text(
        f"[placement_database]\n"
        f"connection = sqlite:///{tmp_path / 'placement.sqlite'}\n")
    monkeypatch.setenv("GANTT_CONFIG_FILE", str(config))
    app = api_helpers.Client(wsgi._Lazy())
    response = app.get("/resource_providers")
    assert response.status_int == 503
    detail = response.json["errors"][0]["detail"]
    assert detail.strip().endswith(
        "the database has no gantt schema; run gantt-manage db sync")
    # Nothing was created by the worker: the schema is still missing.
    assert app.get("/resource_providers").status_int == 503
    assert not engine_has_tables(tmp_path / "placement.sqlite")
    _sync(config)
    # The next request looks again: no restart needed.
    assert app.get("/resource_providers").json == {"resource_providers": []}


def test_wsgi_keystone_without_an_auth_plugin_503s_saying_why(
        tmp_path, monkeypatch):
    from placement.api import wsgi
    config = tmp_path / "gantt.conf"
    config.write_text(
        f"[placement_database]\n"
        f"connection = sqlite:///{tmp_path / 'placement.sqlite'}\n"
        "[api]\nauth_strategy = keystone\n")
    monkeypatch.setenv("GANTT_CONFIG_FILE", str(config))
    response = api_helpers.Client(wsgi._Lazy()).get("/resource_providers")
    assert response.status_int == 503
    assert ("[api] auth_strategy = keystone needs [keystone_authtoken] "
            "auth_type") in response.json["errors"][0]["detail"]
    assert not (tmp_path / "placement.sqlite").exists()


def test_api_server_binds_to_its_own_options(tmp_path):
    """[DEFAULT] host is gantt-scheduler's RPC server name: the API
    listens on [api] bind_host/bind_port, and the command line wins."""
    from gantt.cmd import api as cmd
    config = tmp_path / "gantt.conf"
    config.write_text("[DEFAULT]\nhost = scheduler-7\nport = 9999\n"
                      "workers = 9\n"
                      "[api]\nbind_host = 0.0.0.0\nbind_port = 8780\n"
                      "workers = 3\n")
    conf = cmd.build_conf(["--config-file", str(config)])
    assert cmd.bind_address(conf) == "0.0.0.0:8780"
    server = cmd.Server(conf)
    assert server.cfg.bind == ["0.0.0.0:8780"]
    assert (server.cfg.workers, server.cfg.threads) == (3, 8)
    assert server.cfg.worker_class is cmd.JsonErrorWorker
    given = cmd.build_conf(["--config-file", str(config), "--host", "::1",
                            "--port", "8790", "--workers", "1"])
    assert cmd.bind_address(given) == "[::1]:8790"
    assert cmd.Server(given).cfg.workers == 1
    empty = tmp_path / "empty.conf"
    empty.write_text("")
    assert cmd.bind_address(cmd.build_conf(
        ["--config-file", str(empty)])) == "127.0.0.1:8778"
