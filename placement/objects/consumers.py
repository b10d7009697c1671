"""Consumers (what allocations belong to) and the projects, users and
consumer types they refer to.

A consumer is created by its first allocation write and deleted when a
write leaves it with no allocations; its generation moves on every write
of its allocations.
"""

import dataclasses
import datetime

import sqlalchemy as sa

from placement import errors
from placement.db import rows, store, tables

# Name the API reports for consumers written without a type.
UNKNOWN_CONSUMER_TYPE = "unknown"
MAX_EXTERNAL_ID_LENGTH = 255

_consumer = tables.consumers
_project = tables.projects
_user = tables.users
_ctype = tables.consumer_types


@dataclasses.dataclass(frozen=True)
class Consumer:
    id: int
    uuid: str
    generation: int
    project_id: str
    user_id: str
    consumer_type: str | None
    created_at: datetime.datetime
    updated_at: datetime.datetime | None


def ensure_project(txn, external_id):
    _check_external_id("project_id", external_id)
    return rows.get_or_create_id(txn, _project, _project.c.external_id,
                          external_id, "project")


def ensure_user(txn, external_id):
    _check_external_id("user_id", external_id)
    return rows.get_or_create_id(txn, _user, _user.c.external_id, external_id,
                          "user")


def ensure_consumer_type(txn, name):
    _check_external_id("consumer_type", name)
    return rows.get_or_create_id(txn, _ctype, _ctype.c.name, name, "ctype")


def _check_external_id(field, value):
    if (not isinstance(value, str) or not value
            or len(value) > MAX_EXTERNAL_ID_LENGTH):
        raise errors.BadRequest(
            f"{field} must be a string of 1 to {MAX_EXTERNAL_ID_LENGTH} "
            f"characters, not {value!r}.")


# Consumers joined with the external ids of their project, user and type.
SELECT = (
    sa.select(
        _consumer.c.id, _consumer.c.uuid, _consumer.c.generation,
        _consumer.c.project_id.label("project_pk"),
        _consumer.c.user_id.label("user_pk"),
        _consumer.c.consumer_type_id,
        _project.c.external_id.label("project_id"),
        _user.c.external_id.label("user_id"),
        _ctype.c.name.label("consumer_type"),
        _consumer.c.created_at, _consumer.c.updated_at,
    ).select_from(
        _consumer.join(_project, _consumer.c.project_id == _project.c.id)
        .join(_user, _consumer.c.user_id == _user.c.id)
        .outerjoin(_ctype, _consumer.c.consumer_type_id == _ctype.c.id)))


def from_row(row):
    return Consumer(id=row.id, uuid=row.uuid, generation=row.generation,
                    project_id=row.project_id, user_id=row.user_id,
                    consumer_type=row.consumer_type,
                    created_at=row.created_at, updated_at=row.updated_at)


@store.reader
def get(txn, uuid):
    row = txn.execute(SELECT.where(_consumer.c.uuid == str(uuid))).first()
    if row is None:
        raise errors.ConsumerNotFound(uuid)
    return from_row(row)


@store.reader
def get_many(txn, uuids):
    """{uuid: Consumer} for those of ``uuids`` that exist."""
    uuids = sorted({str(u) for u in uuids})
    if not uuids:
        return {}
    return {row.uuid: from_row(row) for row in
            txn.execute(SELECT.where(_consumer.c.uuid.in_(uuids)))}
