"""Every scheduling operation of Nova 34 on the real stack: live
migration, evacuation, shelve and unshelve, rebuild, server groups and
forced hosts, with the stack's scheduler (gantt-scheduler, or Nova's own
with GANTT_NOVA_STACK_SCHEDULER=nova: the same expectations hold for
both). Each checks Nova's view (host, status, task state, migration
records) and placement's (every allocation of the instance and of its
migration records), then that usage is what the live servers hold.

compute-large's driver fails the first spawn of a ``reschedule-...``
server: no move here names a server so, except the affinity scenario,
which uses it to see the alternates a build is given.
"""

from tests.nova_stack import checks, clients, standins
from tests.nova_stack import stack as stack_mod

LARGE, NESTED, SMALL = checks.LARGE, checks.NESTED, checks.SMALL


def _settled(scenario, server_id, status="ACTIVE"):
    """Wait for ``status`` with no task state; the server."""
    return scenario.wait_status(server_id, status, checks.MOVE_TIMEOUT)


def _held_hosts(scenario, consumer):
    """{host: {class: amount}} a consumer holds, by host."""
    roots = scenario.roots()
    found = {}
    for rp, resources in scenario.placement.allocations(consumer).items():
        host = found.setdefault(roots.get(rp, rp), {})
        for rc, n in resources.items():
            host[rc] = host.get(rc, 0) + n
    return found


def _live_migrate(scenario, name, target):
    (server,) = scenario.boot_active(name, host=SMALL)
    scenario.action(server["id"], "os-migrateLive",
                    {"host": target, "block_migration": "auto"})
    server = scenario.wait(
        f"{name} live-migrated off {SMALL}",
        lambda: _moved_off(scenario, server["id"], SMALL),
        checks.MOVE_TIMEOUT)
    migration = scenario.migration(server["id"], "live-migration")
    scenario.wait(f"live migration {migration['uuid']} completed",
                  lambda: _migration_status(scenario, server["id"],
                                            migration, "completed"),
                  checks.MOVE_TIMEOUT)
    return server, migration


def _moved_off(scenario, server_id, host, status="ACTIVE"):
    server = scenario.nova.server(server_id)
    scenario.expect(server["status"] != "ERROR",
                    f"server {server_id}: ERROR with fault "
                    f"{server.get('fault')}")
    if (server["status"] == status
            and server.get("OS-EXT-STS:task_state") is None
            and scenario.host(server) != host):
        return True, server
    return False, (server["status"], scenario.host(server))


def _migration_status(scenario, server_id, migration, status):
    record = next(m for m in scenario.nova.migrations(server_id)
                  if m["uuid"] == migration["uuid"])
    return record["status"] == status, record["status"]


def test_live_migration_without_a_host(scenario):
    # Without a host: compute-large, the favourite.
    _expect_live_migrated(scenario, "live-any", None, LARGE)


def test_live_migration_to_a_host(scenario):
    _expect_live_migrated(scenario, "live-to", NESTED, NESTED)


def _expect_live_migrated(scenario, name, target, expected):
    """Live-migrate a server of compute-small to ``target`` (None: let
    the scheduler pick): ACTIVE on ``expected``, holding its flavor
    there only, the migration record nothing."""
    server, migration = _live_migrate(scenario, name, target)
    scenario.expect(scenario.host(server) == expected,
                    f"live migration {name} to {target}: expected on "
                    f"{expected}, found on {scenario.host(server)}")
    scenario.expect_held(server["id"], expected, "small")
    scenario.expect_no_allocation(migration["uuid"], "migration record")
    scenario.usage_matches_live_instances()


def test_evacuate_with_and_without_a_host(scenario):
    """The source's service forced down (its nova-compute stopped, as
    on a dead host), two servers evacuated: one to a host the operator
    names, one wherever the scheduler picks. Nova keeps the source's
    allocation on the instance beside the destination's until the
    source's nova-compute comes back and removes it."""
    stack = scenario.stack
    servers = scenario.boot_active("evacuee", count=2, host=LARGE)
    stack.stop_compute(LARGE)
    try:
        scenario.nova.force_down(LARGE, True)
        anywhere, named = (server["id"] for server in servers)
        scenario.action(anywhere, "evacuate", {})
        scenario.action(named, "evacuate", {"host": SMALL})
        # 2.95 and later: an evacuated server arrives stopped (the
        # source may show it stopped before the rebuild starts).
        moved = {server_id: scenario.wait(
            f"{server_id} evacuated off {LARGE}",
            lambda i=server_id: _moved_off(scenario, i, LARGE, "SHUTOFF"),
            checks.MOVE_TIMEOUT) for server_id in (anywhere, named)}
        hosts = {i: scenario.host(s) for i, s in moved.items()}
        scenario.expect(hosts[named] == SMALL and hosts[anywhere] != LARGE,
                        f"evacuation: expected {named} on {SMALL} and "
                        f"{anywhere} off {LARGE}; found {hosts}")
        for server_id, host in hosts.items():
            held = _held_hosts(scenario, server_id)
            expected = checks.flavor_resources(checks.FLAVORS["small"])
            scenario.expect(
                held == {LARGE: expected, host: expected},
                f"evacuated {server_id}: expected {expected} on {LARGE} "
                f"(the source, until it comes back) and on {host}; "
                f"found {held}")
            for migration in scenario.nova.migrations(server_id):
                scenario.expect_no_allocation(migration["uuid"],
                                              "evacuation record")
    finally:
        # Started again, it removes what it held of the evacuated
        # servers and completes their evacuation records; only then does
        # Nova let its service be forced up.
        stack.start_compute(LARGE)
        scenario.wait(f"{LARGE} forced up once back",
                      lambda: _forced_up(scenario, LARGE),
                      checks.MOVE_TIMEOUT, interval=2)
    for server_id in hosts:
        scenario.wait(f"{LARGE} back: the source allocation of "
                      f"{server_id} removed",
                      lambda i=server_id: _only_on(scenario, i, hosts[i]),
                      checks.MOVE_TIMEOUT)
    scenario.usage_matches_live_instances()


def _forced_up(scenario, host):
    try:
        scenario.nova.force_down(host, False)
    except clients.ApiError as exc:
        if exc.status != 400:
            raise
        return False, exc.body[:200]
    return True, None


def _only_on(scenario, server_id, host):
    held = _held_hosts(scenario, server_id)
    return set(held) == {host}, held


def test_shelve_offload_and_unshelve(scenario):
    """Shelved and offloaded (shelved_offload_time 0): the server holds
    nothing; unshelved without a host it is scheduled again, with a host
    (2.91) it goes there."""
    for name, target in (("shelf-any", None), ("shelf-to", NESTED)):
        (server,) = scenario.boot_active(name)
        scenario.action(server["id"], "shelve")
        _settled(scenario, server["id"], "SHELVED_OFFLOADED")
        scenario.expect_no_allocation(server["id"], "offloaded server")
        scenario.action(server["id"], "unshelve",
                        {"host": target} if target else None)
        server = _settled(scenario, server["id"])
        # Without a host: wherever the scheduler picks (compute-large,
        # the favourite, unless its heartbeat is late after its restart
        # in the evacuation: both schedulers then leave it out).
        found = scenario.host(server)
        scenario.expect(target in (None, found),
                        f"unshelve {name}: expected on {target}, found "
                        f"on {found}")
        scenario.expect_held(server["id"], found, "small")
    scenario.usage_matches_live_instances()


def test_rebuild_with_the_same_and_a_new_image(scenario):
    """Same image: no scheduling. A new image: Nova asks the scheduler
    to check the server's own host (forced, with the rebuild hint);
    nothing is claimed and the server stays where it is."""
    (server,) = scenario.boot_active("rebuilt", host=NESTED)
    for image in (standins.IMAGE_ID, standins.IMAGE_2_ID):
        scenario.action(server["id"], "rebuild", {"imageRef": image})
        rebuilt = _settled(scenario, server["id"])
        scenario.expect(rebuilt["image"]["id"] == image
                        and scenario.host(rebuilt) == NESTED,
                        f"rebuild with {image}: found image "
                        f"{rebuilt['image']['id']} on "
                        f"{scenario.host(rebuilt)}")
        scenario.expect_held(server["id"], NESTED, "small")
    scenario.usage_matches_live_instances()


def test_rebuild_with_an_image_no_host_can_run(scenario):
    """An aarch64 image on x86_64 fake hosts: ImagePropertiesFilter
    removes the server's own host, NoValidHost, the server ERROR with
    its old image kept and its allocation unchanged."""
    (server,) = scenario.boot_active("rebuilt-arm", host=SMALL)
    scenario.action(server["id"], "rebuild",
                    {"imageRef": standins.ARM_IMAGE_ID})
    server = _settled(scenario, server["id"], "ERROR")
    scenario.expect(server["image"]["id"] == standins.IMAGE_ID,
                    f"refused rebuild: expected the old image kept, found "
                    f"{server['image']['id']}")
    fault = (server.get("fault") or {}).get("message", "")
    scenario.expect("No valid host" in fault,
                    f"refused rebuild: expected NoValidHost, found fault "
                    f"{fault!r}")
    scenario.expect_held(server["id"], SMALL, "small")


def test_affinity_multi_create_then_a_later_member(scenario):
    """Two servers of an affinity group in one request land together on
    compute-large, whose driver fails the first spawn of each
    (``reschedule-``): a build retries only on its alternates, and with
    affinity there is none (an alternate must pass the filters given
    every pick of the request), so both end in ERROR and hold nothing.
    A plain affinity pair and a later member share one host."""
    group = scenario.nova.create_group("together-fail", "affinity")
    failed = scenario.boot("reschedule-together", count=2,
                           group=group["id"])
    for server_id in failed:
        server = _settled(scenario, server_id, "ERROR")
        builds = scenario.build_hosts(server_id)
        scenario.expect(builds == [LARGE],
                        f"affinity build {server_id}: expected one build "
                        f"on {LARGE} and no alternate, found builds on "
                        f"{builds}; fault {server.get('fault')}")
        scenario.expect_no_allocation(server_id, "failed build")
    group = scenario.nova.create_group("together", "affinity")
    pair = scenario.boot_active("together", count=2, group=group["id"])
    (later,) = scenario.boot_active("together-later", group=group["id"])
    hosts = {scenario.host(server) for server in [*pair, later]}
    scenario.expect(hosts == {LARGE}, f"affinity group: expected every "
                                      f"member on {LARGE}, found {hosts}")
    scenario.usage_matches_live_instances()


def test_soft_anti_affinity_spreads(scenario):
    group = scenario.nova.create_group("apart-soft", "soft-anti-affinity")
    servers = scenario.boot_active("apart-soft", count=3, group=group["id"])
    hosts = sorted(scenario.host(server) for server in servers)
    scenario.expect(len(set(hosts)) == 3,
                    f"soft anti-affinity of three: expected three hosts, "
                    f"found {hosts}")
    scenario.usage_matches_live_instances()


def test_forced_host_and_forced_disabled_host(scenario):
    """A forced host skips the filters; a disabled one is not among
    placement's candidates (Nova's prefilter asks for hosts without
    COMPUTE_STATUS_DISABLED), so the boot fails with NoValidHost."""
    (server,) = scenario.boot_active("forced", forced_host=SMALL)
    scenario.expect(scenario.host(server) == SMALL,
                    f"forced onto {SMALL}: found on {scenario.host(server)}")
    scenario.expect_held(server["id"], SMALL, "small")
    scenario.nova.set_service_status(SMALL, enabled=False)
    try:
        (refused,) = scenario.boot("forced-disabled", forced_host=SMALL)
        refused = _settled(scenario, refused, "ERROR")
    finally:
        scenario.nova.set_service_status(SMALL, enabled=True)
    fault = (refused.get("fault") or {}).get("message", "")
    scenario.expect("No valid host" in fault,
                    f"forced onto the disabled {SMALL}: expected "
                    f"NoValidHost, found fault {fault!r}")
    scenario.expect_no_allocation(refused["id"], "refused server")
    scenario.usage_matches_live_instances()


def test_a_second_cell_added_while_running(scenario):
    """cell2 is mapped, with its own conductor and two computes, while
    the scheduler runs (gantt-scheduler is told nothing; nova-scheduler
    is restarted, as Nova's documentation asks). With compute-large
    disabled, cell2-large is the favourite: its first spawn of a
    ``reschedule-`` server fails, cell2's conductor retries on the
    alternates it was given, which must all be in cell2 (a host of cell1
    is not reachable from there): the server ends on cell2-small."""
    cell2_large, cell2_small = (host for host, _ in
                                stack_mod.CELL2_COMPUTES)
    scenario.stack.add_cell2()
    scenario.nova.set_service_status(LARGE, enabled=False)
    try:
        (server,) = scenario.boot_active("reschedule-cell2")
    finally:
        scenario.nova.set_service_status(LARGE, enabled=True)
    builds = scenario.build_hosts(server["id"])
    scenario.expect(
        sorted(builds) == sorted([cell2_large, cell2_small])
        and scenario.host(server) == cell2_small,
        f"reschedule in cell2: expected a build on {cell2_large}, then "
        f"on {cell2_small}; found builds on {builds}, server on "
        f"{scenario.host(server)}")
    scenario.expect_held(server["id"], cell2_small, "small")
    (plain,) = scenario.boot_active("in-cell2", host=cell2_large)
    scenario.expect_held(plain["id"], cell2_large, "small")
    scenario.usage_matches_live_instances()
