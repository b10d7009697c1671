"""from_placement.fetch against a real gantt placement API served over
HTTP: the document it reads loads into a fresh database as the same cloud,
and failures name the URL and what went wrong."""

import http.server
import json
import socket
import threading

import pytest
import requests

from cloudfile import loader
from placement.db import store as store_mod
from simulation import from_placement
from tests import databases
from tests.functional import api_helpers

COMPUTE_2 = "2f0c61a4-3b57-4c6e-9f55-0d6f4e1a7c22"
RACK = "4a8e9a52-0f1d-4d87-9a56-6f5d2a1c0b01"

NUMA = {
    "VCPU": {"total": 8, "reserved": 1, "max_unit": 4,
             "allocation_ratio": 4.0},
    "MEMORY_MB": {"total": 16384, "reserved": 512, "min_unit": 256,
                  "max_unit": 8192, "step_size": 256,
                  "allocation_ratio": 1.5},
}

# The cloud the source server holds.
SOURCE = {
    "aggregates": {"rack-1": RACK},
    "resource_classes": ["CUSTOM_FPGA_X"],
    "traits": ["CUSTOM_GOLD", "CUSTOM_SPARE"],  # SPARE: on no provider
    "providers": [
        {"name": "compute-1",
         "inventories": {"CUSTOM_FPGA_X": {"total": 2, "max_unit": 1}},
         "traits": ["HW_CPU_X86_AVX2", "CUSTOM_GOLD"],
         "aggregates": ["rack-1"],
         "compute": {},
         "children": [
             {"name": "compute-1-numa1", "inventories": NUMA},
             {"name": "compute-1-numa0", "inventories": NUMA,
              "traits": ["HW_NUMA_ROOT"]},
         ]},
        {"name": "shared-disk",
         "inventories": {"DISK_GB": {"total": 2000, "reserved": 100,
                                     "min_unit": 10, "max_unit": 500,
                                     "step_size": 10}},
         "traits": ["MISC_SHARES_VIA_AGGREGATE"],
         "aggregates": ["rack-1"]},
        {"name": "compute-2", "uuid": COMPUTE_2,
         "inventories": {"VCPU": 4, "MEMORY_MB": 8192}, "compute": {}},
        {"name": "empty-root"},
    ],
    "allocations": [
        {"consumer": "vm-1", "project_id": "demo", "user_id": "alice",
         "consumer_type": "INSTANCE",
         "resources": {"compute-1-numa0": {"VCPU": 2, "MEMORY_MB": 1024},
                       "compute-1": {"CUSTOM_FPGA_X": 1},
                       "shared-disk": {"DISK_GB": 40}}},
        {"consumer": "vm-2", "project_id": "demo", "user_id": "bob",
         "resources": {"compute-1-numa1": {"VCPU": 4, "MEMORY_MB": 2048},
                       "shared-disk": {"DISK_GB": 100}}},
        {"consumer": "vm-3", "project_id": "other", "user_id": "carol",
         "resources": {COMPUTE_2: {"VCPU": 1, "MEMORY_MB": 512}}},
    ],
}


def uuid_of(name):
    return loader.stable_uuid("provider", name)


def _serve(server):
    threading.Thread(target=server.serve_forever, args=(0.05,),
                     daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}"


def _stop(server):
    server.shutdown()
    server.server_close()


def _open_store(path):
    return store_mod.Store.open(databases.make_conf(f"sqlite:///{path}"))


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """(url, in-process client, source cloud) of a gantt placement API
    on a database loaded with SOURCE, served over HTTP."""
    store = _open_store(tmp_path_factory.mktemp("source") / "p.sqlite")
    cloud = loader.parse(SOURCE, "source.yaml")
    loader.load(store, cloud)
    url, app, stop = api_helpers.serve_http(store)
    yield url, api_helpers.Client(app), cloud
    stop()
    store.dispose()


@pytest.fixture
def fake():
    """A small HTTP server answering {path: (status, content type, body)}
    to GETs, 404 otherwise: endpoints gantt's API would never be."""
    answers = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            status, kind, body = answers.get(
                self.path, (404, "text/plain", "nothing here"))
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    url = _serve(server)
    yield url, answers
    _stop(server)


def _json(value):
    return 200, "application/json", json.dumps(value)


def test_document_describes_the_cloud(source):
    url, _, _ = source
    doc = from_placement.fetch(url + "/", token="admin")
    assert doc["resource_classes"] == ["CUSTOM_FPGA_X"]
    assert doc["traits"] == ["CUSTOM_GOLD", "CUSTOM_SPARE"]
    # Parents first, each tree depth first, siblings by name.
    assert [p["name"] for p in doc["providers"]] == [
        "compute-1", "compute-1-numa0", "compute-1-numa1", "compute-2",
        "empty-root", "shared-disk"]
    by_name = {p["name"]: p for p in doc["providers"]}
    assert by_name["compute-1"] == {
        "name": "compute-1", "uuid": uuid_of("compute-1"),
        "inventories": {"CUSTOM_FPGA_X": {
            "total": 2, "reserved": 0, "min_unit": 1, "max_unit": 1,
            "step_size": 1, "allocation_ratio": 1.0}},
        "traits": ["CUSTOM_GOLD", "HW_CPU_X86_AVX2"],
        "aggregates": [RACK],
        # CPU and memory are on its children: still a compute node.
        "compute": {"host": "compute-1"},
    }
    numa0 = by_name["compute-1-numa0"]
    assert numa0["parent"] == uuid_of("compute-1")
    assert "compute" not in numa0
    assert numa0["inventories"]["MEMORY_MB"] == {
        "total": 16384, "reserved": 512, "min_unit": 256, "max_unit": 8192,
        "step_size": 256, "allocation_ratio": 1.5}
    assert numa0["inventories"]["VCPU"]["allocation_ratio"] == 4.0
    assert by_name["compute-2"]["uuid"] == COMPUTE_2
    assert by_name["compute-2"]["compute"] == {"host": "compute-2"}
    for name in ("shared-disk", "empty-root"):
        assert "compute" not in by_name[name]
        assert "parent" not in by_name[name]
    assert by_name["shared-disk"]["traits"] == ["MISC_SHARES_VIA_AGGREGATE"]
    assert by_name["empty-root"]["inventories"] == {}

    allocations = {a["consumer"]: a for a in doc["allocations"]}
    vm1 = allocations[loader.stable_uuid("consumer", "vm-1")]
    assert vm1 == {
        "consumer": loader.stable_uuid("consumer", "vm-1"),
        "project_id": "demo", "user_id": "alice",
        "consumer_type": "INSTANCE",
        "resources": {
            uuid_of("compute-1-numa0"): {"MEMORY_MB": 1024, "VCPU": 2},
            uuid_of("compute-1"): {"CUSTOM_FPGA_X": 1},
            uuid_of("shared-disk"): {"DISK_GB": 40}},
    }
    # A consumer without a type stays without one.
    vm2 = allocations[loader.stable_uuid("consumer", "vm-2")]
    assert "consumer_type" not in vm2
    assert len(doc["allocations"]) == 3
    assert [a["consumer"] for a in doc["allocations"]] == sorted(
        allocations)


def _provider_view(client, uuid):
    base = f"/resource_providers/{uuid}"
    view = {}
    for part, key in (("", None), ("/inventories", "inventories"),
                      ("/traits", "traits"), ("/aggregates", "aggregates"),
                      ("/usages", "usages")):
        response = client.get(base + part)
        assert response.status_code == 200, response.text
        body = response.json
        view[part or "provider"] = (
            {k: body[k] for k in ("uuid", "name", "parent_provider_uuid",
                                  "root_provider_uuid")}
            if key is None else body[key])
    view["/traits"] = sorted(view["/traits"])
    view["/aggregates"] = sorted(view["/aggregates"])
    return view


def _cloud_view(client, consumers):
    """What the REST API says of every provider and consumer, without
    generations (which count writes, not state)."""
    listed = client.get("/resource_providers").json["resource_providers"]
    providers = {rp["uuid"]: _provider_view(client, rp["uuid"])
                 for rp in listed}
    allocations = {}
    for consumer in consumers:
        body = client.get(f"/allocations/{consumer}").json
        body.pop("consumer_generation")
        for entry in body["allocations"].values():
            entry.pop("generation")
        allocations[consumer] = body
    classes = sorted(rc["name"] for rc in client.get(
        "/resource_classes").json["resource_classes"])
    traits = sorted(client.get("/traits").json["traits"])
    return {"providers": providers, "allocations": allocations,
            "resource_classes": classes, "traits": traits}


def test_round_trip_into_a_fresh_database(source, tmp_path):
    url, source_client, source_cloud = source
    doc = from_placement.fetch(url, token="admin")
    cloud = loader.parse(doc, path=url)
    store = _open_store(tmp_path / "copy.sqlite")
    app, engine = api_helpers.make_app(store)
    try:
        summary = loader.load(store, cloud)
        assert (summary.providers, summary.consumers, summary.hosts) == (
            6, 3, 2)
        consumers = [a.consumer_uuid for a in source_cloud.allocations]
        copy = _cloud_view(api_helpers.Client(app), consumers)
        original = _cloud_view(source_client, consumers)
    finally:
        engine.close()
        store.dispose()
    assert copy == original
    # The comparison saw what it should have.
    numa0 = original["providers"][uuid_of("compute-1-numa0")]
    assert numa0["/usages"] == {"VCPU": 2, "MEMORY_MB": 1024}
    assert numa0["provider"]["parent_provider_uuid"] == uuid_of("compute-1")
    assert original["allocations"][consumers[0]]["consumer_type"] == (
        "INSTANCE")


class _RecordingSession(requests.Session):
    """A session that remembers the headers of every request."""

    def __init__(self):
        super().__init__()
        self.sent = []

    def send(self, request, **kwargs):
        self.sent.append((request.url, dict(request.headers)))
        return super().send(request, **kwargs)


def test_headers_session_and_microversion(source):
    url, _, _ = source
    session = _RecordingSession()
    first = from_placement.fetch(url, token="admin", session=session)
    # Providers: 6 x (inventories, traits, aggregates) + allocations of
    # the 5 with inventory; consumers: 3; plus the root document, the
    # provider list, classes and traits.
    assert len(session.sent) == 6 * 3 + 5 + 3 + 4
    root_headers = session.sent[0][1]
    assert "OpenStack-API-Version" not in root_headers
    for _, headers in session.sent[1:]:
        assert headers["OpenStack-API-Version"] == "placement 1.39"
        assert headers["X-Auth-Token"] == "admin"
    # The session belongs to the caller: still usable.
    assert session.get(url + "/").status_code == 200
    # Same cloud, same document; a newer wish is lowered to the server's.
    assert from_placement.fetch(url, token="admin",
                                microversion="1.99") == first
    # Before 1.38 consumers have no type.
    older = from_placement.fetch(url, token="admin", microversion="1.30")
    assert older["providers"] == first["providers"]
    assert all("consumer_type" not in a for a in older["allocations"])


def test_without_a_token_names_the_refusal(source):
    url, _, _ = source
    with pytest.raises(from_placement.PlacementReadError) as caught:
        from_placement.fetch(url)
    error = caught.value
    assert error.url == url + "/resource_providers"
    assert str(error).startswith(f"GET {url}/resource_providers: HTTP 401")
    assert "Unauthorized" in str(error)


def test_wrong_path_is_a_404(source):
    url, _, _ = source
    with pytest.raises(from_placement.PlacementReadError) as caught:
        from_placement.fetch(url + "/placement", token="admin")
    assert caught.value.url == url + "/placement/"
    assert "HTTP 404 Not Found: Not Found" in str(caught.value)


def test_nothing_listening():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(from_placement.PlacementReadError) as caught:
        from_placement.fetch(url, timeout=5)
    assert str(caught.value).startswith(f"GET {url}/: connection failed: ")
    assert "refused" in str(caught.value).lower()


def test_not_json(fake):
    url, answers = fake
    answers["/"] = (200, "text/html", "<html><body>Welcome</body></html>")
    with pytest.raises(from_placement.PlacementReadError) as caught:
        from_placement.fetch(url)
    assert caught.value.url == url + "/"
    assert "not JSON (text/html)" in caught.value.message
    assert "<html>" in caught.value.message


def test_json_that_is_not_placement(fake):
    url, answers = fake
    answers["/"] = _json({"hello": "world"})
    with pytest.raises(from_placement.PlacementReadError) as caught:
        from_placement.fetch(url)
    assert "no 'versions'" in str(caught.value)


def test_too_old_a_placement(fake):
    url, answers = fake
    answers["/"] = _json({"versions": [{"id": "v1.0", "min_version": "1.0",
                                        "max_version": "1.10"}]})
    with pytest.raises(from_placement.PlacementReadError) as caught:
        from_placement.fetch(url)
    assert "1.10 is the newest" in str(caught.value)
    assert "needs 1.14" in str(caught.value)


def test_a_failing_provider_read_names_its_url(fake):
    url, answers = fake
    uuid = "7d3e2f10-8a4b-4c5d-9e6f-0a1b2c3d4e5f"
    answers["/"] = _json({"versions": [{"max_version": "1.39"}]})
    answers["/resource_providers"] = _json({"resource_providers": [
        {"uuid": uuid, "name": "rp", "parent_provider_uuid": None,
         "root_provider_uuid": uuid}]})
    answers[f"/resource_providers/{uuid}/inventories"] = (
        503, "application/json", json.dumps({"errors": [{
            "status": 503, "title": "Service Unavailable",
            "detail": "The database is\n\n  away."}]}))
    with pytest.raises(from_placement.PlacementReadError) as caught:
        from_placement.fetch(url)
    assert str(caught.value) == (
        f"GET {url}/resource_providers/{uuid}/inventories: HTTP 503 "
        f"Service Unavailable: Service Unavailable The database is away.")


def test_a_name_that_is_another_providers_uuid(fake):
    url, answers = fake
    first = "7d3e2f10-8a4b-4c5d-9e6f-0a1b2c3d4e5f"
    second = "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d"
    answers["/"] = _json({"versions": [{"max_version": "1.39"}]})
    answers["/resource_providers"] = _json({"resource_providers": [
        {"uuid": first, "name": "rp"},
        {"uuid": second, "name": first}]})
    with pytest.raises(from_placement.PlacementReadError) as caught:
        from_placement.fetch(url)
    assert f"provider {second} is named {first!r}" in str(caught.value)
