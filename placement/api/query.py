"""Parsers of the query parameters GET /resource_providers and GET
/allocation_candidates share: resources, required (traits), member_of
(aggregates) and in_tree. Each returns plain values or raises a 400."""

import uuid as uuidlib

from placement import errors as placement_errors
from placement.api import errors, util
from placement.objects import inventories

RESOURCES_FORM = ("Badly formed resources parameter. Expected resources "
                  "query string parameter in form: "
                  "?resources=VCPU:2,MEMORY_MB:1024.")

MAX_AMOUNT = inventories.MAX_INT + 1

# Versions that widened what the parameters accept.
FORBIDDEN_TRAITS_SINCE = (1, 22)
MULTIPLE_MEMBER_OF_SINCE = (1, 24)
FORBIDDEN_AGGREGATES_SINCE = (1, 32)
ANY_TRAITS_SINCE = (1, 39)


def resources(value):
    """'VCPU:2,MEMORY_MB:1024' -> {'VCPU': 2, 'MEMORY_MB': 1024}."""
    if not value.strip():
        raise errors.bad_request(f"{RESOURCES_FORM} Got: empty string.")
    amounts = {}
    for item in value.split(","):
        parts = item.split(":")
        if len(parts) != 2:
            raise errors.bad_request(f"{RESOURCES_FORM} Got: {item}.")
        name, amount = parts
        try:
            amount = int(amount)
        except ValueError:
            raise errors.bad_request(
                f"Requested resource {name} expected positive integer "
                f"amount. Got: {amount}.") from None
        if amount < 1:
            raise errors.bad_request(
                f"Requested resource {name} requires amount >= 1. Got: "
                f"{amount}.")
        # No inventory allows more than MAX_INT in one allocation
        # (max_unit), so a larger amount matches nothing either way; the
        # bound keeps it in the index's integer range.
        amounts[name] = min(amount, MAX_AMOUNT)
    return amounts


def _bad_traits(detail):
    return errors.bad_request(f"Invalid query string parameters: {detail}")


def traits(value, allow_forbidden, allow_any):
    """One 'required' value -> ([frozenset of any-of names], {forbidden}).

    'A,B,!C' means A and B and not C (forbidden from 1.22); 'in:A,B'
    means A or B (from 1.39, without '!').
    """
    if value.startswith("in:"):
        if not allow_any:
            raise _bad_traits(
                f"The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported "
                f"since microversion 1.39. Got: {value}")
        names = {name.strip() for name in value[3:].split(",")}
        if not all(names):
            raise _bad_traits(
                f"Expected 'required' parameter value of the form: "
                f"in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: "
                f"{value}")
        if any(name.startswith("!") for name in names):
            raise _bad_traits(
                f"The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not "
                f"support forbidden traits. Got: {value}")
        return [frozenset(names)], set()
    names = [name.strip() for name in value.split(",")]
    # Any run of leading '!' means forbidden, as upstream accepts it.
    forbidden = {name.lstrip("!") for name in names if name.startswith("!")}
    if not all(names) or not all(forbidden):
        form = ("HW_CPU_X86_VMX,!CUSTOM_MAGIC" if allow_forbidden
                else "HW_CPU_X86_VMX,CUSTOM_MAGIC")
        raise _bad_traits(
            f"Expected 'required' parameter value of the form: {form}. "
            f"Got an empty trait in: {value}")
    if forbidden and not allow_forbidden:
        raise _bad_traits(
            f"Expected 'required' parameter value of the form: "
            f"HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: {value}")
    required = [frozenset([name]) for name in names
                if not name.startswith("!")]
    return required, forbidden


def required_traits(req, key):
    """All values of ``key`` (required, required1, ...) ->
    (tuple of any-of frozensets, frozenset of forbidden names). Before
    1.39 only the last value counts."""
    version = req.version
    values = req.query.getall(key)
    if version < ANY_TRAITS_SINCE:
        values = values[-1:]
    required, forbidden = [], set()
    for value in values:
        any_of, nots = traits(value, version >= FORBIDDEN_TRAITS_SINCE,
                              version >= ANY_TRAITS_SINCE)
        required += any_of
        forbidden |= nots
    # The same any-of set twice asks nothing more.
    return tuple(dict.fromkeys(required)), frozenset(forbidden)


def _member_of_value(value):
    """One member_of value -> (required any-of set, forbidden set)."""
    if "," in value and not value.startswith(("in:", "!in:")):
        raise errors.bad_request(
            f"Multiple values for 'member_of' must be prefixed with the "
            f"'in:' or '!in:' keyword using the valid microversion. Got: "
            f"{value}")
    required, forbidden = set(), set()
    if value.startswith("!in:"):
        forbidden = set(value[4:].split(","))
    elif value.startswith("!"):
        forbidden = {value[1:]}
    elif value.startswith("in:"):
        required = set(value[3:].split(","))
    else:
        required = {value}
    for agg in required | forbidden:
        if not util.is_uuid_like(agg):
            raise errors.bad_request(
                f"Invalid query string parameters: Expected 'member_of' "
                f"parameter to contain valid UUID(s). Got: {agg}")
    return required, forbidden


def _canonical(agg):
    return str(uuidlib.UUID(agg))


def member_of(req, key):
    """All values of ``key`` (member_of, member_of1, ...) -> (tuple of
    any-of frozensets of aggregate uuids, frozenset of forbidden ones)."""
    version = req.version
    values = req.query.getall(key)
    if len(values) > 1 and version < MULTIPLE_MEMBER_OF_SINCE:
        raise errors.bad_request(
            f"Multiple {key} parameters are not supported")
    required, forbidden = [], set()
    for value in values:
        any_of, nots = _member_of_value(value)
        if any_of:
            required.append(frozenset(_canonical(a) for a in any_of))
        if nots:
            if version < FORBIDDEN_AGGREGATES_SINCE:
                raise errors.bad_request(
                    f"Forbidden {key} parameters are not supported in the "
                    f"specified microversion")
            forbidden |= {_canonical(a) for a in nots}
    return tuple(required), frozenset(forbidden)


def in_tree(value):
    value = value.strip()
    if not util.is_uuid_like(value):
        raise errors.bad_request(
            f"Invalid query string parameters: Expected 'in_tree' parameter "
            f"to be a format of uuid. Got: {value}")
    return _canonical(value)


def unknown_name(exc):
    """The 400 for a resource class or trait a query names that does not
    exist."""
    if isinstance(exc, placement_errors.ResourceClassNotFound):
        return errors.bad_request(
            f"Invalid resource class in resources parameter: {exc.message}")
    return errors.bad_request(
        f'Invalid trait(s) in "required" parameter: {exc.message}')
