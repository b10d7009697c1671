"""Building blocks of the schemas.

A validation error prints the part of the schema that failed (the whole
schema when the body's top level is wrong), keys in the order the
schema's dict holds them. The schemas are built so that every one, at
every microversion, is the same dict, in the same order, as the one
OpenStack Placement 16 validates that request with: its 400s then read
the same (tests/functional/test_api_placement_answers.py).
"""

MAX_INT = 2147483647
# Largest allocation_ratio a single-precision SQL float holds: OpenStack
# Placement's schema bound, kept so that its refusals read the same.
# gantt's own, lower bound (placement.objects.inventories.MAX_RATIO) is
# checked on every write, REST or not, with its own 400.
MAX_RATIO = 3.40282e38

# Resource class and trait names: upper case letters, digits, underscore.
NAME_PATTERN = "^[A-Z0-9_]+$"
CUSTOM_PATTERN = "^CUSTOM_[A-Z0-9_]+$"
# Keys that are provider or consumer uuids (any case, dashed).
UUID_KEY = "^[0-9a-fA-F-]{36}$"
# Request group suffixes: numbers before 1.33, then up to 64 of
# [a-zA-Z0-9_-].
SUFFIX = "[1-9][0-9]*"
SUFFIX_1_33 = "[a-zA-Z0-9_-]{1,64}"

UUID = {"type": "string", "format": "uuid"}
STRING = {"type": "string"}
INTEGER = {"type": "integer"}
# Query parameters added from 1.17 on name their type in a list.
STRING_LIST_TYPE = {"type": ["string"]}


def string(min_length=None, max_length=None, pattern=None):
    """A string schema: the pattern, then the length bounds."""
    schema = {"type": "string"}
    if pattern is not None:
        schema["pattern"] = pattern
    if min_length is not None:
        schema["minLength"] = min_length
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


def integer(minimum=None, maximum=None):
    """An integer schema: the maximum, then the minimum."""
    schema = {"type": "integer"}
    if maximum is not None:
        schema["maximum"] = maximum
    if minimum is not None:
        schema["minimum"] = minimum
    return schema


def obj(properties, required=(), pattern_properties=None,
        additional=False, closed_first=False):
    """An object schema; no properties beyond those named unless
    ``additional``. Keys in the order type, properties, required,
    additionalProperties, patternProperties; ``closed_first`` puts
    additionalProperties before required."""
    schema = {"type": "object", "properties": dict(properties)}
    if closed_first:
        schema["additionalProperties"] = additional
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = additional
    if pattern_properties:
        schema["patternProperties"] = dict(pattern_properties)
    return schema


def nullable(schema):
    return {"anyOf": [schema, {"type": "null"}]}
