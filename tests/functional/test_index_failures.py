"""The candidates index never serves a state it failed to reach (every
engine).

A failure while applying a change - an own commit, or a sync - leaves
arrays that may hold part of it, and the change already counts as read.
The index then loads everything again at the next sync, and its next
answer is the one a fresh index on the database gives. A row past the
inventory bounds (written around the object layer) is held within the
index's range rather than wrapped around.
"""

import logging
import uuid as uuidlib

import pytest

from placement.candidates import engine as engine_mod
from placement.candidates import index as index_mod
from placement.candidates import request as rq
from placement.db import store as store_mod
from placement.db import tables
from placement.objects import allocations, providers, traits
from tests.functional import alloc_helpers as h

INDEX_LOG = "placement.candidates.index"


def _request(resources, required=()):
    return rq.CandidatesRequest(groups=(rq.RequestGroup(
        resources=resources,
        required_traits=tuple(frozenset([t]) for t in required)),))


VCPU1 = _request({"VCPU": 1})


def _answer(engine, request=VCPU1):
    """What a search answers, in a form to compare between engines."""
    result = engine.find(request)
    return (sorted(repr(a) for a in result.allocation_requests()),
            result.provider_summaries())


def _fresh_answer(store, request=VCPU1):
    """The answer of a new index, loaded from the database alone."""
    engine = engine_mod.CandidatesEngine(store)
    try:
        return _answer(engine, request)
    finally:
        engine.close()


class FailOnce:
    """Replaces ``obj.name`` by a call that runs the original (or not,
    ``after``) and then raises, once."""

    def __init__(self, monkeypatch, obj, name, after=False):
        self.calls = 0
        original = getattr(obj, name)

        def fail(*args, **kwargs):
            self.calls += 1
            if self.calls > 1:
                return original(*args, **kwargs)
            if after:
                original(*args, **kwargs)
            raise RuntimeError("injected failure")

        monkeypatch.setattr(obj, name, fail)


@pytest.fixture
def engine(store):
    made = engine_mod.CandidatesEngine(store)
    yield made
    made.close()


def _consumer():
    return str(uuidlib.uuid4())


def _claim(db, amounts):
    """One commit allocating {provider uuid: VCPU} to a new consumer."""
    allocations.replace(db, [allocations.ConsumerAllocations(
        _consumer(), {rp: {"VCPU": n} for rp, n in amounts.items()},
        "p", "u")])


def _warnings(caplog):
    return [r for r in caplog.records
            if r.name == INDEX_LOG and r.levelno == logging.WARNING]


def test_failed_commit_apply_reloads(store, engine, monkeypatch, caplog):
    """The issue's case: applying an own commit fails part way (after
    the first provider's usage). The commit is not counted as applied:
    the next answer is a fresh index's, the second provider's usage
    included; one warning says why."""
    a = h.provider(store, "a", VCPU=8)
    b = h.provider(store, "b", VCPU=8)
    _answer(engine)
    failing = FailOnce(monkeypatch, engine.index, "_apply_commit",
                       after=True)
    with caplog.at_level(logging.WARNING):
        _claim(store, {a: 1, b: 4})
    assert failing.calls == 1
    [warning] = _warnings(caplog)
    assert "injected failure" in warning.getMessage()
    assert "RuntimeError" in warning.getMessage()
    assert not engine.index.loaded
    answer = _answer(engine)
    assert answer == _fresh_answer(store)
    assert answer[1][b].resources == {"VCPU": (8, 4)}
    assert answer[1][a].resources == {"VCPU": (8, 1)}


def test_failure_before_any_change_reloads_too(store, engine, monkeypatch,
                                               caplog):
    """Applying fails before touching anything: reloaded all the same
    (the change was taken as read), and later commits apply again."""
    a = h.provider(store, "a", VCPU=8)
    _answer(engine)
    FailOnce(monkeypatch, engine.index, "_apply_commit")
    with caplog.at_level(logging.WARNING):
        _claim(store, {a: 3})
    assert len(_warnings(caplog)) == 1
    assert _answer(engine)[1][a].resources == {"VCPU": (8, 3)}
    assert engine.index.loaded
    _claim(store, {a: 2})
    assert _answer(engine) == _fresh_answer(store)
    assert _answer(engine)[1][a].resources == {"VCPU": (8, 5)}


@pytest.fixture
def other(store):
    """A second store on the same database: another process's writes."""
    second = store_mod.Store(store.conf)
    yield second
    second.dispose()


def test_failed_sync_reloads(store, other, engine, monkeypatch, caplog):
    """A sync fails after writing another process's trait change into
    the arrays but before the derived structures learn of it. The
    search fails; the next one loads everything and sees the trait (a
    retry of the same providers alone would have kept the stale mask of
    who has it)."""
    a = h.provider(store, "a", VCPU=8)
    h.provider(store, "b", VCPU=8)
    traits.ensure(store, "CUSTOM_FAST")
    wants_fast = _request({"VCPU": 1}, required=["CUSTOM_FAST"])
    assert _answer(engine, wants_fast)[0] == []
    traits.set_for_provider(other, a, None, ["CUSTOM_FAST"])
    FailOnce(monkeypatch, engine.index, "_link", after=True)
    with caplog.at_level(logging.WARNING):
        with pytest.raises(RuntimeError, match="injected failure"):
            engine.find(wants_fast)
    [warning] = _warnings(caplog)
    assert "a sync" in warning.getMessage()
    answer = _answer(engine, wants_fast)
    assert answer == _fresh_answer(store, wants_fast)
    assert list(answer[1]) == [a]


def test_row_past_the_bounds_is_held(store, engine, caplog):
    """A ratio of 3.4e38 written around the object layer (as an older
    release or a hand edit could have): the provider shows the largest
    capacity the index holds, not a wrapped negative one, and a commit
    that touches it and another provider applies to both."""
    a = h.provider(store, "a", VCPU=8)
    b = h.provider(store, "b", VCPU=8)
    inv = tables.inventories
    with store.engine.begin() as conn:
        conn.execute(inv.update()
                     .where(inv.c.resource_provider_id
                            == providers.get(store, a).id)
                     .values(allocation_ratio=3.4e38))
    huge = int(index_mod.CAP_LIMIT)
    assert _answer(engine)[1][a].resources == {"VCPU": (huge, 0)}
    with caplog.at_level(logging.WARNING):
        _claim(store, {a: 1, b: 4})
    assert caplog.records == []  # nothing failed, nothing to reload
    assert engine.index.loaded
    answer = _answer(engine)
    assert answer == _fresh_answer(store)
    assert answer[1][a].resources == {"VCPU": (huge, 1)}
    assert answer[1][b].resources == {"VCPU": (8, 4)}


@pytest.mark.parametrize("ratio,expected", [
    (3.4e38, index_mod.CAP_LIMIT), (float("inf"), index_mod.CAP_LIMIT),
    (float("nan"), 0.0), (-2.0, 0.0), (-0.1, 0.0), (1.5, 12.0),
    (2147483647.0, 8 * 2147483647.0)])
def test_capacity_is_held_in_range(ratio, expected):
    """What the index keeps of (total - reserved) * ratio: from 0 (the
    capacity placement shows for anything above -1) to CAP_LIMIT."""
    assert index_mod.capacity(10, 2, ratio) == expected
