"""Small row helpers shared by the objects modules."""

import sqlalchemy as sa


def get_or_create_id(txn, table, column, value, cache_kind):
    """Id of the row of ``table`` whose ``column`` is ``value``, inserting
    it when missing. Only for rows that are never deleted: ids found by a
    read are cached in the store. A racing insert of the same value fails
    its unique key; the store then retries the transaction, which finds
    the row."""
    key = (cache_kind, value)
    cached = txn.store.id_cache.get(key)
    if cached is not None:
        return cached
    row_id = txn.scalar(sa.select(table.c.id).where(column == value))
    if row_id is not None:
        txn.store.id_cache[key] = row_id
        return row_id
    return txn.execute(table.insert().values(
        {column.name: value, "created_at": txn.now})
    ).inserted_primary_key[0]
