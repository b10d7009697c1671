"""Claims from several processes at once never over-commit and never
lose an update (every engine).

Each worker process opens a store of its own on the test database. In a
first phase the workers claim, for new consumers, more than the
providers can hold; in a second one they rewrite consumers they all
share, each write carrying the consumer generation it read. Whatever the
interleaving, the database must end up holding exactly what the workers
were told succeeded, within every provider's capacity.
"""

import collections

import pytest

from placement.objects import allocations, consumers, inventories
from tests import workers
from tests.functional import alloc_helpers as h

Inventory = inventories.Inventory

WORKERS = 4
CLAIMS_PER_WORKER = 40
PROVIDERS = 3
# Per provider: VCPU 32 x 2.0 = 64, MEMORY_MB (32768 - 512) x 1.5 =
# 48384, DISK_GB 600 - 10 = 590. About half of the 160 claims (VCPU 2.5,
# MEMORY_MB 1195, DISK_GB 22.5 on average) fit.
INVENTORY = (
    Inventory("VCPU", 32, allocation_ratio=2.0),
    Inventory("MEMORY_MB", 32768, reserved=512, allocation_ratio=1.5),
    Inventory("DISK_GB", 600, reserved=10),
)
SHARED_CONSUMERS = 2
UPDATES_PER_WORKER = 15
ALLOWED = {f"placement.errors.{name}" for name in h.REFUSALS}


def _run_workers(db_url, job):
    reports = workers.run(h.claim_worker,
                          [(db_url, dict(job, seed=seed))
                           for seed in range(WORKERS)])
    crashes = [r["crash"] for r in reports if r["crash"]]
    assert not crashes, crashes[0]
    return reports


def _kind(outcome):
    return outcome.split(":")[0]


@pytest.mark.slow
def test_concurrent_claims(store, db_url, engine_name):
    """Four processes racing on the same providers.

    Claims: no provider over capacity (from the tables), every accepted
    claim stored exactly as asked and nothing else, refusals only for
    capacity or generation conflicts, each provider's generation moved
    once per accepted claim. Shared consumers: each generation handed out
    once (no lost update), the last accepted write is what is stored.
    """
    rp_uuids = sorted(h.provider(store, f"cn{i}", **{
        inv.resource_class: inv for inv in INVENTORY})
        for i in range(PROVIDERS))
    spare = sorted(h.provider(store, f"spare{i}", VCPU=1000)
                   for i in range(2))
    shared = [h.new_uuid() for _ in range(SHARED_CONSUMERS)]
    start_gens = {u: h.gen(store, u) for u in rp_uuids + spare}

    reports = _run_workers(db_url, {
        "providers": rp_uuids, "claims": CLAIMS_PER_WORKER,
        "spare": spare, "shared": shared, "rounds": UPDATES_PER_WORKER})

    claims = [c for r in reports for c in r["claims"]]
    updates = [u for r in reports for u in r["updates"]]
    assert len(claims) == WORKERS * CLAIMS_PER_WORKER
    assert len(updates) == WORKERS * UPDATES_PER_WORKER
    outcomes = [c[3] for c in claims] + [u[4] for u in updates]
    unexpected = [o for o in outcomes
                  if o != h.ACCEPTED and _kind(o) not in ALLOWED]
    assert not unexpected, unexpected[:3]
    # The workers really raced: at one moment all of them were claiming.
    windows = [r["window"] for r in reports]
    assert max(s for s, _e in windows) < min(e for _s, e in windows)

    accepted = [c for c in claims if c[3] == h.ACCEPTED]
    refused = collections.Counter(_kind(c[3]) for c in claims
                                  if c[3] != h.ACCEPTED)
    span = max(e for _s, e in windows) - min(s for s, _e in windows)
    won = [u for u in updates if u[4] == h.ACCEPTED]
    lost = collections.Counter(_kind(u[4]) for u in updates
                               if u[4] != h.ACCEPTED)
    print(f"\n{engine_name}: {len(claims)} claims in {span:.2f} s, "
          f"{len(accepted)} accepted, refused: {dict(refused)}; "
          f"{len(updates)} shared updates, {len(won)} accepted, "
          f"refused: {dict(lost)}")
    # The demand is larger than the capacity, and there was room for
    # some: both outcomes must have happened.
    assert accepted
    assert refused["placement.errors.CapacityExceeded"]

    # No provider over capacity, from the tables alone.
    state = h.usage_and_capacity(store)
    assert len(state) == PROVIDERS * len(INVENTORY) + len(spare)
    for key, (used, capacity) in state.items():
        assert used <= capacity, (key, used, capacity)

    # Every accepted claim is stored exactly as asked, and the stored
    # usage is the sum of the accepted claims (nothing else is stored).
    expected_usage = collections.Counter()
    for consumer, rp_uuid, asked, _ in accepted:
        assert h.resources_of(store, consumer) == {rp_uuid: asked}
        for rc, amount in asked.items():
            expected_usage[(rp_uuid, rc)] += amount
    stored = consumers.get_many(store, [c[0] for c in claims])
    assert set(stored) == {c[0] for c in accepted}
    assert {c.generation for c in stored.values()} == {1}
    for consumer, _rp, _asked, outcome in claims:
        if outcome != h.ACCEPTED:
            assert allocations.for_consumer(store, consumer).consumer is None

    # Shared consumers: every accepted write moved the generation by
    # exactly one from the value it read, no value was handed out twice,
    # and what is stored is the newest accepted write.
    for consumer in shared:
        mine = [u for u in won if u[0] == consumer]
        new_gens = sorted(u[5] for u in mine)
        assert new_gens == list(range(1, len(mine) + 1))
        assert all(u[5] == (u[3] or 0) + 1 for u in mine)
        if mine:
            last = max(mine, key=lambda u: u[5])
            assert consumers.get(store, consumer).generation == last[5]
            assert h.resources_of(store, consumer) == {last[1]: last[2]}
            expected_usage[(last[1], "VCPU")] += last[2]["VCPU"]
    assert {k: used for k, (used, _cap) in state.items() if used} == dict(
        expected_usage)
    assert h.count_rows(store, h.tables.consumers) == len(accepted) + len(
        {u[0] for u in won})
    assert h.count_rows(store, h.tables.allocations) == 3 * len(
        accepted) + len({u[0] for u in won})

    # Each accepted write moved the providers it allocated on once;
    # refused ones moved nothing.
    moves = collections.Counter(c[1] for c in accepted)
    moves.update(u[1] for u in won)
    for rp_uuid in rp_uuids + spare:
        assert h.gen(store, rp_uuid) == start_gens[rp_uuid] + moves[rp_uuid]
