"""Helpers shared by the host filters: masks from sets of host names, and
per-row answers from aggregate metadata, both computed once per table
column rather than once per row."""

import numpy as np


def hosts_mask(table, hosts, rows):
    """Per row of ``rows``: whether the row's host is one of ``hosts``."""
    hit = np.zeros(table.size, bool)
    for host in hosts:
        found = table.rows_by_host.get(host)
        if found:
            hit[list(found)] = True
    return hit[rows]


def hosts_holding(table, uuids):
    """Hosts holding at least one of the instances ``uuids``."""
    where = table.instance_host
    return {where[u] for u in set(uuids) if u in where}


def split_values(value):
    """A comma-separated metadata value as a list, each item stripped (as
    Nova reads tenant ids and flavor names)."""
    return [item.strip() for item in value.split(",")]


def value_set(value):
    """The values an aggregate metadata entry lists ("a, b" -> a and b),
    as Nova's aggregate extra specs and image properties filters read
    them."""
    return {part.strip() for part in value.split(",")}


def aggregate_gate(table, rows, restricts, admits):
    """Per row: True unless one of its host's aggregates restricts (per
    aggregate column, ``restricts``) and none of them admits
    (``admits``): the shape of the aggregate isolation filters."""
    member = table.aggregates[rows]
    if not member.shape[1]:
        return np.ones(len(rows), bool)
    restricted = (member & restricts).any(axis=1)
    admitted = (member & admits).any(axis=1)
    return ~restricted | admitted


def aggregate_limit(table, rows, key, default):
    """Per row: the smallest integer value of metadata ``key`` over the
    row's aggregates, ``default`` where none sets it. Like Nova, a value
    that is not an integer (say "1.5") makes the whole host fall back to
    ``default``, rather than being skipped."""
    records = table.agg_records
    given = np.zeros(len(records), bool)
    bad = np.zeros(len(records), bool)
    value = np.zeros(len(records), np.int64)
    for col, record in enumerate(records):
        raw = record.metadata.get(key) if record is not None else None
        if raw is None:
            continue
        given[col] = True
        try:
            value[col] = int(raw)
        except ValueError:
            bad[col] = True
    out = np.full(len(rows), default, np.int64)
    if not len(records):
        return out
    member = table.aggregates[rows]
    usable = member & given & ~bad
    big = np.iinfo(np.int64).max
    lowest = np.where(usable, value, big).min(axis=1)
    use = usable.any(axis=1) & ~(member & bad).any(axis=1)
    out[use] = lowest[use]
    return out


def aggregate_values(table, row, key=None, prefix=None):
    """``name: value`` texts of metadata ``key`` (or keys starting with
    ``prefix``) in the aggregates of ``row``'s host, for explanations."""
    out = []
    for record in table.aggregates_of(row):
        for k, v in sorted(record.metadata.items()):
            if k == key or (prefix and k.startswith(prefix)):
                out.append(f"{record.name}: {v}")
    return "; ".join(out)
