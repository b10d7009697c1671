"""Inventories: what each provider has of each resource class.

Capacity = (total - reserved) * allocation_ratio. Every change bumps the
provider's generation; a change that removes a class still allocated is
refused (InventoryInUse). Lowering a total below current usage is allowed:
the provider keeps its allocations but cannot grow (see allocations).
"""

import dataclasses
import datetime
import logging
import math

import sqlalchemy as sa

from placement import errors
from placement.db import fastsql, store, tables
from placement.objects import providers

LOG = logging.getLogger(__name__)

MAX_INT = 2147483647
# allocation_ratio bounds. OpenStack Placement takes any ratio up to
# 3.40282e38 (what a single-precision SQL float holds); gantt's
# candidates index keeps capacity, (total - reserved) * ratio, in 64-bit
# integers, which a ratio up to MAX_INT always fits (below 2 ** 62).
# Below, Placement's bound stands: a negative ratio is refused as no
# capacity unless reserved equals total, and then capacity is 0.
MAX_RATIO = MAX_INT
MIN_RATIO = -3.40282e38

_inv = tables.inventories
_alloc = tables.allocations

FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size",
          "allocation_ratio")


@dataclasses.dataclass(frozen=True)
class Inventory:
    resource_class: str
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = MAX_INT
    step_size: int = 1
    allocation_ratio: float = 1.0
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None

    @property
    def capacity(self):
        return int((self.total - self.reserved) * self.allocation_ratio)

    @property
    def last_modified(self):
        return self.updated_at or self.created_at

    def values(self):
        return {f: getattr(self, f) for f in FIELDS}

    def check(self, provider_uuid, reserved_can_be_total=True):
        """InvalidInventoryValue for a field out of range;
        InvalidInventoryCapacity when reserved leaves no capacity (reserved
        may equal total from microversion 1.26)."""
        for field in ("total", "reserved", "min_unit", "max_unit",
                      "step_size"):
            value = getattr(self, field)
            low = 0 if field == "reserved" else 1
            if (not isinstance(value, int) or isinstance(value, bool)
                    or not low <= value <= MAX_INT):
                raise errors.InvalidInventoryValue(
                    f"Bad inventory {self.resource_class} for resource "
                    f"provider {provider_uuid}: {field} must be an integer "
                    f"from {low} to {MAX_INT}, not {value!r}.")
        ratio = self.allocation_ratio
        if (not isinstance(ratio, (int, float)) or isinstance(ratio, bool)
                or (isinstance(ratio, float) and not math.isfinite(ratio))):
            raise self._bad_ratio(provider_uuid)
        # A negative capacity gets Placement's answer, whatever the ratio
        # (capacity is truncated toward 0: -0.5 counts as 0).
        if (self.total - self.reserved) * ratio <= -1:
            raise errors.InvalidInventoryCapacity(
                self.resource_class, provider_uuid, reserved_can_be_total)
        if not MIN_RATIO <= ratio <= MAX_RATIO:
            raise self._bad_ratio(provider_uuid)
        if self.capacity == 0 and not reserved_can_be_total:
            raise errors.InvalidInventoryCapacity(
                self.resource_class, provider_uuid, reserved_can_be_total)

    def _bad_ratio(self, provider_uuid):
        return errors.InvalidInventoryValue(
            f"Bad inventory {self.resource_class} for resource provider "
            f"{provider_uuid}: allocation_ratio must be a number from "
            f"{MIN_RATIO} to {MAX_RATIO} (gantt holds capacity, (total - "
            f"reserved) * allocation_ratio, in a 64-bit integer), not "
            f"{self.allocation_ratio!r}.")


# Every inventory write and read runs these: on the raw cursor.
_ROWS = fastsql.Fast(sa.select(_inv).where(
    _inv.c.resource_provider_id == sa.bindparam("rp_id")))
_INSERT = fastsql.Fast(_inv.insert(), columns=[
    "resource_provider_id", "resource_class_id", "created_at", *FIELDS])
_UPDATE = fastsql.Fast(_inv.update().where(
    _inv.c.id == sa.bindparam("inv_id")).values(
        updated_at=sa.bindparam("now"),
        **{f: sa.bindparam(f"new_{f}") for f in FIELDS}))


def _rows(txn, provider_id):
    return _ROWS.rows(txn, {"rp_id": provider_id})


def _from_row(txn, row):
    return Inventory(
        resource_class=txn.catalog.rc_name(txn, row.resource_class_id),
        total=row.total, reserved=row.reserved, min_unit=row.min_unit,
        max_unit=row.max_unit, step_size=row.step_size,
        allocation_ratio=row.allocation_ratio, created_at=row.created_at,
        updated_at=row.updated_at)


@store.reader
def get_all(txn, provider_uuid):
    """(provider, {resource class: Inventory})."""
    provider = providers.get(txn, provider_uuid)
    invs = [_from_row(txn, row) for row in _rows(txn, provider.id)]
    return provider, {inv.resource_class: inv for inv in invs}


@store.reader
def get_one(txn, provider_uuid, resource_class):
    """(provider, Inventory); InventoryNotFound when there is none."""
    provider, invs = get_all(txn, provider_uuid)
    if resource_class not in invs:
        raise errors.InventoryNotFound(resource_class, provider.uuid)
    return provider, invs[resource_class]


@store.reader
def by_provider(txn):
    """{provider uuid: {resource class: Inventory}} for every provider
    that has inventory."""
    rp = tables.resource_providers
    result = txn.execute(sa.select(rp.c.uuid, _inv).select_from(
        _inv.join(rp, rp.c.id == _inv.c.resource_provider_id)))
    out = {}
    for row in result:
        out.setdefault(row.uuid, {})[
            txn.catalog.rc_name(txn, row.resource_class_id)] = (
            _from_row(txn, row))
    return out


def _classes_in_use(txn, provider_id, rc_ids):
    if not rc_ids:
        return []
    rows = txn.execute(
        sa.select(_alloc.c.resource_class_id).distinct()
        .where(_alloc.c.resource_provider_id == provider_id)
        .where(_alloc.c.resource_class_id.in_(sorted(rc_ids)))
        .order_by(_alloc.c.resource_class_id))
    return [txn.catalog.rc_name(txn, r.resource_class_id) for r in rows]


def _warn_over_capacity(txn, provider, rc_id, inventory):
    used = txn.scalar(
        sa.select(sa.func.sum(_alloc.c.used))
        .where(_alloc.c.resource_provider_id == provider.id)
        .where(_alloc.c.resource_class_id == rc_id))
    if used and used > inventory.capacity:
        LOG.warning("resource provider %s is now over capacity for %s: "
                    "%s used of %s", provider.uuid,
                    inventory.resource_class, used, inventory.capacity)


def _apply(txn, provider, wanted, delete_missing):
    """Insert, update and (optionally) delete inventory rows so that the
    provider's inventory matches ``wanted`` ({rc name: Inventory})."""
    existing = {row.resource_class_id: row for row in
                _rows(txn, provider.id)}
    by_id = {txn.catalog.rc_id(txn, rc): inv for rc, inv in wanted.items()}
    if delete_missing:
        gone = set(existing) - set(by_id)
        in_use = _classes_in_use(txn, provider.id, gone)
        if in_use:
            raise errors.InventoryInUse(in_use, provider.uuid)
        if gone:
            txn.execute(_inv.delete()
                        .where(_inv.c.resource_provider_id == provider.id)
                        .where(_inv.c.resource_class_id.in_(sorted(gone))))
    for rc_id, inv in sorted(by_id.items()):
        if rc_id in existing:
            _warn_over_capacity(txn, provider, rc_id, inv)
            _UPDATE.rowcount(txn, {
                "inv_id": existing[rc_id].id, "now": txn.now,
                **{f"new_{f}": v for f, v in inv.values().items()}})
        else:
            _INSERT.rowcount(txn, {
                "resource_provider_id": provider.id,
                "resource_class_id": rc_id, "created_at": txn.now,
                **inv.values()})


def _finish(txn, provider, generation):
    """Bump the provider generation; the engine read it itself when the
    caller gave none."""
    txn.changes.providers.add(provider.id)
    return providers.bump_generation(
        txn, provider.id, provider.uuid, provider.generation,
        engine_read=generation is None)


def _start(txn, provider_uuid, generation, inventories,
           reserved_can_be_total):
    provider = providers.get(txn, provider_uuid)
    if generation is not None:
        providers.check_generation(provider, generation)
    for inv in inventories:
        inv.check(provider.uuid, reserved_can_be_total)
    return provider


@store.writer(retry_conflicts=True)
def replace_all(txn, provider_uuid, generation, inventories,
                reserved_can_be_total=True):
    """Make the provider's inventory exactly ``inventories`` (a list of
    Inventory). Returns (new generation, {rc: Inventory})."""
    provider = _start(txn, provider_uuid, generation, inventories,
                      reserved_can_be_total)
    wanted = {inv.resource_class: inv for inv in inventories}
    _apply(txn, provider, wanted, delete_missing=True)
    new_generation = _finish(txn, provider, generation)
    return new_generation, get_all(txn, provider.uuid)[1]


@store.writer(retry_conflicts=True)
def add(txn, provider_uuid, inventory, generation=None,
        reserved_can_be_total=True):
    """Add the inventory of a class the provider does not have yet.
    ConcurrentUpdate when it has one already. Returns the Inventory."""
    provider = _start(txn, provider_uuid, generation, [inventory],
                      reserved_can_be_total)
    rc_id = txn.catalog.rc_id(txn, inventory.resource_class)
    if any(row.resource_class_id == rc_id
           for row in _rows(txn, provider.id)):
        raise errors.ConcurrentUpdate(
            f"Inventory of {inventory.resource_class} already exists on "
            f"resource provider {provider.uuid}.")
    _apply(txn, provider, {inventory.resource_class: inventory},
           delete_missing=False)
    _finish(txn, provider, generation)
    return get_one(txn, provider.uuid, inventory.resource_class)[1]


@store.writer(retry_conflicts=True)
def update(txn, provider_uuid, inventory, generation=None,
           reserved_can_be_total=True):
    """Change the inventory of a class the provider has
    (InventoryNotFound otherwise). Returns (new generation, Inventory)."""
    provider = _start(txn, provider_uuid, generation, [inventory],
                      reserved_can_be_total)
    rc_id = txn.catalog.rc_id(txn, inventory.resource_class)
    if not any(row.resource_class_id == rc_id
               for row in _rows(txn, provider.id)):
        raise errors.InventoryNotFound(inventory.resource_class,
                                       provider.uuid)
    _apply(txn, provider, {inventory.resource_class: inventory},
           delete_missing=False)
    new_generation = _finish(txn, provider, generation)
    return new_generation, get_one(txn, provider.uuid,
                                   inventory.resource_class)[1]


@store.writer(retry_conflicts=True)
def delete(txn, provider_uuid, resource_class, generation=None):
    """Remove one class from the provider's inventory. InventoryNotFound
    when it has none; InventoryInUse while it is allocated."""
    provider = providers.get(txn, provider_uuid)
    if generation is not None:
        providers.check_generation(provider, generation)
    rc_id = txn.catalog.rc_id(txn, resource_class)
    in_use = _classes_in_use(txn, provider.id, {rc_id})
    if in_use:
        raise errors.InventoryInUse(in_use, provider.uuid)
    deleted = txn.execute(
        _inv.delete().where(_inv.c.resource_provider_id == provider.id)
        .where(_inv.c.resource_class_id == rc_id)).rowcount
    if not deleted:
        raise errors.InventoryNotFound(resource_class, provider.uuid)
    return _finish(txn, provider, generation)


@store.writer(retry_conflicts=True)
def delete_all(txn, provider_uuid, generation=None):
    """Remove every inventory of the provider (InventoryInUse while any
    class is allocated). Returns the new generation."""
    return replace_all(txn, provider_uuid, generation, [])[0]
