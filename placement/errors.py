"""Typed failures of the placement engine.

Each exception carries the placement error code that the REST API puts in
its error body (microversion 1.23 and later) and the HTTP status it maps to
by default. A failed write raises one of these after rolling back: nothing
it started is stored.
"""

# Error codes, as OpenStack Placement defines them on the wire.
DEFAULT = "placement.undefined_code"
INVENTORY_INUSE = "placement.inventory.inuse"
CONCURRENT_UPDATE = "placement.concurrent_update"
DUPLICATE_NAME = "placement.duplicate_name"
PROVIDER_IN_USE = "placement.resource_provider.inuse"
PROVIDER_CANNOT_DELETE_PARENT = (
    "placement.resource_provider.cannot_delete_parent")
RESOURCE_PROVIDER_NOT_FOUND = "placement.resource_provider.not_found"
ILLEGAL_DUPLICATE_QUERYPARAM = "placement.query.duplicate_key"
QUERYPARAM_BAD_VALUE = "placement.query.bad_value"
QUERYPARAM_MISSING_VALUE = "placement.query.missing_value"


class PlacementError(Exception):
    """Base of every placement failure."""

    code = DEFAULT
    http_status = 400

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        return self.message


# 404

class NotFound(PlacementError):
    http_status = 404


class ResourceProviderNotFound(NotFound):
    def __init__(self, uuid):
        super().__init__(f"No resource provider with uuid {uuid} found")
        self.uuid = uuid


class ResourceClassNotFound(NotFound):
    def __init__(self, name):
        super().__init__(f"No such resource class {name}.")
        self.name = name


class TraitNotFound(NotFound):
    def __init__(self, names):
        names = sorted(names) if not isinstance(names, str) else [names]
        super().__init__("No such trait(s): %s." % ", ".join(names))
        self.names = names


class ConsumerNotFound(NotFound):
    def __init__(self, uuid):
        super().__init__(f"No such consumer(s): {uuid}.")
        self.uuid = uuid


class InventoryNotFound(NotFound):
    def __init__(self, resource_class, provider_uuid):
        super().__init__(
            f"No inventory of class {resource_class} found for resource "
            f"provider {provider_uuid}.")
        self.resource_class = resource_class
        self.provider_uuid = provider_uuid


class AllocationsNotFound(NotFound):
    def __init__(self, consumer_uuid):
        super().__init__(
            f"No allocations for consumer '{consumer_uuid}'")
        self.consumer_uuid = consumer_uuid


# 409

class Conflict(PlacementError):
    http_status = 409


class ConcurrentUpdate(Conflict):
    """A generation did not match: someone else changed the object first."""

    code = CONCURRENT_UPDATE


class ResourceProviderGenerationConflict(ConcurrentUpdate):
    def __init__(self, uuid, expected=None, given=None):
        if expected is None:
            message = ("Another thread concurrently updated the resource "
                       "provider data. Please retry your update")
        else:
            message = (f"resource provider generation conflict for provider "
                       f"{uuid}: actual: {expected}, given: {given}")
        super().__init__(message)
        self.uuid = uuid
        self.expected = expected
        self.given = given


class ConsumerGenerationConflict(ConcurrentUpdate):
    """``raced``: the consumer changed during the write itself, rather
    than the caller giving a stale generation."""

    def __init__(self, uuid, expected=None, given=None, raced=False):
        if raced:
            message = ("Another thread concurrently updated the data. "
                       "Please retry your update")
        else:
            shown = "null" if expected is None else expected
            message = ("consumer generation conflict - expected %s but "
                       "got %s" % (shown, given))
        super().__init__(message)
        self.uuid = uuid
        self.expected = expected
        self.given = given
        self.raced = raced


class DuplicateName(Conflict):
    """A provider with the same uuid and/or name exists."""

    code = DUPLICATE_NAME

    def __init__(self, **fields):
        shown = ", ".join(f"{k}: {v}" for k, v in fields.items())
        super().__init__(
            f"Conflicting resource provider {shown} already exists.")
        self.fields = fields


class InventoryInUse(Conflict):
    code = INVENTORY_INUSE

    def __init__(self, resource_classes, provider_uuid):
        # The message keeps the caller's order (resource class id order,
        # as OpenStack Placement reports it).
        classes = ", ".join(resource_classes)
        super().__init__(
            f"Inventory for '{classes}' on resource provider "
            f"'{provider_uuid}' in use.")
        self.resource_classes = sorted(resource_classes)
        self.provider_uuid = provider_uuid


class ResourceProviderInUse(Conflict):
    code = PROVIDER_IN_USE

    def __init__(self, uuid):
        super().__init__("Resource provider has allocations.")
        self.uuid = uuid


class CannotDeleteParent(Conflict):
    code = PROVIDER_CANNOT_DELETE_PARENT

    def __init__(self, uuid):
        super().__init__(
            "Cannot delete resource provider that is a parent of "
            "another. Delete child providers first.")
        self.uuid = uuid


class InvalidInventory(Conflict):
    """An allocation names a class the provider has no inventory of."""

    def __init__(self, resource_class, provider_uuid, message=None):
        super().__init__(message or (
            f"Inventory for '{resource_class}' on resource provider "
            f"'{provider_uuid}' invalid."))
        self.resource_class = resource_class
        self.provider_uuid = provider_uuid


class CapacityExceeded(InvalidInventory):
    def __init__(self, resource_class, provider_uuid, requested=None,
                 used=None, capacity=None):
        super().__init__(
            resource_class, provider_uuid,
            f"Unable to create allocation for '{resource_class}' on "
            f"resource provider '{provider_uuid}'. The requested amount "
            f"would exceed the capacity.")
        self.requested = requested
        self.used = used
        self.capacity = capacity


class ConstraintsViolated(InvalidInventory):
    def __init__(self, resource_class, provider_uuid):
        super().__init__(
            resource_class, provider_uuid,
            f"Unable to create allocation for '{resource_class}' on "
            f"resource provider '{provider_uuid}'. The requested amount "
            f"would violate inventory constraints.")


class ResourceClassExists(Conflict):
    def __init__(self, name):
        super().__init__(f"Resource class {name} already exists.")
        self.name = name


class ResourceClassInUse(Conflict):
    def __init__(self, name):
        super().__init__(f"Cannot delete resource class {name}. Class is "
                         f"in use in inventory.")
        self.name = name


class TraitExists(Conflict):
    def __init__(self, name):
        super().__init__(f"The Trait {name} already exists")
        self.name = name


class TraitInUse(Conflict):
    def __init__(self, name):
        super().__init__(
            f"The trait {name} is in use by a resource provider.")
        self.name = name


# 400

class BadRequest(PlacementError):
    http_status = 400


class InvalidInventoryCapacity(BadRequest):
    def __init__(self, resource_class, provider_uuid, reserved_can_be_total):
        relation = ("greater than" if reserved_can_be_total
                    else "greater than or equal to")
        super().__init__(
            f"Invalid inventory for '{resource_class}' on resource provider "
            f"'{provider_uuid}'. The reserved value is {relation} total.")
        self.resource_class = resource_class
        self.provider_uuid = provider_uuid


class InvalidInventoryValue(BadRequest):
    """A field of an inventory record is out of its range."""


class InvalidName(BadRequest):
    """A name breaks the rules of its kind (CUSTOM_ prefix, length)."""


class ResourceClassCannotDeleteStandard(BadRequest):
    def __init__(self, name):
        super().__init__(f"Cannot delete standard resource class {name}.")
        self.name = name


class ResourceClassCannotUpdateStandard(BadRequest):
    def __init__(self, name):
        super().__init__(f"Cannot update standard resource class {name}.")
        self.name = name


class TraitCannotDeleteStandard(BadRequest):
    def __init__(self, name):
        super().__init__(f"Cannot delete standard trait {name}.")
        self.name = name


class InvalidParent(BadRequest):
    """A parent that does not exist, is the provider itself, would make a
    loop, or a re-parenting that was not allowed."""


class AllocationProviderNotFound(BadRequest):
    code = DEFAULT

    def __init__(self, uuid):
        super().__init__(
            f"Allocation for resource provider '{uuid}' that does not "
            f"exist.")
        self.uuid = uuid


class InvalidAllocation(BadRequest):
    """An allocation request that can never be valid as written."""


# 503

class CommitOutcomeUnknown(PlacementError):
    """The connection to the database failed while a write committed,
    and nothing tells whether it did (it logs no change to look for):
    it is not run twice; the caller may look and try again."""

    http_status = 503

    def __init__(self, what):
        super().__init__(
            f"The database connection was lost while {what} committed; "
            "the change may or may not have been made.")
