"""Recording the traffic gantt-scheduler serves, for gantt-simulate to
replay (docs/simulation.md, "Replaying real traffic").

Opt-in (``[recording] enabled``). Each line of the trace is one JSON
object (JSON lines):

- a header at the top of every file, and where a restarted recorder
  appends: ``{"trace": "gantt", "format": 1, "started_at": ...,
  "scheduler": ...}``;
- per instance of each select_destinations request, a create:
  ``{"time", "action": "create", "instance", "request", "index",
  "num_instances", "flavor": {...}, "zone", "group", "group_policy",
  "rebuild", "host", "node", "error"}``, and the whole request spec
  (``"spec"``) on the request's first line;
- per instance the scheduler learns is gone (delete_instance_info, or
  an instance created while recording that a sync_instance_info no
  longer lists), a delete: ``{"time", "action": "delete", "instance",
  "host"}``.

``time`` is seconds since recording started, never decreasing. Lines
are in the order the scheduler decided: the RPC endpoint records each
decision before it lets the next one start (rpc/server.py).

Recording must not slow decisions: a line is serialised outside the
lock and written to a buffered file (placement.rotating_file); a
background thread flushes the buffer every ``flush_interval`` seconds
(no fsync). The file rotates at ``max_bytes`` as logging's
RotatingFileHandler does (PATH.1 the newest backup, ``backup_count`` of
them kept); gantt-simulate reads a rotated set oldest first. A write
that fails is logged and the request served as if nothing were
recorded.
"""

import datetime
import os
import threading
import time

import orjson
from oslo_config import cfg
from oslo_log import log as logging

from placement import rotating_file

LOG = logging.getLogger(__name__)

GROUP = "recording"
FORMAT = 1

RECORDING_OPTS = [
    cfg.BoolOpt(
        "enabled",
        default=False,
        help="Record every select_destinations request gantt-scheduler "
             "serves (the request spec, the time, the chosen host or the "
             "error) and every instance delete it learns of, into a trace "
             "that 'gantt-simulate run --workload TRACE' replays. Take a "
             "snapshot of the cloud when recording starts "
             "('gantt-manage cloud export'): the replay starts from it."),
    cfg.StrOpt(
        "path",
        help="The trace file, e.g. /var/lib/gantt/trace.jsonl (JSON "
             "lines; its name must end in .jsonl for gantt-simulate to "
             "read it as a trace). Required when recording is enabled. "
             "With several [scheduler] workers, each process writes its "
             "own file, the process id before the extension "
             "(trace.<pid>.jsonl)."),
    cfg.IntOpt(
        "max_bytes",
        default=100 * 1024 * 1024,
        min=0,
        help="Size at which the trace file is rotated (renamed PATH.1, "
             "the older backups shifted to PATH.2 ...). 0: never "
             "rotated, unbounded."),
    cfg.IntOpt(
        "backup_count",
        default=5,
        min=0,
        help="Rotated trace files kept; older ones are removed. The trace "
             "takes at most max_bytes x (backup_count + 1) bytes. 0 "
             "starts the file again when it is full."),
    cfg.FloatOpt(
        "flush_interval",
        default=1.0,
        min=0.01,
        help="Seconds between two writes of the buffered trace lines to "
             "the file (no fsync): a crash loses at most this much of the "
             "trace. Everything is written when the server stops."),
]


def register_opts(conf):
    conf.register_opts(RECORDING_OPTS, group=GROUP)


def list_opts():
    return [(GROUP, RECORDING_OPTS)]


class RecordingConfigError(cfg.Error):
    """[recording] options that cannot be used."""


def check_conf(conf):
    """RecordingConfigError when ``conf``'s [recording] cannot be used:
    for a command to say so before it starts serving."""
    register_opts(conf)
    if conf[GROUP].enabled and not conf[GROUP].path:
        raise RecordingConfigError(
            "[recording] path: required when recording is enabled")


def from_conf(conf, workers=1):
    """The Recorder ``conf`` asks for, or None when recording is off.
    ``workers``: the scheduler processes that will record (each gets a
    file of its own)."""
    check_conf(conf)
    opts = conf[GROUP]
    if not opts.enabled:
        return None
    path = opts.path
    if workers > 1:
        stem, ext = os.path.splitext(path)
        path = f"{stem}.{os.getpid()}{ext}"
    recorder = Recorder(path, max_bytes=opts.max_bytes,
                        backup_count=opts.backup_count,
                        flush_interval=opts.flush_interval,
                        scheduler=conf.host if "host" in conf else None)
    LOG.info("Recording select_destinations requests and deletes to %s",
             path)
    return recorder


class Recorder:
    """Appends trace lines to ``path``; thread-safe."""

    def __init__(self, path, max_bytes=0, backup_count=0,
                 flush_interval=1.0, scheduler=None, clock=time.monotonic,
                 wall=time.time):
        self._clock = clock
        self._start = clock()
        self._out = rotating_file.RotatingFile(
            path, _dumps({"trace": "gantt", "format": FORMAT,
                          "started_at": _iso(wall()),
                          "scheduler": scheduler}),
            LOG, ("Cannot record to %s (requests are served, not "
                  "recorded): %s", "Recording to %s again"),
            max_bytes=max_bytes, backup_count=backup_count,
            flush_interval=flush_interval, thread_name="gantt-trace-flush")
        self.path = self._out.path
        self._lock = threading.Lock()
        self._last = 0.0
        self._requests = 0
        # Instances created while recording, by uuid: their host, so a
        # sync_instance_info that drops one is recorded as its delete.
        self._live = {}

    # -- what the endpoint tells -----------------------------------------

    def request(self, spec, instance_uuids, selections=None, error=None,
                request_id=None):
        """A select_destinations request served: one create line per
        instance. ``selections``: per instance, the chosen host first
        (Selections or, for the 4.0-4.4 answer, host dicts); ``error``: why
        none was placed."""
        with self._lock:
            self._requests += 1
            number = self._requests
        base = _spec_fields(spec)
        count = max(len(instance_uuids or ()), spec.num_instances or 1)
        for index in range(count):
            line = dict(base, instance=_item(instance_uuids, index),
                        request=request_id or f"req-{number}",
                        index=index, num_instances=count,
                        **_outcome(selections, index, error))
            if index == 0:
                # orjson writes the dataclass as to_dict() would, in a
                # fiftieth of the time.
                line["spec"] = spec
            self._write(line)
            if line["host"] and line["instance"]:
                with self._lock:
                    self._live[line["instance"]] = line["host"]

    def deleted(self, instance_uuid, host=None):
        """The scheduler learnt that an instance is gone."""
        with self._lock:
            self._live.pop(instance_uuid, None)
        self._write({"action": "delete", "instance": instance_uuid,
                     "host": host})

    def synced(self, host, instance_uuids):
        """``instance_uuids`` are all of ``host``'s: instances created
        while recording that it no longer holds are deletes."""
        kept = set(instance_uuids)
        with self._lock:
            gone = sorted(u for u, h in self._live.items()
                          if h == host and u not in kept)
        for uuid in gone:
            self.deleted(uuid, host)

    # -- the file -----------------------------------------------------------

    def _write(self, record):
        # Serialised outside the lock; the time goes in front under it,
        # so lines are in decision order with times that never decrease.
        body = _dumps(record)[1:]
        with self._lock, self._out.lock:
            now = max(self._last, self._clock() - self._start)
            self._last = now
            self._out.write_locked(b'{"time":%.6f,%s\n' % (now, body))

    def flush(self):
        self._out.flush()

    def close(self):
        """Write out what is buffered and close the file."""
        self._out.close()


def _dumps(record):
    # orjson: a tenth of json's time, on the request's thread.
    return orjson.dumps(record, default=str)


def _iso(epoch):
    return datetime.datetime.fromtimestamp(
        epoch, datetime.timezone.utc).isoformat()


def _item(values, index):
    values = list(values or ())
    return values[index] if index < len(values) else None


def _spec_fields(spec):
    """What gantt-simulate replays of a request: the flavor (a boot from
    volume takes no root disk from the host), the zone, the group."""
    flavor = spec.flavor
    group = spec.instance_group
    return {
        "action": "create",
        "flavor": {"name": flavor.name or flavor.flavorid or None,
                   "vcpus": flavor.vcpus, "memory_mb": flavor.memory_mb,
                   "root_gb": 0 if spec.is_bfv else flavor.root_gb,
                   "ephemeral_gb": flavor.ephemeral_gb, "swap": flavor.swap,
                   "extra_specs": dict(flavor.extra_specs)},
        "zone": spec.availability_zone,
        "group": group.uuid if group is not None else None,
        "group_policy": group.policy if group is not None else None,
        "rebuild": spec.hint("_nova_check_type") == "rebuild",
    }


def _outcome(selections, index, error):
    """{"host", "node", "error"} of instance ``index``."""
    if error is not None or selections is None \
            or index >= len(selections):
        return {"host": None, "node": None,
                "error": error or "not placed"}
    chosen = selections[index]
    if isinstance(chosen, list | tuple):
        chosen = chosen[0]
    if isinstance(chosen, dict):
        return {"host": chosen.get("host"), "node": chosen.get("nodename"),
                "error": None}
    return {"host": chosen.service_host, "node": chosen.nodename,
            "error": None}
