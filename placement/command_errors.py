"""How every gantt command ends when something goes wrong: one line on
stderr, ``<command>: <what happened>``, and an exit status that says
whose it is to fix:

- 0: done;
- 2: the input cannot be used (a file, an argument, a config option or
  an OS_* variable; a database URL that names no known database type or
  a driver that is not installed; an address to listen on that is not
  this host's; a ``[DEFAULT] state_path`` that cannot be created or
  written in, named as such);
- 1: anything else (a database that cannot be reached, a port in use, a
  failure of gantt's own).

A command line option whose value does not convert (``--port abc``) is
said with the option as it was typed: ``--port: 'abc' is not a port
(0-65535)``, status 2.

A reader that stops reading (``gantt-manage cloud show | head``) ends
the command quietly with status 141, as a command killed by SIGPIPE
reports itself to the shell (what GNU tools give, and what ``set -o
pipefail`` sees): no line, no traceback. What was left to print goes to
/dev/null, as the Python documentation recommends for a closed pipe.

The traceback is printed only with ``--debug``: an operator reads the
line, a developer asks for the rest.
"""

import contextlib
import io
import os
import re
import select
import sys
import traceback

from oslo_config import cfg
from oslo_log import log as logging

from placement import conf as conf_mod
from placement import config_check

USAGE = 2
FAILURE = 1
INTERRUPTED = 130
# 128 + SIGPIPE: what a shell reports for a command whose reader went
# away.
CLOSED_OUTPUT = 141

# Database drivers SQLAlchemy imports by URL, and what gantt's extras
# offer instead.
_POSTGRES = ("pip install 'gantt[postgres]' installs psycopg (URL "
             "postgresql:// or postgresql+psycopg://)")
_MYSQL = ("pip install 'gantt[mysql]' installs PyMySQL (URL mysql:// or "
          "mysql+pymysql://)")
DRIVER_HINTS = {"psycopg2": _POSTGRES, "psycopg": _POSTGRES,
                "pymysql": _MYSQL, "MySQLdb": _MYSQL}
# Database types people write that SQLAlchemy calls otherwise.
DIALECT_HINTS = {"postgres": "postgresql", "pgsql": "postgresql",
                 "psql": "postgresql", "maria": "mariadb",
                 "sqlite3": "sqlite"}
_NO_DIALECT = re.compile(r"sqlalchemy\.dialects:(\w+)")


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
        text = _first_line(exc)
        found = _NO_DIALECT.search(text)
        name = found and found.group(1).split(".")[0]
        if name in DIALECT_HINTS:
            text += f" (did you mean {DIALECT_HINTS[name]}://?)"
        return USAGE, f"database URL: {text}"
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


def _stdout_closed():
    """Whether standard output's reader has gone (a pipe with no reader
    polls as an error); then what is still to be written there goes to
    /dev/null, so that Python's own flush at exit does not complain."""
    try:
        fd = sys.stdout.fileno()
        poll = select.poll()
        poll.register(fd, select.POLLOUT)
        events = poll.poll(0)
    except (OSError, ValueError, AttributeError):
        return False
    if not any(event & select.POLLERR for _, event in events):
        return False
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    return True


def classify(exc, usage=(), failures=(), hint=""):
    """(exit status, line) of ``exc`` as run() ends with it (``hint``
    after the line of an error gantt did not expect): also for a process
    that reports its failure to another (a gantt-scheduler worker to its
    parent)."""
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED, "interrupted"
    if isinstance(exc, usage):
        return USAGE, message(exc)
    if isinstance(exc, failures):
        return FAILURE, message(exc)
    known = database_problem(exc)
    if known is not None:
        return known
    return FAILURE, (f"failed: {type(exc).__name__}: {_first_line(exc)}"
                     f"{hint}")


def loaded(names):
    """The exception classes ``names`` give ("module:Class", or
    "module:NAME" of a tuple of them) of the modules imported by now. An
    exception of a class whose module was never imported cannot have
    been raised: so a command can name the errors of every module it
    may run without importing them all to say so."""
    found = []
    for name in names:
        module_name, attribute = name.split(":")
        module = sys.modules.get(module_name)
        if module is None:
            continue
        value = getattr(module, attribute)
        found.extend(value if isinstance(value, tuple) else (value,))
    return tuple(found)


def run(prog, body, debug=False, usage=(), failures=()):
    """``body()``'s exit status (None: 0); an exception it raises becomes
    one line and a status: those in ``usage`` 2, those in ``failures``
    1, the database's as database_problem() says, any other 1 with its
    type named; standard output's reader gone, 141 and no line.
    ``usage`` and ``failures``: tuples of exception classes, or
    functions that return them (called only for an exception, as with
    loaded())."""
    try:
        code = body() or 0
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        report(prog, "interrupted")
        return INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one place that ends it
        if isinstance(exc, BrokenPipeError) and _stdout_closed():
            return CLOSED_OUTPUT
        return _ended(prog, exc, debug,
                      (*_classes(usage), conf_mod.StatePathError),
                      _classes(failures))


def _classes(given):
    return given() if callable(given) else given


def _ended(prog, exc, debug, usage, failures):
    """The status ``exc`` ends the command with, its line said."""
    hint = "" if debug else " (--debug prints the traceback)"
    code, line = classify(exc, usage, failures, hint)
    report(prog, line, exc, debug)
    return code


# What oslo.config writes before it exits 1, for a command line option
# whose value does not convert.
_CLI_VALUE = re.compile(r"argument --(\S+): Invalid (\w+)(?:\((.*)\))? "
                        r"value: (.*)")
_KINDS = {"Integer": "an integer", "Float": "a number",
          "Port": "a port", "Boolean": "true or false",
          "HostAddress": "a host name or an IP address",
          "IPAddress": "an IP address", "HostName": "a host name",
          "URI": "a URI"}


def _flag_given(argv, value):
    """The option of ``argv`` that gave ``value`` (as typed), or None."""
    for i, arg in enumerate(argv):
        if not arg.startswith("--"):
            continue
        name, eq, inline = arg.partition("=")
        if (inline == value if eq else
                i + 1 < len(argv) and argv[i + 1] == value):
            return name
    return None


def _bounds(text):
    limits = dict(part.strip().split("=", 1)
                  for part in (text or "").split(",") if "=" in part)
    low, high = limits.get("min"), limits.get("max")
    if low not in (None, "None") and high not in (None, "None"):
        return f" ({low}-{high})"
    if low not in (None, "None"):
        return f" (>= {low})"
    if high not in (None, "None"):
        return f" (<= {high})"
    return ""


def cli_value_line(argv, written):
    """Our line for what oslo.config ``written`` of a command line option
    whose value does not convert, or None when it is not that."""
    found = _CLI_VALUE.fullmatch(written.strip())
    if found is None:
        return None
    dest, kind, bounds, value = found.groups()
    # A command line option is read from [DEFAULT] of the files too,
    # under its dest: a value not on the command line came from there.
    flag = _flag_given(argv, value)
    where = flag if flag else f"[DEFAULT] {dest}"
    choices = re.findall(r"'([^']*)'", (bounds or "").partition(
        "choices=")[2])
    if choices:
        return f"{where}: {value!r} is not one of {', '.join(choices)}"
    what = _KINDS.get(kind, f"a valid {kind.lower()}")
    return f"{where}: {value!r} is not {what}{_bounds(bounds)}"


def _parse(build_conf, argv):
    """build_conf(argv), with oslo.config's complaint about a command
    line value that does not convert turned into a ConfigCheckError (our
    line, status 2) rather than its own line and status 1."""
    written = io.StringIO()
    try:
        with contextlib.redirect_stderr(written):
            conf = build_conf(argv)
    except SystemExit as exc:
        line = cli_value_line(argv, written.getvalue())
        if exc.code == 1 and line is not None:
            raise config_check.ConfigCheckError(None, None, line) from None
        sys.stderr.write(written.getvalue())
        raise
    except BaseException:
        sys.stderr.write(written.getvalue())
        raise
    sys.stderr.write(written.getvalue())
    return conf


def main(prog, argv, build_conf, body, usage=(), failures=(),
         checks=(), config_errors=()):
    """A gantt command from its arguments to its exit status: the config
    built and checked (every config file alike; ``checks``, each given
    the conf, may refuse it too), a config that cannot be used one line
    and status 2 (cfg.Error and ``config_errors``), then logging set up
    and ``body(conf)`` run as run() says."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        conf = _parse(build_conf, argv)
        config_check.check(
            conf, lambda line: print(f"{prog}: {line}", file=sys.stderr))
        config_check.check_state_path_name(conf)
        for check in checks:
            check(conf)
    except (cfg.Error, *config_errors) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return USAGE
    logging.setup(conf, "gantt")
    return run(prog, lambda: body(conf), debug=conf.debug, usage=usage,
               failures=failures)
