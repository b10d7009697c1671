"""Trait names, provider trait bodies and the GET /traits query."""

from placement.api.schemas import common

TRAIT = common.string(1, 255)
CUSTOM_TRAIT = common.string(1, 255, pattern=common.CUSTOM_PATTERN)

PUT_PROVIDER_TRAITS = common.obj(
    {"traits": {"type": "array", "items": TRAIT},
     "resource_provider_generation": common.INTEGER},
    required=["traits", "resource_provider_generation"])

LIST_QUERY = common.obj({"name": common.STRING,
                         "associated": common.STRING})
