"""The GET /allocation_candidates query, per microversion."""

import functools

from placement.api.schemas import common

# The versions at which the accepted parameters changed.
STEPS = ((1, 36), (1, 35), (1, 33), (1, 31), (1, 25), (1, 21), (1, 17),
         (1, 16), (1, 10))

LIMIT = {"type": ["integer", "string"], "pattern": "^[1-9][0-9]*$",
         "minimum": 1, "minLength": 1}


def step(version):
    for at in STEPS:
        if version >= at:
            return at
    return STEPS[-1]


def _grouped(names, suffix):
    return {f"^{name}({suffix})?$": common.STRING for name in names}


@functools.lru_cache
def query(at):
    """The schema from version ``at`` (one of STEPS) on. Parameters in
    the order they arrived: a validation error prints the schema."""
    props = {}
    patterns = {}
    required = []
    if at < (1, 25):
        # One group: plain resources, required, member_of.
        props["resources"] = common.STRING
        required = ["resources"]
    if at >= (1, 16):
        props["limit"] = LIMIT
    if at < (1, 25):
        if at >= (1, 17):
            props["required"] = common.STRING_LIST_TYPE
        if at >= (1, 21):
            props["member_of"] = common.STRING_LIST_TYPE
    else:
        # Request groups: resources, required, member_of (and in_tree
        # from 1.31), unsuffixed or suffixed.
        names = ["resources", "required", "member_of"]
        if at >= (1, 31):
            names.append("in_tree")
        suffix = common.SUFFIX_1_33 if at >= (1, 33) else common.SUFFIX
        patterns = _grouped(names, suffix)
        props["group_policy"] = {"type": "string",
                                 "enum": ["none", "isolate"]}
        if at >= (1, 35):
            props["root_required"] = common.STRING_LIST_TYPE
        if at >= (1, 36):
            props["same_subtree"] = common.STRING_LIST_TYPE
    return common.obj(props, required=required,
                      pattern_properties=patterns)
