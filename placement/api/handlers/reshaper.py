"""POST /reshaper (from 1.30): move inventories and allocations between
providers in one transaction."""

from placement import errors as placement_errors
from placement.api import errors, util
from placement.api.handlers import allocations as allocations_handler
from placement.api.handlers import inventories as inventories_handler
from placement.api.schemas import allocations as allocations_schema
from placement.api.schemas import reshaper as schema
from placement.objects import providers, reshaper


def _inventories(req, data):
    """{provider uuid: (generation, [Inventory])}, each provider checked
    to exist and to be at the generation given."""
    store = req.state.store
    out = {}
    for rp_uuid, part in data.items():
        try:
            provider = providers.get(store, rp_uuid)
        except placement_errors.ResourceProviderNotFound as exc:
            raise errors.bad_request(
                f"Resource provider {rp_uuid} in inventories not found: "
                f"{exc.message}",
                placement_errors.RESOURCE_PROVIDER_NOT_FOUND) from None
        given = part["resource_provider_generation"]
        if given != provider.generation:
            raise errors.conflict(
                f"resource provider generation conflict for provider "
                f"{rp_uuid}: actual: {provider.generation}, given: {given}",
                placement_errors.CONCURRENT_UPDATE)
        out[provider.uuid] = (given, [
            inventories_handler.inventory_of(rc, record)
            for rc, record in part["inventories"].items()])
    return out


def reshape(req):
    util.require_json_content(req)
    req.authorize("placement:reshaper:reshape")
    version = allocations_schema.step(req.version)
    data = util.extract_json(req, schema.post(version),
                             then=schema.post_records(version))
    new_inventories = _inventories(req, data["inventories"])
    writes = [allocations_handler.consumer_write(req, consumer_uuid, part)
              for consumer_uuid, part in data["allocations"].items()]
    try:
        reshaper.reshape(req.state.store, new_inventories, writes,
                         reserved_can_be_total=req.since((1, 26)))
    except placement_errors.ConsumerGenerationConflict as exc:
        if exc.raced:
            raise errors.conflict(f"update conflict: {exc.message}",
                                  exc.code) from None
        raise errors.conflict(exc.message, exc.code) from None
    except placement_errors.ConcurrentUpdate as exc:
        raise errors.conflict(f"update conflict: {exc.message}",
                              exc.code) from None
    except placement_errors.NotFound as exc:
        raise errors.bad_request(
            f"malformed reshaper data: {exc.message}") from None
    except placement_errors.InventoryInUse as exc:
        raise errors.conflict(f"update conflict: {exc.message}",
                              exc.code) from None
    except placement_errors.InvalidInventory as exc:
        raise errors.conflict(
            f"Unable to allocate inventory: {exc.message}") from None
    return util.empty_response(req)
