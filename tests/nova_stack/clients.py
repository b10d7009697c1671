"""HTTP clients of the stack's two APIs: Nova's compute API and
gantt-placement-api. Standard library only; every error answer raises
ApiError with the method, URL, status and body, so an assertion that
fails on one says what was asked and what came back.
"""

import json
import time
import urllib.error
import urllib.request

COMPUTE_VERSION = "2.100"
PLACEMENT_VERSION = "1.39"
PROJECT = "6f1d2c4e8a9b4c3d9e7f1a2b3c4d5e6f"
# What keystonemiddleware would tell Nova about an admin of PROJECT.
IDENTITY = {"X-User-Id": "admin", "X-Project-Id": PROJECT,
            "X-Roles": "admin,member,reader", "X-Auth-Token": "admin",
            "X-Identity-Status": "Confirmed"}


class ApiError(Exception):
    def __init__(self, method, url, status, body):
        super().__init__(f"{method} {url}: {status} {body[:2000]}")
        self.status = status
        self.body = body


def call(method, url, headers, body=None, timeout=60):
    """(status, decoded JSON or None); raises ApiError on 4xx/5xx."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers=dict(headers))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        raise ApiError(method, url, exc.code,
                       exc.read().decode(errors="replace")) from None
    return status, (json.loads(raw) if raw.strip() else None)


def wait(what, check, timeout, interval=0.5):
    """``check()`` until true within ``timeout`` s; else AssertionError
    naming what was awaited and the last value seen."""
    deadline = time.monotonic() + timeout
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(interval)


class NovaApi:
    """Nova's compute API as an admin of PROJECT."""

    def __init__(self, url):
        self.url = url.rstrip("/")
        self.headers = {**IDENTITY, "Accept": "application/json",
                        "OpenStack-API-Version":
                            f"compute {COMPUTE_VERSION}"}

    def request(self, method, path, body=None):
        return call(method, self.url + path, self.headers, body)[1]

    def get(self, path):
        return self.request("GET", path)

    # services and hypervisors ----------------------------------------

    def services(self, binary=None):
        found = self.get("/os-services")["services"]
        return [s for s in found if binary in (None, s["binary"])]

    def compute_service(self, host):
        return next(s for s in self.services("nova-compute")
                    if s["host"] == host)

    def set_service_status(self, host, enabled):
        service = self.compute_service(host)
        body = {"status": "enabled" if enabled else "disabled"}
        if not enabled:
            body["disabled_reason"] = "Nova stack test"
        return self.request("PUT", f"/os-services/{service['id']}", body)

    def force_down(self, host, down):
        """Mark a compute service forced down (or not): what an operator
        does before evacuating a host that died."""
        service = self.compute_service(host)
        return self.request("PUT", f"/os-services/{service['id']}",
                            {"forced_down": down})

    def hypervisors(self):
        """{hypervisor hostname: compute node uuid}."""
        found = self.get("/os-hypervisors")["hypervisors"]
        return {h["hypervisor_hostname"]: h["id"] for h in found}

    # flavors and groups ---------------------------------------------

    def create_flavor(self, name, vcpus, ram, disk, extra_specs=None):
        flavor = self.request("POST", "/flavors", {"flavor": {
            "name": name, "vcpus": vcpus, "ram": ram, "disk": disk}})
        flavor = flavor["flavor"]
        if extra_specs:
            self.request("POST", f"/flavors/{flavor['id']}/os-extra_specs",
                         {"extra_specs": extra_specs})
        return flavor

    def create_group(self, name, policy, rules=None):
        """A server group (2.64 and later: one ``policy``, and ``rules``
        such as max_server_per_host for anti-affinity)."""
        body = {"name": name, "policy": policy}
        if rules:
            body["rules"] = rules
        return self.request("POST", "/os-server-groups", {
            "server_group": body})["server_group"]

    def group(self, group_id):
        return self.get(f"/os-server-groups/{group_id}")["server_group"]

    def default_quotas(self):
        """The default quota class: the limits of every project that
        has none of its own."""
        found = self.get("/os-quota-class-sets/default")["quota_class_set"]
        return {name: value for name, value in found.items()
                if name != "id"}

    def set_default_quotas(self, **limits):
        """Set limits of the default quota class (-1: none). (A project's
        own quotas need Keystone, which the stack does not have, to
        check the project.)"""
        return self.request("PUT", "/os-quota-class-sets/default", {
            "quota_class_set": limits})["quota_class_set"]

    # servers ----------------------------------------------------------

    def create_server(self, name, flavor_id, image_id, count=1,
                      group=None, host=None, forced_host=None):
        """Boot ``count`` servers in one request; their ids. ``host``:
        the host the scheduler must pick (Nova's requested
        destination, an admin's choice since 2.74); ``forced_host``: a
        forced host (``availability_zone`` ``nova:HOST``), which skips
        the scheduler's filters."""
        body = {"server": {"name": name, "flavorRef": flavor_id,
                           "imageRef": image_id, "networks": "none",
                           "min_count": count, "max_count": count,
                           "return_reservation_id": True}}
        if group:
            body["os:scheduler_hints"] = {"group": group}
        if host:
            body["server"]["host"] = host
        if forced_host:
            body["server"]["availability_zone"] = f"nova:{forced_host}"
        reservation = self.request("POST", "/servers", body)[
            "reservation_id"]
        found = self.get(f"/servers?reservation_id={reservation}")
        return [server["id"] for server in found["servers"]]

    def server(self, server_id):
        return self.get(f"/servers/{server_id}")["server"]

    def servers(self):
        return self.get("/servers/detail?all_tenants=1")["servers"]

    def action(self, server_id, name, value=None):
        return self.request("POST", f"/servers/{server_id}/action",
                            {name: value})

    def delete_server(self, server_id):
        return self.request("DELETE", f"/servers/{server_id}")

    def server_gone(self, server_id):
        try:
            self.server(server_id)
        except ApiError as exc:
            if exc.status == 404:
                return True
            raise
        return False

    def actions(self, server_id):
        """The server's instance actions, each with its events."""
        found = self.get(f"/servers/{server_id}/os-instance-actions")
        detailed = []
        for action in found["instanceActions"]:
            detailed.append(self.get(
                f"/servers/{server_id}/os-instance-actions/"
                f"{action['request_id']}")["instanceAction"])
        return detailed

    def migrations(self, server_id):
        return self.get(f"/os-migrations?instance_uuid={server_id}")[
            "migrations"]


class PlacementApi:
    """gantt-placement-api with noauth2's admin token."""

    def __init__(self, url):
        self.url = url.rstrip("/")
        self.headers = {"X-Auth-Token": "admin",
                        "Accept": "application/json",
                        "OpenStack-API-Version":
                            f"placement {PLACEMENT_VERSION}"}

    def get(self, path):
        return call("GET", self.url + path, self.headers)[1]

    def providers(self):
        return self.get("/resource_providers")["resource_providers"]

    def provider_by_name(self):
        return {p["name"]: p for p in self.providers()}

    def inventories(self, provider):
        """{class: total} of one provider."""
        found = self.get(f"/resource_providers/{provider}/inventories")
        return {rc: inv["total"]
                for rc, inv in found["inventories"].items()}

    def allocations(self, consumer):
        """{provider uuid: {class: amount}} of one consumer."""
        found = self.get(f"/allocations/{consumer}")["allocations"]
        return {rp: alloc["resources"] for rp, alloc in found.items()}

    def usages(self, provider):
        return self.get(f"/resource_providers/{provider}/usages")["usages"]

    def provider_allocations(self, provider):
        """{consumer: {class: amount}} on one provider."""
        found = self.get(f"/resource_providers/{provider}/allocations")
        return {consumer: alloc["resources"]
                for consumer, alloc in found["allocations"].items()}
