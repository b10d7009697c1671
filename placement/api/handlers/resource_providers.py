"""/resource_providers and /resource_providers/{uuid}."""

import functools
import uuid as uuidlib

from placement import errors as placement_errors
from placement.api import errors, query, util
from placement.api.schemas import resource_providers as schema
from placement.candidates import providers_filter
from placement.objects import providers

RULE = "placement:resource_providers:%s"


def provider_url(req, uuid):
    return req.url_for(f"/resource_providers/{uuid}")


def _links(req, uuid):
    url = provider_url(req, uuid)
    links = [{"rel": "self", "href": url}]
    rels = ["inventories", "usages"]
    if req.since((1, 1)):
        rels.append("aggregates")
    if req.since((1, 6)):
        rels.append("traits")
    if req.since((1, 11)):
        rels.append("allocations")
    links += [{"rel": rel, "href": f"{url}/{rel}"} for rel in rels]
    return links


def serialize(req, provider):
    data = {"uuid": provider.uuid, "name": provider.name,
            "generation": provider.generation,
            "links": _links(req, provider.uuid)}
    if req.since((1, 14)):
        data["parent_provider_uuid"] = provider.parent_provider_uuid
        data["root_provider_uuid"] = provider.root_provider_uuid
    return data


@functools.lru_cache
def _body_schema(version, create):
    return schema.body(version, create)


@functools.lru_cache
def _query_schema(version):
    return schema.list_query(version)


def _schema_version(version):
    # The schemas change at these versions only: memoise per step.
    for step in ((1, 18), (1, 14), (1, 4), (1, 3)):
        if version >= step:
            return step
    return (1, 0)


def _parent_step(version):
    return (1, 14) if version >= (1, 14) else (1, 0)


def create(req):
    util.require_json_content(req)
    req.authorize(RULE % "create")
    data = util.extract_json(
        req, _body_schema(_parent_step(req.version), True))
    name = data["name"]
    uuid = data.get("uuid")
    uuid = (providers.canonical_uuid(uuid) if uuid
            else str(uuidlib.uuid4()))
    try:
        provider = providers.create(
            req.state.store, name, uuid=uuid,
            parent_uuid=data.get("parent_provider_uuid"))
    except placement_errors.DuplicateName as exc:
        raise errors.from_placement_error(exc) from None
    except placement_errors.BadRequest as exc:
        raise errors.bad_request(
            f'Unable to create resource provider "{name}", '
            f'{uuid}: {exc.message}') from None
    location = provider_url(req, provider.uuid)
    if not req.since((1, 20)):
        return util.empty_response(req, 201, location=location)
    response = util.json_response(req, serialize(req, provider),
                                  last_modified=provider.last_modified)
    response.location = location
    return response


def show(req):
    util.check_accept(req)
    req.authorize(RULE % "show")
    provider = providers.get(req.state.store, req.arg("uuid"))
    return util.json_response(req, serialize(req, provider),
                              last_modified=provider.last_modified)


def update(req):
    util.require_json_content(req)
    req.authorize(RULE % "update")
    uuid = req.arg("uuid")
    store = req.state.store
    providers.get(store, uuid)
    data = util.extract_json(
        req, _body_schema(_parent_step(req.version), False))
    parent = data.get("parent_provider_uuid", providers.KEEP)
    try:
        provider = providers.update(
            store, uuid, name=data["name"], parent_uuid=parent,
            allow_reparenting=req.since((1, 37)))
    except placement_errors.DuplicateName:
        raise errors.conflict(
            f"Conflicting resource provider {data['name']} already exists.",
            placement_errors.DUPLICATE_NAME) from None
    except placement_errors.BadRequest as exc:
        raise errors.bad_request(
            f"Unable to save resource provider {uuid}: {exc.message}"
        ) from None
    return util.json_response(req, serialize(req, provider),
                              last_modified=provider.last_modified)


def delete(req):
    req.authorize(RULE % "delete")
    uuid = req.arg("uuid")
    try:
        providers.delete(req.state.store, uuid)
    except placement_errors.ResourceProviderNotFound:
        raise errors.not_found(
            f"No resource provider with uuid {uuid} found for delete"
        ) from None
    except placement_errors.ResourceProviderInUse as exc:
        raise errors.conflict(
            f"Unable to delete resource provider {uuid}: {exc.message}",
            exc.code) from None
    except placement_errors.CannotDeleteParent as exc:
        raise errors.conflict(
            f"Unable to delete parent resource provider {uuid}: It has "
            f"child resource providers.", exc.code) from None
    return util.empty_response(req)


def _filters(req):
    """ProviderFilters from the query, or None when it has none."""
    params = util.validate_query(req, _query_schema(
        _schema_version(req.version)))
    if not params:
        return None
    fields = {}
    if "member_of" in params:
        fields["member_of"], fields["forbidden_aggs"] = query.member_of(
            req, "member_of")
    if "required" in params:
        fields["required_traits"], fields["forbidden_traits"] = (
            query.required_traits(req, "required"))
    if "resources" in params:
        fields["resources"] = query.resources(params["resources"])
    if "in_tree" in params:
        fields["in_tree"] = query.in_tree(params["in_tree"])
    if "uuid" in params:
        fields["uuid"] = params["uuid"].lower()
    if "name" in params:
        fields["name"] = params["name"]
    return providers_filter.ProviderFilters(**fields)


def list_all(req):
    util.check_accept(req)
    req.authorize(RULE % "list")
    filters = _filters(req)
    store = req.state.store
    if filters is None:
        found = providers.list_all(store)
    else:
        try:
            ids = req.state.engine.provider_ids(filters)
        except (placement_errors.ResourceClassNotFound,
                placement_errors.TraitNotFound) as exc:
            raise query.unknown_name(exc) from None
        rows = providers.get_by_ids(store, ids)
        found = [rows[i] for i in ids if i in rows]
    body = {"resource_providers": [serialize(req, p) for p in found]}
    return util.json_response(
        req, body, last_modified=util.latest(
            p.last_modified for p in found))
