"""Errors the scheduler RPC server sends back to its callers.

oslo.messaging sends a failed call's exception as its class name, module,
``args`` and ``kwargs``; a caller that allows the module rebuilds the
exception, any other caller gets a RemoteError with the class name and
the message. Every error here is raised as an expected exception, so the
server does not log a traceback for what is the caller's business.
"""

NOVA_EXCEPTION_MODULE = "nova.exception"


class NoValidHost(Exception):
    """Nova's NoValidHost as it crosses the wire: class ``NoValidHost`` of
    module ``nova.exception``, ``args`` [message], ``kwargs`` {"reason",
    "code": 500}. A Nova conductor rebuilds it as
    nova.exception.NoValidHost; a caller without Nova gets a RemoteError
    whose exc_type is "NoValidHost"."""

    msg_fmt = "No valid host was found. %(reason)s"

    def __init__(self, message=None, reason="", code=500):
        if message is None:
            message = self.msg_fmt % {"reason": reason}
        super().__init__(message)
        self.message = message
        self.kwargs = {"reason": reason, "code": code}


# What Nova's conductor has in its allowed_remote_exmods: the wire names
# this class as Nova's own.
NoValidHost.__module__ = NOVA_EXCEPTION_MODULE


class AllocationUpdateFailed(Exception):
    """Nova's AllocationUpdateFailed as it crosses the wire: a claim
    beside an evacuated instance's source allocation lost to another
    writer of that instance. Nova's conductor sets the instance to
    ERROR on it, as on NoValidHost."""

    def __init__(self, message=None, consumer_uuid="", error=""):
        if message is None:
            message = (f"Failed to update allocations for consumer "
                       f"{consumer_uuid}. Error: {error}")
        super().__init__(message)
        self.message = message
        self.kwargs = {"consumer_uuid": consumer_uuid, "error": error,
                       "code": 500}


AllocationUpdateFailed.__module__ = NOVA_EXCEPTION_MODULE


class InvalidRequest(Exception):
    """A call whose arguments the scheduler cannot use (a request spec,
    an object primitive or a host report); the message says which field
    and why. Nothing was changed."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message
        self.kwargs = {}
