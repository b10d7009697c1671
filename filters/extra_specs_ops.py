"""Matching a value against an extra-spec requirement, as Nova's filters
do for flavor extra specs and aggregate metadata.

A requirement is the extra spec's value. Its first word may be an
operator, the rest its operands:

- ``= N``: numeric, the value is at least N (not equality: a host with
  more of something passes);
- ``== N``, ``!= N``, ``>= N``, ``<= N``: numeric comparisons;
- ``s== S``, ``s!= S``, ``s< S``, ``s<= S``, ``s> S``, ``s>= S``: string
  comparisons;
- ``<in> S``: S is a substring of the value;
- ``<all-in> S1 S2 ...``: every S is a substring of the value;
- ``<or> A <or> B ...``: the value equals one of A, B... (every other
  word is taken as a separator, whatever it says).

Without an operator the whole requirement must equal the value. An
operator without an operand, or a value of None, never matches.

Where Nova raises (a numeric operator with a value or operand that is
not a number, ``<or>`` alone) we answer "no match" instead.
"""

import functools
import operator


def _numeric(compare):
    def check(value, operand):
        try:
            return compare(float(value), float(operand))
        except (TypeError, ValueError):
            return False
    return check


# operator -> check(value, first operand)
_BINARY = {
    "=": _numeric(operator.ge),
    "==": _numeric(operator.eq),
    "!=": _numeric(operator.ne),
    ">=": _numeric(operator.ge),
    "<=": _numeric(operator.le),
    "s==": operator.eq,
    "s!=": operator.ne,
    "s<": operator.lt,
    "s<=": operator.le,
    "s>": operator.gt,
    "s>=": operator.ge,
    "<in>": lambda value, operand: operand in value,
}
OPERATORS = tuple(_BINARY) + ("<all-in>", "<or>")


@functools.lru_cache(maxsize=1024)
def parse(req):
    """A one-argument predicate for requirement ``req`` (parsed once)."""
    words = req.split()
    op = words[0] if words else None
    operands = words[1:]
    if op not in OPERATORS:
        return lambda value: value == req
    if op == "<or>":
        # Nova reads alternatives at even positions after the operator.
        choices = frozenset(operands[::2])
        return lambda value: value is not None and value in choices
    if not operands:
        return lambda value: False
    if op == "<all-in>":
        return lambda value: value is not None and all(
            word in value for word in operands)
    check, operand = _BINARY[op], operands[0]
    return lambda value: value is not None and check(value, operand)


def match(value, req):
    """Whether string ``value`` satisfies requirement ``req``."""
    return parse(req)(value)
