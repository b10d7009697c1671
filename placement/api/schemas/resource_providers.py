"""Resource provider bodies and the GET /resource_providers query."""

from placement.api.schemas import common

MAX_NAME_LENGTH = 200


def body(version, create):
    """POST (``create``) or PUT body: a name, on POST an optional uuid,
    from 1.14 an optional parent (null for none)."""
    props = {"name": common.string(max_length=MAX_NAME_LENGTH)}
    if create:
        props["uuid"] = common.UUID
    if version >= (1, 14):
        props["parent_provider_uuid"] = common.nullable(common.UUID)
    return common.obj(props, required=["name"])


def list_query(version):
    props = {"name": common.STRING, "uuid": common.UUID}
    if version >= (1, 3):
        props["member_of"] = common.STRING
    if version >= (1, 4):
        props["resources"] = common.STRING
    if version >= (1, 14):
        props["in_tree"] = common.UUID
    if version >= (1, 18):
        props["required"] = common.STRING
    return common.obj(props)
