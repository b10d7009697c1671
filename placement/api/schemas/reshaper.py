"""POST /reshaper bodies (from 1.30)."""

import functools

from placement.api.schemas import allocations, common, inventories


def _post(version, inventories_schema):
    return common.obj(
        {"inventories": {
            "type": "object",
            "patternProperties": {common.UUID_KEY: inventories_schema},
            # Something has to move, or there is nothing to reshape.
            "minProperties": 1,
            "additionalProperties": False},
         # There may be no allocations (yet) of what moves.
         "allocations": allocations.post(version, min_consumers=0)},
        required=["inventories", "allocations"])


@functools.lru_cache
def post(version):
    return _post(version, inventories.PUT_ALL)


@functools.lru_cache
def post_records(version):
    """Once ``post(version)`` holds: every inventory record checked, as
    inventories.PUT_ALL_RECORDS does."""
    return _post(version, inventories.PUT_ALL_RECORDS)
