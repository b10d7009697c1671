"""SQLAlchemy engines for the three supported databases.

SQLite runs in WAL mode with foreign keys on; write transactions start with
BEGIN IMMEDIATE so that two writers never deadlock upgrading read locks.
MySQL runs at READ COMMITTED (as PostgreSQL does by default): every write
re-checks what it read through generation compare-and-set, and the lower
isolation level avoids InnoDB gap-lock deadlocks between claims.
"""

import contextlib
import importlib.util
import sqlite3

import sqlalchemy as sa
from sqlalchemy import event, pool

from placement import conf as conf_mod
from placement.db import write_lock

# Execution option that marks a connection about to begin a write.
WRITE_OPTION = "gantt_write"

# Drivers shipped with the [postgres] and [mysql] extras, used when a URL
# names the database but not the driver.
_DEFAULT_DRIVERS = {"postgresql": ("psycopg2", "psycopg"),
                    "mysql": ("MySQLdb", "pymysql"),
                    "mariadb": ("MySQLdb", "pymysql")}


def with_installed_driver(url):
    """``url`` with the driver of our extras when it names none and the
    usual one is not installed."""
    backend = url.get_backend_name()
    if backend in _DEFAULT_DRIVERS and "+" not in url.drivername:
        default_module, ours = _DEFAULT_DRIVERS[backend]
        if importlib.util.find_spec(default_module) is None:
            return url.set(drivername=f"{backend}+{ours}")
    return url


def create_engine(conf, url=None):
    """An engine for ``url`` (default: the configured database)."""
    url = with_installed_driver(
        sa.make_url(url or conf_mod.database_url(conf)))
    db = conf.placement_database
    backend = url.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(url, db)
    # No pre-ping (a round trip per transaction): a connection the server
    # dropped fails its first statement, is invalidated, and the store
    # retries the transaction on a fresh one.
    options = {"pool_size": db.max_pool_size, "max_overflow": db.max_overflow,
               "pool_recycle": 3600, "isolation_level": "READ COMMITTED"}
    if backend in ("mysql", "mariadb"):
        options["connect_args"] = {"charset": "utf8mb4"}
        engine = sa.create_engine(url, **options)
        timeout = db.busy_timeout
        sync_wait = db.wsrep_sync_wait

        @event.listens_for(engine, "connect")
        def _mysql_session(dbapi_conn, record):
            with dbapi_conn.cursor() as cur:
                cur.execute("SET SESSION innodb_lock_wait_timeout = %d"
                            % timeout)
                cur.execute("SET SESSION sql_mode = 'TRADITIONAL'")
                if sync_wait and _galera_node(cur):
                    cur.execute("SET SESSION wsrep_sync_wait = %d"
                                % sync_wait)
    else:
        engine = sa.create_engine(url, **options)
    event.listen(engine, "handle_error", _server_cannot_serve)
    return engine


def _galera_node(cursor):
    cursor.execute("SHOW VARIABLES LIKE 'wsrep_on'")
    row = cursor.fetchone()
    return row is not None and str(row[1]).upper() == "ON"


# Errors of a server that is up but cannot serve this connection: a
# Galera node outside the primary component (MySQL 1047, "WSREP has not
# yet prepared node for application use"; 1180 when that is found at
# COMMIT, whose write set then never replicated), a PostgreSQL standby
# or demoted primary refusing a write (25006, read-only transaction).
# Another connection may reach a server that can (HAProxy moves new
# ones), so the pool drops its connections and the store retries as
# after a lost connection (a failed COMMIT: once it has looked up
# whether the write's change-log rows exist).
_MYSQL_CANNOT_SERVE = (1047, 1180)
_PG_CANNOT_SERVE = ("25006",)


def _server_cannot_serve(context):
    orig = context.original_exception
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    args = getattr(orig, "args", None) or ()
    if state in _PG_CANNOT_SERVE or (
            args and args[0] in _MYSQL_CANNOT_SERVE):
        context.is_disconnect = True


def _sqlite_engine(url, db):
    memory = url.database in (None, "", ":memory:")
    kwargs = {"connect_args": {"check_same_thread": False,
                               "timeout": db.busy_timeout}}
    if memory:
        # One shared connection: an in-memory database lives and dies with it.
        kwargs["poolclass"] = pool.StaticPool
    engine = sa.create_engine(url, **kwargs)
    synchronous = db.sqlite_synchronous
    # Checkpoints come from the store's own thread (placement.db.
    # checkpointer) unless the configuration leaves them to SQLite.
    background_checkpoints = not memory and db.sqlite_checkpoint_every > 0

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, record):
        # Let SQLAlchemy's begin event, below, emit BEGIN itself.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        if not memory:
            cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=%s" % synchronous)
        if background_checkpoints:
            cur.execute("PRAGMA wal_autocheckpoint=0")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):
        write = conn.get_execution_options().get(WRITE_OPTION)
        sql = "BEGIN IMMEDIATE" if write else "BEGIN"
        # Straight on the driver (every transaction pays this; SQLAlchemy's
        # execution path costs more than the statement), with its errors
        # wrapped as SQLAlchemy would, for Store's retry rules.
        try:
            if memory:  # one connection: nobody else holds its locks
                conn.connection.dbapi_connection.execute(sql)
            else:
                write_lock.begin(conn.connection.dbapi_connection,
                                 conn.connection.info, bool(write),
                                 db.busy_timeout)
        except sqlite3.Error as exc:
            raise sa.exc.DBAPIError.instance(
                sql, (), exc, sqlite3.Error) from exc

    return engine


@contextlib.contextmanager
def raw_connection(engine):
    """A DBAPI connection from the engine's pool (its proxy, with
    ``info``), returned after the block; invalidated when it fails."""
    conn = engine.raw_connection()
    try:
        yield conn
    except Exception:
        conn.invalidate()
        raise
    finally:
        conn.close()


def backend_name(engine):
    name = engine.dialect.name
    return "mysql" if name == "mariadb" else name
