"""GET /allocation_candidates (from 1.10).

The query is parsed into a CandidatesRequest (request groups keyed by
suffix plus request-wide parameters), checked as OpenStack Placement
checks it at the requested microversion, answered by the candidates
engine, and formatted for that microversion.
"""

import re

import webob

from placement import errors as placement_errors
from placement.api import candidates_payload as payload
from placement.api import errors, metrics, query, util
from placement.api.schemas import allocation_candidates as schema
from placement.api.schemas import common
from placement.candidates import request as request_mod

GROUP_KEY = re.compile(
    rf"^(resources|required|member_of|in_tree)({common.SUFFIX})?$")
GROUP_KEY_1_33 = re.compile(
    rf"^(resources|required|member_of|in_tree)({common.SUFFIX_1_33})?$")

# Versions that changed the parsing or the answer.
DICT_FORM_SINCE = (1, 12)
TRAITS_SINCE = (1, 17)
FORBIDDEN_SINCE = (1, 22)
ALL_RESOURCES_SINCE = (1, 27)
NESTED_SINCE = (1, 29)
NAMED_SUFFIXES_SINCE = (1, 33)
MAPPINGS_SINCE = (1, 34)
SAME_SUBTREE_SINCE = (1, 36)


class _Group:
    """A request group while it is being parsed."""

    def __init__(self, suffix):
        self.suffix = suffix
        self.resources = {}
        self.required = ()
        self.forbidden = frozenset()
        self.member_of = ()
        self.forbidden_aggs = frozenset()
        self.in_tree = None

    def build(self):
        return request_mod.RequestGroup(
            suffix=self.suffix, resources=self.resources,
            required_traits=self.required, forbidden_traits=self.forbidden,
            member_of=self.member_of, forbidden_aggs=self.forbidden_aggs,
            in_tree=self.in_tree)


def _groups(req):
    """{suffix: _Group} in the order the query names them."""
    pattern = (GROUP_KEY_1_33 if req.since(NAMED_SUFFIXES_SINCE)
               else GROUP_KEY)
    groups = {}
    for key, value in req.query.items():
        match = pattern.match(key)
        if not match:
            continue
        kind, suffix = match.group(1), match.group(2) or ""
        group = groups.setdefault(suffix, _Group(suffix))
        if kind == "resources":
            group.resources = query.resources(value)
        elif kind == "required":
            group.required, group.forbidden = query.required_traits(
                req, key)
        elif kind == "member_of":
            group.member_of, group.forbidden_aggs = query.member_of(
                req, key)
        else:
            group.in_tree = query.in_tree(value)
    return groups


def _root_traits(req):
    """root_required -> (required names, forbidden names)."""
    values = req.query.getall("root_required")
    if not values:
        return frozenset(), frozenset()
    if len(values) > 1:
        raise errors.bad_request(
            "Query parameter 'root_required' may be specified only once.",
            placement_errors.ILLEGAL_DUPLICATE_QUERYPARAM)
    any_of, forbidden = query.traits(values[0], allow_forbidden=True,
                                     allow_any=False)
    required = {name for names in any_of for name in names}
    conflicts = required & forbidden
    if conflicts:
        raise errors.bad_request(
            "Conflicting required and forbidden traits found in "
            "root_required: " + ", ".join(sorted(conflicts)),
            placement_errors.QUERYPARAM_BAD_VALUE)
    return frozenset(required), frozenset(forbidden)


def _same_subtrees(req):
    out = []
    for value in req.query.getall("same_subtree"):
        suffixes = frozenset(part.strip() for part in value.split(","))
        if "" in suffixes:
            raise errors.bad_request(
                "Empty string (unsuffixed group) can not be specified in "
                "`same_subtree` ", placement_errors.QUERYPARAM_BAD_VALUE)
        out.append(suffixes)
    return tuple(out)


def _check_resourceless(groups, same_subtrees):
    """From 1.36 a group may have no resources if same_subtree names it."""
    resourceless = [s for s, g in groups.items() if not g.resources]
    if len(resourceless) == len(groups):
        raise errors.bad_request(
            "There must be at least one resources or resources[$S] "
            "parameter.", placement_errors.QUERYPARAM_MISSING_VALUE)
    in_subtrees = set().union(*same_subtrees)
    bad = [s for s in resourceless if s not in in_subtrees]
    if bad:
        raise errors.bad_request(
            f"Resourceless suffixed group request should be specified in "
            f"`same_subtree` query param: bad group(s) - {bad}.",
            placement_errors.QUERYPARAM_BAD_VALUE)
    unknown = [s for s in sorted(in_subtrees) if s not in groups]
    if unknown:
        raise errors.bad_request(
            f"Real suffixes should be specified in `same_subtree`: "
            f"{unknown} not found in {list(groups)}.",
            placement_errors.QUERYPARAM_BAD_VALUE)


def _check_orphans(groups):
    """Before 1.36 every group needs resources."""
    orphans = [f"required{s}" for s, g in groups.items()
               if g.required and not g.resources]
    if orphans:
        raise errors.bad_request(
            "All traits parameters must be associated with resources.  "
            "Found the following orphaned traits keys: "
            + ", ".join(orphans))
    orphans = [f"member_of{s}" for s, g in groups.items()
               if not g.resources and (g.member_of or g.forbidden_aggs)]
    if orphans:
        raise errors.bad_request(
            "All member_of parameters must be associated with resources. "
            "Found the following orphaned member_of keys: "
            + ", ".join(orphans))
    if not all(g.resources for g in groups.values()):
        raise errors.bad_request("All request groups must specify "
                                 "resources.")
    if not groups:
        raise errors.bad_request(
            "At least one request group (`resources` or `resources{$S}`) "
            "is required.")


def _check_conflicts(groups):
    """A required any-of set whose every trait is forbidden can never be
    met."""
    conflicts = sorted(
        f"required{s}: ({', '.join(sorted(any_of))})"
        for s, g in groups.items() for any_of in g.required
        if any_of <= g.forbidden)
    if conflicts:
        raise errors.bad_request(
            "Conflicting required and forbidden traits found in the "
            "following traits keys: " + ", ".join(conflicts))


def parse(req):
    """The CandidatesRequest of the query (400s as upstream gives)."""
    params = util.validate_query(req, schema.query(schema.step(req.version)))
    limits = params.getall("limit")
    limit = int(limits[0]) if limits else None
    policies = params.getall("group_policy")
    group_policy = policies[0] if policies else None
    root_required, root_forbidden = _root_traits(req)
    same_subtrees = _same_subtrees(req)
    groups = _groups(req)
    if req.since(SAME_SUBTREE_SINCE):
        _check_resourceless(groups, same_subtrees)
    else:
        _check_orphans(groups)
    if req.since(FORBIDDEN_SINCE):
        _check_conflicts(groups)
    if group_policy is None and sum(1 for s in groups if s) > 1:
        raise errors.bad_request(
            'The "group_policy" parameter is required when specifying '
            'more than one "resources{N}" parameter.')
    return request_mod.CandidatesRequest(
        groups=tuple(g.build() for g in groups.values()),
        limit=limit, group_policy=group_policy,
        root_required=root_required, root_forbidden=root_forbidden,
        same_subtrees=same_subtrees,
        nested_aware=req.since(NESTED_SINCE))


def list_candidates(req):
    util.check_accept(req)
    req.authorize("placement:allocation_candidates:list")
    answers = req.state.answers
    if answers is not None:
        key = (req.environ.get("QUERY_STRING", ""), req.version)
        position = answers.position()
        body = answers.get(key, position)
        if body is not None:
            req.environ[metrics.CACHE_HIT_KEY] = True
            return _send(req, body)
    answer = _answer(req)
    req.environ[metrics.CANDIDATES_KEY] = len(answer["allocation_requests"])
    body = util.dumps(answer)
    if answers is not None:
        answers.put(key, position, body)
    return _send(req, body)


def _send(req, body):
    response = webob.Response(body=body, content_type=util.JSON,
                              charset=None)
    util.add_cache_headers(req, response)
    return response


def _answer(req):
    request = parse(req)
    try:
        result = req.state.engine.find(request)
    except placement_errors.ResourceClassNotFound as exc:
        raise errors.bad_request(
            f"Invalid resource class in resources parameter: "
            f"{exc.message}") from None
    except placement_errors.TraitNotFound as exc:
        raise errors.bad_request(exc.message) from None
    requested = None
    if not req.since(ALL_RESOURCES_SINCE):
        requested = {rc for g in request.groups for rc in g.resources}
    store = req.state.store
    return {
        "allocation_requests": payload.allocation_requests(
            result, req.since(DICT_FORM_SINCE), req.since(MAPPINGS_SINCE)),
        "provider_summaries": payload.provider_summaries(
            result, requested, req.since(TRAITS_SINCE),
            req.since(NESTED_SINCE),
            lambda names: store.read(
                lambda txn: txn.catalog.trait_ids(txn, names)))}
