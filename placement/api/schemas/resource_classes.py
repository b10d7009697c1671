"""Resource class bodies (POST, and PUT before 1.7)."""

from placement.api.schemas import common

NAME_BODY = common.obj(
    {"name": common.string(max_length=255, pattern=common.CUSTOM_PATTERN)},
    required=["name"])
