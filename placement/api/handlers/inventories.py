"""/resource_providers/{uuid}/inventories[/{resource_class}]."""

import contextlib

from placement import errors as placement_errors
from placement.api import errors, util
from placement.api.schemas import inventories as schema
from placement.objects import inventories, providers

RULE = "placement:resource_providers:inventories:%s"
FIELDS = inventories.FIELDS
# From 1.26 reserved may equal total (no capacity left, nothing lost).
RESERVED_CAN_BE_TOTAL_SINCE = (1, 26)


def inventory_url(req, uuid, resource_class):
    return req.url_for(
        f"/resource_providers/{uuid}/inventories/{resource_class}")


# What a record written without a field holds.
DEFAULTS = {"reserved": 0, "min_unit": 1, "max_unit": inventories.MAX_INT,
            "step_size": 1, "allocation_ratio": 1.0}


def _fields(inventory):
    return {field: getattr(inventory, field) for field in FIELDS}


def _echo(record):
    """The answer to a write: the record as the request gave it, the
    defaults for the fields it left out. OpenStack Placement answers
    so: a ratio given as 1 is 1 there (a GET, from the database, says
    1.0), a total given as 8.0 is 8.0."""
    return {field: record.get(field, DEFAULTS.get(field))
            for field in FIELDS}


def _one(req, generation, inventory, status=200, record=None):
    body = _fields(inventory) if record is None else _echo(record)
    body["resource_provider_generation"] = generation
    return util.json_response(req, body, status=status,
                              last_modified=inventory.last_modified)


def _all(req, generation, by_class, records=None):
    shown = ({rc: _fields(inv) for rc, inv in by_class.items()}
             if records is None
             else {rc: _echo(record) for rc, record in records.items()})
    body = {"resource_provider_generation": generation,
            "inventories": shown}
    return util.json_response(req, body, last_modified=util.latest(
        inv.last_modified for inv in by_class.values()))


def _provider(req):
    """The provider of the path, or the 404 these handlers give."""
    uuid = req.arg("uuid")
    try:
        return providers.get(req.state.store, uuid)
    except placement_errors.ResourceProviderNotFound as exc:
        raise errors.not_found(
            f"No resource provider with uuid {uuid} found : {exc.message}"
        ) from None


def _stored(field, value):
    """``value`` of ``field`` as it is stored: the schema takes an
    integral float (8.0) where it wants an integer, and OpenStack
    Placement stores it as the integer."""
    if field != "allocation_ratio" and isinstance(value, float):
        return int(value)
    return value


def inventory_of(resource_class, data):
    """The Inventory a checked record of a request body writes."""
    values = {field: _stored(field, data[field])
              for field in FIELDS if field in data}
    return inventories.Inventory(resource_class, **values)


def _reserved_can_be_total(req):
    return req.since(RESERVED_CAN_BE_TOTAL_SINCE)


def _check_generation(provider, data):
    if data["resource_provider_generation"] != provider.generation:
        raise errors.conflict("resource provider generation conflict",
                              placement_errors.CONCURRENT_UPDATE)


def list_all(req):
    util.check_accept(req)
    req.authorize(RULE % "list")
    provider = _provider(req)
    _, by_class = inventories.get_all(req.state.store, provider.uuid)
    return _all(req, provider.generation, by_class)


def show(req):
    util.check_accept(req)
    req.authorize(RULE % "show")
    provider = _provider(req)
    resource_class = req.arg("resource_class")
    _, by_class = inventories.get_all(req.state.store, provider.uuid)
    if resource_class not in by_class:
        raise errors.not_found(
            f"No inventory of class {resource_class} for {provider.uuid}")
    return _one(req, provider.generation, by_class[resource_class])


def create(req):
    util.require_json_content(req)
    req.authorize(RULE % "create")
    provider = providers.get(req.state.store, req.arg("uuid"))
    data = util.extract_json(req, schema.POST)
    inventory = inventory_of(data["resource_class"], data)
    try:
        inventory = inventories.add(
            req.state.store, provider.uuid, inventory,
            generation=provider.generation,
            reserved_can_be_total=_reserved_can_be_total(req))
    except placement_errors.ConcurrentUpdate as exc:
        raise errors.conflict(f"Update conflict: {exc.message}",
                              placement_errors.CONCURRENT_UPDATE) from None
    except (placement_errors.BadRequest, placement_errors.NotFound) as exc:
        raise errors.bad_request(
            f"Unable to create inventory for resource provider "
            f"{provider.uuid}: {exc.message}") from None
    response = _one(req, provider.generation + 1, inventory, status=201,
                    record=data)
    response.location = inventory_url(req, provider.uuid,
                                      inventory.resource_class)
    return response


def replace_all(req):
    util.require_json_content(req)
    req.authorize(RULE % "update")
    provider = providers.get(req.state.store, req.arg("uuid"))
    data = util.extract_json(req, schema.PUT_ALL,
                             then=schema.PUT_ALL_RECORDS)
    _check_generation(provider, data)
    wanted = [inventory_of(rc, record)
              for rc, record in data["inventories"].items()]
    with _update_errors(provider):
        try:
            generation, by_class = inventories.replace_all(
                req.state.store, provider.uuid, provider.generation, wanted,
                reserved_can_be_total=_reserved_can_be_total(req))
        except placement_errors.ResourceClassNotFound as exc:
            raise errors.bad_request(
                f"Unknown resource class in inventory for resource "
                f"provider {provider.uuid}: {exc.message}") from None
        except placement_errors.InventoryInUse as exc:
            raise errors.conflict(f"update conflict: {exc.message}",
                                  exc.code) from None
    return _all(req, generation, by_class, records=data["inventories"])


@contextlib.contextmanager
def _update_errors(provider):
    """The HTTP errors for a refused inventory write."""
    try:
        yield
    except placement_errors.ConcurrentUpdate as exc:
        raise errors.conflict(f"update conflict: {exc.message}",
                              placement_errors.CONCURRENT_UPDATE) from None
    except placement_errors.BadRequest as exc:
        raise errors.bad_request(
            f"Unable to update inventory for resource provider "
            f"{provider.uuid}: {exc.message}") from None


def update(req):
    util.require_json_content(req)
    req.authorize(RULE % "update")
    provider = providers.get(req.state.store, req.arg("uuid"))
    resource_class = req.arg("resource_class")
    data = util.extract_json(req, schema.PUT_ONE)
    _check_generation(provider, data)
    with _update_errors(provider):
        try:
            generation, inventory = inventories.update(
                req.state.store, provider.uuid,
                inventory_of(resource_class, data),
                generation=provider.generation,
                reserved_can_be_total=_reserved_can_be_total(req))
        except placement_errors.InventoryNotFound as exc:
            raise errors.bad_request(
                f"No inventory record with resource class for resource "
                f"provider {provider.uuid}: {exc.message}") from None
    return _one(req, generation, inventory, record=data)


def delete(req):
    req.authorize(RULE % "delete")
    provider = providers.get(req.state.store, req.arg("uuid"))
    resource_class = req.arg("resource_class")
    try:
        inventories.delete(req.state.store, provider.uuid, resource_class,
                           generation=provider.generation)
    except (placement_errors.ConcurrentUpdate,
            placement_errors.InventoryInUse) as exc:
        raise errors.conflict(
            f"Unable to delete inventory of class {resource_class}: "
            f"{exc.message}", placement_errors.CONCURRENT_UPDATE) from None
    except placement_errors.NotFound as exc:
        raise errors.not_found(
            f"No inventory of class {resource_class} found for delete: "
            f"{exc.message}") from None
    return util.empty_response(req)


def delete_all(req):
    req.authorize(RULE % "delete")
    provider = providers.get(req.state.store, req.arg("uuid"))
    try:
        inventories.delete_all(req.state.store, provider.uuid,
                               generation=provider.generation)
    except placement_errors.InventoryInUse as exc:
        raise errors.conflict(exc.message, exc.code) from None
    except placement_errors.ConcurrentUpdate:
        raise errors.conflict(
            f"Unable to delete inventory for resource provider "
            f"{provider.uuid} because the inventory was updated by "
            f"another process. Please retry your request.",
            placement_errors.CONCURRENT_UPDATE) from None
    return util.empty_response(req)
