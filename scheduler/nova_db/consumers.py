"""Which placement consumers Nova's databases account for, read only:
the uuids of its live instances (every cell, cell0 included), of the
instances nova-api is still building (build requests in the API
database: claimed before the conductor creates them in a cell), and of
its migrations in progress (whose uuids hold a moving instance's source
allocation). What gantt-manage allocations audit compares placement's
consumers with.
"""

import sqlalchemy as sa

from scheduler.nova_db import schema as s
from scheduler.nova_db import source as source_mod


def live_consumers(conf):
    """(instance uuids, migration uuids) Nova knows as live."""
    instances, migrations = set(), set()
    api = source_mod.engine_for(conf.api_database.connection)
    try:
        with api.connect() as conn:
            cells = conn.execute(sa.select(
                s.cell_mappings.c.uuid,
                s.cell_mappings.c.database_connection)).all()
            instances.update(conn.execute(sa.select(
                s.build_requests.c.instance_uuid)).scalars())
    except sa.exc.SQLAlchemyError as exc:
        raise source_mod.NovaSourceError(
            "cannot read Nova's API database ([api_database] connection): "
            f"{source_mod.first_line(exc)}") from None
    finally:
        api.dispose()
    for uuid, url in cells:
        if not url:
            continue
        engine = source_mod.engine_for(source_mod.cell_url(
            url, conf.database.connection))
        try:
            with engine.connect() as conn:
                instances.update(conn.execute(
                    sa.select(s.instances.c.uuid)
                    .where(s.instances.c.deleted == 0)).scalars())
                migrations.update(conn.execute(
                    sa.select(s.migrations.c.uuid)
                    .where(s.migrations.c.deleted == 0,
                           s.migrations.c.uuid.is_not(None),
                           s.migrations.c.status.not_in(
                               s.MIGRATION_DONE))).scalars())
        except sa.exc.SQLAlchemyError as exc:
            raise source_mod.NovaSourceError(
                f"cannot read Nova's cell {uuid}: "
                f"{source_mod.first_line(exc)}") from None
        finally:
            engine.dispose()
    return instances, migrations
