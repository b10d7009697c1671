"""gantt-manage: database schema, cloud files, trial scheduling.

    gantt-manage [--config-file F] db sync        bring the schema up to date
    gantt-manage [--config-file F] db version     show the schema revision
    gantt-manage [--config-file F] cloud load FILE
    gantt-manage [--config-file F] cloud show [--format table|json]
    gantt-manage [--config-file F] cloud export FILE
    gantt-manage [--config-file F] schedule SPEC [--claim] [--explain]
    gantt-manage [--config-file F] schedule SPEC --rpc [--claim]
                 [--timeout S] [--topic T]
    gantt-manage [--config-file F] scheduler ping [--timeout S] [--topic T]
    gantt-manage [--config-file F] decisions show INSTANCE_UUID
                 [--host HOST] [--format table|json] [--dir DIR]
    gantt-manage [--config-file F] decisions list [--since WHEN]
                 [--host HOST] [--no-valid-host] [--limit N]
                 [--format table|json] [--dir DIR]
    gantt-manage [--config-file F] allocations audit [--heal]
                 [--older-than S] [--format table|json]
    gantt-manage [--config-file F] placement import --from URL
                 [--replace] [--dry-run]
    gantt-manage [--config-file F] placement verify [--against URL]
                 [--token T | --os-cloud NAME] [--os-region-name R]
                 [--microversion V]
    gantt-manage [--config-file F] placement export --to URL
    gantt-manage [--config-file F] compute reshape NODES [--rolling]
                 [--check] [--endpoint URL [--token T]]

Exit status: 0 on success, 2 for a file or argument that cannot be used,
1 for any other failure. db version: 1 when the schema is behind the
latest revision or missing (0 at the latest or a newer one); every
command that opens the store: 1, naming the db sync to run, when the
database has no gantt schema or an older one (with [placement_database]
sync_on_startup off; on, the store is brought up to date first).
allocations audit, as nova-manage placement
audit: 3 when it found unexplained allocations, 4 when it removed them;
placement import: 2 when the source holds rows it cannot take (each
printed, by table and key) or gantt's database holds providers already
and --replace was not given; placement verify: 1 when an answer
differs (each printed), 2 when the other service cannot be asked;
placement export: 2 when the destination is not an empty OpenStack
Placement database; scheduler ping: 1 when no gantt-scheduler answers
within --timeout (default 10 s); schedule --rpc: 1 as scheduler ping
does and for no valid host, 2 with --explain; compute reshape: 1 when
a node was not reshaped (--rolling: the others went on); decisions
show: 2 when the instance has no logged decision.
"""

import json
import sys

from oslo_config import cfg
from oslo_log import log as logging

from cloudfile import exporter as cloud_exporter
from cloudfile import loader, report
from compute import reshape_command
from placement import command_errors, config_check, errors
from placement import conf as conf_mod
from placement.adopt import exporter, importer, openstack_db, verify
from placement.db import migration, schema_state
from placement.db import store as store_mod
from rpc import ping_command, schedule_command
from scheduler import (
    allocation_audit,
    decisions_command,
    host_options,
    host_state,
    host_updates,
)
from scheduler import cli as scheduler_cli
from scheduler import conf as scheduler_conf
from scheduler import errors as scheduler_errors

LOG = logging.getLogger(__name__)


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


def _add_parsers(subparsers):
    db = subparsers.add_parser("db", help="database schema")
    db_actions = db.add_subparsers(dest="action")
    db_actions.required = True
    db_actions.add_parser(
        "sync", help="create or upgrade the schema and seed the standard "
                     "resource classes and traits").set_defaults(run=db_sync)
    db_actions.add_parser(
        "version", help="show the current and latest schema revisions; "
                        "exit status 1 when the schema is behind the "
                        "latest or missing"
    ).set_defaults(run=db_version)

    cloud = subparsers.add_parser("cloud", help="cloud description files")
    cloud_actions = cloud.add_subparsers(dest="action")
    cloud_actions.required = True
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

    allocations = subparsers.add_parser(
        "allocations", help="allocations no instance accounts for")
    allocations_actions = allocations.add_subparsers(dest="action")
    allocations_actions.required = True
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

    placement = subparsers.add_parser(
        "placement", help="adopt an OpenStack Placement database")
    placement_actions = placement.add_subparsers(dest="action")
    placement_actions.required = True
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

    schedule_command.add_options(scheduler_cli.add_parser(subparsers))
    decisions_command.add_parser(subparsers)
    ping_command.add_parser(subparsers)
    reshape_command.add_parser(subparsers)


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"expected seconds >= 0, got {text!r}")
    return value


def build_conf(argv):
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    # The scheduler's too: `schedule` and `allocations audit` use them,
    # and every command checks the values it registers.
    scheduler_conf.register_opts(conf)
    host_options.register_opts(conf)
    logging.register_options(conf)
    logging.set_defaults(default_log_levels=(
        # oslo.service says which backend it loaded when a command
        # first imports oslo.messaging (ping, schedule --rpc).
        logging.get_default_log_levels() + ["alembic=WARN",
                                            "oslo_service=WARN"]))
    config_check.register(conf)
    conf.register_cli_opt(cfg.SubCommandOpt(
        "command", title="commands", handler=_add_parsers,
        help="run 'gantt-manage <command> --help' for details"))
    conf(argv, project="gantt", prog="gantt-manage",
         version=f"gantt-manage {conf_mod.version()}")
    return conf


# What the operator's input caused (exit status 2), and failures that are
# not (1); command_errors.run() handles the rest the same way for every
# command.
USAGE_ERRORS = (loader.CloudFileError, openstack_db.SourceError,
                verify.VerifyError, importer.ImportRefused,
                exporter.ExportRefused, scheduler_cli.SpecFileError,
                scheduler_errors.InvalidRequestSpec,
                scheduler_errors.ConfigError,
                *decisions_command.USAGE_ERRORS,
                *schedule_command.USAGE_ERRORS,
                *reshape_command.USAGE_ERRORS)
FAILURES = (scheduler_errors.SchedulerError, errors.PlacementError,
            host_updates.SourceError, schema_state.SchemaNotReady,
            *reshape_command.FAILURES)


def main(argv=None):
    return command_errors.main(
        "gantt-manage", argv, build_conf, lambda conf: conf.command.run(conf),
        usage=USAGE_ERRORS, failures=FAILURES)


if __name__ == "__main__":
    sys.exit(main())
