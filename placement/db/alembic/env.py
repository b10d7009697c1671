"""Alembic environment: migrations run on the connection that
placement.db.migration hands over, inside its transaction."""

from alembic import context

from placement.db import tables

connection = context.config.attributes["connection"]
context.configure(connection=connection,
                  target_metadata=tables.metadata,
                  render_as_batch=connection.dialect.name == "sqlite")
context.run_migrations()
