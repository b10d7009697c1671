"""The scheduler's RPC client, for conductors and tools.

It calls a gantt scheduler (or any server of Nova's scheduler RPC API
4.x) the way Nova's conductor and compute hosts do: select_destinations
as a call with a long timeout kept alive by the call monitor's heartbeat,
the host record updates as fanout casts (every scheduler process keeps
its own host state), ``ping`` in the ``baseapi`` namespace and gantt's
``update_host_info`` and ``ping`` in the ``gantt`` namespace.

Failures come back as gantt errors: the server's NoValidHost as
scheduler.errors.NoValidHost with the server's message, a request the
server cannot use as :class:`InvalidRequest`, no answer in time as
:class:`SchedulerTimeout`.

    with SchedulerClient(conf) as client:
        [[chosen, *alternates]] = client.select_destinations(
            context, spec, [instance_uuid])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import kombu.exceptions
import oslo_messaging

from rpc import conf as rpc_conf
from rpc import serializer as serializer_mod
from scheduler import errors, host_records
from scheduler import request_spec as request_spec_mod
from scheduler import selection as selection_mod

# The version select_destinations is sent at (spec_obj, instance_uuids,
# return_objects, return_alternates); the casts use the versions that
# introduced them, as Nova does.
API_VERSION = "4.5"
AGGREGATES_VERSION = "4.1"
INSTANCE_INFO_VERSION = "4.2"

# Nova's defaults for select_destinations: [DEFAULT] long_rpc_timeout for
# the whole call, rpc_response_timeout between the server's heartbeats.
DEFAULT_TIMEOUT = 1800
DEFAULT_CALL_MONITOR_TIMEOUT = 60


class SchedulerTimeout(errors.SchedulerError):
    """No answer in time (no scheduler listening, or one that stopped)."""


class SchedulerUnavailable(errors.SchedulerError):
    """The message could not be sent: the broker is unreachable (with a
    bounded ``retry``; oslo.messaging retries forever by default)."""


class RemoteSchedulerError(errors.SchedulerError):
    """The scheduler failed the call; ``exc_type`` names its error."""

    def __init__(self, message: str, exc_type: str | None = None) -> None:
        super().__init__(message)
        self.exc_type = exc_type


class InvalidRequest(RemoteSchedulerError, ValueError):
    """The scheduler could not use the call's arguments (the message says
    which and why); nothing was changed."""


class InvalidHostInfo(errors.SchedulerError, ValueError):
    """A host report the scheduler would refuse, caught before sending
    (the message names the field); nothing was sent."""


class SchedulerClient:
    """Calls to the schedulers listening on ``topic`` (default: the
    ``[scheduler] topic`` of ``conf``). Without ``transport``, one is made
    from ``conf`` and cleaned up by :meth:`close`.

    ``timeout`` bounds select_destinations; ``call_monitor_timeout`` (None:
    off) is the longest wait between two heartbeats of the scheduler
    working on it, so a dead scheduler is noticed in that time. The other
    calls wait ``rpc_response_timeout``. ``retry``: connection attempts
    before a send gives up (None: forever, oslo.messaging's default).
    Each method's ``context`` is a dict, an oslo.context RequestContext
    or None (a fresh request id).
    """

    def __init__(self, conf: Any, transport: Any = None,
                 topic: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT,
                 call_monitor_timeout: float | None =
                 DEFAULT_CALL_MONITOR_TIMEOUT,
                 retry: int | None = None) -> None:
        rpc_conf.register_opts(conf)
        self._own_transport = transport is None
        self.transport = transport or rpc_conf.get_transport(conf)
        self.topic = topic or conf.scheduler.topic
        self.timeout = timeout
        self.call_monitor_timeout = call_monitor_timeout
        self._client = oslo_messaging.get_rpc_client(
            self.transport,
            oslo_messaging.Target(topic=self.topic, version=API_VERSION),
            serializer=serializer_mod.NovaSerializer(), retry=retry)

    def close(self) -> None:
        if self._own_transport:
            self.transport.cleanup()

    def __enter__(self) -> SchedulerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- calls --------------------------------------------------------------

    def select_destinations(
            self, context: Any,
            spec: request_spec_mod.RequestSpec | dict[str, Any],
            instance_uuids: Iterable[Any] | None = None,
            return_objects: bool = True, return_alternates: bool = True
    ) -> list[list[selection_mod.Selection]] | list[dict[str, Any]]:
        """Per instance, the chosen host (claimed when ``instance_uuids``
        are given) then its alternates, as Selections. ``spec``: a gantt
        RequestSpec, its JSON dict form, or a Nova RequestSpec primitive.
        With ``return_objects`` false, the old answer: one host dict
        (host, nodename, limits) per instance."""
        cctxt = self._client.prepare(
            version=API_VERSION, timeout=self.timeout,
            call_monitor_timeout=self.call_monitor_timeout)
        answer = self._call(
            cctxt, context, "select_destinations", self.timeout,
            self.call_monitor_timeout,
            spec_obj=_wire_spec(spec),
            instance_uuids=(None if instance_uuids is None
                            else [str(u) for u in instance_uuids]),
            return_objects=bool(return_objects),
            return_alternates=bool(return_alternates))
        if not return_objects:
            return answer
        try:
            return [[_selection(s) for s in per_instance]
                    for per_instance in answer]
        except (TypeError, ValueError) as exc:
            raise RemoteSchedulerError(
                f"select_destinations: the scheduler's answer is not a "
                f"list of Selection lists: {exc}") from None

    def update_host_info(self, context: Any, host: str,
                         nodename: str | None = None,
                         compute_node_uuid: Any = None,
                         report: dict[str, Any] | None = None,
                         service: dict[str, Any] | None = None,
                         heartbeat: Any = None) -> dict[str, Any]:
        """gantt's host report (see rpc.server.HostInfoEndpoint): the
        compute node's ``report``, the ``service`` state and/or a
        ``heartbeat``; returns {"host", "compute_node_uuid"}."""
        if report is not None:
            try:
                host_records.check_report(report)
            except host_records.HostRecordError as exc:
                raise InvalidHostInfo(f"update_host_info: {exc}") from None
        cctxt = self._client.prepare(namespace="gantt", version="1.0")
        return self._call(
            cctxt, context, "update_host_info", None, host=host,
            nodename=nodename,
            compute_node_uuid=(None if compute_node_uuid is None
                               else str(compute_node_uuid)),
            report=report, service=service, heartbeat=heartbeat)

    def ping(self, context: Any, arg: Any = None) -> dict[str, Any]:
        """{"service": ..., "arg": arg} from one scheduler."""
        cctxt = self._client.prepare(namespace="baseapi", version="1.1")
        return self._call(cctxt, context, "ping", None, arg=arg)

    def gantt_ping(self, context: Any,
                   timeout: float | None = None) -> dict[str, Any]:
        """gantt's ping (see rpc.server.StatusEndpoint) from one
        scheduler: {"host", "pid", "version", "uptime", "hosts"};
        SchedulerTimeout when none answers within ``timeout`` seconds
        (None: rpc_response_timeout)."""
        cctxt = self._client.prepare(namespace="gantt", version="1.1",
                                     timeout=timeout)
        return self._call(cctxt, context, "ping", timeout)

    # -- fanout casts: every scheduler process gets them -------------------

    def update_aggregates(self, context: Any, aggregates: Any) -> None:
        """Aggregates created or changed: Nova Aggregate primitives,
        rpc.serializer.Aggregate values or {uuid, name, hosts, metadata}
        dicts."""
        self._cast(context, AGGREGATES_VERSION, "update_aggregates",
                   aggregates=_plain(
                       list(aggregates) if isinstance(aggregates, list | tuple)
                       else [aggregates]))

    def delete_aggregate(self, context: Any, aggregate: Any) -> None:
        self._cast(context, AGGREGATES_VERSION, "delete_aggregate",
                   aggregate=_plain(aggregate))

    def update_instance_info(self, context: Any, host_name: str,
                             instance_info: Any) -> None:
        """Instances now on ``host_name``: a Nova Instance or InstanceList
        primitive, rpc.serializer.Instance values, {uuid, flavor_id,
        project_id} dicts or uuids (one or a list)."""
        self._cast(context, INSTANCE_INFO_VERSION, "update_instance_info",
                   host_name=host_name, instance_info=_plain(instance_info))

    def delete_instance_info(self, context: Any, host_name: str,
                             instance_uuid: Any) -> None:
        self._cast(context, INSTANCE_INFO_VERSION, "delete_instance_info",
                   host_name=host_name, instance_uuid=str(instance_uuid))

    def sync_instance_info(self, context: Any, host_name: str,
                           instance_uuids: Iterable[Any]) -> None:
        """``instance_uuids`` are every instance on ``host_name``."""
        self._cast(context, INSTANCE_INFO_VERSION, "sync_instance_info",
                   host_name=host_name,
                   instance_uuids=[str(u) for u in instance_uuids])

    # -- plumbing -----------------------------------------------------------

    def _call(self, cctxt: Any, context: Any, method: str,
              timeout: float | None, monitor: float | None = None,
              **kwargs: Any) -> Any:
        try:
            return cctxt.call(context, method, **kwargs)
        except oslo_messaging.MessagingTimeout as exc:
            raise SchedulerTimeout(
                f"{method}: no scheduler answered on topic {self.topic!r}"
                f"{_limits(timeout, monitor)} (is gantt-scheduler running "
                f"on this broker and exchange?): {exc}") from None
        except oslo_messaging.RemoteError as exc:
            raise _translated(method, exc.exc_type, exc.value) from None
        except _SEND_FAILURES as exc:
            raise _unavailable(method, exc) from None
        except Exception as exc:
            # A transport that allows nova.exception, with Nova
            # installed, rebuilds Nova's own classes.
            name = type(exc).__name__.removesuffix("_Remote")
            if name in _REMOTE_ERRORS:
                raise _translated(method, name, str(exc)) from None
            raise

    def _cast(self, context: Any, version: str, method: str,
              **kwargs: Any) -> None:
        cctxt = self._client.prepare(fanout=True, version=version)
        try:
            cctxt.cast(context, method, **kwargs)
        except _SEND_FAILURES as exc:
            raise _unavailable(method, exc) from None


# What the transport raises when it gives up sending.
_SEND_FAILURES = (oslo_messaging.MessageDeliveryFailure,
                  kombu.exceptions.OperationalError, ConnectionError)


def _unavailable(method: str, exc: BaseException) -> SchedulerUnavailable:
    return SchedulerUnavailable(
        f"{method}: could not reach the message broker: {exc}")


def _limits(timeout: float | None, monitor: float | None) -> str:
    """How long the call waited, in words."""
    parts = []
    if timeout:
        parts.append(f"within {timeout} s")
    if monitor:
        parts.append(f"with a heartbeat every {monitor} s")
    return " " + " and ".join(parts) if parts else ""


def _no_valid_host(method: str, message: str) -> errors.SchedulerError:
    return errors.NoValidHost(message)


def _invalid_request(method: str, message: str) -> errors.SchedulerError:
    return InvalidRequest(f"{method}: {message}", "InvalidRequest")


_REMOTE_ERRORS: dict[str, Callable[[str, str], errors.SchedulerError]] = {
    "NoValidHost": _no_valid_host,
    "InvalidRequest": _invalid_request,
}


def _translated(method: str, exc_type: str,
                value: str) -> errors.SchedulerError:
    make = _REMOTE_ERRORS.get(exc_type)
    if make is not None:
        return make(method, value)
    return RemoteSchedulerError(
        f"{method} failed in the scheduler: {exc_type}: {value}", exc_type)


def _wire_spec(spec: Any) -> dict[str, Any]:
    """spec_obj as the server expects it: a Nova primitive as it is, a
    gantt RequestSpec as its JSON form."""
    if isinstance(spec, request_spec_mod.RequestSpec):
        return spec.to_dict()
    if isinstance(spec, dict):
        return spec
    raise errors.InvalidRequestSpec(
        f"spec: expected a RequestSpec, its dict form or a Nova "
        f"RequestSpec primitive, got {type(spec).__name__}")


def _selection(value: Any) -> selection_mod.Selection:
    if isinstance(value, selection_mod.Selection):
        return value
    if isinstance(value, dict) and "nova_object.name" in value:
        return serializer_mod.selection_from_primitive(value)
    if isinstance(value, dict):
        return selection_mod.Selection(**value)
    raise TypeError(f"not a Selection: {value!r}")


def _plain(value: Any) -> Any:
    """Dataclasses (the serializer's Aggregate and Instance) as plain
    dicts, recursively; everything else as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
