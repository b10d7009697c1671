"""gantt-status: is this deployment ready for this gantt?

    gantt-status [--config-file F] upgrade check [--json]

Run with the new gantt's code and the deployment's config files, before
the services are restarted on it (as nova-status upgrade check is). The
checks (oslo.upgradecheck), each Success, Warning or Failure:

- Database schema: gantt's database is at this gantt's latest revision
  (Failure when it is missing or behind: run gantt-manage db sync;
  Warning when a newer gantt synced it);
- Config options: the config files set no option gantt removed
  (REMOVED_OPTIONS; Warning, with what to do instead) and no option
  gantt does not know (Warning, as every gantt command warns);
- Nova host state source: with [scheduler] host_state_source = nova,
  Nova's API database ([api_database] connection) and the database of
  every cell it maps can be read (Failure otherwise).

Exit status, oslo.upgradecheck's: 0 all passed, 1 a warning at worst, 2 a
failure (also a config file or value that cannot be used, or an
argument), 255 when a check itself could not run (one line on stderr;
--debug prints the traceback).
"""

import sys

from oslo_config import cfg
from oslo_log import log as logging
from oslo_upgradecheck import upgradecheck

from placement import command_errors, config_check
from placement import conf as conf_mod
from placement.db import schema_state
from placement.db import store as store_mod
from scheduler import conf as scheduler_conf
from scheduler import host_options, host_updates
from scheduler.nova_db import options as nova_options

PROG = "gantt-status"
ERROR = 255

# Options gantt has removed: (section, option) -> since when and what to
# do instead. A file that still sets one gets a Warning naming it. gantt
# has removed none so far.
REMOVED_OPTIONS = {}


def _first_line(exc):
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[0].strip() if lines else ""


def _result(code, details=None):
    return upgradecheck.Result(code, details)


class UpgradeChecks(upgradecheck.UpgradeCommands):
    """The checks, on ``conf`` (parsed before check() runs)."""

    display_title = "gantt upgrade check"

    def __init__(self, conf):
        self.conf = conf

    def _database_schema(self):
        try:
            store = store_mod.Store(self.conf)
            try:
                state = schema_state.schema_state(store.engine)
            finally:
                store.dispose()
        except Exception as exc:  # noqa: BLE001 - said in the result
            known = command_errors.database_problem(exc)
            if known is None:
                raise
            return _result(upgradecheck.Code.FAILURE, known[1])
        where = f"the database {schema_state.database_name(store.engine)}"
        if state.state == schema_state.AHEAD:
            return _result(upgradecheck.Code.WARNING, (
                f"{where} is at revision {state.current}, which this "
                f"gantt does not know (its latest is {state.head}): a "
                f"newer gantt synced it"))
        if not state.usable:
            return _result(upgradecheck.Code.FAILURE, (
                f"{state.problem(where)}; run "
                f"{schema_state.sync_command(self.conf)}"))
        return _result(upgradecheck.Code.SUCCESS,
                       f"{where} is at revision {state.current}")

    def _config_options(self):
        removed, unknown = [], []
        for path in config_check.files_of(self.conf):
            for finding in config_check.check_file(path):
                key = (finding.section, finding.option)
                if finding.option is not None and key in REMOVED_OPTIONS:
                    removed.append(f"{path}: [{finding.section}] "
                                   f"{finding.option}: removed "
                                   f"{REMOVED_OPTIONS[key]}")
                else:
                    unknown.append(str(finding))
        if not removed and not unknown:
            return _result(upgradecheck.Code.SUCCESS,
                           "no removed options set")
        lines = removed or ["no removed options set"]
        return _result(upgradecheck.Code.WARNING, "; ".join(lines + unknown))

    def _nova_source(self):
        conf = self.conf
        if conf.scheduler.host_state_source != host_options.NOVA:
            return _result(upgradecheck.Code.SUCCESS,
                           f"[scheduler] host_state_source = "
                           f"{conf.scheduler.host_state_source}: gantt's "
                           f"own records, in its database")
        try:
            source = host_updates.source_for(conf)
        except host_updates.SourceError as exc:
            return _result(upgradecheck.Code.FAILURE, str(exc))
        try:
            cells = source.check_cells()
        except host_updates.SourceError as exc:
            return _result(upgradecheck.Code.FAILURE, str(exc))
        finally:
            source.close()
        failing = [f"cell {name}: {reason}"
                   for name, reason in cells.items() if reason]
        if failing:
            return _result(upgradecheck.Code.FAILURE,
                           "cannot read Nova's cell databases: "
                           + "; ".join(failing))
        if not cells:
            return _result(upgradecheck.Code.WARNING,
                           "Nova's API database maps no cell to schedule "
                           "to")
        return _result(upgradecheck.Code.SUCCESS,
                       f"Nova's API database and the databases of "
                       f"{len(cells)} enabled cell(s) are readable: "
                       f"{', '.join(cells)}")

    _upgrade_checks = (
        ("Database schema", _database_schema),
        ("Config options", _config_options),
        ("Nova host state source", _nova_source),
    )


def build_conf(argv, checks_for):
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    scheduler_conf.register_opts(conf)
    host_options.register_opts(conf)
    nova_options.register_opts(conf)
    logging.register_options(conf)
    logging.set_defaults(default_log_levels=(
        logging.get_default_log_levels() + ["alembic=WARN"]))
    config_check.register(conf)
    upgradecheck.register_cli_options(conf, checks_for(conf))
    conf(argv, project="gantt", prog=PROG,
         version=f"{PROG} {conf_mod.version()}")
    return conf


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        conf = build_conf(argv, UpgradeChecks)
        if conf.command.check != "check":
            raise cfg.Error(f"upgrade {conf.command.check}: unknown "
                            f"action (the one action is 'check')")
        config_check.check_values(conf)
    except cfg.Error as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return command_errors.USAGE
    logging.setup(conf, "gantt")
    # oslo.upgradecheck reads --json from its module's CONF.
    upgradecheck.CONF = conf
    try:
        return int(conf.command.action_fn())
    except KeyboardInterrupt:
        command_errors.report(PROG, "interrupted")
        return command_errors.INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one place that ends it
        hint = "" if conf.debug else " (--debug prints the traceback)"
        command_errors.report(
            PROG, f"a check could not run: {type(exc).__name__}: "
                  f"{_first_line(exc)}{hint}",
            exc, conf.debug)
        return ERROR


if __name__ == "__main__":
    sys.exit(main())
