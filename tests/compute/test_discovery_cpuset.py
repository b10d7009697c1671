import pytest

from compute.discovery import CpuSetError, format_cpu_set, parse_cpu_set


@pytest.mark.parametrize("spec, ids", [
    ("0-3,^2", {0, 1, 3}),
    ("0", {0}),
    ("0-3, 8 ,10-11", {0, 1, 2, 3, 8, 10, 11}),
    ("0-15,32-47", set(range(16)) | set(range(32, 48))),
    ("0-7,^2-3,^6", {0, 1, 4, 5, 7}),
    ("", set()),
    ("4-4", {4}),
])
def test_parse(spec, ids):
    assert parse_cpu_set(spec) == frozenset(ids)


@pytest.mark.parametrize("spec, message", [
    ("a", "'a' is not a CPU id or a range"),
    ("3-1", "range '3-1' ends before it starts"),
    ("0,,2", "empty item"),
    ("^2", "only exclusions"),
    ("1-", "'1-' is not a CPU id"),
    ("-1", "is not a CPU id"),
    (5, "not a string"),
])
def test_errors(spec, message):
    with pytest.raises(CpuSetError, match=message):
        parse_cpu_set(spec)


def test_format():
    assert format_cpu_set({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"
    assert format_cpu_set(set()) == ""
