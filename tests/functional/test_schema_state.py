"""placement.db.schema_state on every engine: an empty database is
missing, each older revision behind, the head current, a revision this
gantt does not know ahead."""

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from placement import command_errors
from placement.db import migration, schema_state
from placement.db import store as store_mod
from tests import databases


@pytest.fixture
def scratch_engine(engine_name, tmp_path):
    with databases.empty_scratch(engine_name, tmp_path) as url:
        engine = sa.create_engine(url)
        yield engine
        engine.dispose()


def test_states(scratch_engine):
    head = schema_state.head_revision()
    state = schema_state.schema_state(scratch_engine)
    assert state == ("missing", None, head)
    assert not state.usable
    assert state.problem("db") == "db has no gantt schema"

    migration.sync(scratch_engine, "0003")
    state = schema_state.schema_state(scratch_engine)
    assert state == ("behind", "0003", head)
    assert not state.usable
    assert state.problem("db") == (
        f"db has gantt's schema at revision 0003, behind this gantt's "
        f"{head}")

    migration.sync(scratch_engine)
    state = schema_state.schema_state(scratch_engine)
    assert state == ("current", head, head)
    assert state.usable and state.problem() is None

    with scratch_engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = "
                             "'9999'"))
    state = schema_state.schema_state(scratch_engine)
    assert state == ("ahead", "9999", head)
    assert state.usable and state.problem() is None


def test_database_name_hides_the_password():
    engine = sa.create_engine("postgresql+psycopg://u:secret@h/db")
    assert schema_state.database_name(engine) == (
        "postgresql+psycopg://u:***@h/db")


def test_require_names_the_database_and_the_sync(engine_name, tmp_path):
    with databases.empty_scratch(engine_name, tmp_path) as url:
        conf = databases.make_conf(
            url, {("placement_database", "sync_on_startup"): False})
        store = store_mod.Store(conf)
        try:
            where = schema_state.database_name(store.engine)
            with pytest.raises(schema_state.SchemaNotReady) as caught:
                schema_state.require(store)
            assert str(caught.value) == (
                f"the database {where} has no gantt schema; run "
                f"gantt-manage db sync")
            assert caught.value.state.state == "missing"
            migration.sync(store.engine)
            assert schema_state.require(store).state == "current"
        finally:
            store.dispose()


def test_sync_command_repeats_the_config_files():
    conf = cfg.ConfigOpts()
    conf(["--config-file", "/dev/null", "--config-file", "/dev/null"])
    assert schema_state.sync_command(conf) == (
        "gantt-manage --config-file /dev/null --config-file /dev/null "
        "db sync")
    assert schema_state.sync_command(None) == "gantt-manage db sync"


def test_a_missing_table_is_named_as_a_missing_schema(scratch_engine):
    """What slips past the revision check (a table dropped meanwhile)
    ends a command with this line, on every engine."""
    with pytest.raises(sa.exc.DBAPIError) as caught:
        with scratch_engine.connect() as conn:
            conn.execute(sa.text("SELECT uuid FROM resource_providers"))
    status, text = command_errors.database_problem(caught.value)
    assert status == command_errors.FAILURE
    assert text.startswith("the database has no gantt schema or an older "
                           "one: ")
    assert "resource_providers" in text
    assert text.endswith("; run gantt-manage db sync")
