"""best_first: a stable sort by descending weight, sorted a prefix at a
time; the prefix holds at least the rows asked for and every row tied
with its last."""

import random

import hypothesis
import numpy as np
import pytest
from hypothesis import strategies as st
from oslo_config import cfg

from scheduler import best_first
from scheduler import conf as scheduler_conf
from scheduler.pipeline import ranking

WEIGHTS = st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0, np.nan])
                   | st.floats(-10, 10), min_size=0, max_size=60)


def full_sort(rows, weights):
    return rows[np.argsort(-weights, kind="stable")].tolist()


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(WEIGHTS, st.integers(1, 70), st.randoms(), st.booleans())
def test_same_order_as_a_full_stable_sort(weights, at_least, rnd, ties):
    weights = np.array(weights, np.float64)
    rows = np.array(rnd.sample(range(1000), len(weights)), np.int64)
    ordered = best_first.best_first(rows, weights, at_least, ties=ties)
    assert list(ordered) == full_sort(rows, weights)
    assert list(ordered) == list(ordered)  # iterating twice
    assert len(ordered) == len(rows)
    head = ordered.head
    assert len(head) >= min(at_least, len(rows))
    if not ties:
        assert len(head) == min(at_least, len(rows)) or \
            np.isnan(weights).sum() > len(rows) - at_least
    elif len(head) < len(rows):
        by_row = dict(zip(rows.tolist(), weights.tolist(), strict=True))
        last = by_row[head[-1]]
        rest = [by_row[r] for r in list(ordered)[len(head):]]
        # Nothing left out weighs as much as the head's last row.
        assert all(not (w >= last) for w in rest)


def test_the_rest_is_sorted_only_when_reached():
    weights = np.arange(100, dtype=np.float64)
    ordered = best_first.best_first(np.arange(100), weights, 5)
    assert ordered.head == [99, 98, 97, 96, 95]
    assert ordered._rest is None
    assert next(iter(ordered)) == 99
    assert ordered._rest is None
    assert list(ordered)[5:8] == [94, 93, 92]
    assert ordered._rest is not None


def test_without_ties_the_head_stops_at_the_rows_asked_for():
    # An empty cloud: every host weighs the same.
    rows = np.arange(1000, 0, -1)
    ordered = best_first.best_first(rows, np.zeros(1000), 4, ties=False)
    assert ordered.head == [1000, 999, 998, 997]
    assert list(ordered)[:6] == [1000, 999, 998, 997, 996, 995]
    tied = best_first.best_first(rows, np.zeros(1000), 4)
    assert len(tied.head) == 1000


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(WEIGHTS, st.integers(1, 60))
def test_threshold_is_the_kth_largest(weights, at_least):
    weights = np.array(weights, np.float64)
    hypothesis.assume(len(weights) >= at_least)
    expected = -np.sort(-weights)[at_least - 1]  # NaN sorts last
    found = best_first._threshold(weights, at_least)
    assert found == expected or (np.isnan(found) and np.isnan(expected))


def test_threshold_of_rows_tied_with_the_best():
    # Half of the rows tie with the best: the best is the threshold,
    # whether a NaN is there too or not.
    weights = np.where(np.arange(1000) % 2, 1.0, np.linspace(0, 0.9, 1000))
    assert best_first._threshold(weights, 32) == 1.0
    weights[3] = np.nan
    assert best_first._threshold(weights, 32) == 1.0
    assert best_first._threshold(weights, 501) < 1.0


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(WEIGHTS, st.integers(1, 70), st.randoms(), st.booleans())
def test_kept_positions_and_weights_are_the_heads(weights, at_least, rnd,
                                                  ties):
    weights = np.array(weights, np.float64)
    rows = np.array(sorted(rnd.sample(range(1000), len(weights))), np.int64)
    plain = best_first.best_first(rows, weights, at_least, ties=ties)
    kept = best_first.best_first(rows, weights, at_least, ties=ties,
                                 keep=True)
    assert plain.head_at is None and plain.head_weights is None
    assert kept.head == plain.head
    assert list(kept) == list(plain)
    assert kept.head_at == rows.searchsorted(kept.head).tolist()
    np.testing.assert_array_equal(kept.head_weights,
                                  weights[kept.head_at])


@pytest.mark.parametrize("subset, shuffle", [
    (1, False), (1, True), (3, False), (3, True), (40, True)])
def test_keeping_the_heads_weights_leaves_the_order_alone(subset, shuffle):
    # The same draws, kept or not: the ranking's order does not depend
    # on whether the decision log reads it.
    conf = cfg.ConfigOpts()
    scheduler_conf.register_opts(conf)
    conf([], default_config_files=[])
    conf.set_override("host_subset_size", subset, group="filter_scheduler")
    conf.set_override("shuffle_best_same_weighed_hosts", shuffle,
                      group="filter_scheduler")
    rnd = random.Random(7)
    for _ in range(50):
        n = rnd.randrange(1, 200)
        rows = np.array(sorted(rnd.sample(range(1000), n)), np.int64)
        weights = np.array([rnd.choice([0.0, 1.0, 2.0, rnd.random()])
                            for _ in range(n)])
        seed = rnd.random()
        orders = []
        for keep in (False, True):
            rank = ranking.Rank(None, None, conf, random.Random(seed), None)
            orders.append(rank._order(rows, weights, keep))
        plain, kept = orders
        assert kept.head == plain.head
        assert kept.by_weight == plain.by_weight
        assert kept.head_at == rows.searchsorted(kept.head).tolist()
        assert kept.head_weights == weights[kept.head_at].tolist()
