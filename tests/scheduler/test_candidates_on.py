"""RequestState.candidates_on: the candidates anchored on a host row,
the same whether read from the by-row index (a candidate a host) or
found by comparing every candidate's host with the row."""

import hypothesis
import numpy as np
from hypothesis import strategies as st

from placement.candidates import result as result_mod
from scheduler.pipeline import state as state_mod

SIZE = 40


def new_state(hosts):
    state = state_mod.RequestState(
        spec=None, instance_uuids=[], count=1, project_id=None,
        user_id=None, host_request=None)
    hosts = np.array(hosts, np.int64)
    state.hold_candidates(None, hosts,
                          result_mod.distinct_rows(hosts, SIZE), SIZE)
    return state


def scanned(hosts, row):
    found = [k for k, host in enumerate(hosts) if host == row]
    return found or ()


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.lists(st.integers(-1, SIZE - 1), max_size=60))
def test_the_candidates_of_every_row_as_a_scan_finds_them(hosts):
    state = new_state(hosts)
    for row in range(SIZE):
        assert list(state.candidates_on(row)) == list(scanned(hosts, row))


@hypothesis.settings(max_examples=100, deadline=None)
@hypothesis.given(st.permutations(range(SIZE)), st.integers(0, SIZE))
def test_a_candidate_a_host_is_read_by_row(rows, count):
    hosts = rows[:count]
    state = new_state(hosts)
    assert state.candidate_by_row is not None
    for row in range(SIZE):
        assert list(state.candidates_on(row)) == list(scanned(hosts, row))


def test_several_candidates_on_a_host_are_found_by_a_scan():
    state = new_state([3, 3, -1, 4])
    assert state.candidate_by_row is None
    assert state.candidates_on(3) == [0, 1]
    assert state.candidates_on(4) == [3]
    assert state.candidates_on(7) == ()


def test_rows_without_a_candidate_find_none_whatever_the_index_holds():
    hosts = [5, 2, 7]
    state = new_state(hosts)
    by_row = state.candidate_by_row
    # The index is left uninitialised where no candidate is: make those
    # places name real candidates (and values out of range).
    for row in range(SIZE):
        if row not in hosts:
            by_row[row] = row % 5 - 1
    for row in range(SIZE):
        assert list(state.candidates_on(row)) == list(scanned(hosts, row))


def test_no_candidates_known_finds_none():
    state = state_mod.RequestState(
        spec=None, instance_uuids=[], count=1, project_id=None,
        user_id=None, host_request=None)
    assert state.candidates_on(0) == ()


def test_a_row_past_the_table_held_finds_none():
    state = new_state([5, 2, 7])
    assert state.candidates_on(SIZE) == ()
    assert state.candidates_on(SIZE + 1000) == ()
