"""Allocation bodies: PUT /allocations/{consumer_uuid} per microversion,
POST /allocations, and the allocations part of POST /reshaper."""

import functools

from placement.api.schemas import common

RESOURCES = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {common.NAME_PATTERN: common.integer(minimum=1)},
    "additionalProperties": False,
}
EXTERNAL_ID = common.string(1, 255)
CONSUMER_TYPE = common.string(1, 255, pattern=common.NAME_PATTERN)
# (additionalProperties, meaningless here, as OpenStack Placement's
# schema has it: a validation error prints it.)
CONSUMER_GENERATION = {"type": ["integer", "null"],
                       "additionalProperties": False}
MAPPINGS = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {common.SUFFIX_1_33: {
        "type": "array", "minItems": 1, "items": common.UUID}},
}

# Before 1.12: a list of {"resource_provider": {"uuid": ...},
# "resources": {...}}.
_LIST_ITEM = common.obj(
    {"resource_provider": common.obj({"uuid": common.UUID},
                                     required=["uuid"], closed_first=True),
     "resources": RESOURCES},
    required=["resource_provider", "resources"])


def _by_provider(min_providers):
    """From 1.12: {provider uuid: {"resources": {...}, "generation": n}}
    (the generation is accepted and ignored)."""
    return {
        "type": "object",
        "minProperties": min_providers,
        "patternProperties": {common.UUID_KEY: common.obj(
            {"generation": common.INTEGER, "resources": RESOURCES},
            required=["resources"])},
        "additionalProperties": False,
    }


def consumer_write(version, min_providers):
    """One consumer's write as PUT (and, from 1.13, POST) take it."""
    props = {"allocations": _by_provider(min_providers),
             "project_id": EXTERNAL_ID, "user_id": EXTERNAL_ID}
    required = ["allocations", "project_id", "user_id"]
    if version >= (1, 28):
        props["consumer_generation"] = CONSUMER_GENERATION
        required.append("consumer_generation")
    if version >= (1, 34):
        props["mappings"] = MAPPINGS
    if version >= (1, 38):
        props["consumer_type"] = CONSUMER_TYPE
        required.append("consumer_type")
    return common.obj(props, required=required, closed_first=True)


@functools.lru_cache
def put(version):
    if version < (1, 12):
        props = {"allocations": {"type": "array", "minItems": 1,
                                 "items": _LIST_ITEM}}
        required = ["allocations"]
        if version >= (1, 8):
            props.update(project_id=EXTERNAL_ID, user_id=EXTERNAL_ID)
            required += ["project_id", "user_id"]
        return common.obj(props, required=required)
    # From 1.28 an empty object removes the consumer's allocations.
    return consumer_write(version, 0 if version >= (1, 28) else 1)


@functools.lru_cache
def post(version, min_consumers=1):
    """{consumer uuid: consumer write}; empty allocations remove."""
    return {
        "type": "object",
        "minProperties": min_consumers,
        "additionalProperties": False,
        "patternProperties": {
            common.UUID_KEY: consumer_write(version, 0)},
    }


def step(version):
    """The versions at which these schemas change."""
    for at in ((1, 38), (1, 34), (1, 28), (1, 12), (1, 8)):
        if version >= at:
            return at
    return (1, 0)
