"""Inventory bodies."""

from placement.api.schemas import common


def _record(required, with_class=False):
    """One inventory record: every field it may carry (the generation
    first), ``required`` of them required."""
    props = {
        "resource_provider_generation": common.INTEGER,
        "total": common.integer(1, common.MAX_INT),
        "reserved": common.integer(0, common.MAX_INT),
        "min_unit": common.integer(1, common.MAX_INT),
        "max_unit": common.integer(1, common.MAX_INT),
        "step_size": common.integer(1, common.MAX_INT),
        "allocation_ratio": {"type": "number",
                             "maximum": common.MAX_RATIO},
    }
    if with_class:
        props["resource_class"] = common.string(
            pattern=common.NAME_PATTERN)
    return common.obj(props, required=required)


# POST .../inventories: one record naming its class.
POST = _record(["total", "resource_class"], with_class=True)
# PUT .../inventories/{rc}: one record with the provider generation.
PUT_ONE = _record(["total", "resource_provider_generation"])
# A record inside PUT .../inventories (the generation is outside).
RECORD = _record(["total"])


def _put_all(other_keys):
    inventories = {"type": "object",
                   "patternProperties": {common.NAME_PATTERN: RECORD}}
    if other_keys is not None:
        inventories["additionalProperties"] = other_keys
    return common.obj(
        {"resource_provider_generation": common.INTEGER,
         "inventories": inventories},
        required=["resource_provider_generation", "inventories"])


# PUT .../inventories: every record by class, and the generation. Keys
# that are not class names pass unchecked, as in OpenStack Placement.
PUT_ALL = _put_all(None)
# What gantt checks once PUT_ALL holds: the records under keys that are
# not class names too (OpenStack Placement answers 500 for some), so
# that the class lookup then reports them.
PUT_ALL_RECORDS = _put_all(RECORD)
