"""/traits, /traits/{name} and /resource_providers/{uuid}/traits (all
from 1.6)."""

from placement import errors as placement_errors
from placement.api import errors, util
from placement.api.schemas import traits as schema
from placement.objects import providers, traits

RULE = "placement:traits:%s"
RP_RULE = "placement:resource_providers:traits:%s"

INVALID_NAME = (
    'The trait is invalid. A valid trait must be no longer than 255 '
    'characters, start with the prefix "CUSTOM_" and use following '
    'characters: "A"-"Z", "0"-"9" and "_"')


def _url(req, name):
    return req.url_for(f"/traits/{name}")


def create(req):
    req.authorize(RULE % "update")
    name = req.arg("name")
    if util.validate(name, schema.CUSTOM_TRAIT):
        raise errors.bad_request(INVALID_NAME)
    created = traits.ensure(req.state.store, name)
    stamp = traits.get_last_modified(req.state.store, name)
    return util.empty_response(req, 201 if created else 204,
                               location=_url(req, name),
                               last_modified=stamp, cache_headers=True)


def show(req):
    req.authorize(RULE % "show")
    stamp = traits.get_last_modified(req.state.store, req.arg("name"))
    return util.empty_response(req, last_modified=stamp,
                               cache_headers=True)


def delete(req):
    req.authorize(RULE % "delete")
    name = req.arg("name")
    store = req.state.store
    # A name that does not exist is a 404 even when it is not CUSTOM_.
    traits.get_last_modified(store, name)
    traits.delete(store, name)
    return util.empty_response(req)


def _name_filter(value):
    op, sep, names = value.partition(":")
    if not sep:
        raise errors.bad_request(
            f'Badly formatted name parameter. Expected name query string '
            f'parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. '
            f'Got: "{value}"')
    if op == "in":
        return {"name_in": names.split(",")}
    if op == "startswith":
        return {"prefix": names}
    return {}


def list_all(req):
    util.check_accept(req)
    req.authorize(RULE % "list")
    params = util.validate_query(req, schema.LIST_QUERY)
    filters = {}
    if "name" in params:
        filters = _name_filter(params["name"])
    if "associated" in params:
        associated = params["associated"].lower()
        if associated not in ("true", "false"):
            raise errors.bad_request(
                'The query parameter "associated" only accepts "true" or '
                '"false"')
        filters["associated"] = associated == "true"
    names = traits.list_names(req.state.store, **filters)
    return util.json_response(req, {"traits": names})


def _provider_traits(req, generation, names):
    return util.json_response(req, {
        "traits": names, "resource_provider_generation": generation})


def list_for_provider(req):
    util.check_accept(req)
    req.authorize(RP_RULE % "list")
    uuid = req.arg("uuid")
    try:
        provider, names = traits.for_provider(req.state.store, uuid)
    except placement_errors.ResourceProviderNotFound as exc:
        raise errors.not_found(
            f"No resource provider with uuid {uuid} found: {exc.message}"
        ) from None
    return _provider_traits(req, provider.generation, names)


def replace_for_provider(req):
    util.require_json_content(req)
    req.authorize(RP_RULE % "update")
    data = util.extract_json(req, schema.PUT_PROVIDER_TRAITS)
    provider = providers.get(req.state.store, req.arg("uuid"))
    if data["resource_provider_generation"] != provider.generation:
        raise errors.conflict(
            "Resource provider's generation already changed. Please update "
            "the generation and try again.",
            placement_errors.CONCURRENT_UPDATE)
    try:
        generation, names = traits.set_for_provider(
            req.state.store, provider.uuid, provider.generation,
            data["traits"])
    except placement_errors.TraitNotFound as exc:
        raise errors.bad_request(
            "No such trait %s" % ", ".join(exc.names)) from None
    except placement_errors.ConcurrentUpdate as exc:
        raise errors.conflict(exc.message,
                              placement_errors.CONCURRENT_UPDATE) from None
    return _provider_traits(req, generation, names)


def delete_for_provider(req):
    req.authorize(RP_RULE % "delete")
    provider = providers.get(req.state.store, req.arg("uuid"))
    try:
        traits.delete_for_provider(req.state.store, provider.uuid,
                                   generation=provider.generation)
    except placement_errors.ConcurrentUpdate as exc:
        raise errors.conflict(exc.message,
                              placement_errors.CONCURRENT_UPDATE) from None
    return util.empty_response(req)
