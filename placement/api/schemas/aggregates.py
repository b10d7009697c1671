"""PUT /resource_providers/{uuid}/aggregates bodies."""

from placement.api.schemas import common

AGGREGATE_LIST = {"type": "array", "items": common.UUID,
                  "uniqueItems": True}

# 1.1-1.18: a bare list of aggregate uuids.
PUT_1_1 = AGGREGATE_LIST
# From 1.19: the list and the provider generation.
PUT_1_19 = common.obj(
    {"aggregates": AGGREGATE_LIST,
     "resource_provider_generation": common.INTEGER},
    required=["aggregates", "resource_provider_generation"])
