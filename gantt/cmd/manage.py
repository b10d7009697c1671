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

import functools
import importlib
import sys

from oslo_config import cfg
from oslo_log import log as logging

from placement import command_errors, config_check
from placement import conf as conf_mod
from scheduler import conf as scheduler_conf
from scheduler import host_options

# Each command's help line, and the function ("module:name") that fills
# in its parser: adds its actions (db sync, db version, ...) or, for
# those in ARGUMENTS, its arguments. Only the command the command line
# names is filled in, its modules imported; the others are listed by
# name and help. Every command's modules take about a second to import,
# decisions' a tenth of that.
COMMANDS = {
    "db": ("database schema", "gantt.cmd.store_commands:add_db"),
    "cloud": ("cloud description files",
              "gantt.cmd.store_commands:add_cloud"),
    "allocations": ("allocations no instance accounts for",
                    "gantt.cmd.store_commands:add_allocations"),
    "placement": ("adopt an OpenStack Placement database",
                  "gantt.cmd.store_commands:add_placement"),
    "schedule": ("pick hosts for a request spec (JSON), with alternates; "
                 "--explain says why", "rpc.schedule_command:add_arguments"),
    "decisions": ("what gantt-scheduler decided and why (the decision log)",
                  "scheduler.decisions_command:add_actions"),
    "scheduler": ("a running gantt-scheduler",
                  "rpc.ping_command:add_actions"),
    "compute": ("compute nodes' provider trees",
                "compute.reshape_command:add_actions"),
}
ARGUMENTS = frozenset({"schedule"})


def _add_parsers(subparsers, named):
    """Every command's parser; filled in for those in ``named`` (the
    words of the command line)."""
    for name, (help_line, fill) in COMMANDS.items():
        parser = subparsers.add_parser(name, help=help_line)
        if name not in named:
            continue
        module, function = fill.split(":")
        fill_in = getattr(importlib.import_module(module), function)
        if name in ARGUMENTS:
            fill_in(parser)
            continue
        actions = parser.add_subparsers(dest="action")
        actions.required = True
        fill_in(actions)


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
        "command", title="commands",
        handler=functools.partial(_add_parsers, named=frozenset(argv)),
        help="run 'gantt-manage <command> --help' for details"))
    conf(argv, project="gantt", prog="gantt-manage",
         version=f"gantt-manage {conf_mod.version()}")
    return conf


# What the operator's input caused (exit status 2), and failures that are
# not (1), as command_errors.loaded() reads them: the classes of the
# modules the command imported. command_errors.run() handles the rest
# the same way for every command.
USAGE_ERRORS = ("cloudfile.loader:CloudFileError",
                "placement.adopt.openstack_db:SourceError",
                "placement.adopt.verify:VerifyError",
                "placement.adopt.importer:ImportRefused",
                "placement.adopt.exporter:ExportRefused",
                "scheduler.cli:SpecFileError",
                "scheduler.errors:InvalidRequestSpec",
                "scheduler.errors:ConfigError",
                "scheduler.decisions_command:USAGE_ERRORS",
                "rpc.schedule_command:USAGE_ERRORS",
                "compute.reshape_command:USAGE_ERRORS")
FAILURES = ("scheduler.errors:SchedulerError",
            "placement.errors:PlacementError",
            "scheduler.host_updates:SourceError",
            "placement.db.schema_state:SchemaNotReady",
            "compute.reshape_command:FAILURES")


def main(argv=None):
    return command_errors.main(
        "gantt-manage", argv, build_conf, lambda conf: conf.command.run(conf),
        usage=lambda: command_errors.loaded(USAGE_ERRORS),
        failures=lambda: command_errors.loaded(FAILURES))


if __name__ == "__main__":
    sys.exit(main())
