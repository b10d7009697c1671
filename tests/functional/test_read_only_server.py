"""A PostgreSQL server that refuses writes (a standby, or a primary
being demoted in a failover: SQLSTATE 25006) is waited out as a lost
connection: the store drops its pooled connections and tries the write
again on new ones until a server takes it."""

import logging
import threading
import time

import sqlalchemy as sa

from placement.db import store as store_mod
from placement.objects import resource_classes
from tests import databases


def _read_only(url, on):
    name = sa.make_url(url).database
    admin = sa.create_engine(databases.SERVER_URLS["postgresql"],
                             isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(
            f"ALTER DATABASE {name} "
            + ("SET default_transaction_read_only = on" if on
               else "RESET default_transaction_read_only"))
    admin.dispose()


def test_a_write_refused_as_read_only_is_retried_on_new_connections(
        caplog):
    with databases.migrated_scratch("postgresql") as url:
        store = store_mod.Store.open(databases.make_conf(url))
        try:
            resource_classes.create(store, "CUSTOM_BEFORE")
            # The pool holds writable sessions: only new ones are refused.
            _read_only(url, True)
            store.engine.dispose()
            back = threading.Timer(1.5, _read_only, (url, False))
            started = time.monotonic()
            back.start()
            with caplog.at_level(logging.WARNING):
                resource_classes.create(store, "CUSTOM_DURING")
            waited = time.monotonic() - started
            back.join()
            names = {rc.name for rc in resource_classes.list_all(store)}
        finally:
            store.dispose()
    assert {"CUSTOM_BEFORE", "CUSTOM_DURING"} <= names
    assert waited >= 1.5
    assert any("read-only transaction" in r.getMessage()
               for r in caplog.records), [r.getMessage()
                                          for r in caplog.records]
