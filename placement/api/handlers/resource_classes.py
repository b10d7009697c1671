"""/resource_classes and /resource_classes/{name} (from 1.2)."""

from placement import errors as placement_errors
from placement.api import errors, util
from placement.api.schemas import resource_classes as schema
from placement.objects import resource_classes

RULE = "placement:resource_classes:%s"


def _url(req, name):
    return req.url_for(f"/resource_classes/{name}")


def _serialize(req, name):
    return {"name": name, "links": [{"rel": "self",
                                     "href": _url(req, name)}]}


def list_all(req):
    util.check_accept(req)
    req.authorize(RULE % "list")
    found = resource_classes.list_all(req.state.store)
    return util.json_response(
        req, {"resource_classes": [_serialize(req, rc.name)
                                   for rc in found]},
        last_modified=util.latest(rc.last_modified for rc in found))


def create(req):
    util.require_json_content(req)
    req.authorize(RULE % "create")
    name = util.extract_json(req, schema.NAME_BODY)["name"]
    try:
        resource_classes.create(req.state.store, name)
    except placement_errors.ResourceClassExists:
        raise errors.conflict(
            f"Conflicting resource class already exists: {name}") from None
    return util.empty_response(req, 201, location=_url(req, name))


def show(req):
    util.check_accept(req)
    req.authorize(RULE % "show")
    rc = resource_classes.get(req.state.store, req.arg("name"))
    return util.json_response(req, _serialize(req, rc.name),
                              last_modified=rc.last_modified)


def rename(req):
    """PUT before 1.7: rename a custom class."""
    util.require_json_content(req)
    req.authorize(RULE % "update")
    name = req.arg("name")
    new_name = util.extract_json(req, schema.NAME_BODY)["name"]
    store = req.state.store
    resource_classes.get(store, name)
    try:
        rc = resource_classes.rename(store, name, new_name)
    except placement_errors.ResourceClassExists:
        raise errors.conflict(
            f"Resource class already exists: {new_name}") from None
    except placement_errors.ResourceClassCannotUpdateStandard:
        raise errors.bad_request(
            f"Cannot update standard resource class {name}") from None
    return util.json_response(req, _serialize(req, rc.name),
                              cache_headers=False)


def ensure(req):
    """PUT from 1.7: create the class unless it exists (no body)."""
    req.authorize(RULE % "update")
    name = req.arg("name")
    problem = util.validate({"name": name}, schema.NAME_BODY)
    if problem:
        raise errors.bad_request(f"JSON does not validate: {problem}")
    _rc, created = resource_classes.ensure(req.state.store, name)
    return util.empty_response(req, 201 if created else 204,
                               location=_url(req, name))


def delete(req):
    req.authorize(RULE % "delete")
    name = req.arg("name")
    store = req.state.store
    resource_classes.get(store, name)
    try:
        resource_classes.delete(store, name)
    except placement_errors.ResourceClassCannotDeleteStandard as exc:
        raise errors.bad_request(
            f"Error in delete resource class: {exc.message}") from None
    except placement_errors.ResourceClassInUse as exc:
        raise errors.conflict(
            f"Error in delete resource class: {exc.message}") from None
    return util.empty_response(req)
