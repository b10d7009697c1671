"""The GET /usages query."""

from placement.api.schemas import common

# A consumer type filter: a type name, or 'all', or 'unknown' (no type).
CONSUMER_TYPE_FILTER = common.NAME_PATTERN + "|^all|^unknown$"


def total_query(with_consumer_type):
    props = {"project_id": common.string(1, 255),
             "user_id": common.string(1, 255)}
    if with_consumer_type:
        props["consumer_type"] = common.string(
            1, 255, pattern=CONSUMER_TYPE_FILTER)
    return common.obj(props, required=["project_id"])
