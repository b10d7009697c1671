"""/resource_providers/{uuid}/aggregates (from 1.1)."""

from placement import errors as placement_errors
from placement.api import errors, util
from placement.api.schemas import aggregates as schema
from placement.objects import aggregates, providers

RULE = "placement:resource_providers:aggregates:%s"
# From 1.19 the body carries the provider generation, it is checked and
# it moves; the response shows it.
GENERATION_SINCE = (1, 19)


def _send(req, generation, aggregate_uuids):
    body = {"aggregates": aggregate_uuids}
    if req.since(GENERATION_SINCE):
        body["resource_provider_generation"] = generation
    # Memberships carry no timestamps: last-modified is now.
    return util.json_response(req, body)


def list_all(req):
    util.check_accept(req)
    req.authorize(RULE % "list")
    provider, found = aggregates.for_provider(req.state.store,
                                              req.arg("uuid"))
    return _send(req, provider.generation, found)


def replace(req):
    util.require_json_content(req)
    req.authorize(RULE % "update")
    with_generation = req.since(GENERATION_SINCE)
    provider = providers.get(req.state.store, req.arg("uuid"))
    data = util.extract_json(
        req, schema.PUT_1_19 if with_generation else schema.PUT_1_1)
    if with_generation:
        if data["resource_provider_generation"] != provider.generation:
            raise errors.conflict(
                "Resource provider's generation already changed. Please "
                "update the generation and try again.",
                placement_errors.CONCURRENT_UPDATE)
        wanted = data["aggregates"]
    else:
        wanted = data
    try:
        generation, _ = aggregates.set_for_provider(
            req.state.store, provider.uuid, wanted,
            generation=provider.generation if with_generation else None,
            bump_generation=with_generation)
    except placement_errors.ConcurrentUpdate as exc:
        raise errors.conflict(f"Update conflict: {exc.message}",
                              placement_errors.CONCURRENT_UPDATE) from None
    return _send(req, generation, wanted)
