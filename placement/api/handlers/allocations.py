"""/allocations, /allocations/{consumer_uuid} and
/resource_providers/{uuid}/allocations."""

import uuid as uuidlib

from placement import errors as placement_errors
from placement.api import errors, util
from placement.api.schemas import allocations as schema
from placement.objects import allocations, consumers

RULE = "placement:allocations:%s"

# Versions at which the accepted and returned forms changed.
PROJECT_USER_SINCE = (1, 8)
DICT_FORM_SINCE = (1, 12)
CONSUMER_GENERATION_SINCE = (1, 28)
CONSUMER_TYPE_SINCE = (1, 38)


def _consumer_uuid(req):
    value = req.arg("consumer_uuid")
    if not util.is_uuid_like(value):
        raise errors.bad_request(f"Malformed consumer_uuid: {value}")
    return str(uuidlib.UUID(value))


def consumer_write(req, consumer_uuid, data):
    """A ConsumerAllocations from one consumer's part of a body."""
    raw = data["allocations"]
    if isinstance(raw, list):
        # Before 1.12: a list of provider/resources pairs.
        raw = {item["resource_provider"]["uuid"]: item
               for item in raw}
    generation = allocations.UNCHECKED
    if req.since(CONSUMER_GENERATION_SINCE):
        generation = data["consumer_generation"]
    # The schema takes an integral float (2.0) for an amount; OpenStack
    # Placement stores it as the integer.
    return allocations.ConsumerAllocations(
        consumer_uuid,
        {rp: {rc: int(amount) if isinstance(amount, float) else amount
              for rc, amount in entry["resources"].items()}
         for rp, entry in raw.items()},
        project_id=data.get("project_id"), user_id=data.get("user_id"),
        consumer_generation=generation,
        consumer_type=(data["consumer_type"]
                       if req.since(CONSUMER_TYPE_SINCE) else None))


def write(req, writes, unknown_class):
    """Replace the allocations of ``writes``; failures as upstream
    reports them. ``unknown_class(message)`` words the 400 for a
    resource class that does not exist."""
    try:
        allocations.replace(req.state.store, writes)
    except placement_errors.ResourceClassNotFound as exc:
        raise errors.bad_request(unknown_class(exc.message)) from None
    except placement_errors.InvalidInventory as exc:
        raise errors.conflict(
            f"Unable to allocate inventory: {exc.message}") from None
    except placement_errors.ConsumerGenerationConflict as exc:
        if not exc.raced:
            raise errors.conflict(exc.message, exc.code) from None
        raise _changed(exc) from None
    except placement_errors.ConcurrentUpdate as exc:
        raise _changed(exc) from None


def _changed(exc):
    return errors.conflict(
        f"Inventory and/or allocations changed while attempting to "
        f"allocate: {exc.message}", placement_errors.CONCURRENT_UPDATE)


def replace(req):
    """PUT /allocations/{consumer_uuid}."""
    util.require_json_content(req)
    req.authorize(RULE % "update")
    consumer_uuid = _consumer_uuid(req)
    data = util.extract_json(req, schema.put(schema.step(req.version)))
    write(req, [consumer_write(req, consumer_uuid, data)],
          lambda message: f"Unable to allocate inventory for consumer "
                          f"{consumer_uuid}: {message}")
    return util.empty_response(req)


def replace_many(req):
    """POST /allocations (from 1.13)."""
    util.require_json_content(req)
    req.authorize(RULE % "manage")
    data = util.extract_json(req, schema.post(schema.step(req.version)))
    writes = [consumer_write(req, consumer_uuid, part)
              for consumer_uuid, part in data.items()]
    write(req, writes,
          lambda message: f"Unable to allocate inventory {message}")
    return util.empty_response(req)


def for_consumer(req):
    util.check_accept(req)
    req.authorize(RULE % "list")
    view = allocations.for_consumer(req.state.store,
                                    req.arg("consumer_uuid"))
    body = {"allocations": {
        rp: {"generation": entry.generation, "resources": entry.resources}
        for rp, entry in view.allocations.items()}}
    consumer = view.consumer
    if view.allocations and req.since(DICT_FORM_SINCE):
        body["project_id"] = consumer.project_id
        body["user_id"] = consumer.user_id
        if req.since(CONSUMER_GENERATION_SINCE):
            body["consumer_generation"] = consumer.generation
        if req.since(CONSUMER_TYPE_SINCE):
            body["consumer_type"] = (consumer.consumer_type
                                     or consumers.UNKNOWN_CONSUMER_TYPE)
    return util.json_response(req, body, last_modified=view.last_modified)


def for_provider(req):
    util.check_accept(req)
    req.authorize("placement:resource_providers:allocations:list")
    uuid = req.arg("uuid")
    try:
        view = allocations.for_provider(req.state.store, uuid)
    except placement_errors.ResourceProviderNotFound as exc:
        raise errors.not_found(
            f"Resource provider '{uuid}' not found: {exc.message}"
        ) from None
    with_generation = req.since(CONSUMER_GENERATION_SINCE)
    body = {}
    for consumer_uuid, resources in view.allocations.items():
        body[consumer_uuid] = {"resources": resources}
        if with_generation:
            body[consumer_uuid]["consumer_generation"] = (
                view.consumer_generations[consumer_uuid])
    return util.json_response(req, {
        "allocations": body,
        "resource_provider_generation": view.provider.generation},
        last_modified=view.last_modified)


def delete(req):
    req.authorize(RULE % "delete")
    allocations.delete_for_consumer(req.state.store,
                                    req.arg("consumer_uuid"))
    return util.empty_response(req)
