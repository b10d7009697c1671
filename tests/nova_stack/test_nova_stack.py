"""A real Nova 34 deployment in front of gantt.

Nova's own services run for real (nova-api, nova-conductor, three
nova-compute on fake virt drivers) on MariaDB and RabbitMQ, with
gantt-placement-api as the placement service and, by default,
gantt-scheduler reading hosts from Nova's databases as the scheduler
(GANTT_NOVA_STACK_SCHEDULER=nova runs Nova's own nova-scheduler
instead, for comparison). Each scenario drives Nova through its compute
API, as a user or an operator would, and checks Nova's view (server
host, status, migrations, instance actions) against placement's
(allocations per consumer, usages per provider).

The hosts: compute-large (the weighers' favourite by far, and the one
whose first spawn of a ``reschedule-...`` server fails), compute-nested
(a child provider with CUSTOM_MAGIC) and compute-small. See README.md.
"""

import time

from tests.nova_stack import checks, configs

LARGE, NESTED, SMALL = checks.LARGE, checks.NESTED, checks.SMALL
ALL_HOSTS = {LARGE, NESTED, SMALL}


# What the drivers report: Nova's FakeDriver sizes, and the nested
# driver's child provider.
TREES = {
    LARGE: {"VCPU": 1000, "MEMORY_MB": 800000, "DISK_GB": 600000},
    NESTED: {"VCPU": 10, "MEMORY_MB": 8192, "DISK_GB": 1028},
    f"{NESTED}-child": {"CUSTOM_MAGIC": 10},
    SMALL: {"VCPU": 10, "MEMORY_MB": 8192, "DISK_GB": 1028},
}


def test_computes_report_their_provider_trees(scenario):
    """Each nova-compute's report client wrote its tree to gantt-
    placement-api: a root per compute node (the node's uuid), the
    nested host's child under its root, the drivers' inventories, and
    no request refused on the way."""
    providers = {p["name"]: p for p in scenario.placement.providers()}
    found = {name: scenario.placement.inventories(p["uuid"])
             for name, p in providers.items()}
    scenario.expect(found == TREES, f"provider inventories: expected "
                                    f"{TREES}, found {found}")
    nodes = scenario.nova.hypervisors()
    roots = {name: providers[name]["uuid"] for name in ALL_HOSTS}
    scenario.expect(nodes == roots, f"compute node uuids in Nova "
                                    f"{nodes}, root providers {roots}")
    child = providers[f"{NESTED}-child"]
    scenario.expect(child["parent_provider_uuid"] == roots[NESTED],
                    f"{NESTED}-child: expected under {roots[NESTED]}, "
                    f"found under {child['parent_provider_uuid']}")
    refused = scenario.stack.log_lines("placement-api", r"status: 5\d\d ")
    for host in ALL_HOSTS:
        refused += scenario.stack.log_lines(
            host, "ERROR nova.scheduler.client.report")
    scenario.expect(not refused, "placement refused requests of the "
                                 "computes:\n" + "\n".join(refused[:20]))


def test_one_server_boots_active(scenario):
    (server,) = scenario.boot_active("single")
    host = scenario.host(server)
    scenario.expect(host == LARGE, f"single server: expected on {LARGE} "
                                   f"(by far the most free RAM), found "
                                   f"on {host}")
    scenario.expect_held(server["id"], LARGE, "small")
    scenario.usage_matches_live_instances()


def test_two_instances_in_one_request(scenario):
    servers = scenario.boot_active("pair", count=2)
    for server in servers:
        scenario.expect_held(server["id"], scenario.host(server), "small")
    scenario.usage_matches_live_instances()


def test_anti_affinity_group_of_three_lands_on_distinct_hosts(scenario):
    group = scenario.nova.create_group("spread", "anti-affinity")
    servers = scenario.boot_active("spread", count=3, group=group["id"])
    hosts = sorted(scenario.host(server) for server in servers)
    scenario.expect(set(hosts) == ALL_HOSTS, f"anti-affinity group of "
                                             f"three: expected one per "
                                             f"host {sorted(ALL_HOSTS)}, "
                                             f"found {hosts}")
    members = set(scenario.nova.group(group["id"])["members"])
    ids = {server["id"] for server in servers}
    scenario.expect(members == ids, f"group members: expected {ids}, "
                                    f"found {members}")
    for server in servers:
        scenario.expect_held(server["id"], scenario.host(server), "small")
    scenario.usage_matches_live_instances()


def test_failed_build_is_rescheduled_to_a_claimed_alternate(scenario):
    (server,) = scenario.boot_active("reschedule-1")
    host = scenario.host(server)
    builds = scenario.build_hosts(server["id"])
    # Two attempts: one on compute-large, one where the server runs.
    scenario.expect(
        sorted(builds) == sorted([LARGE, host]) and host != LARGE,
        f"reschedule: expected a build on {LARGE} (which fails it), then "
        f"one on an alternate; found builds on {builds}, server on {host}")
    # The conductor claimed the alternate's allocation request; the
    # failed host's allocation is gone.
    scenario.expect_held(server["id"], host, "small")
    scenario.usage_matches_live_instances()


def test_delete_leaves_no_allocation(scenario):
    (server,) = scenario.boot_active("doomed")
    host = scenario.host(server)
    scenario.expect_held(server["id"], host, "small")
    scenario.delete(server["id"])
    scenario.expect_no_allocation(server["id"], "deleted server")
    scenario.usage_matches_live_instances()


def test_disabled_compute_gets_no_new_instance(scenario):
    scenario.nova.set_service_status(LARGE, enabled=False)
    try:
        servers = scenario.boot_active("while-disabled", count=2)
    finally:
        scenario.nova.set_service_status(LARGE, enabled=True)
    hosts = sorted(scenario.host(server) for server in servers)
    scenario.expect(LARGE not in hosts, f"{LARGE} disabled in Nova: "
                                        f"expected no new instance on "
                                        f"it, found servers on {hosts}")
    scenario.usage_matches_live_instances()


def test_cold_migration_then_confirm(scenario):
    (server,) = scenario.boot_active("migrate-me")
    source = scenario.host(server)
    scenario.action(server["id"], "migrate")
    server = scenario.wait_status(server["id"], "VERIFY_RESIZE",
                                  checks.MOVE_TIMEOUT)
    dest = scenario.host(server)
    scenario.expect(dest != source, f"cold migration: expected a host "
                                    f"other than {source}, found {dest}")
    migration = scenario.migration(server["id"], "migration")
    _expect_move_allocations(scenario, server["id"], migration,
                             (source, "small"), (dest, "small"))
    scenario.action(server["id"], "confirmResize")
    _expect_settled(scenario, server["id"], migration, dest, "small",
                    "confirmed")


def test_resize_to_another_host_then_revert(scenario):
    (server,) = scenario.boot_active("resize-me", host=SMALL)
    scenario.expect(scenario.host(server) == SMALL,
                    f"boot with requested host {SMALL}: found on "
                    f"{scenario.host(server)}")
    scenario.action(server["id"], "resize",
                    {"flavorRef": scenario.flavors["medium"]})
    server = scenario.wait_status(server["id"], "VERIFY_RESIZE",
                                  checks.MOVE_TIMEOUT)
    dest = scenario.host(server)
    scenario.expect(dest == LARGE, f"resize from {SMALL}: expected on "
                                   f"{LARGE} (the favourite), found on "
                                   f"{dest}")
    migration = scenario.migration(server["id"], "resize")
    _expect_move_allocations(scenario, server["id"], migration,
                             (SMALL, "small"), (dest, "medium"))
    scenario.action(server["id"], "revertResize")
    _expect_settled(scenario, server["id"], migration, SMALL, "small",
                    "reverted")


def test_resize_to_the_same_host_then_confirm(scenario):
    (server,) = scenario.boot_active("resize-here")
    source = scenario.host(server)
    scenario.action(server["id"], "resize",
                    {"flavorRef": scenario.flavors["medium"]})
    server = scenario.wait_status(server["id"], "VERIFY_RESIZE",
                                  checks.MOVE_TIMEOUT)
    dest = scenario.host(server)
    scenario.expect(dest == source, f"resize with allow_resize_to_same_"
                                    f"host: expected to stay on {source} "
                                    f"(the favourite), found on {dest}")
    migration = scenario.migration(server["id"], "resize")
    _expect_move_allocations(scenario, server["id"], migration,
                             (source, "small"), (dest, "medium"))
    scenario.action(server["id"], "confirmResize")
    _expect_settled(scenario, server["id"], migration, source, "medium",
                    "confirmed")


def _expect_move_allocations(scenario, server_id, migration, source,
                             dest):
    """While a move waits for confirmation: the migration record holds
    the source allocation (Nova moved it there), the instance holds the
    destination's (the scheduler claimed it)."""
    scenario.expect_held(migration["uuid"], *source,
                         what="migration record (source allocation)")
    scenario.expect_held(server_id, *dest,
                         what="instance (destination allocation)")
    scenario.usage_matches_live_instances()


def _expect_settled(scenario, server_id, migration, host, flavor,
                    status):
    """After confirm or revert: ACTIVE on ``host``, the instance holds
    ``flavor`` there, the migration record nothing."""
    server = scenario.wait_status(server_id, "ACTIVE", checks.MOVE_TIMEOUT)
    scenario.wait(
        f"migration {migration['uuid']} {status}, its allocation gone",
        lambda: _migration_closed(scenario, server_id, migration, status),
        checks.MOVE_TIMEOUT)
    scenario.expect(scenario.host(server) == host,
                    f"after {status}: expected on {host}, found on "
                    f"{scenario.host(server)}")
    scenario.expect_held(server_id, host, flavor)
    scenario.usage_matches_live_instances()


def _migration_closed(scenario, server_id, migration, status):
    record = next(m for m in scenario.nova.migrations(server_id)
                  if m["uuid"] == migration["uuid"])
    held = scenario.allocations(migration["uuid"])
    return (record["status"] == status and not held,
            f"status {record['status']}, allocations {held}")


def test_nested_child_provider_holds_its_resource(scenario):
    (server,) = scenario.boot_active("magic", flavor="magic")
    host = scenario.host(server)
    scenario.expect(host == NESTED, f"CUSTOM_MAGIC server: expected on "
                                    f"{NESTED}, found on {host}")
    found = scenario.expect_held(server["id"], NESTED, "magic")
    scenario.expect(found.get(f"{NESTED}-child") == {"CUSTOM_MAGIC": 1},
                    f"CUSTOM_MAGIC: expected on {NESTED}-child, found "
                    f"allocations {found}")
    scenario.usage_matches_live_instances()


def test_stopped_compute_is_skipped_after_service_down_time(scenario):
    stack = scenario.stack
    stack.stop_compute(LARGE)
    stopped = time.monotonic()
    try:
        scenario.wait(
            f"Nova reports {LARGE} down",
            lambda: _service_state(scenario, LARGE, "down"),
            configs.SERVICE_DOWN_TIME + 30)
        down_after = time.monotonic() - stopped
        # Booted at once: gantt-scheduler judges a heartbeat near its
        # limit at each decision, as Nova's API judges it when asked.
        (server_id,) = scenario.boot("while-down")
        server = scenario.wait(f"server {server_id} ACTIVE",
                               lambda: _active_unless_sent_to(
                                   scenario, server_id, LARGE),
                               checks.BOOT_TIMEOUT)
    finally:
        stack.start_compute(LARGE)
    host = scenario.host(server)
    scenario.expect(host != LARGE, f"{LARGE} stopped (down after "
                                   f"{down_after:.0f} s): expected no new "
                                   f"instance on it, found one")
    scenario.wait(f"Nova reports {LARGE} up again",
                  lambda: _service_state(scenario, LARGE, "up"), 90)
    scenario.usage_matches_live_instances()


def _active_unless_sent_to(scenario, server_id, host):
    """ACTIVE yet? A build sent to the stopped host would wait for it in
    its queue instead: fail at once, saying so."""
    server = scenario.nova.server(server_id)
    if server["status"] == "ACTIVE":
        return True, server
    waiting = scenario.stack.queue(f"compute.{host}")[0]
    scenario.expect(server["status"] != "ERROR" and not waiting,
                    f"server {server_id} built while {host} is down: "
                    f"status {server['status']}, fault "
                    f"{server.get('fault')}, {waiting} message(s) waiting "
                    f"for the stopped {host} in its queue")
    return False, server["status"]


def _service_state(scenario, host, state):
    found = scenario.nova.compute_service(host)["state"]
    return found == state, found


def test_placement_usage_equals_live_instances(scenario):
    scenario.boot_active("mix-small")
    scenario.boot_active("mix-medium", flavor="medium")
    scenario.boot_active("mix-magic", flavor="magic")
    scenario.usage_matches_live_instances()
    scenario.delete_all()
    scenario.usage_matches_live_instances()
    used = {name: scenario.placement.usages(rp)
            for rp, name in scenario.provider_names().items()}
    left = {name: {rc: n for rc, n in usages.items() if n}
            for name, usages in used.items()}
    left = {name: usages for name, usages in left.items() if usages}
    scenario.expect(not left, f"every server deleted: expected no usage, "
                              f"found {left}")
