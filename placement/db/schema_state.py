"""Where a database's gantt schema stands against this gantt's migrations.

    state = schema_state(engine)     # State("behind", "0003", "0004")
    text = state.problem(where)      # None when current or ahead
    require(store)                   # SchemaNotReady unless usable
    store = open_store(conf)         # Store.open, then require()

``missing``: no alembic revision recorded (an empty database, or one
that is not gantt's); ``behind``: a revision older than this gantt's
head; ``current``: the head; ``ahead``: a revision this gantt does not
know (a newer gantt synced it). gantt-manage refuses to read or write a
store that is missing or behind; gantt-status upgrade check fails on
both; the services use the same answer.
"""

import collections
import functools
import os

import sqlalchemy as sa
from alembic import script
from alembic.config import Config
from alembic.runtime import migration as alembic_migration
from alembic.util import exc as alembic_exc

from placement.db import retry
from placement.db import store as store_mod

MISSING = "missing"
BEHIND = "behind"
CURRENT = "current"
AHEAD = "ahead"

SCRIPT_LOCATION = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "alembic")


def alembic_config(connection=None):
    """alembic's Config for gantt's migrations, on ``connection``."""
    cfg = Config()
    cfg.set_main_option("script_location", SCRIPT_LOCATION)
    cfg.attributes["connection"] = connection
    return cfg


@functools.lru_cache(maxsize=1)
def script_directory():
    # Read once a process: the migrations do not change while it runs,
    # and /healthcheck asks every second.
    return script.ScriptDirectory.from_config(alembic_config())


def head_revision():
    return script_directory().get_current_head()


def current_revision(engine):
    """The revision recorded in ``engine``'s database, None when none.

    One SELECT when the version table is there (a load balancer's
    health check asks every second; alembic's own way first looks the
    table up in the catalog, a DESCRIBE on MySQL); alembic's way when
    the SELECT fails for another reason than a lost connection."""
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT version_num FROM alembic_version").all()
        return rows[0][0] if rows else None
    except sa.exc.DBAPIError as exc:
        if retry.database_unreachable(exc):
            raise
    with engine.connect() as conn:
        return alembic_migration.MigrationContext.configure(
            conn).get_current_revision()


class State(collections.namedtuple("State", "state current head")):
    """(state, current revision or None, head revision)."""

    __slots__ = ()

    @property
    def usable(self):
        """Whether this gantt can read and write the database."""
        return self.state in (CURRENT, AHEAD)

    def problem(self, where="the database"):
        """One sentence for an operator when the schema is missing or
        behind (``where`` names the database), else None."""
        if self.state == MISSING:
            return f"{where} has no gantt schema"
        if self.state == BEHIND:
            return (f"{where} has gantt's schema at revision "
                    f"{self.current}, behind this gantt's {self.head}")
        return None


def schema_state(engine):
    """The State of ``engine``'s database (one short read)."""
    scripts = script_directory()
    head = scripts.get_current_head()
    current = current_revision(engine)
    if current is None:
        return State(MISSING, None, head)
    if current == head:
        return State(CURRENT, current, head)
    try:
        known = scripts.get_revision(current) is not None
    except alembic_exc.CommandError:
        known = False
    return State(BEHIND if known else AHEAD, current, head)


def database_name(engine):
    """The database's URL without its password, for messages."""
    return engine.url.render_as_string(hide_password=True)


class SchemaNotReady(Exception):
    """The store's database has no gantt schema or an older one; the
    message says which and the command that brings it up to date."""

    def __init__(self, message, state):
        super().__init__(message)
        self.state = state


def sync_command(conf):
    """``gantt-manage [--config-file F ...] db sync`` as this process's
    config was given (``conf``: a parsed ConfigOpts, or None)."""
    files = list(getattr(conf, "config_file", None) or ())
    return " ".join(["gantt-manage"]
                    + [f"--config-file {f}" for f in files] + ["db sync"])


def require(store):
    """The State of ``store``'s database; SchemaNotReady when it is
    missing or behind."""
    return check(store.engine, store.conf)


def check(engine, conf):
    """The State of ``engine``'s database; SchemaNotReady when it is
    missing or behind (``conf``: the process's, for the sync command)."""
    state = schema_state(engine)
    if not state.usable:
        where = f"the database {database_name(engine)}"
        raise SchemaNotReady(
            f"{state.problem(where)}; run {sync_command(conf)}", state)
    return state


def open_store(conf):
    """Store.open(conf) (which brings the schema up to date first when
    [placement_database] sync_on_startup is set), then require(): a store
    whose schema is missing or behind is disposed of and SchemaNotReady
    raised, before anything reads or writes it."""
    store = store_mod.Store.open(conf)
    try:
        require(store)
    except SchemaNotReady:
        store.dispose()
        raise
    return store
