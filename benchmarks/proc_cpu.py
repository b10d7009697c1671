"""Where a benchmark's CPU goes, from Linux's /proc: per process, and
over the whole machine by group (the broker, the database, the rest)."""

import collections
import os


def _proc_stat(pid):
    """(command name, user + system CPU seconds so far) of ``pid`` (Linux),
    or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    # utime and stime: fields 14 and 15 of stat(5), the 12th and 13th
    # after the command name.
    fields = text.rsplit(")", 1)[1].split()
    return name, (int(fields[11]) + int(fields[12])) / \
        os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system CPU seconds of ``pid`` so far, or None."""
    found = _proc_stat(pid)
    return None if found is None else found[1]


# Which processes of the machine count as what, by command name: where a
# call's CPU goes beyond the scheduler (the 2-core limit is the sum).
_GROUPS = {"beam.smp": "broker", "postgres": "database",
           "mariadbd": "database", "mysqld": "database"}


def machine_cpu():
    """{group: CPU seconds so far} over every process of the machine:
    the broker, the database, everything else ("other"); the benchmark's
    and the scheduler's own processes are counted apart by the caller."""
    out = collections.Counter()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        found = _proc_stat(entry)
        if found is None:
            continue
        name, seconds = found
        out[_GROUPS.get(name, "other")] += seconds
        out["pid:" + entry] = seconds
    return out


def machine_split(before, after, own_pids, calls):
    """ms of CPU per call by group between two machine_cpu() readings:
    broker, database and the rest of the machine (the client and the
    scheduler workers, given by ``own_pids``, taken out of "other")."""
    spent = {group: after[group] - before[group]
             for group in ("broker", "database", "other")}
    for pid in own_pids:
        key = f"pid:{pid}"
        if key in before and key in after:
            spent["other"] -= after[key] - before[key]
    return {group: round(1000 * max(value, 0.0) / calls, 3)
            for group, value in spent.items()}


def cpu_used(before, after):
    """Per process, CPU seconds between two cpu_seconds snapshots."""
    return [round(after[pid] - before[pid], 2) for pid in sorted(before)
            if before[pid] is not None and after.get(pid) is not None]
