"""Inventory bodies."""

from placement.api.schemas import common


def _record(with_generation, generation_required, with_class=False):
    props = {
        "total": common.integer(1, common.MAX_INT),
        "reserved": common.integer(0, common.MAX_INT),
        "min_unit": common.integer(1, common.MAX_INT),
        "max_unit": common.integer(1, common.MAX_INT),
        "step_size": common.integer(1, common.MAX_INT),
        "allocation_ratio": {"type": "number",
                             "maximum": common.MAX_RATIO},
    }
    required = ["total"]
    if with_generation:
        props["resource_provider_generation"] = common.INTEGER
        if generation_required:
            required.append("resource_provider_generation")
    if with_class:
        props["resource_class"] = common.string(
            pattern=common.NAME_PATTERN)
        required.append("resource_class")
    return common.obj(props, required=required)


# POST .../inventories: one record naming its class.
POST = _record(True, False, with_class=True)
# PUT .../inventories/{rc}: one record with the provider generation.
PUT_ONE = _record(True, True)
# A record inside PUT .../inventories (the generation is outside).
RECORD = _record(True, False)
# PUT .../inventories: every record by class, and the generation.
PUT_ALL = common.obj(
    {"resource_provider_generation": common.INTEGER,
     # Keys that are not class names still get their record checked;
     # the class lookup then reports them.
     "inventories": {"type": "object",
                     "patternProperties": {common.NAME_PATTERN: RECORD},
                     "additionalProperties": RECORD}},
    required=["resource_provider_generation", "inventories"])
