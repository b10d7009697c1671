"""Where the scheduler's fanout casts go, by host state source.

Nova's API and compute services tell every scheduler about aggregates
and instances (update_aggregates, delete_aggregate,
update_instance_info, delete_instance_info, sync_instance_info). With
gantt's own records they are written to the database
(:class:`RecordUpdates`): each scheduler process writes the same values,
and every host state table catches up from the change log. With Nova's
databases as the source they change the process's table in memory, as
nova-scheduler's HostManager does (scheduler.nova_db.source).

Both take checked values: aggregates as host_records.check_aggregate
tuples, instances as host_reads.Instance records, names and uuids
checked with host_records.check_name / check_uuid.
"""

import time

from scheduler import host_options, host_records


def source_for(conf, clock=time.time):
    """The host state source ``conf`` names: None for gantt's own
    records, else a NovaHostSource (``clock``: epoch seconds, the time
    heartbeats are judged against)."""
    host_options.register_opts(conf)
    if conf.scheduler.host_state_source == host_options.NOVA:
        # Imported here: only a Nova deployment needs it.
        from scheduler.nova_db import source
        return source.NovaHostSource(conf, clock=clock)
    return None


class SourceError(RuntimeError):
    """The configured host state source cannot be used."""


def check_source(conf):
    """Raise SourceError when the source ``conf`` names cannot be read
    (Nova's API database unset or unreachable); nothing for gantt's own
    records, which live in the placement database."""
    source = source_for(conf)
    if source is None:
        return
    try:
        source.check()
    finally:
        source.close()


def for_table(table):
    """What the casts change for ``table``: its source when it has one,
    else the records in its store."""
    if table.source is not None:
        return table.source
    return RecordUpdates(table.store)


class RecordUpdates:
    """The casts, written to gantt's host records, each in one
    transaction."""

    def __init__(self, store):
        self._store = store

    def update_aggregates(self, aggregates):
        def write(txn):
            for uuid, name, metadata, hosts in aggregates:
                host_records.update_aggregate(txn, uuid, name, metadata,
                                              hosts)
        self._store.write(write)

    def delete_aggregate(self, uuid):
        self._store.write(host_records.delete_aggregate, uuid)

    def update_instance_info(self, host, instances):
        self._store.write(host_records.update_instance_info, host,
                          instances)

    def delete_instance_info(self, host, instance_uuid):
        self._store.write(host_records.delete_instance_info, host,
                          instance_uuid)

    def sync_instance_info(self, host, instance_uuids):
        self._store.write(host_records.sync_instance_info, host,
                          instance_uuids)
