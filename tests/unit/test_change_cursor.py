"""Following a change log whose sequence numbers commit out of order."""

from placement.db import change_cursor


class Clock:
    now = 0.0

    def __call__(self):
        return self.now


def test_late_commits_are_asked_for_again_until_they_show_up():
    cursor = change_cursor.ChangeCursor(Clock())
    cursor.start(2, {1, 2})
    assert cursor.low() == 2
    # 4 committed before 3: 3 is a gap, read again next time.
    assert cursor.is_new(4)
    cursor.advance({4})
    assert cursor.gaps.keys() == {3} and cursor.low() == 2
    assert cursor.is_new(3) and not cursor.is_new(4)
    cursor.advance({3})
    assert not cursor.gaps and cursor.low() == 4


def test_gaps_of_a_full_load_and_their_timeout():
    clock = Clock()
    cursor = change_cursor.ChangeCursor(clock)
    cursor.start(5, {1, 2, 4, 5})
    assert cursor.gaps.keys() == {3}
    clock.now = change_cursor.GAP_TIMEOUT + 1  # rolled back after all
    cursor.advance(set())
    assert not cursor.gaps


def test_own_commits_are_not_applied_twice():
    cursor = change_cursor.ChangeCursor(Clock())
    cursor.start(1, {1})
    assert cursor.take_own([2]) == [2]
    assert not cursor.is_new(2)
    cursor.advance({2, 3})  # a sync then reads 2 (and 3)
    assert cursor.watermark == 3 and not cursor.applied_above
    assert cursor.take_own([3]) == []  # the sync applied it first


def test_pruned_rows_the_reader_needed_mean_reload():
    cursor = change_cursor.ChangeCursor(Clock())
    cursor.start(10, set(range(1, 11)))
    assert not cursor.lost(11) and not cursor.lost(0)
    assert cursor.lost(12)
    cursor.advance({12})  # 11 is a gap now
    assert not cursor.lost(11) and cursor.lost(12)


def test_pruned_numbers_are_no_gaps():
    cursor = change_cursor.ChangeCursor(Clock())
    # Rows 1-6 were pruned; 7 and 9 are present, 8 is in flight.
    cursor.start(9, {7, 9}, pruned_below=7)
    assert cursor.gaps.keys() == {8}
    assert not cursor.lost(7)
    # Everything pruned, log empty: nothing to wait for, nothing lost.
    empty = change_cursor.ChangeCursor(Clock())
    empty.start(0, set(), pruned_below=12)
    assert not empty.gaps and empty.low() == 11 and not empty.lost(12)


def test_own_commits_next_to_the_watermark_move_it():
    cursor = change_cursor.ChangeCursor(Clock())
    cursor.start(1, {1})
    for seq in range(2, 1002):  # a writer that never syncs
        assert cursor.take_own([seq]) == [seq]
    assert cursor.watermark == 1001 and not cursor.applied_above
    assert cursor.low() == 1001 and not cursor.is_new(1001)
    # Another process holds 1002 (in flight): own 1003 and 1004 wait
    # above it; once a sync reads 1002, they are all behind.
    assert cursor.take_own([1003, 1004]) == [1003, 1004]
    assert cursor.watermark == 1001 and cursor.applied_above == {1003, 1004}
    assert cursor.is_new(1002) and not cursor.is_new(1004)
    cursor.advance({1002, 1003, 1004})
    assert cursor.watermark == 1004 and not cursor.applied_above
