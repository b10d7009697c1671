"""Configuration options of the placement engine.

Options are declared here once; entry points build their own ConfigOpts
with :func:`new_conf` and pass it down. The sample config is generated
from :func:`list_opts` by oslo-config-generator.
"""

import os

from oslo_config import cfg


def _default_state_path():
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "gantt")


DEFAULT_OPTS = [
    cfg.StrOpt(
        "state_path",
        default=_default_state_path(),
        sample_default="$XDG_STATE_HOME/gantt",
        help="Directory where gantt keeps its embedded state (the SQLite "
             "placement database unless [placement_database] connection "
             "says otherwise). Created when missing."),
]

# A command line option of every command (placement.config_check), also
# read from [DEFAULT].
STRICT_OPT = cfg.BoolOpt(
    "strict", default=False,
    help="Stop with an error (exit status 2) when a config file has an "
         "option or section gantt does not know in a section gantt reads, "
         "rather than warning and going on.")

DATABASE_OPTS = [
    cfg.StrOpt(
        "connection",
        secret=True,
        help="SQLAlchemy URL of the placement database, for example "
             "postgresql+psycopg://user@host/placement or "
             "mysql+pymysql://user:pass@host/placement. Unset means an "
             "SQLite file, placement.sqlite, in state_path."),
    cfg.BoolOpt(
        "sync_on_startup",
        default=True,
        help="Bring the database schema to the latest migration when a "
             "service or command opens the store. Turn off when schema "
             "upgrades are run explicitly with 'gantt-manage db sync'."),
    cfg.IntOpt(
        "max_pool_size",
        default=10,
        min=1,
        help="Connections kept open per process (PostgreSQL and MySQL)."),
    cfg.IntOpt(
        "max_overflow",
        default=20,
        min=0,
        help="Connections opened beyond max_pool_size under load."),
    cfg.IntOpt(
        "busy_timeout",
        default=30,
        min=1,
        help="Seconds a write waits for a lock held by another writer "
             "before it fails (SQLite busy timeout; lock wait timeout on "
             "MySQL)."),
    cfg.IntOpt(
        "wsrep_sync_wait",
        default=1,
        min=0,
        max=15,
        help="On a MariaDB Galera node: the session's wsrep_sync_wait. 1 "
             "makes each read wait until this node has applied every "
             "write committed anywhere in the cluster before it began, so "
             "that a process reads what another controller wrote through "
             "another node (or before a failover). 0 leaves the server's "
             "setting. Ignored on servers without Galera."),
    cfg.StrOpt(
        "sqlite_synchronous",
        default="NORMAL",
        choices=[("NORMAL", "in WAL mode, a commit survives a crash of "
                            "the process but not of the machine"),
                 ("FULL", "every commit is synced to disk")],
        help="SQLite synchronous pragma."),
    cfg.IntOpt(
        "sqlite_checkpoint_every",
        default=100,
        min=0,
        help="SQLite file databases: copy the write-ahead log back into the "
             "database from a background thread of each process, after "
             "this many of its commits (or a second after its last one), "
             "instead of inside whichever commit finds the log past 1,000 "
             "pages (that commit then takes 15-20 ms). 0: leave "
             "checkpoints to SQLite."),
    cfg.IntOpt(
        "db_retry_count",
        default=10,
        min=0,
        help="Times a write transaction is retried after a deadlock, a "
             "serialization failure or a lock timeout reported by the "
             "database."),
    cfg.IntOpt(
        "max_retries",
        default=20,
        min=-1,
        help="Times a transaction, or connecting at start, is tried again "
             "after the connection to the database failed (a restart, a "
             "failover, a dropped connection); -1 without end. A read is "
             "always safe to run again; a write only when it is known not "
             "to have committed (oslo.db's option)."),
    cfg.FloatOpt(
        "retry_interval",
        default=0.5,
        min=0.0,
        help="Seconds before the first such retry (oslo.db's option)."),
    cfg.BoolOpt(
        "db_inc_retry_interval",
        default=True,
        help="Double the wait after each failed retry, up to "
             "db_max_retry_interval (oslo.db's option). With the defaults "
             "a database may be away for about 37 seconds."),
    cfg.FloatOpt(
        "db_max_retry_interval",
        default=2.0,
        min=0.0,
        help="Longest wait between two retries, in seconds (oslo.db's "
             "option)."),
    cfg.StrOpt(
        "change_feed_url",
        secret=True,
        help="Redis URL (redis://host:6379/0) of the change feed. Set, "
             "every process on this database announces its commits there, "
             "and a scheduler reads the database's change logs before a "
             "decision only when another process announced one (or "
             "change_feed_max_age has passed). Unset, it reads them before "
             "every decision (on SQLite, only when the database's "
             "data_version says another connection committed). Needs the "
             "redis extra."),
    cfg.StrOpt(
        "change_feed_channel",
        default="gantt-changes",
        help="Redis channel of the change feed: one per database, so that "
             "clouds sharing a Redis server use different channels."),
    cfg.FloatOpt(
        "change_feed_max_age",
        default=1.0,
        min=0.0,
        help="Seconds a scheduler may go without reading the change logs "
             "while the change feed (or PostgreSQL's notifications, see "
             "postgresql_listen) is quiet: a bound on how long a commit "
             "whose announcement was lost stays unseen."),
    cfg.BoolOpt(
        "postgresql_listen",
        default=True,
        help="On PostgreSQL (psycopg driver): every commit that writes "
             "the change logs raises a notification (a trigger, schema "
             "revision 0004), and a scheduler keeps one extra session "
             "that LISTENs for them. It then reads the change logs before "
             "a decision only when another process committed since its "
             "last read (or change_feed_max_age has passed), as with a "
             "change feed but without Redis. Off: it reads them before "
             "every decision."),
    cfg.BoolOpt(
        "postgresql_pipeline",
        default=True,
        help="On PostgreSQL (psycopg driver): an allocation write (a "
             "claim) sends its reads together and its writes together "
             "(psycopg's pipeline mode), BEGIN with the reads and COMMIT "
             "with the writes: two round trips instead of eight. It pays "
             "where round trips cost (a database across a network, or "
             "one writer at a time); where many writers and the database "
             "share a few saturated cores, it costs the writers some CPU. "
             "Off: one statement at a time."),
]

PLACEMENT_OPTS = [
    cfg.IntOpt(
        "allocation_conflict_retry_count",
        default=10,
        min=1,
        help="Times an allocation write is tried when a concurrent writer "
             "changed one of its resource providers first. Each try "
             "re-reads capacity, so nothing is ever over-committed."),
    cfg.StrOpt(
        "incomplete_consumer_project_id",
        default="00000000-0000-0000-0000-000000000000",
        help="Project recorded for consumers written without a project "
             "(allocations made before microversion 1.8)."),
    cfg.IntOpt(
        "max_allocation_candidates",
        default=-1,
        min=-1,
        help="Most allocation candidates a search generates before the "
             "limit parameter applies; -1 means no cap. With a cap, "
             "candidates are generated breadth first across provider trees "
             "(see allocation_candidates_generation_strategy), so that a "
             "cap does not leave whole hosts out."),
    cfg.StrOpt(
        "allocation_candidates_generation_strategy",
        default="breadth-first",
        choices=[("breadth-first", "one candidate from each tree in turn"),
                 ("depth-first", "every candidate of one tree, then the "
                                 "next tree")],
        help="Order in which candidates are generated across provider "
             "trees; matters when max_allocation_candidates caps them."),
    cfg.BoolOpt(
        "randomize_allocation_candidates",
        default=False,
        help="Shuffle allocation candidates, so that a limit returns a "
             "random sample of them rather than the first ones."),
    cfg.StrOpt(
        "incomplete_consumer_user_id",
        default="00000000-0000-0000-0000-000000000000",
        help="User recorded for consumers written without a user "
             "(allocations made before microversion 1.8)."),
]


API_OPTS = [
    cfg.StrOpt(
        "auth_strategy",
        default="noauth2",
        choices=[("noauth2", "trust the x-auth-token header: 'user' or "
                             "'user:project'; roles from x-roles (the "
                             "token 'admin' alone means role admin). For "
                             "tests and single-user embedded use only"),
                 ("keystone", "validate tokens with keystonemiddleware "
                              "(configure [keystone_authtoken])")],
        help="How the REST API authenticates requests."),
    cfg.BoolOpt(
        "metrics",
        default=True,
        mutable=True,
        help="Serve Prometheus metrics at GET /metrics (no "
             "authentication: restrict the path at the load balancer "
             "when the API port is reachable from outside)."),
    cfg.HostAddressOpt(
        "bind_host",
        default="127.0.0.1",
        help="Address gantt-placement-api listens on, unless its --host "
             "says otherwise. [DEFAULT] host (the scheduler's RPC server "
             "name) plays no part, so one config file serves every "
             "gantt service."),
    cfg.PortOpt(
        "bind_port",
        default=8778,
        help="Port gantt-placement-api listens on, unless its --port "
             "says otherwise."),
    cfg.IntOpt(
        "workers",
        default=2,
        min=1,
        help="Server processes. Each one keeps its own connection pool "
             "and candidates index; more processes use more cores."),
    cfg.IntOpt(
        "threads",
        default=8,
        min=1,
        help="Requests each server process handles at once."),
    cfg.IntOpt(
        "max_request_body_size",
        default=1024 * 1024,
        min=0,
        mutable=True,
        help="Largest request body, in bytes, the REST API accepts "
             "(gantt-placement-api and placement.api.wsgi alike). A "
             "larger one is refused with 413 before it is parsed, and "
             "before any of it is read when its length is declared. The "
             "largest bodies clients send are those of POST /reshaper "
             "and POST /allocations, a few hundred bytes per consumer. "
             "0 means no limit."),
    cfg.IntOpt(
        "candidates_cache_entries",
        default=16,
        min=0,
        mutable=True,
        help="GET /allocation_candidates answers each server process "
             "keeps and serves again while no provider, inventory, "
             "trait, aggregate or allocation has changed anywhere (any "
             "write moves the database's change log, which each request "
             "reads). 0 turns the cache off; it is always off with "
             "[placement] randomize_allocation_candidates."),
]


def register_opts(conf):
    conf.register_opts(DEFAULT_OPTS)
    conf.register_opts(DATABASE_OPTS, group="placement_database")
    conf.register_opts(PLACEMENT_OPTS, group="placement")
    conf.register_opts(API_OPTS, group="api")


def list_opts():
    """Options for oslo-config-generator."""
    return [
        ("DEFAULT", [*DEFAULT_OPTS, STRICT_OPT]),
        ("placement_database", DATABASE_OPTS),
        ("placement", PLACEMENT_OPTS),
        ("api", API_OPTS),
    ]


def new_conf(args=None, default_config_files=None):
    """A fresh ConfigOpts with every placement option registered and
    parsed from ``args`` (command line style, e.g. ['--config-file', f]).
    """
    conf = cfg.ConfigOpts()
    register_opts(conf)
    conf(args or [], project="gantt",
         default_config_files=default_config_files)
    return conf


class StatePathError(Exception):
    """[DEFAULT] state_path names a directory gantt cannot create or
    write in (the operator's to fix: exit status 2)."""


def _state_path_problem(path, reason):
    return StatePathError(f"[DEFAULT] state_path: {path}: {reason}")


def database_url(conf):
    """The configured database URL, or the embedded SQLite file in
    state_path (created when missing; StatePathError when it cannot be
    created or written in)."""
    url = conf.placement_database.connection
    if url:
        return url
    state = os.path.abspath(os.path.expanduser(conf.state_path))
    try:
        os.makedirs(state, exist_ok=True)
    except FileExistsError:
        raise _state_path_problem(state, "not a directory") from None
    except OSError as exc:
        raise _state_path_problem(
            exc.filename or state,
            f"cannot create the directory: {exc.strerror}") from None
    path = os.path.join(state, "placement.sqlite")
    # SQLite writes the file and its -wal and -shm files beside it.
    if not os.access(state, os.W_OK | os.X_OK):
        raise _state_path_problem(state, "not writable")
    if os.path.exists(path) and not os.access(path, os.R_OK | os.W_OK):
        raise _state_path_problem(path, "not writable")
    return "sqlite:///" + path


def version():
    """gantt's installed version ("unknown" when run from a tree that
    was never installed)."""
    from importlib import metadata
    try:
        return metadata.version("gantt")
    except metadata.PackageNotFoundError:
        return "unknown"


def startup_summary(conf):
    """What a service says it runs with when it starts: its version, the
    config files it read and its database (password hidden)."""
    from sqlalchemy.engine import make_url
    files = ", ".join(conf.config_file or ()) or "none"
    try:
        database = make_url(database_url(conf)).render_as_string(
            hide_password=True)
    except Exception:  # noqa: BLE001 - a URL the store will refuse
        database = "(unparsable URL)"
    return f"version {version()}, config files: {files}, database {database}"
