"""Hot statements run straight on the DBAPI cursor.

SQLAlchemy compiles a Core statement once per dialect; :class:`Fast` keeps
that SQL text and runs it on the driver's cursor, skipping the execution
context that costs more than the query itself on SQLite. Only for the
hot statements: the claim path, the sync, and the per-provider and
per-host reads and writes that every compute report and cloud load
repeats; everything else goes through SQLAlchemy.

Rows come back as named tuples of the driver's values, converted only
where a selected column's type says so (DateTime on SQLite, which stores
text); MySQL returns SUM() as Decimal: callers convert.

On psycopg the SQL is kept in PostgreSQL's own form ($1, $2, ..., as
bytes) and run on a RawCursor: psycopg otherwise parses every query for
its %(name)s placeholders and encodes it at each execute, and does not
cache that work for a statement of more than 50 parameters (a claim's
multi-row INSERTs), which cost a quarter of a claim's CPU.
"""

import collections
import functools
import operator
import re
import threading

import sqlalchemy as sa

_PLACEHOLDERS = {"qmark": "?", "format": "%s", "numeric": None}

# A pyformat placeholder, or an escaped percent sign: SQLAlchemy's
# compiled pyformat SQL has no other "%".
_PYFORMAT = re.compile(r"%\(([^)]+)\)s|%%")


def _raw(sql):
    """pyformat SQL in PostgreSQL's form: (bytes with $1, $2, ..., the
    parameter name of each number). A name used twice keeps its number."""
    names = []
    numbers = {}

    def number(match):
        name = match.group(1)
        if name is None:
            return "%"
        if name not in numbers:
            names.append(name)
            numbers[name] = len(names)
        return f"${numbers[name]}"
    return _PYFORMAT.sub(number, sql).encode(), names


# A DateTime bound on SQLite, as SQLAlchemy's own SQLite DATETIME writes
# it (always six digits of microseconds), from C: the generic DateTime
# type has no bind processor, which left these values to sqlite3's
# default adapter (deprecated since Python 3.12; it drops ".000000" at
# a whole second, so that text compared unequal to SQLAlchemy's). Not
# the dialect type's own processor: it formats in Python, three times
# slower, on every claim's timestamps.
_SQLITE_DATETIME = operator.methodcaller("isoformat", " ", "microseconds")


def _bind_processor(type_, dialect):
    """What a parameter of ``type_`` goes through before the driver."""
    processor = type_.bind_processor(dialect)
    if processor is None and dialect.name == "sqlite" \
            and isinstance(type_, sa.DateTime):
        return _SQLITE_DATETIME
    return processor


def _raw_cursor_class(dialect):
    """psycopg's RawCursor when ``dialect`` runs on psycopg 3, else None."""
    if dialect.driver != "psycopg" or dialect.dbapi is None:
        return None  # a dialect compiling SQL, with no driver loaded
    return getattr(dialect.dbapi, "RawCursor", None)


class _Form:
    """The statement compiled for one dialect."""

    def __init__(self, statement, dialect, columns):
        compiled = statement.compile(dialect=dialect, column_keys=columns)
        self.sql = compiled.string
        self.style = dialect.paramstyle
        self.order = list(compiled.positiontup or [])
        self.binds = compiled.binds
        self.expanding = {name for name, bind in compiled.binds.items()
                          if bind.expanding}
        self.process = {}
        for name, bind in compiled.binds.items():
            processor = _bind_processor(bind.type, dialect)
            if processor is not None:
                self.process[name] = processor
        self.by_lengths = {}
        # On psycopg: its RawCursor, and each text's raw form.
        self.raw_cursor = _raw_cursor_class(dialect)
        self.raw_by_text = {}
        # The named tuple of the result rows: a compiled statement's
        # columns are the same for every execution.
        self.row_type = None
        self.dialect = dialect
        self.types = [column.type for column in
                      getattr(statement, "selected_columns", ())]
        # (position, converter) of the selected columns whose driver value
        # needs converting, as SQLAlchemy's result would; worked out at
        # the first result (some need the driver's type code).
        self.convert = None
        # For args(): each parameter in order with its processor, whether
        # it expands, and its bind (whose value the statement holds, used
        # when the caller gives none), worked out once.
        self.positional = self.style in ("qmark", "format")
        names = self.order if self.positional else list(self.binds)
        self.plan = [(name, self.process.get(name),
                      name in self.expanding,
                      self.binds[name]) for name in names]

    def text(self, params):
        if not self.expanding:
            return self.sql
        lengths = tuple(sorted((n, len(params[n])) for n in self.expanding))
        sql = self.by_lengths.get(lengths)
        if sql is None:
            sql = self.sql
            for name, n in lengths:
                if not n:
                    raise ValueError(f"empty list for {name}")
                if self.style in ("qmark", "format"):
                    marks = [_PLACEHOLDERS[self.style]] * n
                elif self.style == "pyformat":
                    marks = [f"%({name}_{i})s" for i in range(n)]
                else:
                    marks = [f":{name}_{i}" for i in range(n)]
                sql = sql.replace(f"__[POSTCOMPILE_{name}]", ", ".join(marks))
            self.by_lengths[lengths] = sql
        return sql

    def args(self, params):
        positional = self.positional
        out = [] if positional else {}
        for name, process, expanding, bind in self.plan:
            value = params[name] if name in params else bind.effective_value
            if expanding:
                if process is not None:
                    value = [process(v) for v in value]
                if positional:
                    out.extend(value)
                else:
                    for i, v in enumerate(value):
                        out[f"{name}_{i}"] = v
                continue
            if process is not None:
                value = process(value)
            if positional:
                out.append(value)
            else:
                out[name] = value
        return out

    def raw(self, sql, args):
        """(raw SQL bytes, positional args) for the pyformat ``sql`` and
        its ``args`` (a dict)."""
        form = self.raw_by_text.get(sql)
        if form is None:
            form = self.raw_by_text[sql] = _raw(sql)
        raw_sql, names = form
        return raw_sql, [args[name] for name in names]

    def _converters(self, description):
        convert = []
        for i, type_ in enumerate(self.types[:len(description)]):
            processor = type_.dialect_impl(self.dialect).result_processor(
                self.dialect, description[i][1])
            if processor is not None:
                convert.append((i, processor))
        return convert

    def rows(self, cursor):
        row_type = self.row_type
        if row_type is None:
            names = tuple(d[0] for d in cursor.description)
            row_type = collections.namedtuple("Row", names, rename=True)
            self.convert = self._converters(cursor.description)
            self.row_type = row_type
        if not self.convert:
            return [row_type(*r) for r in cursor.fetchall()]
        out = []
        for r in cursor.fetchall():
            values = list(r)
            for i, processor in self.convert:
                values[i] = processor(values[i])
            out.append(row_type(*values))
        return out


def driver_error(txn, exc, sql, args, cursor=None):
    """The driver's error ``exc`` as SQLAlchemy would raise it (a
    DBAPIError); a dropped connection leaves the pool, as SQLAlchemy's
    would."""
    dialect = txn.conn.dialect
    lost = dialect.is_disconnect(
        exc, txn.conn.connection.dbapi_connection, cursor)
    if lost:
        txn.conn.invalidate(exc)
    return sa.exc.DBAPIError.instance(
        sql, args, exc, dialect.loaded_dbapi.Error,
        connection_invalidated=lost)


# The SQLSTATE (division_by_zero) of an or_fail statement that changed
# no row.
MISSED = "22012"


def or_fail(statement):
    """``statement`` (an UPDATE or DELETE meant to change one row, on
    PostgreSQL) as one that fails when it changes none: a guard the
    server enforces, so a transaction cannot commit past a missed
    compare-and-set it has not read back yet. It fails with MISSED."""
    changed = statement.returning(sa.literal_column("1")).cte("changed")
    return sa.select(sa.literal_column("1") / sa.func.count()) \
        .select_from(changed)


class Pending:
    """A sent statement whose result is read later: its rows, or the
    number of rows it changed. Close it, or read its rows, once done."""

    def __init__(self, txn, form, cursor):
        self._txn = txn
        self._form = form
        self._cursor = cursor

    def rows(self):
        """All result rows, as named tuples; closes the cursor."""
        try:
            return self._form.rows(self._cursor)
        except self._txn.conn.dialect.loaded_dbapi.Error as exc:
            raise driver_error(self._txn, exc, self._form.sql, None,
                               self._cursor) from exc
        finally:
            self._cursor.close()

    @property
    def rowcount(self):
        return self._cursor.rowcount

    def close(self):
        self._cursor.close()


class Fast:
    """A Core statement to run on the raw cursor of a transaction.

    ``columns``: for an INSERT, the columns given (their names are the
    parameter names). ``returning``: for an INSERT, the key column whose
    new value :meth:`insert` returns (RETURNING on PostgreSQL, the
    cursor's lastrowid elsewhere).
    """

    def __init__(self, statement, columns=None, returning=None):
        self.statement = statement
        self.columns = columns
        self.returning = returning
        self._forms = {}
        self._lock = threading.Lock()

    @functools.cached_property
    def or_fail(self):
        """This statement (a compare-and-set of one row) as one the
        server fails when it changes no row: :func:`or_fail`."""
        return Fast(or_fail(self.statement))

    def _form(self, dialect):
        # By driver too: psycopg's form runs on its RawCursor, which a
        # psycopg2 connection of the same process cannot take.
        key = (dialect.name, dialect.driver)
        form = self._forms.get(key)
        if form is None:
            statement = self.statement
            if self.returning is not None and dialect.name == "postgresql":
                statement = statement.returning(self.returning)
            with self._lock:
                form = self._forms.setdefault(
                    key, _Form(statement, dialect, self.columns))
        return form

    def _run(self, txn, params, later=False, on_miss=None):
        conn = txn.conn
        dialect = conn.dialect
        form = (self._forms.get((dialect.name, dialect.driver))
                or self._form(dialect))
        dbapi_conn = conn.connection.dbapi_connection
        sql = form.text(params)
        args = form.args(params)
        if form.raw_cursor is not None:
            cursor = form.raw_cursor(dbapi_conn)
            run = form.raw(sql, args)
        else:
            cursor = dbapi_conn.cursor()
            run = sql, args
        pipeline = getattr(txn, "pipeline", None)
        if pipeline is not None and pipeline.holding:
            if later:
                pipeline.hold(cursor, run, on_miss)
                return form, cursor
            pipeline.flush()
        try:
            cursor.execute(*run)
        except dialect.loaded_dbapi.Error as exc:
            cursor.close()
            if on_miss is not None and getattr(exc, "sqlstate", None) \
                    == MISSED:
                raise on_miss() from exc
            raise driver_error(txn, exc, sql, args, cursor) from exc
        return form, cursor

    def queue(self, txn, params, on_miss=None):
        """Send the statement; a Pending for its result. Inside a
        pipeline's phase (placement.db.pipeline) it is sent and its
        result comes back when the phase ends; elsewhere at once.
        ``on_miss``: for a statement of :func:`or_fail` in a phase, the
        exception to raise when it fails its guard."""
        form, cursor = self._run(txn, params, later=True, on_miss=on_miss)
        return Pending(txn, form, cursor)

    def rows(self, txn, params):
        """All result rows, as named tuples."""
        form, cursor = self._run(txn, params)
        try:
            return form.rows(cursor)
        finally:
            cursor.close()

    def rows_in(self, txn, name, values, chunk=500, params=None):
        """rows() for the list ``values`` of the expanding parameter
        ``name``, ``chunk`` values a statement (well below every engine's
        parameter limit): the rows of every chunk, in order. ``params``:
        the statement's other parameters."""
        values = list(values)
        out = []
        for start in range(0, len(values), chunk):
            out.extend(self.rows(txn, {**(params or {}),
                                       name: values[start:start + chunk]}))
        return out

    def first(self, txn, params):
        rows = self.rows(txn, params)
        return rows[0] if rows else None

    def rowcount(self, txn, params):
        _form, cursor = self._run(txn, params)
        count = cursor.rowcount
        cursor.close()
        return count

    def insert(self, txn, params):
        """Run an INSERT of one row; the new key value."""
        _form, cursor = self._run(txn, params)
        try:
            if txn.conn.dialect.name == "postgresql":
                return cursor.fetchone()[0]
            return cursor.lastrowid
        finally:
            cursor.close()


class FastInsert:
    """A multi-row INSERT of ``columns`` into ``table``: one statement and
    one round trip for any number of rows (up to CHUNK a statement), where
    a driver's executemany may pay one per row. With ``returning`` (a
    column), :meth:`rows` returns its values for the new rows; with a
    tuple of columns, the new rows as named tuples of them (RETURNING:
    SQLite 3.35, MariaDB 10.5, PostgreSQL).

    ``found_by``: {column: (key column, by column)} for columns whose
    value the statement looks up itself: the row gives the value of the
    other table's ``by column`` and the row inserted gets the ``key
    column`` of that table's row (a new consumer's id by its uuid, when
    the consumer's INSERT was sent in the same pipeline)."""

    CHUNK = 200

    def __init__(self, table, columns, returning=None, found_by=None):
        self.table = table
        self.columns = list(columns)
        self.found_by = dict(found_by or {})
        if returning is None:
            self._returned = ()
        elif isinstance(returning, tuple):
            self._returned = returning
        else:
            self._returned = (returning,)
        self._by_count = {}
        self._lock = threading.Lock()

    def _statement(self, count):
        fast = self._by_count.get(count)
        if fast is None:
            rows = [{c: self._value(c, f"r{i}_{c}") for c in self.columns}
                    for i in range(count)]
            statement = self.table.insert().values(rows)
            if self._returned:
                statement = statement.returning(*self._returned)
            with self._lock:
                fast = self._by_count.setdefault(count, Fast(statement))
        return fast

    def _value(self, column, name):
        if column not in self.found_by:
            return sa.bindparam(name, type_=self.table.c[column].type)
        key, by = self.found_by[column]
        return (sa.select(key).where(by == sa.bindparam(name, type_=by.type))
                .scalar_subquery())

    def queue(self, txn, rows):
        """Send the INSERT of ``rows`` (dicts keyed by column); a Pending
        per statement (Fast.queue)."""
        rows = list(rows)
        pending = []
        for start in range(0, len(rows), self.CHUNK):
            chunk = rows[start:start + self.CHUNK]
            params = {f"r{i}_{c}": row[c] for i, row in enumerate(chunk)
                      for c in self.columns}
            pending.append(self._statement(len(chunk)).queue(txn, params))
        return pending

    def returned(self, pending):
        """What the statements ``pending`` (of queue()) returned: the
        returned column's values, or rows of the returned columns."""
        out = []
        for sent in pending:
            if not self._returned:
                sent.close()
            elif len(self._returned) == 1:
                out.extend(r[0] for r in sent.rows())
            else:
                out.extend(sent.rows())
        return out

    def rows(self, txn, rows):
        """Insert ``rows`` (dicts keyed by column); the returned column's
        values (or rows of the returned columns), in no promised order."""
        return self.returned(self.queue(txn, rows))
