"""POST /reshaper bodies (from 1.30)."""

import functools

from placement.api.schemas import allocations, common, inventories


@functools.lru_cache
def post(version):
    return common.obj(
        {"inventories": {
            "type": "object",
            # Something has to move, or there is nothing to reshape.
            "minProperties": 1,
            "patternProperties": {common.UUID_KEY: inventories.PUT_ALL},
            "additionalProperties": False},
         # There may be no allocations (yet) of what moves.
         "allocations": allocations.post(version, min_consumers=0)},
        required=["inventories", "allocations"])
