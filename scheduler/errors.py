"""Errors the scheduler reports to its callers.

They live apart from the engine so that a caller (the conductor's RPC
client, the commands) can name them without importing the scheduler
itself.
"""

from typing import Any

from filters import base as filters_base


class SchedulerError(Exception):
    """Base: ``message`` says what went wrong, for the caller to show."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(SchedulerError):
    """An option names something the scheduler cannot use (a filter or
    weigher that is not installed): the operator's to fix."""


class InvalidRequestSpec(SchedulerError, ValueError):
    """A request spec that cannot be scheduled as given; the message
    starts with the path of the field at fault."""


class NoValidHost(SchedulerError):
    """No host can take (every instance of) the request. ``explain``:
    what the request's stages found before it failed, when the caller
    asked for an explanation (Scheduler.schedule's ``explain``).
    ``cause``, for the metrics: ``no_candidates`` (placement had none),
    ``filtered`` (the filters removed them all), ``claims_lost`` (some
    passed, none could be claimed), ``group_changed`` (the server group
    refused every claim: other schedulers kept placing members),
    ``forced_host``, ``request`` (a zone,
    tenant or destination no host can match) or ``unknown_name`` (a
    resource class or trait placement does not know)."""

    explain: dict[str, Any] | None = None

    def __init__(self, message: str, cause: str = "other") -> None:
        super().__init__(message)
        self.cause = cause


class AllocationUpdateFailed(SchedulerError):
    """A claim beside a consumer's allocations (an evacuation) lost to
    another writer of that consumer: Nova's AllocationUpdateFailed, which
    its conductor answers by setting the instance to ERROR."""

    def __init__(self, consumer_uuid: str, error: str) -> None:
        super().__init__(f"Failed to update allocations for consumer "
                         f"{consumer_uuid}. Error: {error}")
        self.consumer_uuid = consumer_uuid
        self.error = error


def from_filter(error: filters_base.RequestError) -> InvalidRequestSpec:
    """A filter's RequestError as the scheduler reports it: an
    InvalidRequestSpec (what the RPC server and the commands answer a
    bad request with) that is still an instance of the filter's own
    class, so that a caller catching that (JsonQueryError) still does.
    Same message, attributes and traceback."""
    cls = _spec_error_class(type(error))
    converted = cls.__new__(cls, *error.args)
    converted.__dict__.update(error.__dict__)
    return converted.with_traceback(error.__traceback__)


# A filter error class -> its subclass that is also an
# InvalidRequestSpec (a handful: one per error class a filter raises).
_SPEC_ERRORS: dict[type[filters_base.RequestError],
                   type[InvalidRequestSpec]] = {}


def _spec_error_class(
        cls: type[filters_base.RequestError]) -> type[InvalidRequestSpec]:
    """The subclass of both ``cls`` and InvalidRequestSpec, made once per
    filter error class; it reads as ``cls`` in tracebacks."""
    found = _SPEC_ERRORS.get(cls)
    if found is None:
        found = _SPEC_ERRORS[cls] = type(
            cls.__name__, (cls, InvalidRequestSpec),
            {"__module__": cls.__module__,
             "__qualname__": cls.__qualname__, "__doc__": cls.__doc__})
    return found
