"""Instructions per embedded decision, counted by callgrind: figures that
do not move with the machine's load, for before-and-after comparisons
of small changes that wall-clock benchmarks cannot tell from noise.

    .venv/bin/python -m benchmarks.instructions [--sizes 1000,10000]
        [--decisions 40] [--rounds 2] [--cache-sim] [--code CHECKOUT]

Per cloud size, one process runs under valgrind's callgrind with
instrumentation off while it builds the cloud (as benchmarks.scheduler
builds it, SQLite) and warms up; instrumentation is on only around the
measured segments (benchmarks.instruction_segments): one-instance
decisions with the decision log off and on, in alternating order, and
ten-instance requests, every request claimed. Everything the process
does meanwhile counts, its background threads too (the log's flush,
SQLite's checkpoints).

The JSON gives, per segment, instructions per request (``Ir``): the
median over ``--rounds`` and its range; and the decision log's extra
instructions a decision against a decision without it. With
``--cache-sim`` callgrind also simulates the caches, and each segment
gets its cache misses a request and the usual estimate of cycles from
them (Ir + 10 x first-level misses + 100 x last-level misses), which
counts what an instruction count cannot: work that runs on cold caches.

``--code CHECKOUT`` measures another checkout of gantt (one that has
benchmarks.scheduler's cloud and the decision log) with this one's
harness: run it once per side, alternating, and compare.

Needs valgrind, a C compiler (``CC``, default ``cc``) and valgrind's
headers (valgrind/callgrind.h) to build the client-request shim.
Under callgrind a decision runs about 50 times slower; a 1,000-host run
takes about a minute, a 10,000-host one a few.
"""

import argparse
import glob
import json
import os
import pathlib
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
SEGMENTS = pathlib.Path(__file__).with_name("instruction_segments.py")
SHIM = """\
#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void stop(const char *label) {
    CALLGRIND_DUMP_STATS_AT(label);
    CALLGRIND_STOP_INSTRUMENTATION;
}
"""
# The segment measured first and left out (instruction_segments).
SETTLE = "settle"
# Callgrind's events with --cache-sim=yes, first-level and last-level
# misses of instruction fetches, data reads and data writes.
FIRST_LEVEL = ("I1mr", "D1mr", "D1mw")
LAST_LEVEL = ("ILmr", "DLmr", "DLmw")


# How a dump asked for by a segment says so.
_TRIGGER = "desc: Trigger: Client Request: "


class ToolMissing(Exception):
    """valgrind, the C compiler or valgrind's headers are not there."""


def build_shim(directory):
    """Compile the client-request shim into ``directory``; its path."""
    if shutil.which("valgrind") is None:
        raise ToolMissing("valgrind is not installed (it counts the "
                          "instructions)")
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise ToolMissing(f"no C compiler: {cc} not found (set CC)")
    source = pathlib.Path(directory) / "shim.c"
    source.write_text(SHIM)
    out = pathlib.Path(directory) / "shim.so"
    done = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(out),
                           str(source)], capture_output=True, text=True)
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["failed"])[0]
        raise ToolMissing(f"cannot build the callgrind shim (valgrind's "
                          f"headers installed?): {first}")
    return out


def read_dump(path):
    """(label, {event: total}) of one callgrind dump file; label None for
    a dump that no segment asked for (the one at exit)."""
    label, events, totals = None, None, None
    with open(path) as f:
        for line in f:
            if line.startswith(_TRIGGER):
                label = line[len(_TRIGGER):].strip()
            elif line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:") or (
                    line.startswith("summary:") and totals is None):
                totals = [int(v) for v in line.split()[1:]]
    if events is None or totals is None:
        raise ValueError(f"{path}: not a callgrind dump")
    totals += [0] * (len(events) - len(totals))
    return label, dict(zip(events, totals, strict=True))


def per_request(dumps):
    """{segment: [per-request figures, one per round]} from
    (label, events) pairs; label is NAME:REQUESTS (the settle segment
    and the dump at exit left out)."""
    out = {}
    for label, events in dumps:
        if label is None:
            continue
        match = re.fullmatch(r"(\w+):(\d+)", label)
        if match is None:
            raise ValueError(f"unknown segment label {label!r}")
        name, count = match.group(1), int(match.group(2))
        if name == SETTLE:
            continue
        figures = {"Ir": events["Ir"] / count}
        if all(e in events for e in FIRST_LEVEL + LAST_LEVEL):
            first = sum(events[e] for e in FIRST_LEVEL) / count
            last = sum(events[e] for e in LAST_LEVEL) / count
            figures["first_level_misses"] = first
            figures["last_level_misses"] = last
            figures["estimated_cycles"] = figures["Ir"] + 10 * first \
                + 100 * last
        out.setdefault(name, []).append(figures)
    return out


def summarise(rounds):
    """Median and range over the rounds of each segment's figures, and
    the decision log's extra a decision."""
    out = {}
    medians = {}
    for name, found in rounds.items():
        out[name] = {}
        for figure in found[0]:
            values = [f[figure] for f in found]
            medians[name, figure] = statistics.median(values)
            out[name][figure] = {"median": round(medians[name, figure]),
                                 "lowest": round(min(values)),
                                 "highest": round(max(values))}
    if "decision" in rounds and "decision_logged" in rounds:
        out["decision_log_extra_percent"] = {
            figure: round(100 * (medians["decision_logged", figure]
                                 / medians["decision", figure] - 1), 2)
            for figure in out["decision"]}
    return out


def measure(code, shim, hosts, decisions, rounds, cache_sim, work):
    """Run the segments for one cloud under callgrind; its summary."""
    script = pathlib.Path(work) / SEGMENTS.name
    shutil.copyfile(SEGMENTS, script)
    out_file = pathlib.Path(work) / "callgrind.out"
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
               f"--cache-sim={'yes' if cache_sim else 'no'}",
               f"--callgrind-out-file={out_file}", sys.executable,
               str(script), str(shim), str(hosts), str(decisions),
               str(rounds), str(work)]
    env = dict(os.environ, PYTHONPATH=str(code), PYTHONHASHSEED="0")
    log_path = pathlib.Path(work) / "valgrind.log"
    with open(log_path, "w") as log:
        done = subprocess.run(command, cwd=code, env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log_path.read_text().strip().splitlines()[-5:]
        raise RuntimeError(f"the measured run failed (exit "
                           f"{done.returncode}): " + " | ".join(tail))
    dumps = [read_dump(p) for p in sorted(glob.glob(f"{out_file}.*"))]
    return summarise(per_request(dumps))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--decisions", type=int, default=40,
                        help="one-instance requests a segment (default 40; "
                             "ten-instance segments make a tenth as many)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cache-sim", action="store_true",
                        help="simulate the caches too (slower)")
    parser.add_argument("--code", default=str(REPO),
                        help="the gantt checkout to measure (default: "
                             "this one)")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s]
    except ValueError:
        parser.error(f"--sizes: numbers, comma-separated: {args.sizes!r}")
    if not sizes or min(sizes) < 1 or args.decisions < 1 \
            or args.rounds < 1:
        parser.error("--sizes, --decisions and --rounds: at least 1")
    code = pathlib.Path(args.code).resolve()
    if not (code / "benchmarks" / "scheduler.py").is_file():
        parser.error(f"--code: {code} is not a gantt checkout")
    tools = tempfile.mkdtemp(prefix="gantt-bench-instructions-shim-")
    try:
        shim = build_shim(tools)
        results = {}
        for n in sizes:
            print(f"running {n} hosts under callgrind", file=sys.stderr)
            work = tempfile.mkdtemp(prefix="gantt-bench-instructions-")
            try:
                results[str(n)] = measure(code, shim, n, args.decisions,
                                          args.rounds, args.cache_sim, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    except ToolMissing as exc:
        print(f"benchmarks.instructions: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tools, ignore_errors=True)
    print(json.dumps({
        "benchmark": "instructions per embedded request under callgrind, "
                     "claims included, SQLite",
        "inputs": {"sizes": sizes, "decisions": args.decisions,
                   "rounds": args.rounds, "cache_sim": args.cache_sim,
                   "code": str(code),
                   "commit": _output("git", "-C", str(code), "rev-parse",
                                     "HEAD")},
        "valgrind": _output("valgrind", "--version"),
        "python": platform.python_version(),
        "results": results,
    }, indent=2))
    return 0


def _output(*command):
    """What ``command`` prints, or None."""
    done = subprocess.run(command, capture_output=True, text=True)
    return done.stdout.strip() or None


if __name__ == "__main__":
    sys.exit(main())
