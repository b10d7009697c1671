"""Real clients against a real gantt-placement-api process: the
OpenStack command line client with osc-placement, and openstacksdk's
placement proxy, both with admin_token auth against the embedded noauth2
default."""

import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import openstack
import pytest

BIN = pathlib.Path(sys.executable).parent
VERSION = "1.39"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    """A gantt-placement-api server on a fresh SQLite file."""
    tmp = tmp_path_factory.mktemp("api")
    port = _free_port()
    log = open(tmp / "server.log", "w")
    proc = subprocess.Popen(
        [str(BIN / "gantt-placement-api"), "--port", str(port),
         "--db", str(tmp / "placement.sqlite"), "--workers", "2"],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, (tmp / "server.log").read_text()
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "server did not listen"
            time.sleep(0.05)
    yield url
    proc.terminate()
    proc.wait(30)
    log.close()


def osc(endpoint, *args):
    """`openstack ... -f json` output, parsed."""
    command = [str(BIN / "openstack"), "--os-auth-type", "admin_token",
               "--os-token", "admin", "--os-endpoint", endpoint,
               "--os-placement-api-version", VERSION, *args, "-f", "json"]
    done = subprocess.run(command, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "OS_CLOUD": ""})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_openstack_client_resource_provider_workflow(endpoint):
    created = osc(endpoint, "resource", "provider", "create", "osc-cn1")
    uuid = created["uuid"]
    assert created["name"] == "osc-cn1"
    assert created["generation"] == 0
    assert created["root_provider_uuid"] == uuid
    assert created["parent_provider_uuid"] is None

    listed = osc(endpoint, "resource", "provider", "list")
    assert [(p["uuid"], p["name"]) for p in listed] == [(uuid, "osc-cn1")]

    inventory = osc(endpoint, "resource", "provider", "inventory", "set",
                    uuid, "--resource", "VCPU=8", "--resource",
                    "MEMORY_MB:allocation_ratio=1.5",
                    "--resource", "MEMORY_MB=4096")
    by_class = {row["resource_class"]: row for row in inventory}
    assert by_class["VCPU"]["total"] == 8
    assert by_class["MEMORY_MB"]["total"] == 4096
    assert by_class["MEMORY_MB"]["allocation_ratio"] == 1.5

    traits = osc(endpoint, "resource", "provider", "trait", "set", uuid,
                 "--trait", "HW_CPU_X86_AVX2", "--trait", "STORAGE_DISK_SSD")
    assert sorted(t["name"] for t in traits) == [
        "HW_CPU_X86_AVX2", "STORAGE_DISK_SSD"]

    candidates = osc(endpoint, "allocation", "candidate", "list",
                     "--resource", "VCPU=2", "--resource", "MEMORY_MB=512",
                     "--required", "HW_CPU_X86_AVX2")
    assert len(candidates) == 1
    assert candidates[0]["resource provider"] == uuid
    assert candidates[0]["allocation"] == "VCPU=2,MEMORY_MB=512"
    assert "MEMORY_MB=0/6144" in candidates[0]["inventory used/capacity"]

    assert osc(endpoint, "allocation", "candidate", "list", "--resource",
               "VCPU=9") == []

    shown = osc(endpoint, "resource", "provider", "show", uuid)
    assert shown["generation"] == 2


def test_openstacksdk_placement_proxy(endpoint):
    conn = openstack.connect(
        auth_type="admin_token",
        auth={"endpoint": endpoint, "token": "admin"},
        placement_endpoint_override=endpoint,
        placement_api_version=VERSION)
    rp = conn.placement.create_resource_provider(name="sdk-cn1")
    assert rp.name == "sdk-cn1"
    fetched = conn.placement.get_resource_provider(rp.id)
    assert (fetched.id, fetched.generation) == (rp.id, 0)
    assert fetched.root_provider_id == rp.id

    conn.placement.create_resource_provider_inventory(
        rp, resource_class="DISK_GB", total=100, reserved=10)
    inventories = list(conn.placement.resource_provider_inventories(rp))
    assert [(i.resource_class, i.total, i.reserved) for i in inventories] \
        == [("DISK_GB", 100, 10)]

    names = {p.name for p in conn.placement.resource_providers()}
    assert "sdk-cn1" in names

    conn.placement.delete_resource_provider_inventory(
        "DISK_GB", resource_provider=rp)
    conn.placement.delete_resource_provider(rp)
    assert "sdk-cn1" not in {
        p.name for p in conn.placement.resource_providers()}
