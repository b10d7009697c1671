"""fastsql turns Core statements into driver SQL with the right
placeholders and argument order for every paramstyle."""

import datetime
import sqlite3
import warnings

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql, sqlite

from placement.db import fastsql

T = sa.table("t", sa.column("a"), sa.column("b"), sa.column("c"))
STATEMENT = sa.select(T.c.a).where(
    T.c.b.in_(sa.bindparam("bs", expanding=True))).where(
    T.c.c == sa.bindparam("c")).where(
    T.c.a.in_(sa.bindparam("as_", expanding=True)))


class _Txn:
    """What Fast needs of a store's transaction: its connection."""

    def __init__(self, conn):
        self.conn = conn


@pytest.mark.parametrize("dialect,style", [
    (sqlite.dialect(), "qmark"),
    (mysql.pymysql.dialect(), "format"),
    (postgresql.psycopg.dialect(), "pyformat"),
])
def test_expanding_placeholders(dialect, style):
    form = fastsql._Form(STATEMENT, dialect, None)
    assert form.style == style
    params = {"bs": [1, 2, 3], "c": "x", "as_": [9]}
    sql = form.text(params)
    args = form.args(params)
    assert "POSTCOMPILE" not in sql
    if style == "pyformat":
        assert "%(bs_0)s, %(bs_1)s, %(bs_2)s" in sql
        assert args == {"bs_0": 1, "bs_1": 2, "bs_2": 3, "c": "x",
                        "as__0": 9}
    else:
        mark = "?" if style == "qmark" else "%s"
        assert sql.count(mark) == 5
        assert args == [1, 2, 3, "x", 9]


def test_empty_list_is_refused():
    form = fastsql._Form(STATEMENT, sqlite.dialect(), None)
    with pytest.raises(ValueError):
        form.text({"bs": [], "c": 1, "as_": [1]})


def test_texts_are_cached_per_list_lengths():
    form = fastsql._Form(STATEMENT, sqlite.dialect(), None)
    first = form.text({"bs": [1], "c": 1, "as_": [1]})
    assert form.text({"bs": [5], "c": 2, "as_": [7]}) is first
    assert form.text({"bs": [1, 2], "c": 1, "as_": [1]}) != first


def test_rows_run_on_a_real_connection():
    engine = sa.create_engine("sqlite://")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (a INTEGER, b INTEGER, c TEXT)")
        conn.exec_driver_sql(
            "INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'x'), (3, 30, 'y')")

        rows = fastsql.Fast(STATEMENT).rows(
            _Txn(conn), {"bs": [10, 20, 30], "c": "x", "as_": [1, 2, 3]})
        assert sorted(r.a for r in rows) == [1, 2]


def test_raw_form_numbers_each_name_once():
    """psycopg's raw form: $n per name (a name used twice keeps its
    number), escaped percent signs unescaped, arguments in number
    order."""
    sql = ("SELECT %(a)s, %(b)s::INTEGER, %(a)s "
           "WHERE x LIKE 'p%%' AND y = %(c_0)s")
    raw, names = fastsql._raw(sql)
    assert raw == (b"SELECT $1, $2::INTEGER, $1 "
                   b"WHERE x LIKE 'p%' AND y = $3")
    assert names == ["a", "b", "c_0"]


def test_raw_args_follow_the_numbers():
    form = fastsql._Form(STATEMENT, postgresql.psycopg.dialect(), None)
    params = {"bs": [1, 2], "c": "x", "as_": [9]}
    raw, args = form.raw(form.text(params), form.args(params))
    assert b"t.b IN ($1, $2) AND t.c = $3 AND t.a IN ($4)" in raw
    assert args == [1, 2, "x", 9]


def test_forms_are_kept_per_driver():
    """psycopg's form runs on its RawCursor; a psycopg2 engine in the
    same process must get its own form of the same statement."""
    fast = fastsql.Fast(STATEMENT)
    with_psycopg = fast._form(postgresql.psycopg.dialect())
    with_psycopg2 = fast._form(postgresql.psycopg2.dialect())
    assert with_psycopg is not with_psycopg2
    assert fast._form(postgresql.psycopg.dialect()) is with_psycopg


@pytest.mark.parametrize("micro", [0, 5, 123456])
def test_sqlite_datetimes_are_written_as_sqlalchemy_writes_them(micro):
    """A DateTime bound on the fast path is stored as the same text as
    through SQLAlchemy's own (six digits of microseconds, even at a
    whole second), so that equal times compare equal in SQL, and it
    never reaches sqlite3's default adapter (deprecated since Python
    3.12)."""
    table = sa.Table("stamps", sa.MetaData(),
                     sa.Column("id", sa.Integer, primary_key=True),
                     sa.Column("at", sa.DateTime, nullable=False))
    at = datetime.datetime(2026, 11, 29, 18, 30, 1, micro)
    engine = sa.create_engine("sqlite://")
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(table.insert().values(id=1, at=at))
        fast = fastsql.FastInsert(table, ["id", "at"])
        # Without the default adapter, as a Python that drops it: a
        # datetime left to it cannot be bound at all.
        key = (datetime.datetime, sqlite3.PrepareProtocol)
        default = sqlite3.adapters.pop(key, None)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)
                fast.rows(_Txn(conn), [{"id": 2, "at": at}])
        finally:
            if default is not None:
                sqlite3.adapters[key] = default
        stored = conn.exec_driver_sql(
            "SELECT id, at FROM stamps ORDER BY id").all()
        assert stored[0][1] == stored[1][1]
        assert stored[1][1].endswith(f".{micro:06d}")
        same = conn.execute(sa.select(table.c.id).where(
            table.c.at == at)).scalars().all()
        assert same == [1, 2]
