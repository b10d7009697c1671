"""/resource_providers/{uuid}/usages and /usages."""

import functools

from placement import errors as placement_errors
from placement.api import errors, util
from placement.api.schemas import usages as schema
from placement.objects import usages

CONSUMER_TYPES_SINCE = (1, 38)


def for_provider(req):
    util.check_accept(req)
    req.authorize("placement:resource_providers:usages")
    uuid = req.arg("uuid")
    try:
        provider, used = usages.for_provider(req.state.store, uuid)
    except placement_errors.ResourceProviderNotFound as exc:
        raise errors.not_found(
            f"No resource provider with uuid {uuid} found: {exc.message}"
        ) from None
    # Usage is asked about now: last-modified is the time of the answer.
    return util.json_response(req, {
        "resource_provider_generation": provider.generation,
        "usages": used})


@functools.lru_cache
def _schema(with_consumer_type):
    return schema.total_query(with_consumer_type)


def totals(req):
    util.check_accept(req)
    params = req.query
    project_id = params.get("project_id")
    req.authorize("placement:usages", target={"project_id": project_id})
    by_type = req.since(CONSUMER_TYPES_SINCE)
    util.validate_query(req, _schema(by_type))
    user_id = params.get("user_id")
    store = req.state.store
    if not by_type:
        return util.json_response(req, {"usages": usages.for_project(
            store, project_id, user_id=user_id)})
    groups = usages.for_project_by_consumer_type(
        store, project_id, user_id=user_id,
        consumer_type=params.get("consumer_type"))
    body = {ctype: {**group["usages"],
                    "consumer_count": group["consumer_count"]}
            for ctype, group in groups.items()}
    return util.json_response(req, {"usages": body})
