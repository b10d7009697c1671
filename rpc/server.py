"""The scheduler's RPC endpoints, and the oslo.messaging server that
serves them.

- :class:`SchedulerEndpoint`: Nova's scheduler RPC API 4.x (target
  version 4.5): ``select_destinations`` and the fanout casts that keep
  host records current (aggregates, instances).
- :class:`BaseEndpoint`: the ``baseapi`` namespace every Nova service
  answers (``ping``).
- :class:`HostInfoEndpoint`: gantt's ``update_host_info``, for what
  compute hosts report that placement does not hold.
- :class:`StatusEndpoint`: gantt's ``ping`` (namespace ``gantt``, 1.1):
  which scheduler answered and what it knows (gantt-manage scheduler
  ping). Nova's API is unchanged.

Calls with arguments the scheduler cannot use fail with
rpc.errors.InvalidRequest and change nothing; a cast cannot answer, so a
bad one is logged (a warning, one line) and changes nothing. Host record
writes are idempotent: every scheduler process gets each fanout cast and
writes the same values; each process's host state table then catches up
from the database's change log before its next request.
"""

import collections
import contextlib
import datetime
import functools
import os
import socket
import threading
import time
import uuid as uuidlib

import oslo_messaging
import sqlalchemy as sa
from oslo_log import log as logging
from oslo_messaging.rpc import server as om_rpc_server

from placement import conf as placement_conf
from rpc import call_monitor, errors
from rpc import call_times as call_times_mod
from rpc import conf as rpc_conf
from rpc import recorder as recorder_mod
from rpc import serializer as serializer_mod
from scheduler import errors as scheduler_errors
from scheduler import host_records, host_tables, host_updates
from scheduler import request_spec as request_spec_mod

LOG = logging.getLogger(__name__)

# spec_obj not sent at all (RPC API 4.0-4.2): the legacy dicts are used.
_NOT_SENT = object()

# Errors of the records layer that mean "bad argument".
_RECORD_ERRORS = (host_records.HostRecordError, host_records.HostNotFound)


def _invalid(message):
    LOG.warning("Refused a request: %s", message)
    return errors.InvalidRequest(message)


class SchedulerEndpoint:
    """Nova's scheduler manager, on gantt's Scheduler."""

    target = oslo_messaging.Target(version="4.5")

    def __init__(self, scheduler, recorder=None, call_times=None,
                 metrics=None):
        self._scheduler = scheduler
        # Prometheus counters (rpc.metrics), when the service serves them.
        self._metrics = metrics
        # How long each call spent in the Scheduler (rpc.call_times).
        self._call_times = call_times or call_times_mod.CallTimes()
        # Where the fanout casts go: gantt's host records, or the host
        # state in memory when it follows Nova's databases.
        self._updates = host_updates.for_table(scheduler.table)
        # [recording]: the requests served and the deletes learnt of.
        self._recorder = recorder
        # The scheduler decides one request at a time; recording under
        # a lock of our own keeps the trace in the order it decided.
        self._decisions_in_order = (threading.Lock() if recorder
                                    else contextlib.nullcontext())

    # -- calls ------------------------------------------------------------

    @oslo_messaging.expected_exceptions(errors.NoValidHost,
                                        errors.AllocationUpdateFailed,
                                        errors.InvalidRequest)
    def select_destinations(self, ctxt, request_spec=None,
                            filter_properties=None, spec_obj=_NOT_SENT,
                            instance_uuids=None, return_objects=False,
                            return_alternates=False):
        """Per instance, the chosen host and (``return_alternates``) its
        alternates as Selections; without ``return_objects``, the 4.0-4.4
        form: one host dict per instance."""
        spec = _spec_of(request_spec, filter_properties, spec_obj)
        uuids = _instance_uuids(instance_uuids)
        LOG.debug("select_destinations for instances %s (request %s)",
                  uuids, _request_id(ctxt))
        started = time.perf_counter()
        with self._decisions_in_order:
            try:
                with self._call_times.in_scheduler():
                    selections = self._scheduler.select_destinations(
                        ctxt, spec, uuids,
                        return_objects=bool(return_objects),
                        return_alternates=bool(return_alternates))
            except scheduler_errors.NoValidHost as exc:
                self._scheduler.stats["no_valid_host"] += 1
                LOG.info("No valid host (request %s): %s",
                         _request_id(ctxt), exc.message)
                self._observe("no_valid_host", started, cause=exc.cause)
                self._record(ctxt, spec, uuids, error=exc.message)
                raise errors.NoValidHost(reason=exc.message) from None
            except scheduler_errors.AllocationUpdateFailed as exc:
                LOG.info("Claim failed (request %s): %s",
                         _request_id(ctxt), exc.message)
                self._observe("claim_failed", started)
                self._record(ctxt, spec, uuids, error=exc.message)
                raise errors.AllocationUpdateFailed(
                    consumer_uuid=exc.consumer_uuid,
                    error=exc.error) from None
            except scheduler_errors.SchedulerError as exc:
                # A bad spec, or instances that hold allocations already:
                # the caller's to fix, not a server fault.
                self._observe("invalid", started)
                raise _invalid(exc.message) from None
            self._observe("selected", started, len(selections))
            self._record(ctxt, spec, uuids, selections=selections)
        return selections

    def _observe(self, result, started, instances=0, cause=None):
        if self._metrics is not None:
            self._metrics.observe(result, time.perf_counter() - started,
                                  instances, cause)

    def _record(self, ctxt, spec, uuids, selections=None, error=None):
        if self._recorder is None:
            return
        try:
            self._recorder.request(spec, uuids, selections=selections,
                                   error=error,
                                   request_id=_request_id(ctxt))
        except Exception:
            # No trace line is worth a failed request.
            LOG.exception("Could not record request %s", _request_id(ctxt))

    # -- fanout casts -------------------------------------------------------

    def update_aggregates(self, ctxt, aggregates):
        """Host aggregates created or changed (a list, or one)."""
        self._cast("update_aggregates", self._updates.update_aggregates,
                   lambda: [host_records.check_aggregate(**_aggregate(a))
                            for a in _as_list(aggregates)])

    def delete_aggregate(self, ctxt, aggregate):
        self._cast("delete_aggregate", self._updates.delete_aggregate,
                   lambda: host_records.check_uuid(
                       _aggregate(aggregate, need_name=False)["uuid"]))

    def update_instance_info(self, ctxt, host_name, instance_info):
        """Instances (an InstanceList or one Instance) now on
        ``host_name``."""
        self._cast("update_instance_info",
                   lambda instances: self._updates.update_instance_info(
                       host_name, instances),
                   lambda: _host(host_name) and host_records.check_instances(
                       _as_list(instance_info)))

    def delete_instance_info(self, ctxt, host_name, instance_uuid):
        """An instance deleted (Nova's computes send it with
        [filter_scheduler] track_instance_changes, the default)."""
        def apply(uuid):
            self._updates.delete_instance_info(host_name, uuid)
            if self._recorder is not None:
                self._recorder.deleted(uuid, host_name)
        self._cast("delete_instance_info", apply,
                   lambda: _host(host_name) and host_records.check_uuid(
                       instance_uuid, "instance uuid"))

    def sync_instance_info(self, ctxt, host_name, instance_uuids):
        """``instance_uuids`` are every instance on ``host_name``."""
        def check():
            _host(host_name)
            if not isinstance(instance_uuids, list | tuple):
                raise host_records.HostRecordError(
                    "instance_uuids: expected a list of uuids")
            return [host_records.check_uuid(u, "instance uuid")
                    for u in instance_uuids]
        def apply(uuids):
            self._updates.sync_instance_info(host_name, uuids)
            if self._recorder is not None:
                # A delete whose delete_instance_info was lost.
                self._recorder.synced(host_name, uuids)
        self._cast("sync_instance_info", apply, check)

    def _cast(self, method, apply, check):
        """Apply a cast: all of it, or (bad input, logged) none of it."""
        try:
            apply(check())
        except (*_RECORD_ERRORS, serializer_mod.InvalidPrimitive) as exc:
            LOG.warning("Ignored %s cast: %s", method, exc)
            return
        LOG.debug("Applied %s", method)


def _host(value):
    """A host name as the records take it (HostRecordError otherwise)."""
    return host_records.check_name(value, "host_name")


class BaseEndpoint:
    """The ``baseapi`` namespace of every Nova service."""

    target = oslo_messaging.Target(namespace="baseapi", version="1.1")

    def __init__(self, service_name="scheduler"):
        self._service_name = service_name

    def ping(self, ctxt, arg):
        return {"service": self._service_name, "arg": arg}


class HostInfoEndpoint:
    """What a compute host reports that placement does not hold, for
    gantt-aware compute agents and tools (namespace ``gantt``)."""

    target = oslo_messaging.Target(namespace="gantt", version="1.0")

    _SERVICE_FIELDS = ("enabled", "disabled_reason", "forced_down")

    def __init__(self, store):
        self._store = store

    @oslo_messaging.expected_exceptions(errors.InvalidRequest)
    def update_host_info(self, ctxt, host, nodename=None,
                         compute_node_uuid=None, report=None, service=None,
                         heartbeat=None):
        """Record, in one transaction, any of:

        - ``report``: the compute node's fields (host_records
          .REPORT_DEFAULTS: hypervisor_type and _version, cpu_info,
          supported_instances, numa_topology, pci_device_pools, stats,
          metrics, vcpus, memory_mb, local_gb and their use, allocation
          ratios, cell_uuid); needs ``nodename``, and
          ``compute_node_uuid`` unless the node is known already;
        - ``service``: {"enabled", "disabled_reason", "forced_down"};
        - ``heartbeat``: true (now) or an ISO 8601 time.

        Returns {"host", "compute_node_uuid"}. Nothing is written when any
        part is invalid."""
        try:
            _check_name(host, "host")
            if nodename is not None:
                _check_name(nodename, "nodename")
            service = _service_state(service, self._SERVICE_FIELDS)
            at = _heartbeat(heartbeat)
            if report is not None and not isinstance(report, dict):
                raise host_records.HostRecordError(
                    "report: expected an object of compute node fields")
            if report is not None and nodename is None:
                raise host_records.HostRecordError(
                    "nodename: required with a report")
            if report is None and service is None and at is None:
                raise host_records.HostRecordError(
                    "nothing to update: give report, service or heartbeat")
            node = self._store.write(
                _write_host_info, host, nodename, compute_node_uuid,
                report, service, at)
        except _RECORD_ERRORS as exc:
            raise _invalid(f"update_host_info: {exc}") from None
        return {"host": host, "compute_node_uuid": node}


class StatusEndpoint:
    """gantt's ``ping``: answered from memory, cheap enough to ask any
    time (namespace ``gantt``; version 1.1 adds it to 1.0's
    update_host_info), and ``view`` (1.2): what the process believes."""

    target = oslo_messaging.Target(namespace="gantt", version="1.2")

    def __init__(self, scheduler, clock=time.monotonic):
        self._scheduler = scheduler
        self._clock = clock
        self._started = clock()

    def ping(self, ctxt):
        """{"host", "pid", "version", "uptime" (seconds), "hosts" (compute
        hosts this process's host state knows, None before it has read
        them)}."""
        conf = getattr(self._scheduler, "conf", None)
        table = getattr(self._scheduler, "table", None)
        hosts = getattr(table, "rows_by_host", None)
        return {"host": getattr(conf, "host", None) or socket.gethostname(),
                "pid": os.getpid(),
                "version": placement_conf.version(),
                "uptime": round(self._clock() - self._started, 3),
                "hosts": None if hosts is None else len(hosts)}

    def view(self, ctxt):
        """(1.2) {"host", "pid", "usage", "instances"}: this process's
        provider usage and instances per host, read up to date first
        (Scheduler.view), to compare with the database."""
        conf = getattr(self._scheduler, "conf", None)
        found = self._scheduler.view()
        return {"host": getattr(conf, "host", None) or socket.gethostname(),
                "pid": os.getpid(),
                "usage": {uuid: {str(rc): used for rc, used in per.items()}
                          for uuid, per in found["usage"].items()},
                "instances": found["instances"]}


def _write_host_info(txn, host, nodename, node_uuid, report, service, at):
    if report is not None:
        if node_uuid is None:
            node_uuid = _known_node(txn, host, nodename)
        host_records.upsert_compute_node(txn, node_uuid, host, nodename,
                                         **report)
    if service is not None:
        host_records.set_service_state(txn, host, **service)
    if at is not None:
        host_records.heartbeat(txn, host, None if at is True else at)
    return None if node_uuid is None else str(node_uuid)


def _check_name(value, what):
    if not isinstance(value, str) or not value:
        raise host_records.HostRecordError(
            f"{what}: expected a non-empty string, got {value!r}")


def _known_node(txn, host, nodename):
    cn = host_tables.compute_nodes
    found = txn.scalar(sa.select(cn.c.uuid).where(
        cn.c.host == host, cn.c.nodename == nodename))
    if found is None:
        raise host_records.HostRecordError(
            f"compute_node_uuid: required for node {nodename!r} of host "
            f"{host!r}, which is not known yet")
    return found


def _service_state(service, fields):
    if service is None:
        return None
    if not isinstance(service, dict):
        raise host_records.HostRecordError(
            "service: expected an object with enabled, disabled_reason, "
            "forced_down")
    unknown = sorted(set(service) - set(fields))
    if unknown:
        raise host_records.HostRecordError(
            f"service: unknown field(s) {', '.join(unknown)}")
    for name in ("enabled", "forced_down"):
        if name in service and not isinstance(service[name], bool):
            raise host_records.HostRecordError(
                f"service.{name}: expected true or false, got "
                f"{service[name]!r}")
    return dict(service)


def _heartbeat(value):
    if value is None or value is False:
        return None
    if value is True:
        return True
    if isinstance(value, str):
        try:
            return datetime.datetime.fromisoformat(value)
        except ValueError:
            pass
    raise host_records.HostRecordError(
        f"heartbeat: expected true or an ISO 8601 time, got {value!r}")


# -- select_destinations arguments ------------------------------------------


def _spec_of(request_spec, filter_properties, spec_obj):
    """A RequestSpec from whichever form the caller's version sent."""
    try:
        if spec_obj is _NOT_SENT:
            # RPC API 4.0-4.2: the legacy request_spec and
            # filter_properties dicts.
            if not isinstance(request_spec, dict):
                raise errors.InvalidRequest(
                    "request_spec: expected the legacy request spec dict "
                    "(or send spec_obj)")
            return serializer_mod.request_spec_from_legacy(
                request_spec, filter_properties or {})
        if isinstance(spec_obj, request_spec_mod.RequestSpec):
            return spec_obj
        if isinstance(spec_obj, dict):
            # gantt's JSON form, from a client other than Nova's
            # conductor (the serializer turned Nova's object primitive
            # into a RequestSpec already): Nova's internal hints are
            # dropped, as Nova's API drops them from users' requests.
            return request_spec_mod.RequestSpec.from_dict(
                spec_obj).without_internal_hints()
        raise errors.InvalidRequest(
            f"spec_obj: expected a RequestSpec, got "
            f"{type(spec_obj).__name__}")
    except errors.InvalidRequest as exc:
        raise _invalid(exc.message) from None
    except scheduler_errors.InvalidRequestSpec as exc:
        raise _invalid(exc.message) from None
    except serializer_mod.InvalidPrimitive as exc:
        raise _invalid(str(exc)) from None


def _instance_uuids(value):
    if value is None:
        return None
    if not isinstance(value, list | tuple):
        raise _invalid("instance_uuids: expected a list of uuids")
    out = []
    for i, item in enumerate(value):
        try:
            out.append(str(uuidlib.UUID(str(item))))
        except ValueError:
            raise _invalid(f"instance_uuids[{i}]: {item!r} is not a uuid") \
                from None
    return out


def _request_id(ctxt):
    return ctxt.get("request_id") if isinstance(ctxt, dict) else None


# -- cast arguments -----------------------------------------------------------


def _as_list(value):
    return list(value) if isinstance(value, list | tuple) else [value]


def _aggregate(value, need_name=True):
    """{uuid, name, metadata, hosts} of an Aggregate (the serializer's
    dataclass) or of its plain dict form."""
    get = value.get if isinstance(value, dict) else (
        lambda name, default=None: getattr(value, name, default))
    if value is None or isinstance(value, str | int | float | list):
        raise host_records.HostRecordError(
            f"aggregate: expected an Aggregate, got {value!r}")
    uuid = get("uuid")
    if uuid is None:
        raise host_records.HostRecordError("aggregate: uuid missing")
    name = get("name")
    if need_name and name is None:
        raise host_records.HostRecordError(
            f"aggregate {uuid}: name missing")
    hosts = get("hosts") or ()
    if not isinstance(hosts, list | tuple):
        raise host_records.HostRecordError(
            f"aggregate {uuid}: hosts: expected a list")
    return {"uuid": uuid, "name": name, "metadata": get("metadata") or {},
            "hosts": list(hosts)}


# -- the server ---------------------------------------------------------------


class _ServerSerializer(oslo_messaging.Serializer):
    """The Nova serializer, with primitives it cannot decode answered as
    InvalidRequest (an expected exception, no server traceback) rather
    than as an internal error."""

    def __init__(self, inner, stats=None):
        self._inner = inner
        # CPU spent decoding the calls and encoding the replies, in the
        # scheduler's stats (the benchmarks split a call's cost with it).
        self._stats = stats if stats is not None else collections.Counter()
        self._stats_lock = threading.Lock()

    def _count(self, what, started):
        spent = time.thread_time() - started
        with self._stats_lock:
            self._stats[what] += spent

    def serialize_entity(self, ctxt, entity):
        started = time.thread_time()
        try:
            return self._inner.serialize_entity(ctxt, entity)
        finally:
            self._count("encode_cpu_s", started)

    def deserialize_entity(self, ctxt, entity):
        started = time.thread_time()
        try:
            return _decoded(self._inner.deserialize_entity, ctxt, entity)
        finally:
            self._count("decode_cpu_s", started)

    def serialize_context(self, ctxt):
        return self._inner.serialize_context(ctxt)

    def deserialize_context(self, ctxt):
        started = time.thread_time()
        try:
            return _decoded(self._inner.deserialize_context, ctxt)
        finally:
            self._count("decode_cpu_s", started)


def _decoded(decode, *args):
    try:
        return decode(*args)
    except serializer_mod.InvalidPrimitive as exc:
        try:
            raise _invalid(exc.message) from None
        except errors.InvalidRequest:
            # Carries the InvalidRequest to the caller as expected.
            raise oslo_messaging.ExpectedException() from None


def endpoints(scheduler, recorder=None, call_times=None, metrics=None):
    return [SchedulerEndpoint(scheduler, recorder, call_times, metrics),
            BaseEndpoint(),
            HostInfoEndpoint(scheduler.store),
            StatusEndpoint(scheduler)]


def target(conf):
    """Where the server listens: the topic, as this host (topic.host for
    calls to this scheduler only, and a fanout queue of its own)."""
    return oslo_messaging.Target(topic=conf.scheduler.topic,
                                 server=conf.host)


class _CastsInOrder:
    """The server's executor: calls go to a pool of threads, casts
    (messages that expect no reply) to one thread of their own, in the
    order they were submitted."""

    def __init__(self, pool_cls, max_workers, on_shutdown=None):
        self._calls = pool_cls(max_workers=max_workers)
        self._casts = pool_cls(max_workers=1)
        self._on_shutdown = on_shutdown

    def submit(self, fn, incoming, *args, **kwargs):
        message = incoming[0] if isinstance(incoming, list) else incoming
        executor = self._calls if _expects_reply(message) else self._casts
        return executor.submit(fn, incoming, *args, **kwargs)

    def shutdown(self, wait=True):
        self._casts.shutdown(wait=wait)
        self._calls.shutdown(wait=wait)
        if self._on_shutdown is not None:
            self._on_shutdown()


def _expects_reply(message):
    """Whether an incoming message is a call. The AMQP drivers keep the
    caller's message id as orig_msg_id (msg_id is made up when a cast
    has none)."""
    return bool(getattr(message, "orig_msg_id",
                        getattr(message, "msg_id", None)))


class OrderedCastsServer(om_rpc_server.RPCServer):
    """oslo.messaging's RPC server, with the casts applied one at a time
    in the order they arrived.

    The stock server hands every message to its thread pool, so two
    casts from one sender may run at once and finish in either order: a
    delete_aggregate could land before the update_aggregates sent ahead
    of it and leave the aggregate behind. The broker delivers one
    sender's messages in order and the listener submits them in that
    order, so one thread for the casts keeps it; calls still share the
    pool."""

    # The trace of [recording], written out when the server's last
    # call and cast are over (wait()).
    recorder = None
    # Where each call's wall time is counted (rpc.call_times), shared
    # with the endpoint; None: not counted.
    call_times = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._executor_cls = functools.partial(
            _CastsInOrder, self._executor_cls,
            on_shutdown=self._handled_all)

    def _handled_all(self):
        # The dispatcher's call monitor (rpc.call_monitor), when it has
        # one: no call is left to keep alive.
        monitor = getattr(self.dispatcher, "monitor", None)
        if monitor is not None:
            monitor.close()
        if self.recorder is not None:
            self.recorder.close()

    def _process_incoming(self, incoming):
        # Runs on an executor thread: the message's dispatch and reply.
        times = self.call_times
        if times is None:
            return super()._process_incoming(incoming)
        started = times.started()
        # The RabbitMQ listener stamps its messages as they arrive
        # (rpc.rabbit_listener); other transports' messages count from
        # here.
        received = getattr(incoming[0], "received_at", started)
        try:
            return super()._process_incoming(incoming)
        finally:
            times.ended(received)


def build_server(conf, scheduler, transport=None, metrics=None):
    """An oslo.messaging RPC server for ``scheduler`` (threading executor,
    casts in order, Nova serializer, call-monitor heartbeats from one
    thread); not started. Without
    ``transport``, one is made from ``conf`` (the caller cleans it up:
    ``server.transport``). With ``[recording] enabled``, it records what
    it serves until it has stopped (``server.recorder``). Each
    select_destinations call's wall time, by phase, is counted in
    ``server.call_times`` (rpc.call_times); ``metrics``: the worker's
    Prometheus counters (rpc.metrics.SchedulerMetrics), if any."""
    rpc_conf.register_opts(conf)
    recorder = recorder_mod.from_conf(conf, rpc_conf.worker_count(conf))
    call_times = call_times_mod.CallTimes()
    if transport is None:
        transport = rpc_conf.get_server_transport(conf)
    # As oslo_messaging.get_rpc_server builds it, with the dispatcher
    # that keeps calls alive from one thread (rpc.call_monitor). No
    # executor argument: oslo.messaging picks threading unless eventlet
    # has monkey-patched the process (passing it is deprecated).
    dispatcher = call_monitor.MonitoredDispatcher(
        endpoints(scheduler, recorder, call_times, metrics),
        _ServerSerializer(serializer_mod.NovaSerializer(),
                          getattr(scheduler, "stats", None)))
    server = OrderedCastsServer(transport, target(conf), dispatcher)
    server.recorder = recorder
    server.call_times = call_times
    return server
