"""benchmarks.scheduler.paired_extra: the decision log's extra from
rounds of two batches, each round compared on its own."""

from benchmarks import scheduler as bench


def test_a_steady_extra_is_found_whatever_the_drift():
    # The machine's speed moves by 1.8 times from round to round; the
    # log adds 5 % to every round.
    off = [1.0, 1.8, 1.1, 1.7, 1.0, 1.5, 1.2, 1.8, 1.0]
    on = [x * 1.05 for x in off]
    extra, interval = bench.paired_extra(off, on)
    assert extra == 5.0
    assert interval == [5.0, 5.0]


def test_the_interval_holds_the_median_and_widens_with_the_spread():
    off = [1.0] * 41
    # Rounds spread evenly around an extra of 5 %: +-1 and +-10 points.
    narrow = [1.04 + 0.0005 * k for k in range(41)]
    wide = [0.95 + 0.005 * k for k in range(41)]
    extra, (low, high) = bench.paired_extra(off, narrow)
    assert extra == 5.0 and low <= 5.0 <= high
    _, (wide_low, wide_high) = bench.paired_extra(off, wide)
    assert wide_high - wide_low > high - low
    assert wide_low < 5.0 < wide_high
