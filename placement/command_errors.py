"""How every gantt command ends when something goes wrong: one line on
stderr, ``<command>: <what happened>``, and an exit status that says
whose it is to fix:

- 0: done;
- 2: the input cannot be used (a file, an argument, a config option or
  an OS_* variable; a database URL that names no known database type or
  a driver that is not installed);
- 1: anything else (a database that cannot be reached, a port in use, a
  failure of gantt's own).

The traceback is printed only with ``--debug``: an operator reads the
line, a developer asks for the rest.
"""

import re
import sys
import traceback

from oslo_config import cfg
from oslo_log import log as logging

from placement import config_check

USAGE = 2
FAILURE = 1
INTERRUPTED = 130

# Database drivers SQLAlchemy imports by URL, and what gantt's extras
# offer instead.
_POSTGRES = ("pip install 'gantt[postgres]' installs psycopg (URL "
             "postgresql:// or postgresql+psycopg://)")
_MYSQL = ("pip install 'gantt[mysql]' installs PyMySQL (URL mysql:// or "
          "mysql+pymysql://)")
DRIVER_HINTS = {"psycopg2": _POSTGRES, "psycopg": _POSTGRES,
                "pymysql": _MYSQL, "MySQLdb": _MYSQL}


# A table or column the statement needs is not there (SQLite,
# PostgreSQL, MySQL/MariaDB): the schema is missing or older than the
# code. Commands check the revision first (placement.db.schema_state);
# this names what slips past, such as a schema dropped meanwhile.
_MISSING_SCHEMA = re.compile(
    r"no such (table|column)|relation \S+ does not exist|column \S+ does "
    r"not exist|Table \S+ doesn't exist|Unknown column")


def _first_line(text):
    lines = [line.strip() for line in str(text).splitlines()
             if line.strip()]
    return lines[0] if lines else ""


def database_problem(exc):
    """(exit status, text) when ``exc`` is the database's (no such
    dialect or driver, a URL that does not parse, a server that cannot
    be reached or refuses the login), else None."""
    from sqlalchemy import exc as sa_exc

    if isinstance(exc, sa_exc.NoSuchModuleError):
        return USAGE, f"database URL: {_first_line(exc)}"
    if isinstance(exc, sa_exc.ArgumentError):
        return USAGE, f"database URL: {_first_line(exc)}"
    if (isinstance(exc, ModuleNotFoundError)
            and (exc.name or "").split(".")[0] in DRIVER_HINTS):
        driver = exc.name.split(".")[0]
        return USAGE, (f"database driver {driver} is not installed; "
                       f"{DRIVER_HINTS[driver]}")
    if (isinstance(exc, sa_exc.OperationalError | sa_exc.ProgrammingError)
            and _MISSING_SCHEMA.search(str(exc.orig))):
        return FAILURE, (f"the database has no gantt schema or an older "
                         f"one: {_first_line(exc.orig)}; run gantt-manage "
                         f"db sync")
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return FAILURE, f"lost the database: {_first_line(exc.orig)}"
    if isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError):
        return FAILURE, f"cannot use the database: {_first_line(exc.orig)}"
    return None


def message(exc):
    """The text of an error gantt raised on purpose (its str(): what
    gantt's errors carry as ``message``, file errors with their path)."""
    return str(exc) or type(exc).__name__


def report(prog, text, exc=None, debug=False):
    if debug and exc is not None:
        traceback.print_exception(exc, file=sys.stderr)
    print(f"{prog}: {text}", file=sys.stderr)


def classify(exc, usage=(), failures=()):
    """(exit status, line) of ``exc`` as run() would end with it (no
    traceback hint): for a process that reports its failure to another
    (a gantt-scheduler worker to its parent)."""
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED, "interrupted"
    if isinstance(exc, usage):
        return USAGE, message(exc)
    if isinstance(exc, failures):
        return FAILURE, message(exc)
    known = database_problem(exc)
    if known is not None:
        return known
    return FAILURE, f"failed: {type(exc).__name__}: {_first_line(exc)}"


def run(prog, body, debug=False, usage=(), failures=()):
    """``body()``'s exit status (None: 0); an exception it raises becomes
    one line and a status: those in ``usage`` 2, those in ``failures``
    1, the database's as database_problem() says, any other 1 with its
    type named."""
    try:
        return body() or 0
    except KeyboardInterrupt:
        report(prog, "interrupted")
        return INTERRUPTED
    except usage as exc:
        report(prog, message(exc), exc, debug)
        return USAGE
    except failures as exc:
        report(prog, message(exc), exc, debug)
        return FAILURE
    except Exception as exc:  # noqa: BLE001 - the one place that ends it
        known = database_problem(exc)
        if known is not None:
            report(prog, known[1], exc, debug)
            return known[0]
        hint = "" if debug else " (--debug prints the traceback)"
        report(prog, f"failed: {type(exc).__name__}: "
                     f"{_first_line(exc)}{hint}", exc, debug)
        return FAILURE


def main(prog, argv, build_conf, body, usage=(), failures=(),
         checks=(), config_errors=()):
    """A gantt command from its arguments to its exit status: the config
    built and checked (every config file alike; ``checks``, each given
    the conf, may refuse it too), a config that cannot be used one line
    and status 2 (cfg.Error and ``config_errors``), then logging set up
    and ``body(conf)`` run as run() says."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        conf = build_conf(argv)
        config_check.check(
            conf, lambda line: print(f"{prog}: {line}", file=sys.stderr))
        for check in checks:
            check(conf)
    except (cfg.Error, *config_errors) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return USAGE
    logging.setup(conf, "gantt")
    return run(prog, lambda: body(conf), debug=conf.debug, usage=usage,
               failures=failures)
