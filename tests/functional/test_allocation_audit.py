"""gantt-manage allocations audit: consumers holding allocations that the
host state source does not account for, found and removed."""

import datetime
import json
import uuid as uuidlib

import pytest

from gantt.cmd import manage
from placement import direct
from placement.objects import allocations
from scheduler import allocation_audit, host_options, host_records
from tests.scheduler import nova_cloud

LATER = datetime.datetime.now(datetime.timezone.utc).replace(
    tzinfo=None) + datetime.timedelta(hours=2)


def _cloud(store):
    placement = direct.PlacementDirect(store)
    rp = placement.create_provider("cn1")
    placement.set_inventories(rp.uuid, {"VCPU": 64, "MEMORY_MB": 65536})
    return rp.uuid


def _hold(store, rp, consumer=None, kind="INSTANCE", vcpus=1):
    consumer = consumer or str(uuidlib.uuid4())
    allocations.replace(store, [allocations.ConsumerAllocations(
        consumer, {rp: {"VCPU": vcpus}}, "demo", "alice",
        consumer_generation=None, consumer_type=kind)])
    return consumer


def _conf(store):
    host_options.register_opts(store.conf)
    return store.conf


def test_gantt_records_account_for_their_instances(store):
    rp = _cloud(store)
    known = _hold(store, rp)
    host_records.update_instance_info(store, "cn1", [known])
    leaked = _hold(store, rp, vcpus=2)
    migration = _hold(store, rp, kind="MIGRATION")
    other = _hold(store, rp, kind="CUSTOM_BACKUP")
    audit = allocation_audit.run(store, _conf(store), 600, now=LATER)
    assert [f.consumer for f in audit.findings] == [leaked]
    [found] = audit.findings
    assert found.allocations == {rp: {"VCPU": 2}}
    assert found.why == "no instance in gantt's host records"
    assert (audit.consumers, audit.audited) == (4, 2)
    assert audit.left_alone == {
        "MIGRATION (gantt's host records know no migrations)": 1,
        "consumer type CUSTOM_BACKUP": 1}
    assert {migration, other} <= {
        c for c in (migration, other)
        if allocations.for_consumer(store, c).allocations}


def test_recent_claims_are_left_alone(store):
    rp = _cloud(store)
    _hold(store, rp)
    audit = allocation_audit.run(store, _conf(store), 600)
    assert audit.findings == []
    assert audit.left_alone == {"written in the last 600 s": 1}


def test_heal_removes_only_what_nobody_wrote_since(store):
    rp = _cloud(store)
    leaked, busy = _hold(store, rp), _hold(store, rp)
    audit = allocation_audit.run(store, _conf(store), 600, now=LATER)
    assert {f.consumer for f in audit.findings} == {leaked, busy}
    # Written between the audit and the heal: kept.
    view = allocations.for_consumer(store, busy)
    allocations.replace(store, [allocations.ConsumerAllocations(
        busy, {rp: {"VCPU": 3}}, "demo", "alice",
        consumer_generation=view.consumer.generation)])
    allocation_audit.heal(store, audit)
    healed = {f.consumer: f.healed for f in audit.findings}
    assert healed == {leaked: "removed",
                      busy: "kept: written since the audit"}
    assert allocations.for_consumer(store, leaked).allocations == {}
    assert allocations.for_consumer(store, busy).allocations == {
        rp: allocations.ProviderAllocation(
            allocations.for_consumer(store, busy).allocations[rp].generation,
            {"VCPU": 3})}


def test_nova_databases_account_for_instances_builds_and_migrations(
        sqlite_store, tmp_path):
    nova = nova_cloud.NovaDatabases("sqlite", tmp_path)
    try:
        nova.reset()
        store = sqlite_store
        conf = _conf(store)
        conf.set_override("host_state_source", "nova", "scheduler")
        conf.set_override("connection", nova.urls["api"], "api_database")
        rp = _cloud(store)
        live = [r["uuid"] for r in nova.rows("cell1", "instances")
                if not r["deleted"]][0]
        dead = [r["uuid"] for r in nova.rows("cell1", "instances")
                if r["deleted"]][0]
        building = str(uuidlib.uuid4())
        nova.insert("api", "build_requests", [{
            "id": 1, "instance_uuid": building, "project_id": "demo",
            "created_at": "2026-11-24 12:00:00"}])
        moving, moved = str(uuidlib.uuid4()), str(uuidlib.uuid4())
        nova.insert("cell1", "migrations", [
            {"id": 1, "uuid": moving, "instance_uuid": live,
             "status": "migrating", "deleted": 0},
            {"id": 2, "uuid": moved, "instance_uuid": live,
             "status": "confirmed", "deleted": 0}])
        for consumer in (live, dead, building):
            _hold(store, rp, consumer)
        for consumer in (moving, moved):
            _hold(store, rp, consumer, kind="MIGRATION")
        untyped = _hold(store, rp, kind=None)
        audit = allocation_audit.run(store, conf, 600, now=LATER)
        found = {f.consumer: f.why for f in audit.findings}
        assert found == {
            dead: "no instance in Nova's databases",
            moved: "no migration in progress in Nova's databases",
            untyped: "no instance or migration in progress in Nova's "
                     "databases"}
        assert audit.source == "nova"
    finally:
        nova.close()


def _manage(tmp_path, store, *args):
    conf = tmp_path / "gantt.conf"
    url = store.conf.placement_database.connection
    conf.write_text(f"[placement_database]\nconnection = {url}\n"
                    "sync_on_startup = false\n")
    return manage.main(["--config-file", str(conf), "allocations", "audit",
                        *args])


def test_cli_exit_codes_and_formats(store, tmp_path, capsys):
    rp = _cloud(store)
    leaked = _hold(store, rp)
    assert _manage(tmp_path, store, "--older-than", "0") == 3
    out = capsys.readouterr().out
    assert leaked in out and "1 unexplained" in out
    assert _manage(tmp_path, store, "--older-than", "0", "--format",
                   "json") == 3
    report = json.loads(capsys.readouterr().out)
    assert [f["consumer"] for f in report["unexplained"]] == [leaked]
    assert _manage(tmp_path, store, "--older-than", "0", "--heal") == 4
    assert "removed" in capsys.readouterr().out
    assert _manage(tmp_path, store, "--older-than", "0") == 0
    with pytest.raises(SystemExit) as bad:
        _manage(tmp_path, store, "--older-than", "soon")
    assert bad.value.code == 2
