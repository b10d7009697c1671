"""Building blocks of the schemas."""

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


def string(min_length=None, max_length=None, pattern=None):
    schema = {"type": "string"}
    if min_length is not None:
        schema["minLength"] = min_length
    if max_length is not None:
        schema["maxLength"] = max_length
    if pattern is not None:
        schema["pattern"] = pattern
    return schema


def integer(minimum=None, maximum=None):
    # The maximum first, as in OpenStack Placement's schemas: a
    # validation error prints the schema.
    schema = {"type": "integer"}
    if maximum is not None:
        schema["maximum"] = maximum
    if minimum is not None:
        schema["minimum"] = minimum
    return schema


def obj(properties, required=(), pattern_properties=None,
        additional=False, min_properties=None):
    """An object schema; no properties beyond those named unless
    ``additional``."""
    schema = {"type": "object", "properties": dict(properties),
              "additionalProperties": additional}
    if required:
        schema["required"] = list(required)
    if pattern_properties:
        schema["patternProperties"] = dict(pattern_properties)
    if min_properties is not None:
        schema["minProperties"] = min_properties
    return schema


def nullable(schema):
    return {"anyOf": [schema, {"type": "null"}]}
