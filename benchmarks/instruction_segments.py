"""The measured side of benchmarks.instructions: run under callgrind
with instrumentation off, it builds a cloud, warms the scheduler up,
then turns instrumentation on around each segment of decisions only,
and has callgrind write each segment's counts to a file of its own
(labelled ``NAME:DECISIONS``; the first, ``settle``, is left out).

    python instruction_segments.py SHIM HOSTS DECISIONS ROUNDS WORK

SHIM: the shared object benchmarks.instructions compiles (start() and
stop(label) wrap callgrind's client requests); WORK: a directory for
the cloud's SQLite file and the decision log, which the caller
removes. benchmarks.instructions copies this file into WORK and runs
it from there, so that the gantt code measured is whichever checkout
PYTHONPATH names.

Segments, per round, the first two in alternating order (as in
benchmarks.scheduler's decision-log rounds):

- ``decision``: one-instance requests, each claimed, decision log off;
- ``decision_logged``: the same with the decision log on;
- ``ten_instances``: ten-instance requests (DECISIONS // 10 of them, at
  least one), log off.
"""

import ctypes
import gc
import os
import sys

from benchmarks import scheduler as bench
from placement.db import store as store_mod
from scheduler import manager
from tests import databases


def main(argv):
    shim_path, hosts, decisions, rounds, work = (
        argv[0], int(argv[1]), int(argv[2]), int(argv[3]), argv[4])
    shim = ctypes.CDLL(shim_path)
    shim.stop.argtypes = [ctypes.c_char_p]
    conf = databases.make_conf("sqlite:///" + os.path.join(work, "b.sqlite"))
    # What runs on the wall clock (SQLite's background checkpoints, the
    # log's flushes: each a second) would run fifty times as often a
    # decision under callgrind as natively, in whichever segment the
    # second ends: SQLite checkpoints in its commits instead, and the
    # log writes when its buffer fills.
    conf.set_override("sqlite_checkpoint_every", 0,
                      group="placement_database")
    store = store_mod.Store.open(conf)
    bench.build(store, hosts)
    scheduler = manager.Scheduler(store.conf, store=store)
    log = bench.default_log(os.path.join(work, "decisions"),
                            flush_interval=3600.0)
    # Warm-up, both ways: the index, the host state, the log's file.
    scheduler.select_destinations(None, {"flavor": bench.FLAVOR}, None)
    for decisions_log in (None, log):
        scheduler.decisions = decisions_log
        bench._decide(scheduler, 10, 1)
        bench._decide(scheduler, 1, 10)
    # As a gantt-scheduler worker does once it is ready (rpc.heap): a
    # full collection then walks only what the decisions allocate, not
    # the whole startup heap, which one segment in many would pay for.
    gc.collect()
    gc.freeze()
    tens = max(1, decisions // 10)

    def segment(name, count, instances, logged):
        scheduler.decisions = log if logged else None
        # The write-ahead log emptied first: SQLite checkpoints inside
        # the commit that takes the log past 1,000 pages, and a segment
        # that met one would count its copy of the log (a few million
        # instructions) as its decisions'; a segment writes far fewer.
        with store.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        shim.start()
        bench._decide(scheduler, count, instances)
        shim.stop(f"{name}:{count}".encode())

    # The first segment measured costs more than any other of its kind
    # (by a few million instructions, the same after any warm-up):
    # measured, and left out (benchmarks.instructions skips "settle").
    segment("settle", decisions, 1, False)
    for r in range(rounds):
        pair = [("decision", False), ("decision_logged", True)]
        for name, logged in (pair if r % 2 == 0 else pair[::-1]):
            segment(name, decisions, 1, logged)
        segment("ten_instances", tens, 10, False)
    scheduler.decisions = None
    log.close()
    scheduler.close()
    store.dispose()


if __name__ == "__main__":
    main(sys.argv[1:])
