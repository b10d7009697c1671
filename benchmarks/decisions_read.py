"""What reading a full decision log costs `gantt-manage decisions`.

    .venv/bin/python -m benchmarks.decisions_read [--records N]
        [--dir DIR] [--keep]

Writes the decision log one gantt-scheduler process leaves at the
default bounds ([decision_log] max_bytes 64 MB, backup_count 8: nine
files), records a second apart ending now, each file's modification
time that of its last record, as a writer leaves them. The records are
real ones: the embedded Scheduler decides 200 one-instance requests on
a 1,000-host cloud (as benchmarks.scheduler builds it), and the log
repeats them with new instance uuids and times. ``--records`` writes
that many instead (spread over nine files alike).

Then runs, each as an operator does (a process of its own): ``decisions
list --limit 5``, ``list --since 1h``, ``list --host H --limit 3``,
``list --no-valid-host`` and ``show UUID`` (the newest record's
instance), and prints one JSON document: the log's records and bytes,
and per command its wall time, CPU time and peak memory (the child's
own rusage, from wait4), and the lines it printed.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

import orjson

from benchmarks import scheduler as bench_scheduler
from scheduler import decision_log, manager

FILES = 9  # the current file and backup_count (8) backups
FILE_BYTES = 64 * 1024 * 1024
PID = 4242


class _Records(decision_log.Capture):
    """Keeps each record as the log writes it (Capture keeps them as
    read back)."""

    def keep(self, found):
        self.records.append(found)


def real_records(count=200, hosts=1000):
    """Records of ``count`` decisions the embedded Scheduler makes on a
    fresh ``hosts``-host cloud."""
    directory = tempfile.mkdtemp(prefix="gantt-bench-decisions-read-")
    try:
        store = bench_scheduler._store(
            f"sqlite:///{directory}/placement.sqlite")
        bench_scheduler.build(store, hosts)
        scheduler = manager.Scheduler(store.conf, store=store)
        capture = _Records()
        scheduler.decisions = capture
        bench_scheduler._decide(scheduler, count, 1)
        scheduler.close()
        store.dispose()
        return capture.records
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def write_log(directory, records, total=None):
    """Nine files of ``records`` repeated (``total`` records in all, or
    as many as fill them at the default max_bytes), a second apart and
    ending now; the records' count and the log's bytes."""
    line = decision_log.encode(records[0])
    total = total or FILES * (FILE_BYTES // len(line))
    per_file = -(-total // FILES)
    start = time.time() - total
    written = k = 0
    for n in range(FILES):
        backup = FILES - 1 - n
        name = f"decisions.{PID}.jsonl" + (f".{backup}" if backup else "")
        path = os.path.join(directory, name)
        header = orjson.dumps({"decision_log": decision_log.FORMAT,
                               "started_at": start + k,
                               "scheduler": "bench", "pid": PID})
        last = start
        with open(path, "wb") as f:
            f.write(header + b"\n")
            for _ in range(min(per_file, total - k)):
                found = records[k % len(records)]
                found["time"] = last = start + k
                instance = str(uuid.uuid4())
                found["instances"] = [instance]
                for placement in found.get("placements") or ():
                    placement["instance"] = instance
                written += f.write(decision_log.encode(found))
                k += 1
        os.utime(path, (last, last))
    return k, written, instance


def measured(argv):
    """Run ``argv`` and reap it here, for its own rusage; its output
    goes to files, so no pipe needs reading while it runs."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise SystemExit(f"{' '.join(argv)}: exit {child.returncode}: "
                             f"{err.read().decode().strip()}")
        lines = sum(1 for _ in out)
    return {"wall_s": round(wall, 2),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024),
            "lines": lines}


def main(args=None):
    parser = argparse.ArgumentParser(
        prog="benchmarks.decisions_read", description=__doc__.split(
            "\n\n")[0])
    parser.add_argument("--records", type=int, default=0,
                        help="records in the log (default: what nine "
                             "64 MB files hold)")
    parser.add_argument("--dir", help="write the log here (default: a "
                                      "temporary directory)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the log afterwards (else its files are "
                             "removed, and the directory if this run "
                             "made it)")
    args = parser.parse_args(args)
    if args.records < 0:
        parser.error("--records: expected N >= 0")
    directory = args.dir or tempfile.mkdtemp(prefix="gantt-decisions-")
    created = not args.dir or not os.path.exists(directory)
    os.makedirs(directory, exist_ok=True)
    if decision_log.files(directory):
        parser.error(f"--dir: {directory} holds a decision log already")
    try:
        records = real_records()
        count, size, newest = write_log(directory, records, args.records)
        # The host the first record chose, as the log reads back.
        first = decision_log.decode(decision_log.encode(records[0]))
        host = first["placements"][0]["chosen"]["host"]
        manage = [str(pathlib.Path(sys.executable).parent / "gantt-manage"),
                  "--config-file", os.devnull, "decisions"]
        where = ["--dir", directory]
        commands = {
            "list --limit 5": ["list", "--limit", "5"],
            "list --since 1h": ["list", "--since", "1h"],
            f"list --host {host} --limit 3": ["list", "--host", host,
                                              "--limit", "3"],
            "list --no-valid-host": ["list", "--no-valid-host"],
            "show UUID": ["show", newest],
        }
        out = {"records": count, "bytes": size, "files": FILES,
               "commands": {name: measured(manage + argv + where)
                            for name, argv in commands.items()}}
    finally:
        if not args.keep:
            # The files written, and the directory if this run made it:
            # nothing else of a --dir given.
            for path in decision_log.files(directory):
                os.remove(path)
            if created:
                shutil.rmtree(directory, ignore_errors=True)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
