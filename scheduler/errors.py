"""Errors the scheduler reports to its callers."""


class SchedulerError(Exception):
    """Base: ``message`` says what went wrong, for the caller to show."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class InvalidRequestSpec(SchedulerError, ValueError):
    """A request spec that cannot be scheduled as given; the message
    starts with the path of the field at fault."""
