"""The server's side of a connection the store lost in a write.

A session whose client is gone may not learn it for hours (a network
partition: nothing comes, nothing is sent); meanwhile it stays in its
transaction and holds its locks. The store finds it by the id it noted
when the write began (:func:`session_of`) and ends it when it is only
waiting for its client: it is not making a COMMIT then, and once ended
its transaction can neither commit later nor block the write made
again. Only sessions of the store's own role are ended (another's needs
a privilege, pg_signal_backend or CONNECTION_ADMIN); such a session is
waited for instead.

All of these run in a read transaction on a new connection.
"""

import sqlalchemy as sa

# xact_committed: the server no longer knows the transaction.
UNKNOWN = object()

_END_BACKEND = sa.text(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
    " WHERE pid = :pid AND usename = current_user")
_END_WAITING_IN_XACT = sa.text(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
    " WHERE pid = :pid AND usename = current_user"
    " AND wait_event = 'ClientRead' AND backend_xid::text::bigint = :xid")
_PG_WAITING = sa.text(
    "SELECT coalesce(wait_event = 'ClientRead', false)"
    " FROM pg_stat_activity WHERE pid = :pid")
_MYSQL_COMMAND = sa.text(
    "SELECT COMMAND FROM information_schema.PROCESSLIST WHERE ID = :id")


def session_of(conn, backend):
    """The server's id of ``conn``'s session (PostgreSQL's backend pid,
    MySQL's connection id); None for another driver or engine."""
    driver = conn.connection.driver_connection
    try:
        if backend == "postgresql":
            return driver.info.backend_pid
        if backend == "mysql":
            return driver.thread_id()
    except AttributeError:  # another driver: the session is not looked for
        pass
    return None


def end(txn, backend, session):
    """End ``session`` whatever it does: it belongs to a write that
    failed before its COMMIT, so it can never commit."""
    if backend == "postgresql":
        txn.scalar(_END_BACKEND, {"pid": session})
    elif backend == "mysql":
        _kill(txn, session)


def ended(txn, backend, session):
    """Whether ``session`` has ended; one that waits for its client is
    ended now (and reported ended on a later call), one that is busy,
    perhaps committing, is left to finish."""
    if backend == "postgresql":
        waiting = txn.scalar(_PG_WAITING, {"pid": session})
        if waiting:
            txn.scalar(_END_BACKEND, {"pid": session})
        return waiting is None
    command = txn.scalar(_MYSQL_COMMAND, {"id": session})
    if command == "Sleep":
        _kill(txn, session)
    return command is None


def xact_committed(txn, xid, pid):
    """Whether PostgreSQL's transaction ``xid`` (of the backend ``pid``)
    committed: True, False, None while it is in progress, UNKNOWN when
    the server no longer knows it. A backend still waiting for its client
    in that transaction is ended, so the outcome becomes final (read
    again on the next try)."""
    status = txn.scalar(sa.text("SELECT txid_status(:xid)"), {"xid": xid})
    if status == "in progress":
        txn.scalar(_END_WAITING_IN_XACT, {"pid": pid, "xid": xid % 2**32})
    return {"committed": True, "aborted": False,
            "in progress": None}.get(status, UNKNOWN)


def _kill(txn, connection_id):
    try:
        txn.execute(sa.text("KILL :id"), {"id": connection_id})
    except sa.exc.DBAPIError:  # it ended meanwhile, or is not ours
        pass
