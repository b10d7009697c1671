"""Nova's API and cell databases for the Nova host source's tests.

The tables are created from the DDL Nova 34's own migrations produce
on each engine, and filled with the rows Nova's objects wrote, both
recorded by fixtures/nova_db/make_fixtures.py (run by hand in a Nova
virtualenv); ``cloud.json`` also holds what Nova's HostManager made of
those rows.
"""

import datetime
import json
import pathlib

import sqlalchemy as sa

from tests import databases

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "nova_db"
CELLS = ("cell0", "cell1", "cell2", "cell3")
API_TABLES = ("cell_mappings", "aggregates", "aggregate_hosts",
              "aggregate_metadata", "build_requests")
CELL_TABLES = ("compute_nodes", "services", "instances", "migrations")


def cloud():
    return json.loads((FIXTURES / "cloud.json").read_text())


def schema(engine):
    return json.loads((FIXTURES / f"schema-{engine}.json").read_text())


def now():
    return datetime.datetime.fromisoformat(cloud()["now"])


class NovaDatabases:
    """An API database and three cell databases on one engine, with
    Nova's tables; :meth:`reset` fills them with the fixture's rows."""

    def __init__(self, engine_name, tmp_path):
        self.engine_name = engine_name
        self.urls = {}
        self._scratch = []
        for name in ("api", *CELLS):
            if engine_name == "sqlite":
                self.urls[name] = f"sqlite:///{tmp_path / name}.sqlite"
                continue
            try:
                url = databases.create_scratch(engine_name)
            except Exception as exc:  # any connection failure
                self.close()
                databases.unavailable(engine_name,
                                      str(exc).splitlines()[0])
            self._scratch.append(url)
            self.urls[name] = url
        self.engines = {name: sa.create_engine(url, **_options(url))
                        for name, url in self.urls.items()}
        ddl = schema(engine_name)
        for name, engine in self.engines.items():
            with engine.begin() as conn:
                for statement in ddl["api" if name == "api" else "cell"]:
                    conn.exec_driver_sql(statement)
        self.tables = {name: _reflect(engine, API_TABLES if name == "api"
                                      else CELL_TABLES)
                       for name, engine in self.engines.items()}

    def close(self):
        for engine in getattr(self, "engines", {}).values():
            engine.dispose()
        for url in self._scratch:
            databases.drop_scratch(self.engine_name, url)

    def reset(self):
        """Exactly the fixture's rows; the cell mappings point at these
        databases."""
        data = cloud()
        rows = {"api": data["api"]}
        for name in CELLS:
            rows[name] = data["cell_rows"][name]
        for name, engine in self.engines.items():
            with engine.begin() as conn:
                for table in self.tables[name].values():
                    conn.execute(table.delete())
                for table_name, found in rows[name].items():
                    if table_name == "cell_mappings":
                        found = [self._mapped(r) for r in found]
                    self.insert(name, table_name, found, conn=conn)

    def _mapped(self, row):
        row = dict(row)
        row["database_connection"] = self.urls[row["name"]]
        return row

    def insert(self, db, table_name, found, conn=None):
        table = self.tables[db][table_name]
        values = [_typed(table, row) for row in found]
        if not values:
            return
        if conn is None:
            with self.engines[db].begin() as conn:
                conn.execute(table.insert(), values)
        else:
            conn.execute(table.insert(), values)

    def execute(self, db, statement, params=None):
        with self.engines[db].begin() as conn:
            return conn.execute(statement, params or {})

    def rows(self, db, table_name):
        with self.engines[db].connect() as conn:
            return conn.execute(sa.select(
                self.tables[db][table_name])).mappings().all()


def _options(url):
    if url.startswith("sqlite"):
        return {}
    return {"isolation_level": "READ COMMITTED"}


def _reflect(engine, names):
    metadata = sa.MetaData()
    with engine.connect() as conn:
        return {n: sa.Table(n, metadata, autoload_with=conn) for n in names}


def _typed(table, row):
    out = {}
    for name, value in row.items():
        column = table.c[name]
        if value is not None and isinstance(column.type, sa.DateTime):
            value = datetime.datetime.fromisoformat(value)
        elif value is not None and isinstance(column.type, sa.Boolean):
            value = bool(value)
        out[name] = value
    return out
