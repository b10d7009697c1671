"""The Nova host state source: gantt's host state table read from Nova's
own API and cell databases, on SQLite, MariaDB and PostgreSQL.

Expected host states come from Nova 34's HostManager run on the same
rows (fixtures/nova_db); how changes are followed is gantt's own
behaviour, checked directly.
"""

import datetime
import logging
import time

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from scheduler import conf as scheduler_conf
from scheduler import host_options, host_state
from scheduler.nova_db import options as nova_options
from scheduler.nova_db import source as source_mod
from tests.scheduler import nova_cloud

NOW = nova_cloud.now()
EPOCH = datetime.datetime(1970, 1, 1)


def _epoch(at):
    return (at - EPOCH).total_seconds()


@pytest.fixture(scope="module", params=("sqlite", "mysql", "postgresql"))
def nova_dbs(request, tmp_path_factory):
    dbs = nova_cloud.NovaDatabases(request.param,
                                   tmp_path_factory.mktemp("nova"))
    yield dbs
    dbs.close()


@pytest.fixture
def nova(nova_dbs):
    nova_dbs.reset()
    return nova_dbs


def make_conf(nova, **overrides):
    conf = cfg.ConfigOpts()
    conf([], default_config_files=[])
    host_options.register_opts(conf)
    nova_options.register_opts(conf)
    scheduler_conf.register_opts(conf)
    fixture = nova_cloud.cloud()
    conf.set_override("host_state_source", "nova", "scheduler")
    conf.set_override("connection", nova.urls["api"], "api_database")
    conf.set_override("host_state_poll_interval", 0, "scheduler")
    conf.set_override("service_down_time", fixture["service_down_time"])
    for name, value in fixture["conf"].items():
        conf.set_override(name, value)
    for name, value in overrides.items():
        group, _, option = name.rpartition(".")
        conf.set_override(option, value, group or None)
    return conf


class Clock:
    def __init__(self, at=NOW):
        self.at = at

    def __call__(self):
        return _epoch(self.at)


@pytest.fixture
def table(nova):
    conf = make_conf(nova)
    clock = Clock()
    source = source_mod.NovaHostSource(conf, clock=clock)
    table = host_state.HostStateTable(None, conf, clock=clock,
                                      source=source)
    table.sync()
    yield table
    table.close()


def _row(table, host, node=None):
    row = table.row_for_node(host, node or host)
    assert row is not None, f"{host}/{node or host} is not in the table"
    return row


def _hosts(table):
    return sorted((table.hosts[r], table.nodenames[r])
                  for r in table.live_rows().tolist())


# -- the first load agrees with Nova's HostManager --------------------------


def test_the_table_holds_what_novas_host_manager_holds(table):
    states = {s["uuid"]: s for s in nova_cloud.cloud()["host_states"]
              if s["reported"]}
    # Nova also keeps an empty state for a node that never reported its
    # usage (cn3b); placement has no candidate for it, gantt leaves it
    # out. The node of a host without a nova-compute service, deleted
    # rows and the disabled cell's hosts are out in both.
    assert _hosts(table) == sorted((s["host"], s["nodename"])
                                   for s in states.values())
    for uuid, want in states.items():
        row = table.row_of(uuid)
        node = table.node(row)
        service = table.service(row)
        got = {
            "host": table.hosts[row], "nodename": table.nodenames[row],
            "cell_uuid": table.cells.name(int(table.cell[row])),
            "free_ram_mb": int(table.free_ram_mb[row]),
            "free_disk_mb": int(table.free_disk_mb[row]),
            "total_usable_ram_mb": int(table.total_usable_ram_mb[row]),
            "total_usable_disk_gb": int(table.total_usable_disk_gb[row]),
            "disk_mb_used": int(table.disk_mb_used[row]),
            "vcpus_total": int(table.vcpus_total[row]),
            "vcpus_used": int(table.vcpus_used[row]),
            "num_instances": int(table.num_instances[row]),
            "num_io_ops": int(table.num_io_ops[row]),
            "failed_builds": int(table.failed_builds[row]),
            "cpu_allocation_ratio": float(table.cpu_allocation_ratio[row]),
            "ram_allocation_ratio": float(table.ram_allocation_ratio[row]),
            "disk_allocation_ratio": float(
                table.disk_allocation_ratio[row]),
            "hypervisor_type": table.hypervisor_types.name(
                int(table.hypervisor_type[row])),
            "hypervisor_version": int(table.hypervisor_version[row]),
            "host_ip": node.host_ip,
            "cpu_info": node.cpu_info,
            "supported_instances": node.supported_instances,
            "stats": node.stats,
            "numa_topology": node.numa_topology,
            "pci_pools": sorted(
                [p["vendor_id"], p["product_id"], p.get("numa_node"),
                 p["count"]] for p in node.pci_device_pools or ()),
            "service_disabled": not table.enabled[row],
            "service_disabled_reason": service.disabled_reason,
            "service_forced_down": bool(table.forced_down[row]),
            "service_up": bool(table.service_up(rows=[row])[0]),
            "service_version": service.version,
            "aggregates": sorted(a.uuid for a in table.aggregates_of(row)),
            "instances": sorted(table.instances_on(row)),
        }
        expected = {k: want[k] for k in got}
        assert got == expected, uuid
        assert sorted(m["name"] for m in node.metrics or ()) == sorted(
            name for name, _ in want["metrics"])


def test_zones_come_from_novas_aggregates(table):
    assert table.zone(_row(table, "cn1")) == "east"
    assert table.zone(_row(table, "cn5")) == "nova"


def test_the_lowest_compute_service_version_is_known(table):
    assert table.min_compute_service_version() == \
        nova_cloud.cloud()["service_version"]


def test_a_templated_cell_url_is_filled_in_as_nova_does():
    case = nova_cloud.cloud()["template"]
    assert source_mod.cell_url(case["template"],
                               case["database_connection"]) == \
        case["filled"]
    assert source_mod.cell_url("sqlite:///x", None) == "sqlite:///x"


def test_without_an_api_database_the_source_says_so(nova):
    conf = make_conf(nova)
    conf.clear_override("connection", "api_database")
    with pytest.raises(source_mod.NovaSourceError,
                       match=r"\[api_database\] connection"):
        source_mod.NovaHostSource(conf)


def test_an_unreadable_api_database_is_a_clear_error(nova, tmp_path):
    conf = make_conf(nova)
    conf.set_override("connection", f"sqlite:///{tmp_path}/empty.sqlite",
                      "api_database")
    source = source_mod.NovaHostSource(conf)
    table = host_state.HostStateTable(None, conf, source=source)
    with pytest.raises(source_mod.NovaSourceError,
                       match="cannot read Nova's API database"):
        table.sync()
    table.close()


# -- following Nova's changes ---------------------------------------------

# Typed as Nova's models type them (SQLite keeps the text SQLAlchemy
# writes for a DateTime).
_svc = sa.table("services", sa.column("host"), sa.column("disabled"),
                sa.column("disabled_reason"), sa.column("forced_down"),
                sa.column("last_seen_up", sa.DateTime),
                sa.column("updated_at", sa.DateTime),
                sa.column("deleted"), sa.column("deleted_at", sa.DateTime),
                sa.column("id"))
_cn = sa.table("compute_nodes", sa.column("hypervisor_hostname"),
               sa.column("free_ram_mb"), sa.column("memory_mb_used"),
               sa.column("updated_at", sa.DateTime), sa.column("deleted"),
               sa.column("deleted_at", sa.DateTime), sa.column("id"),
               sa.column("vcpus_used"))


def _at(seconds):
    return NOW + datetime.timedelta(seconds=seconds)


def test_a_heartbeat_brings_a_service_back_up(nova, table):
    row = _row(table, "cn2")
    assert not table.service_up(rows=[row])[0]
    nova.execute("cell1", _svc.update().where(_svc.c.host == "cn2").values(
        last_seen_up=_at(1), updated_at=_at(1), disabled=False,
        disabled_reason=None))
    table.sync()
    assert table.service_up(rows=[row])[0]
    assert table.enabled[row]
    assert table.service(row).disabled_reason is None


def test_a_disabled_service_is_seen(nova, table):
    row = _row(table, "cn1")
    nova.execute("cell1", _svc.update().where(_svc.c.host == "cn1").values(
        disabled=True, disabled_reason="gantt test", updated_at=_at(1)))
    table.sync()
    assert not table.enabled[row]
    assert table.service(row).disabled_reason == "gantt test"


def test_two_changes_within_one_second_are_both_seen(nova, table):
    # MySQL keeps whole seconds: the second change has the same stamp.
    row = _row(table, "cn1")
    nova.execute("cell1", _cn.update().where(
        _cn.c.hypervisor_hostname == "cn1").values(
            free_ram_mb=1000, updated_at=_at(5)))
    table.sync()
    assert table.free_ram_mb[row] == 1000
    nova.execute("cell1", _cn.update().where(
        _cn.c.hypervisor_hostname == "cn1").values(
            free_ram_mb=2000, updated_at=_at(5)))
    table.sync()
    assert table.free_ram_mb[row] == 2000


def test_a_new_report_replaces_what_the_scheduler_consumed(nova, table):
    row = _row(table, "cn1")
    table.consume(row, ram_mb=4096, vcpus=2)
    table.sync()  # nothing changed in Nova: the consumption stays
    assert table.free_ram_mb[row] == 57344 - 4096
    nova.execute("cell1", _cn.update().where(
        _cn.c.hypervisor_hostname == "cn1").values(
            free_ram_mb=53248, vcpus_used=6, updated_at=_at(2)))
    table.sync()
    assert (table.free_ram_mb[row], table.vcpus_used[row]) == (53248, 6)


def test_deleted_nodes_and_services_leave_the_table(nova, table):
    assert ("cn1", "cn1") in _hosts(table)
    nova.execute("cell1", _cn.update().where(
        _cn.c.hypervisor_hostname == "cn1").values(
            deleted=_cn.c.id, deleted_at=_at(3)))
    table.sync()
    assert ("cn1", "cn1") not in _hosts(table)
    nova.execute("cell2", _svc.update().where(_svc.c.host == "cn5").values(
        deleted=_svc.c.id, deleted_at=_at(4)))
    table.sync()
    assert ("cn5", "cn5") not in _hosts(table)


def _new_node(nova, cell, name, host, at, **values):
    template = dict(nova.rows("cell1", "compute_nodes")[0])
    template.update(id=900 + len(name), uuid=f"00000000-0000-4000-8000-"
                    f"{abs(hash(name)) % 10**12:012d}",
                    host=host, hypervisor_hostname=name, created_at=at,
                    updated_at=None, deleted=0, deleted_at=None, **values)
    nova.insert(cell, "compute_nodes", [_plain(template)])
    return template["uuid"]


def _new_service(nova, cell, host, at, **values):
    template = dict(nova.rows("cell1", "services")[0])
    template.update(id=900 + len(host), host=host, created_at=at,
                    updated_at=at, last_seen_up=at, deleted=0,
                    deleted_at=None, disabled=False, disabled_reason=None,
                    forced_down=False,
                    uuid=f"00000000-0000-4000-9000-"
                         f"{abs(hash(host)) % 10**12:012d}", **values)
    nova.insert(cell, "services", [_plain(template)])


def _plain(row):
    return {k: (v.isoformat(sep=" ") if isinstance(v, datetime.datetime)
                else v) for k, v in row.items()}


def test_a_new_host_arrives_with_its_instances(nova, table):
    instance = dict(nova.rows("cell1", "instances")[0])
    instance.update(id=950, uuid="11111111-2222-4333-8444-555555555555",
                    host="cn9")
    nova.insert("cell1", "instances", [_plain(instance)])
    uuid = _new_node(nova, "cell1", "cn9", "cn9", _at(3))
    table.sync()
    # A node without its service is not scheduled to...
    assert table.row_of(uuid) is None
    _new_service(nova, "cell1", "cn9", _at(4))
    table.sync()
    # ...and comes in with it, instances and all.
    row = table.row_of(uuid)
    assert row is not None
    assert set(table.instances_on(row)) == {instance["uuid"]}
    assert table.service_up(rows=[row])[0]


def test_a_cell_added_later_is_picked_up(nova, table):
    cell4 = nova.urls["cell3"]
    nova.execute("api", sa.text(
        "UPDATE cell_mappings SET disabled = :no WHERE name = 'cell3'"),
        {"no": False})
    table.sync()
    assert ("cn6", "cn6") in _hosts(table)
    row = _row(table, "cn6")
    assert table.cells.name(int(table.cell[row])) == \
        nova_cloud.cloud()["cells"]["cell3"]["uuid"]
    nova.execute("api", sa.text(
        "UPDATE cell_mappings SET disabled = :yes WHERE name = 'cell3'"),
        {"yes": True})
    table.sync()
    assert ("cn6", "cn6") not in _hosts(table)
    assert cell4  # the cell's database stays Nova's; gantt only reads


def test_aggregate_changes_are_followed(nova, table):
    row = _row(table, "cn5")
    agg = nova.rows("api", "aggregates")
    east = next(a for a in agg if a["name"] == "east")
    nova.insert("api", "aggregate_hosts", [{
        "id": 99, "host": "cn5", "aggregate_id": east["id"],
        "created_at": _at(1).isoformat(sep=" "), "updated_at": None}])
    table.sync()
    assert table.zone(row) == "east"
    nova.execute("api", sa.text(
        "DELETE FROM aggregate_hosts WHERE id = 99"))
    table.sync()
    assert table.zone(row) == "nova"


def test_an_unreadable_cell_keeps_its_hosts(nova, table, caplog):
    before = _hosts(table)
    nova.execute("cell1", sa.text(
        "ALTER TABLE compute_nodes RENAME TO compute_nodes_away"))
    try:
        with caplog.at_level(logging.WARNING):
            table.sync()
        assert _hosts(table) == before
        assert "not readable, keeping its last known hosts" in caplog.text
    finally:
        nova.execute("cell1", sa.text(
            "ALTER TABLE compute_nodes_away RENAME TO compute_nodes"))
    nova.execute("cell1", _cn.update().where(
        _cn.c.hypervisor_hostname == "cn1").values(
            free_ram_mb=777, updated_at=_at(6)))
    table.sync()
    assert table.free_ram_mb[_row(table, "cn1")] == 777


def test_the_host_state_age_counts_from_the_last_complete_read(nova, table):
    """What gantt_scheduler_host_state_age_seconds reports: a read in
    which a cell failed does not make the host state any fresher."""
    source = table.source
    first = source.read_at
    assert first is not None and first <= time.monotonic()
    table.sync()
    second = source.read_at
    assert second > first
    nova.execute("cell1", sa.text(
        "ALTER TABLE compute_nodes RENAME TO compute_nodes_away"))
    try:
        table.sync()
        assert source.read_at == second
    finally:
        nova.execute("cell1", sa.text(
            "ALTER TABLE compute_nodes_away RENAME TO compute_nodes"))
    table.sync()
    assert source.read_at > second


def test_an_unreadable_api_database_keeps_cells_and_aggregates(
        nova, table, caplog):
    before = (_hosts(table), table.zone(_row(table, "cn1")))
    nova.execute("api", sa.text(
        "ALTER TABLE cell_mappings RENAME TO cell_mappings_away"))
    try:
        with caplog.at_level(logging.WARNING):
            table.sync()
            table.sync()
        assert (_hosts(table), table.zone(_row(table, "cn1"))) == before
        assert caplog.text.count("Nova API database not readable") == 1
    finally:
        nova.execute("api", sa.text(
            "ALTER TABLE cell_mappings_away RENAME TO cell_mappings"))
    table.sync()
    assert _hosts(table) == before[0]


def test_a_thread_follows_nova_between_decisions(nova):
    import time
    conf = make_conf(nova, **{"scheduler.host_state_poll_interval": 0.05})
    source = source_mod.NovaHostSource(conf, clock=Clock())
    table = host_state.HostStateTable(None, conf, source=source)
    try:
        table.sync()
        row = _row(table, "cn1")
        assert table.enabled[row]
        nova.execute("cell1", _svc.update().where(
            _svc.c.host == "cn1").values(disabled=True, updated_at=_at(1)))
        deadline = time.monotonic() + 10
        while table.enabled[row] and time.monotonic() < deadline:
            time.sleep(0.02)
        # No sync was asked for: the poller thread applied it.
        assert not table.enabled[row]
        polls = source.polls
        assert polls > 1 and source.poll_errors == 0
        table.sync()  # loaded: a decision does not poll itself
        assert source.polls - polls <= 1
    finally:
        table.close()
    assert source._poller is None


def test_a_service_without_heartbeat_goes_down_and_comes_back(nova):
    clock = Clock(NOW)
    conf = make_conf(nova)
    source = source_mod.NovaHostSource(conf, clock=clock)
    table = host_state.HostStateTable(None, conf, clock=clock,
                                      source=source)
    try:
        table.sync()
        row = _row(table, "cn1")  # heartbeat 10 s before NOW
        assert table.service_up(rows=[row])[0]
        clock.at = NOW + datetime.timedelta(seconds=51)
        table.sync()
        assert not table.service_up(rows=[row])[0]
        nova.execute("cell1", _svc.update().where(
            _svc.c.host == "cn1").values(last_seen_up=_at(50),
                                         updated_at=_at(50)))
        table.sync()
        assert table.service_up(rows=[row])[0]
    finally:
        table.close()


def test_a_heartbeat_near_its_limit_is_judged_at_each_decision(nova):
    # A poll every second, margin 5 s: a heartbeat older than 54 s may
    # be too old before the next poll, so the table keeps it.
    clock = Clock(NOW)
    conf = make_conf(nova, **{"scheduler.host_state_poll_interval": 1})
    source = source_mod.NovaHostSource(conf, clock=clock)
    table = host_state.HostStateTable(None, conf, clock=clock,
                                      source=source)
    try:
        source.load(table)  # no poller thread: polls by hand
        row = _row(table, "cn1")  # heartbeat 10 s before NOW
        assert table.service(row).last_seen_up is None
        clock.at = NOW + datetime.timedelta(seconds=48)
        source.poll(table)
        assert table.service(row).last_seen_up is not None
        assert table.service_up(rows=[row])[0]
        # No poll in between: the decision's own clock says down.
        clock.at = NOW + datetime.timedelta(seconds=50.5)
        assert not table.service_up(rows=[row])[0]
    finally:
        table.close()


def test_without_instance_casts_instances_are_read_as_they_change(nova):
    conf = make_conf(nova)
    conf.set_override("track_instance_changes", False, "filter_scheduler")
    clock = Clock()
    source = source_mod.NovaHostSource(conf, clock=clock)
    table = host_state.HostStateTable(None, conf, clock=clock,
                                      source=source)
    try:
        table.sync()
        row = _row(table, "cn5")
        before = set(table.instances_on(row))
        instance = dict(nova.rows("cell2", "instances")[0])
        instance.update(id=960, uuid="44444444-5555-4666-8777-888888888888",
                        host="cn5", updated_at=_at(2))
        nova.insert("cell2", "instances", [_plain(instance)])
        table.sync()
        assert set(table.instances_on(row)) == before | {instance["uuid"]}
        # Nova's soft delete keeps updated_at; the save just before it
        # moved it, so the host is read again while the row is recent.
        nova.execute("cell2", sa.text(
            "UPDATE instances SET deleted = id, deleted_at = :at "
            "WHERE id = 960"), {"at": _at(3)})
        table.sync()
        assert set(table.instances_on(row)) == before
    finally:
        table.close()


# -- the casts, in memory -------------------------------------------------


def test_instance_casts_change_memory_only(nova, table):
    from scheduler import host_reads
    source = table.source
    row = _row(table, "cn1")
    held = set(table.instances_on(row))
    new = "22222222-3333-4444-8555-666666666666"
    source.update_instance_info(
        "cn1", [host_reads.Instance(new, None, None, "demo")])
    assert set(table.instances_on(row)) == held | {new}
    source.delete_instance_info("cn1", new)
    assert set(table.instances_on(row)) == held
    # A sync that disagrees reads the host's instances from Nova again.
    source.update_instance_info(
        "cn1", [host_reads.Instance(new, None, None, "demo")])
    source.sync_instance_info("cn1", sorted(held))
    assert set(table.instances_on(row)) == held


def test_aggregate_casts_apply_at_once(nova, table):
    source = table.source
    row = _row(table, "cn5")
    agg = "33333333-4444-4555-8666-777777777777"
    source.update_aggregates([(agg, "west", {"availability_zone": "west"},
                               frozenset({"cn5"}))])
    assert table.zone(row) == "west"
    source.delete_aggregate(agg)
    assert table.zone(row) == "nova"


# -- the scheduler on Nova's hosts ------------------------------------------


def _providers(placement, table):
    """Placement providers for the table's nodes, as nova-compute 34
    reports them (same uuids, OWNER_NOVA; the east aggregate
    mirrored)."""
    east = next(r.uuid for r in table.agg_records
                if r is not None and r.name == "east")
    for row in table.live_rows().tolist():
        uuid = table.uuids[row]
        placement.create_provider(table.nodenames[row], uuid=uuid)
        placement.set_inventories(uuid, {
            "VCPU": {"total": 16, "allocation_ratio": 4.0},
            "MEMORY_MB": 65536, "DISK_GB": 1000})
        placement.set_provider_traits(uuid, ["OWNER_NOVA"])
        if east in {a.uuid for a in table.aggregates_of(row)}:
            placement.set_provider_aggregates(uuid, [east])


def test_the_scheduler_places_on_novas_hosts(nova, sqlite_store):
    import uuid as uuidlib

    from placement import direct
    from scheduler import manager
    conf = sqlite_store.conf
    scheduler_conf.register_opts(conf)
    host_options.register_opts(conf)
    for name, value in (("host_state_source", "nova"),
                        ("host_state_poll_interval", 0)):
        conf.set_override(name, value, "scheduler")
    conf.set_override("connection", nova.urls["api"], "api_database")
    clock = Clock()
    scheduler = manager.Scheduler(conf, store=sqlite_store, clock=clock)
    try:
        scheduler.sync()
        _providers(direct.PlacementDirect(sqlite_store), scheduler.table)
        spec = {"flavor": {"vcpus": 1, "memory_mb": 512, "root_gb": 1},
                "project_id": "demo", "user_id": "alice"}
        # cn2's service is disabled and down, cn3's forced down; cn1 has
        # three failed builds, which Nova's BuildFailureWeigher holds
        # against it.
        [[chosen, *alternates]] = scheduler.select_destinations(
            None, spec, [str(uuidlib.uuid4())])
        assert (chosen.service_host, chosen.availability_zone) == (
            "cn5", "nova")
        assert chosen.cell_uuid == nova_cloud.cloud()["cells"]["cell2"][
            "uuid"]
        assert alternates == []  # cn1 is in another cell
        # Nova disables cn5: the next decision goes to cn1.
        nova.execute("cell2", _svc.update().where(
            _svc.c.host == "cn5").values(disabled=True, updated_at=_at(1)))
        [[chosen, *alternates]] = scheduler.select_destinations(
            None, spec, [str(uuidlib.uuid4())])
        assert (chosen.service_host, chosen.availability_zone) == (
            "cn1", "east")
        assert chosen.cell_uuid == nova_cloud.cloud()["cells"]["cell1"][
            "uuid"]
        assert alternates == []
    finally:
        scheduler.close()


def test_gantt_scheduler_refuses_a_nova_source_without_api_database(
        tmp_path):
    import subprocess
    import sys
    conf = tmp_path / "gantt.conf"
    conf.write_text("[scheduler]\nhost_state_source = nova\n")
    done = subprocess.run(
        [sys.executable, "-m", "rpc.service", "--config-file", str(conf)],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "gantt-scheduler: [scheduler] host_state_source = nova needs "
        "[api_database] connection, the URL of Nova's API database")


def test_gantt_scheduler_says_when_novas_database_cannot_be_read(tmp_path):
    import subprocess
    import sys
    conf = tmp_path / "gantt.conf"
    conf.write_text(
        "[DEFAULT]\n"
        f"state_path = {tmp_path}\n"
        "[scheduler]\nhost_state_source = nova\n"
        f"[api_database]\nconnection = sqlite:///{tmp_path}/nope.sqlite\n")
    done = subprocess.run(
        [sys.executable, "-m", "rpc.service", "--config-file", str(conf)],
        capture_output=True, text=True, timeout=60)
    out = done.stdout + done.stderr
    assert done.returncode == 1
    assert "cannot read Nova's API database" in out
    assert "Traceback" not in out
