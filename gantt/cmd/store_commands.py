"""gantt-manage's commands on gantt's database: db, cloud, allocations
and placement. gantt.cmd.manage lists every command; each ``add_*``
here fills in the parser of one, and manage calls it only when the
command line names that command."""

import json
import sys

from cloudfile import exporter as cloud_exporter
from cloudfile import loader, report
from placement.adopt import exporter, importer, openstack_db, verify
from placement.db import migration, schema_state
from placement.db import store as store_mod
from scheduler import allocation_audit, host_state


def db_sync(conf):
    store = store_mod.Store(conf)
    migration.sync(store.engine)
    print(f"database at revision {migration.current_revision(store.engine)}")


def db_version(conf):
    """The current and latest revisions; 0 at the latest (or a newer
    one), 1 when the schema is behind or missing."""
    store = store_mod.Store(conf)
    try:
        state = schema_state.schema_state(store.engine)
        where = schema_state.database_name(store.engine)
    finally:
        store.dispose()
    sync = schema_state.sync_command(conf)
    if state.state == schema_state.MISSING:
        raise schema_state.SchemaNotReady(
            f"no gantt schema in {where}; run {sync}", state)
    newer = (" (newer than this gantt's)"
             if state.state == schema_state.AHEAD else "")
    print(f"current: {state.current}{newer}")
    print(f"latest:  {state.head}")
    if state.state == schema_state.BEHIND:
        raise schema_state.SchemaNotReady(
            f"the schema is behind (revision {state.current} of "
            f"{state.head}); run {sync}", state)
    return 0


def cloud_load(conf):
    cloud = loader.read(conf.command.file)
    store = schema_state.open_store(conf)
    summary = loader.load(store, cloud)
    hosts = ""
    if summary.hosts or summary.host_aggregates:
        hosts = (f"; {summary.hosts} compute hosts, "
                 f"{summary.host_aggregates} host aggregates")
    print(f"loaded {conf.command.file}: {summary.providers} providers, "
          f"{summary.inventories} inventories, {summary.consumers} "
          f"consumers with {summary.allocations} allocations{hosts}")


def cloud_show(conf):
    store = schema_state.open_store(conf)
    snap = report.snapshot(store)
    table = host_state.HostStateTable(store, conf)
    table.sync()
    hosts = report.host_rows(table)
    table.close()
    if conf.command.format == "json":
        print(json.dumps(report.as_dict(snap, hosts), indent=2,
                         sort_keys=True))
    else:
        print(report.render(snap, hosts))


def cloud_export(conf):
    """The cloud in the database as a cloud file that cloud load and
    gantt-simulate --cloud read back (cloudfile.exporter)."""
    store = schema_state.open_store(conf)
    try:
        data = cloud_exporter.document(store)
    finally:
        store.dispose()
    cloud_exporter.write(conf.command.file, data)
    if conf.command.file != "-":
        print(f"exported to {conf.command.file}: "
              f"{len(data['providers'])} providers, "
              f"{len(data['allocations'])} consumers with allocations")


def allocations_audit(conf):
    """Consumers whose allocations the host state source does not
    account for (scheduler.allocation_audit); removed with --heal."""
    store = schema_state.open_store(conf)
    try:
        audit = allocation_audit.run(store, conf, conf.command.older_than)
        if conf.command.heal:
            allocation_audit.heal(store, audit)
    finally:
        store.dispose()
    if conf.command.format == "json":
        print(json.dumps(audit.as_dict(), indent=2, sort_keys=True))
    else:
        print(allocation_audit.render(audit))
    if not audit.findings:
        return 0
    return 4 if conf.command.heal else 3


def placement_import(conf):
    args = conf.command
    snapshot = openstack_db.read(args.source)
    problems = openstack_db.check(snapshot)
    if problems:
        # One line a problem; the count after several.
        for line in problems:
            print(f"gantt-manage: {line}", file=sys.stderr)
        if len(problems) > 1:
            print(f"gantt-manage: {len(problems)} problems in "
                  f"{args.source}; nothing was written", file=sys.stderr)
        return 2
    counts = ", ".join(f"{n} {table}" for table, n in
                       snapshot.counts().items())
    if args.dry_run:
        print(f"would import: {counts}")
        return 0
    store = schema_state.open_store(conf)
    pdb = conf.placement
    count = importer.write(
        store, snapshot, replace=args.replace,
        incomplete_project=pdb.incomplete_consumer_project_id,
        incomplete_user=pdb.incomplete_consumer_user_id)
    replaced = f" (replacing {count} providers)" if count else ""
    print(f"imported{replaced}: {counts}")
    return 0


def placement_verify(conf):
    args = conf.command
    # The other side first: a cloud that cannot be read stops here.
    theirs = verify.connect(args.against, args.token, args.os_cloud,
                            args.os_region_name, args.microversion)
    store = schema_state.open_store(conf)
    ours = verify.GanttSide(conf, store, args.microversion)
    try:
        result = verify.run(ours, theirs)
    finally:
        ours.close()
        theirs.close()
    for line in result.differences:
        print(line)
    print(f"compared {result.asked} answers with {theirs.root}: "
          f"{len(result.differences) or 'none'} differ")
    return 1 if result.differences else 0


def placement_export(conf):
    store = schema_state.open_store(conf)
    rows = store.read(exporter.read_gantt, snapshot=True)
    written = exporter.write(conf.command.destination, rows)
    counts = ", ".join(f"{n} {table}" for table, n in sorted(written.items()))
    print(f"exported: {counts}")
    return 0


def add_db(db_actions):
    db_actions.add_parser(
        "sync", help="create or upgrade the schema and seed the standard "
                     "resource classes and traits").set_defaults(run=db_sync)
    db_actions.add_parser(
        "version", help="show the current and latest schema revisions; "
                        "exit status 1 when the schema is behind the "
                        "latest or missing"
    ).set_defaults(run=db_version)


def add_cloud(cloud_actions):
    load = cloud_actions.add_parser(
        "load", help="load a cloud file (YAML or JSON) in one transaction")
    load.add_argument("file", help="path of the cloud file")
    load.set_defaults(run=cloud_load)
    show = cloud_actions.add_parser(
        "show", help="print providers, capacity and usage")
    show.add_argument("--format", choices=["table", "json"], default="table")
    show.set_defaults(run=cloud_show)
    export = cloud_actions.add_parser(
        "export", help="write the cloud in the database as a cloud file "
                       "(YAML; JSON if FILE ends in .json; - for standard "
                       "output)")
    export.add_argument("file", help="path of the cloud file to write")
    export.set_defaults(run=cloud_export)


def add_allocations(allocations_actions):
    audit = allocations_actions.add_parser(
        "audit", help="list consumers holding allocations that the host "
                      "state source ([scheduler] host_state_source) does "
                      "not account for")
    audit.add_argument("--heal", action="store_true",
                       help="remove their allocations (each only if "
                            "nobody wrote it since the audit read it)")
    audit.add_argument("--older-than", type=_seconds, default=600.0,
                       metavar="S",
                       help="leave alone consumers written in the last S "
                            "seconds (default 600: an instance being "
                            "built holds its claim before any record "
                            "shows it)")
    audit.add_argument("--format", choices=["table", "json"],
                       default="table")
    audit.set_defaults(run=allocations_audit)


def add_placement(placement_actions):
    imp = placement_actions.add_parser(
        "import", help="copy an OpenStack Placement database's providers, "
                       "inventories, traits, aggregates, consumers and "
                       "allocations into gantt's, in one transaction")
    imp.add_argument("--from", dest="source", required=True, metavar="URL",
                     help="SQLAlchemy URL of the OpenStack Placement "
                          "database (read only)")
    imp.add_argument("--replace", action="store_true",
                     help="empty gantt's placement state first when it "
                          "holds providers")
    imp.add_argument("--dry-run", action="store_true",
                     help="read and check, print what would be written")
    imp.set_defaults(run=placement_import)
    ver = placement_actions.add_parser(
        "verify", help="ask gantt and a running placement service the same "
                       "GETs and print where their answers differ")
    ver.add_argument("--against", metavar="URL", default=None,
                     help="the placement service's endpoint (default: "
                          "the one in the service catalog of the cloud, "
                          "--os-cloud)")
    verify.add_options(ver)
    ver.add_argument("--microversion", default="1.39",
                     help="asked of both (default 1.39)")
    ver.set_defaults(run=placement_verify)
    exp = placement_actions.add_parser(
        "export", help="write gantt's placement state into an empty "
                       "OpenStack Placement database (the way back)")
    exp.add_argument("--to", dest="destination", required=True,
                     metavar="URL",
                     help="SQLAlchemy URL of the OpenStack Placement "
                          "database, its schema made by placement-manage "
                          "db sync")
    exp.set_defaults(run=placement_export)



def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"expected seconds >= 0, got {text!r}")
    return value
