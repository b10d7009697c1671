"""Weighed rows best first, sorted a prefix at a time.

A decision reads the first few rows of its order (the host it claims,
then max_attempts - 1 alternates), rarely more; sorting and converting
every candidate (1,000 by default, every host of a rebuild) cost more
than the rest of ranking them. :func:`best_first` sorts only the rows
that weigh at least as much as the ``at_least``-th best (or just the
first ``at_least`` of them, when the caller does not need every tie),
and the others when an iteration reaches them.

The order is exactly that of a stable sort by descending weight (equal
weights keep their order in ``rows``): the rows weighing at least a
threshold are a prefix of that order, whatever the threshold.
"""

import numpy as np


class BestFirst:
    """Rows best first. ``head`` (a list) is sorted already, and may be
    rearranged by the caller (shuffled ties, a host subset pick); the
    rest is sorted on first use. When asked (``keep``: the decision
    log reads them), ``head_at`` and ``head_weights`` are lists beside
    the head: each row's position in the rows ordered, and its weight;
    a caller that rearranges the head rearranges them alike."""

    def __init__(self, head, rest_rows=None, rest_weights=None,
                 head_at=None, head_weights=None):
        self.head = head
        self.head_at = head_at
        self.head_weights = head_weights
        # False once the caller moved a row out of weight order (a host
        # subset pick); shuffling tied rows keeps the head sorted.
        self.by_weight = True
        self._rest_rows = rest_rows
        self._rest_weights = rest_weights
        self._rest = None if rest_rows is not None and len(rest_rows) \
            else []

    def rest(self):
        if self._rest is None:
            order = np.argsort(-self._rest_weights, kind="stable")
            self._rest = self._rest_rows[order].tolist()
        return self._rest

    def __iter__(self):
        yield from self.head
        yield from self.rest()

    def __len__(self):
        rest = 0 if self._rest_rows is None else len(self._rest_rows)
        return len(self.head) + rest


def best_first(rows, weights, at_least, ties=True, keep=False):
    """BestFirst of ``rows`` by ``weights`` (arrays of one length), with
    at least the first ``at_least`` rows (all of them when fewer) in its
    head. With ``ties``, the head also holds every row that weighs the
    same as the last of those (a caller shuffling the rows tied with the
    best needs them all); without, ties do not grow the head past
    ``at_least`` rows (an empty cloud ties every host). ``keep``: with
    the head's positions and weights (BestFirst.head_at,
    head_weights), found here for a few cheap calls while the arrays
    are at hand, where a reader afterwards would search for them."""
    rows = np.asarray(rows)
    weights = np.asarray(weights, np.float64)
    n = len(rows)
    if n <= at_least:
        return _sorted(rows, weights, keep)
    # The at_least-th largest weight: every row weighing at least that
    # much goes first. NaN weights sort last (as argsort does), and a NaN
    # threshold (fewer numbers than at_least) sorts everything at once.
    threshold = _threshold(weights, at_least)
    if np.isnan(threshold):
        return _sorted(rows, weights, keep)
    first = weights >= threshold
    if not ties:
        extra = int(np.count_nonzero(first)) - at_least
        if extra > 0:
            # Only the earliest rows at the threshold, where a stable
            # sort puts them; the later ones stay in the rest, in their
            # order, ahead of everything lighter.
            at = np.flatnonzero(weights == threshold)
            first[at[len(at) - extra:]] = False
    rest = ~first
    if not keep:
        return _sorted(rows[first], weights[first], False,
                       rows[rest], weights[rest])
    # The array's own method: np.flatnonzero wraps it in two dispatches.
    at = first.nonzero()[0]
    return _sorted(rows.take(at), weights.take(at), True, rows[rest],
                   weights[rest], at)


def _threshold(weights, at_least):
    """The ``at_least``-th largest of ``weights`` (NaN last)."""
    # When that many rows tie with the best (an empty or evenly filled
    # cloud), it is the best: numpy's introselect takes ten times longer
    # than usual to find a k-th value inside a run of equal extremes
    # (1 ms instead of 0.1 ms over 10,000 rows).
    best = weights.max()
    if not np.isnan(best) and \
            np.count_nonzero(weights == best) >= at_least:
        return best
    return -np.partition(-weights, at_least - 1)[at_least - 1]


def _sorted(rows, weights, keep, rest_rows=None, rest_weights=None,
            at=None):
    """A BestFirst whose head is ``rows`` sorted; ``at``: their
    positions among all the rows (None: the same as in ``rows``)."""
    order = np.argsort(-weights, kind="stable")
    if not keep:
        return BestFirst(rows[order].tolist(), rest_rows, rest_weights)
    return BestFirst(rows[order].tolist(), rest_rows, rest_weights,
                     (order if at is None else at.take(order)).tolist(),
                     weights[order].tolist())
