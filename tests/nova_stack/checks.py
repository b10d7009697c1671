"""What the Nova stack scenarios do and check, through Nova's compute
API and gantt-placement-api's REST API.

Every wait is bounded twice: by its own timeout and by the time left in
the whole run's budget. Every failed check raises AssertionError saying
what was expected and what was found, and where the logs are (the test's
conftest adds the tails of every log to the failure report).
"""

import collections
import time

from tests.nova_stack import clients, standins
from tests.nova_stack import stack as stack_mod

LARGE, NESTED, SMALL = stack_mod.LARGE, stack_mod.NESTED, stack_mod.SMALL
BOOT_TIMEOUT = 60
MOVE_TIMEOUT = 90
DELETE_TIMEOUT = 60
# Migration states in which the migration record may hold allocations.
OPEN_MIGRATIONS = ("accepted", "pre-migrating", "migrating",
                   "post-migrating", "finished", "confirming", "reverting")
# Lines a scenario leaves for the run's terminal summary (conftest).
NOTES = []
FLAVORS = {
    "small": {"vcpus": 1, "ram": 512, "disk": 1},
    "medium": {"vcpus": 2, "ram": 1024, "disk": 2},
    "magic": {"vcpus": 1, "ram": 512, "disk": 1,
              "extra_specs": {"resources:CUSTOM_MAGIC": "1"}},
}


class Cloud:
    """One stack as the scenarios see it."""

    def __init__(self, stack, budget):
        self.stack = stack
        self.nova = clients.NovaApi(stack.api_url)
        self.placement = clients.PlacementApi(stack.placement_url)
        self.deadline = time.monotonic() + budget
        self.budget = budget
        self.flavors = {}
        self.created = []  # every server id booted, for clean-up

    # -- set-up ------------------------------------------------------

    def make_flavors(self):
        for name, spec in FLAVORS.items():
            spec = dict(spec)
            extra = spec.pop("extra_specs", None)
            self.flavors[name] = self.nova.create_flavor(
                f"stack-{name}", extra_specs=extra, **spec)["id"]

    # -- failing -----------------------------------------------------

    def fail(self, message):
        raise AssertionError(f"{message}\n[{self.stack.scheduler} "
                             f"scheduler; {self.stack.log_hint()}]")

    def expect(self, condition, message):
        if not condition:
            self.fail(message)

    def timeout(self, wanted):
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.fail(f"the run's time budget of {self.budget} s is spent")
        return min(wanted, left)

    def wait(self, what, check, timeout, interval=0.5):
        """``check()`` until it returns (True, value); else fail with the
        last (False, description)."""
        end = time.monotonic() + self.timeout(timeout)
        while True:
            done, value = check()
            if done:
                return value
            if time.monotonic() > end:
                self.fail(f"{what}: not within {timeout} s; found: {value}")
            time.sleep(interval)

    # -- servers -----------------------------------------------------

    def boot(self, name, flavor="small", count=1, group=None, host=None,
             forced_host=None):
        """Boot ``count`` servers in one request; their ids."""
        ids = self.nova.create_server(
            name, self.flavors[flavor], standins.IMAGE_ID, count=count,
            group=group, host=host, forced_host=forced_host)
        self.created.extend(ids)
        self.expect(len(ids) == count, f"boot {name!r} x{count}: Nova "
                                       f"returned {len(ids)} servers")
        return ids

    def wait_status(self, server_id, status, timeout=BOOT_TIMEOUT):
        """Wait for ``status``; an ERROR on the way fails at once, with
        Nova's fault."""
        def check():
            server = self.nova.server(server_id)
            found = server["status"]
            if found == status and server.get("OS-EXT-STS:task_state") \
                    is None:
                return True, server
            if found == "ERROR" and status != "ERROR":
                self.fail(f"server {server_id} ({server['name']}): "
                          f"expected {status}, found ERROR with fault "
                          f"{server.get('fault')}")
            return False, (found, server.get("OS-EXT-STS:task_state"))

        return self.wait(f"server {server_id} {status}", check, timeout)

    def boot_active(self, name, flavor="small", count=1, group=None,
                    host=None, forced_host=None):
        """Boot and wait until every server is ACTIVE; the servers."""
        ids = self.boot(name, flavor, count, group, host, forced_host)
        return [self.wait_status(server_id, "ACTIVE") for server_id in ids]

    def delete(self, server_id):
        self.nova.delete_server(server_id)
        self.wait(f"server {server_id} deleted",
                  lambda: (self.nova.server_gone(server_id), "still there"),
                  DELETE_TIMEOUT)

    def delete_all(self):
        """Delete what the scenario booted and is still there."""
        for server_id in self.created:
            if not self.nova.server_gone(server_id):
                self.delete(server_id)
        self.created.clear()

    def action(self, server_id, name, value=None):
        self.nova.action(server_id, name, value)

    # -- placement ---------------------------------------------------

    def provider_names(self):
        """{provider uuid: name}."""
        return {p["uuid"]: p["name"] for p in self.placement.providers()}

    def roots(self):
        """{provider uuid: the name of its root provider (the host)}."""
        providers = self.placement.providers()
        names = {p["uuid"]: p["name"] for p in providers}
        return {p["uuid"]: names[p["root_provider_uuid"]]
                for p in providers}

    def provider_uuid(self, name):
        found = {n: u for u, n in self.provider_names().items()}
        self.expect(name in found, f"no provider named {name!r} in "
                                   f"placement: {sorted(found)}")
        return found[name]

    def allocations(self, consumer):
        """{provider name: {class: amount}} of one consumer."""
        names = self.provider_names()
        return {names.get(rp, rp): resources for rp, resources
                in self.placement.allocations(consumer).items()}

    def hosts_of(self, consumer):
        """The hosts (root providers) a consumer holds resources on."""
        roots = self.roots()
        return {roots.get(rp, rp)
                for rp in self.placement.allocations(consumer)}

    # -- expectations ------------------------------------------------

    def expect_held(self, consumer, host, flavor, what="server"):
        """``consumer`` holds exactly ``flavor``'s resources, all of them
        in ``host``'s provider tree."""
        expected = flavor_resources(FLAVORS[flavor])
        found = self.allocations(consumer)
        hosts = self.hosts_of(consumer)
        self.expect(
            hosts == {host} and summed(found.values()) == expected,
            f"{what} {consumer}: expected {expected} on {host}, found "
            f"{found or 'no allocation'}")
        return found

    def expect_no_allocation(self, consumer, what="consumer"):
        found = self.allocations(consumer)
        self.expect(not found, f"{what} {consumer}: expected no "
                               f"allocation, found {found}")

    def build_hosts(self, server_id):
        """The hosts of the server's build attempts (Nova records each as
        an event of the create action, stamped to the second; a build
        that ends in a reschedule is no error to it, so the hosts tell,
        not the results)."""
        return [event.get("host")
                for action in self.nova.actions(server_id)
                for event in action["events"]
                if event["event"] == "compute__do_build_and_run_instance"]

    def host(self, server):
        return server["OS-EXT-SRV-ATTR:host"]

    def migration(self, server_id, kind):
        """The newest migration record of ``kind`` (migration, resize)
        of a server."""
        found = [m for m in self.nova.migrations(server_id)
                 if m["migration_type"] == kind]
        self.expect(found, f"server {server_id}: no {kind} record in "
                           f"Nova; found {self.nova.migrations(server_id)}")
        return max(found, key=lambda m: m["id"])

    def usage_matches_live_instances(self):
        """Every provider's usage is the sum of what live servers and
        open migrations hold on it, and every live server holds its
        flavor on its own host; nothing else holds anything."""
        servers = {s["id"]: s for s in self.nova.servers()}
        migrations = {m["uuid"]: m for m in self.nova.get(
            "/os-migrations")["migrations"]
            if m["status"] in OPEN_MIGRATIONS}
        roots = self.roots()
        names = self.provider_names()
        problems = []
        for rp, name in names.items():
            problems += self._provider_problems(rp, name, servers,
                                                migrations)
        for server in servers.values():
            problems += self._server_problems(server, roots)
        self.expect(not problems, "placement does not match the live "
                                  "instances:\n  " + "\n  ".join(problems))

    def _provider_problems(self, rp, name, servers, migrations):
        held = self.placement.provider_allocations(rp)
        usages = {rc: n for rc, n in self.placement.usages(rp).items()
                  if n}
        problems = []
        if summed(held.values()) != usages:
            problems.append(f"{name}: usages {usages} but its "
                            f"allocations add up to "
                            f"{summed(held.values())}")
        for consumer, resources in held.items():
            if consumer not in servers and consumer not in migrations:
                problems.append(f"{name}: {resources} held by "
                                f"{consumer}, neither a live server nor "
                                f"an open migration")
        return problems

    def _server_problems(self, server, roots):
        if server["status"] not in ("ACTIVE", "VERIFY_RESIZE"):
            return []
        held = self.placement.allocations(server["id"])
        expected = flavor_resources(server["flavor"])
        hosts = {roots.get(rp, rp) for rp in held}
        found = summed(held.values())
        if hosts != {self.host(server)} or found != expected:
            return [f"server {server['id']} ({server['name']}, "
                    f"{server['status']} on {self.host(server)}): holds "
                    f"{found} on {sorted(hosts)}, expected {expected}"]
        return []


def flavor_resources(flavor):
    """What placement should hold for a flavor (Nova's own translation:
    vCPUs, RAM, root + ephemeral disk, resources:* extra specs)."""
    wanted = {"VCPU": flavor["vcpus"], "MEMORY_MB": flavor["ram"]}
    disk = flavor["disk"] + flavor.get("ephemeral", 0)
    if disk:
        wanted["DISK_GB"] = disk
    for key, value in (flavor.get("extra_specs") or {}).items():
        if key.startswith("resources:"):
            wanted[key.split(":", 1)[1]] = int(value)
    return wanted


def summed(resource_dicts):
    total = collections.Counter()
    for resources in resource_dicts:
        total.update(resources)
    return {rc: n for rc, n in total.items() if n}
