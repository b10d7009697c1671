"""Allocations that no instance accounts for, and removing them.

A scheduler process killed after its claim committed and before its
answer reached the conductor leaves an allocation no instance will ever
use; so do bugs and manual mistakes. ``gantt-manage allocations audit``
lists the consumers holding allocations that the host state source does
not account for (nova-manage placement audit does the same for Nova):

- with gantt's own host records: the instances the records place on a
  host (consumers of type MIGRATION are left alone: the records know no
  migrations);
- with Nova's databases (``[scheduler] host_state_source = nova``): the
  live instances of every cell, the instances nova-api is still building,
  and the migrations in progress.

Only consumers of type INSTANCE or MIGRATION, or of no type (allocations
written before microversion 1.38), are looked at; consumers whose last
write is younger than ``older_than`` seconds are left alone too (an
instance being built holds its claim before any record shows it).
Healing removes a consumer's allocations only if nobody wrote them since
the audit read them (its generation is checked in the same write).
"""

import dataclasses
import datetime

import sqlalchemy as sa

from placement import errors
from placement.db import tables
from placement.objects import allocations as allocations_mod
from scheduler import host_options, host_reads

AUDITED = ("INSTANCE", "MIGRATION", None)


@dataclasses.dataclass
class Finding:
    consumer: str
    consumer_type: str | None
    project_id: str
    user_id: str
    generation: int
    last_write: datetime.datetime
    # {provider uuid: {resource class: amount}}
    allocations: dict
    why: str
    # None: not asked to heal; "removed"; or why it was kept.
    healed: str | None = None


@dataclasses.dataclass
class Audit:
    findings: list
    consumers: int  # consumers holding allocations
    audited: int  # of those, the ones looked at
    left_alone: dict  # reason -> count
    source: str

    def as_dict(self):
        return {
            "source": self.source,
            "consumers_with_allocations": self.consumers,
            "audited": self.audited,
            "left_alone": self.left_alone,
            "unexplained": [dict(dataclasses.asdict(f),
                                 last_write=f.last_write.isoformat())
                            for f in self.findings],
        }


def _holders(txn):
    """{consumer uuid: Finding without a reason yet} of every consumer
    holding allocations."""
    c, a, rp = tables.consumers, tables.allocations, tables.resource_providers
    p, u, t = tables.projects, tables.users, tables.consumer_types
    rows = txn.execute(
        sa.select(c.c.uuid, c.c.generation, c.c.created_at, c.c.updated_at,
                  t.c.name.label("consumer_type"),
                  p.c.external_id.label("project_id"),
                  u.c.external_id.label("user_id"),
                  rp.c.uuid.label("provider"), a.c.resource_class_id,
                  a.c.used)
        .select_from(a.join(c, a.c.consumer_id == c.c.id)
                     .join(rp, a.c.resource_provider_id == rp.c.id)
                     .join(p, c.c.project_id == p.c.id)
                     .join(u, c.c.user_id == u.c.id)
                     .outerjoin(t, c.c.consumer_type_id == t.c.id)))
    out = {}
    for r in rows:
        found = out.get(r.uuid)
        if found is None:
            found = out[r.uuid] = Finding(
                r.uuid, r.consumer_type, r.project_id, r.user_id,
                r.generation, r.updated_at or r.created_at, {}, "")
        found.allocations.setdefault(r.provider, {})[
            txn.catalog.rc_name(txn, r.resource_class_id)] = r.used
    return out


def _accounted(store, conf):
    """(source name, instance uuids, migration uuids or None when the
    source knows no migrations)."""
    host_options.register_opts(conf)
    if conf.scheduler.host_state_source == host_options.NOVA:
        from scheduler.nova_db import consumers as nova_consumers
        instances, migrations = nova_consumers.live_consumers(conf)
        return "nova", instances, migrations
    held = host_reads.instances(store)
    instances = {uuid for on_host in held.values() for uuid in on_host}
    return "gantt", instances, None


def run(store, conf, older_than, now=None):
    """The Audit of ``store``'s allocations against the host state
    source of ``conf``."""
    now = now or datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None)
    holders = store.read(_holders)
    source, instances, migrations = _accounted(store, conf)
    cutoff = now - datetime.timedelta(seconds=older_than)
    findings, left_alone, audited = [], {}, 0

    def leave(reason):
        left_alone[reason] = left_alone.get(reason, 0) + 1

    for uuid, found in sorted(holders.items()):
        kind = found.consumer_type
        if kind not in AUDITED:
            leave(f"consumer type {kind}")
            continue
        if kind == "MIGRATION" and migrations is None:
            leave("MIGRATION (gantt's host records know no migrations)")
            continue
        if found.last_write > cutoff:
            leave(f"written in the last {older_than:g} s")
            continue
        audited += 1
        if uuid in instances and kind != "MIGRATION":
            continue
        if migrations is not None and uuid in migrations and \
                kind != "INSTANCE":
            continue
        found.why = _why(kind, source, migrations is not None)
        findings.append(found)
    return Audit(findings, len(holders), audited, left_alone, source)


def _why(kind, source, knows_migrations):
    where = ("Nova's databases" if source == "nova"
             else "gantt's host records")
    if kind == "MIGRATION":
        return f"no migration in progress in {where}"
    if kind is None and knows_migrations:
        return f"no instance or migration in progress in {where}"
    return f"no instance in {where}"


def heal(store, audit):
    """Remove the allocations of every finding whose consumer nobody
    wrote since the audit; each finding's ``healed`` says what
    happened."""
    for found in audit.findings:
        write = allocations_mod.ConsumerAllocations(
            found.consumer, {}, found.project_id, found.user_id,
            consumer_generation=found.generation)
        try:
            allocations_mod.replace(store, [write])
        except errors.ConsumerGenerationConflict:
            found.healed = "kept: written since the audit"
            continue
        found.healed = "removed"
    return audit


def render(audit):
    """The audit as a table of text."""
    lines = [f"Allocations audit against {audit.source}'s records: "
             f"{audit.consumers} consumers hold allocations, "
             f"{audit.audited} audited, {len(audit.findings)} "
             f"unexplained"]
    for reason, count in sorted(audit.left_alone.items()):
        lines.append(f"  left alone: {count} ({reason})")
    if audit.findings:
        lines.append("")
        lines.append(f"{'CONSUMER':36}  {'TYPE':9}  {'LAST WRITE':19}  "
                     f"ALLOCATIONS / WHY")
    for f in audit.findings:
        held = "; ".join(
            f"{rp}: " + ", ".join(f"{rc} {n}" for rc, n in sorted(
                res.items()))
            for rp, res in sorted(f.allocations.items()))
        lines.append(f"{f.consumer:36}  {f.consumer_type or '-':9}  "
                     f"{f.last_write:%Y-%m-%d %H:%M:%S}  {held}")
        lines.append(f"{'':36}  {'':9}  {'':19}  {f.why}"
                     + (f"; {f.healed}" if f.healed else ""))
    return "\n".join(lines)
