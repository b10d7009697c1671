import pytest

from filters import extra_specs_ops

# (value, requirement, matches)
CASES = {
    # No operator: the whole requirement equals the value.
    "plain-equal": ("1", "1", True),
    "plain-differs": ("12311321", "123", False),
    "plain-keeps-spaces": ("a b", "a b", True),
    "plain-case-matters": ("True", "true", False),
    "plain-unknown-operator": ("x", "<foo> x", False),
    "plain-empty": ("", "", True),
    # = is numeric at least, not equality.
    "ge-more": ("123", "= 12", True),
    "ge-equal": ("12", "= 12", True),
    "ge-float": ("12.5", "= 12.1", True),
    "ge-less": ("2", "= 12", False),
    "ge-not-a-number": ("abc", "= 12", False),
    "ge-no-operand": ("12", "=", False),
    "eq-float": ("12.0", "== 12", True),
    "eq-differs": ("13", "== 12", False),
    "ne-differs": ("13", "!= 12", True),
    "ne-same": ("12.0", "!= 12", False),
    "gte-more": ("13", ">= 12", True),
    "gte-less": ("11", ">= 12", False),
    "lte-less": ("11", "<= 12", True),
    "lte-more": ("13", "<= 12", False),
    # String operators.
    "s-eq": ("abc", "s== abc", True),
    "s-eq-differs": ("abd", "s== abc", False),
    "s-ne": ("abd", "s!= abc", True),
    "s-ne-same": ("abc", "s!= abc", False),
    "s-lt": ("abc", "s< abd", True),
    "s-lt-equal": ("abd", "s< abd", False),
    "s-le-equal": ("abd", "s<= abd", True),
    "s-le-more": ("abe", "s<= abd", False),
    "s-gt": ("abe", "s> abd", True),
    "s-gt-equal": ("abd", "s> abd", False),
    "s-ge-equal": ("abd", "s>= abd", True),
    "s-ge-less": ("abc", "s>= abd", False),
    "s-compares-text-not-numbers": ("9", "s> 10", True),
    # Substrings.
    "in-found": ("12311321", "<in> 11", True),
    "in-missing": ("12310321", "<in> 11", False),
    "in-first-operand-only": ("abc", "<in> zz b", False),
    "in-no-operand": ("abc", "<in>", False),
    "all-in-found": ("['sse', 'avx', 'aes']", "<all-in> avx aes", True),
    "all-in-one-missing": ("['sse', 'avx']", "<all-in> avx aes", False),
    "all-in-no-operand": ("abc", "<all-in>", False),
    # Alternatives.
    "or-first": ("12", "<or> 12 <or> 13", True),
    "or-second": ("13", "<or> 12 <or> 13", True),
    "or-none": ("14", "<or> 12 <or> 13", False),
    "or-whole-word": ("1", "<or> 12 <or> 13", False),
    "or-separator-not-a-choice": ("<or>", "<or> 12 <or> 13", False),
    "or-any-word-separates": ("13", "<or> 12 x 13", True),
    "or-alone": ("12", "<or>", False),
    "or-single": ("12", "<or> 12", True),
}


@pytest.mark.parametrize("value, req, expected", CASES.values(),
                         ids=CASES.keys())
def test_match(value, req, expected):
    assert extra_specs_ops.match(value, req) is expected


@pytest.mark.parametrize("req", ["= 1", "s== a", "<in> a", "<all-in> a",
                                 "<or> a"])
def test_none_never_matches_an_operator(req):
    assert extra_specs_ops.match(None, req) is False


def test_none_against_plain_text():
    assert extra_specs_ops.match(None, "a") is False


def test_every_operator_is_covered():
    used = {req.split()[0] for _v, req, _e in CASES.values()
            if req.split()}
    assert set(extra_specs_ops.OPERATORS) <= used


def test_parse_is_cached():
    assert extra_specs_ops.parse("= 3") is extra_specs_ops.parse("= 3")
