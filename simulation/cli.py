"""gantt-simulate: offline what-if runs of the real scheduler.

    gantt-simulate run --cloud FILE | --from-placement [URL]
                       [--token T | --os-cloud NAME] [--os-region-name R]
                       --workload FILE [--config-file CONF] [--seed N]
                       [--schedulers N] [--out DIR] [--no-progress]
    gantt-simulate compare A.conf B.conf --cloud FILE --workload FILE
                       [--seed N] [--schedulers N] [--out DIR]
    gantt-simulate capacity --flavor F [--flavors FILE]
                       [--cloud FILE | --from-placement [URL] |
                        --config-file CONF] [--format table|json]
    gantt-simulate replay INSTANCE_UUID | RECORD.json [--config-file CONF]
                       [--cloud FILE] [--decisions DIR]
                       [--format table|json]

Exit status: 0 on success, 2 for a file or argument that cannot be used
(the message names the file and field) or when the "simulate" extra is
not installed (run, compare, capacity or replay on a cloud file), 1
for any other failure. replay: 2 also when no decision is logged about
the instance.
"""

import argparse
import contextlib
import json
import logging
import os
import sys
import tempfile

from cloudfile import loader
from placement import command_errors, file_errors
from placement import conf as placement_conf
from placement.adopt import cloud_auth
from scheduler import errors as scheduler_errors
from scheduler import manager
from simulation import capacity, config, decision_replay, from_placement
from simulation import cloud as cloud_mod
from simulation import workload as workload_mod

# The report's plots (matplotlib) and the progress bar (tqdm) come with
# gantt's "simulate" extra. Without it --help still works and a command
# that needs them says how to install them (_need_extra).
EXTRA_MODULES = ("matplotlib", "tqdm")
try:
    from simulation import report, runner
except ModuleNotFoundError as exc:
    if (exc.name or "").partition(".")[0] not in EXTRA_MODULES:
        raise
    report = runner = None
    _MISSING = exc.name.partition(".")[0]
else:
    _MISSING = None


class UsageError(Exception):
    """A command line that cannot be used."""


def _warn(line):
    print(f"gantt-simulate: {line}", file=sys.stderr)


def _load_config(args, path):
    """gantt's config from ``path``, checked as every command checks it
    (a bad config stops the run before the cloud is loaded)."""
    return config.load(path, strict=args.strict, warn=_warn)


def _need_extra():
    if _MISSING is not None:
        raise UsageError(
            f"{_MISSING} is not installed; the simulator needs gantt's "
            "'simulate' extra: pip install 'gantt[simulate]'")


def _parser():
    parser = argparse.ArgumentParser(
        prog="gantt-simulate",
        description="Replay a workload on a modelled cloud with gantt's "
                    "scheduler, offline, and report what happened.")
    parser.add_argument("--debug", action="store_true",
                        help="print the traceback of an error too")
    parser.add_argument("--version", action="version",
                        version=f"gantt-simulate {placement_conf.version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="simulate one config")
    _cloud_args(run, required=True)
    _run_args(run)
    _config_args(run, "gantt config (filters, weighers, multipliers, "
                      "host_subset_size, ...); default: defaults")
    run.add_argument("--out", default="simulation-report",
                     help="report directory (default: %(default)s)")
    run.set_defaults(handler=cmd_run)

    compare = sub.add_parser(
        "compare", help="the same cloud and workload under two configs")
    compare.add_argument("config_a", metavar="A.conf")
    compare.add_argument("config_b", metavar="B.conf")
    compare.add_argument("--strict", action="store_true",
                         help="an option or section gantt does not know "
                              "in a config file is an error")
    _cloud_args(compare, required=True)
    _run_args(compare)
    compare.add_argument("--out", default="simulation-compare",
                         help="report directory (default: %(default)s)")
    compare.set_defaults(handler=cmd_compare)

    cap = sub.add_parser(
        "capacity", help="how many more instances of a flavor fit now, "
                         "per availability zone and aggregate")
    cap.add_argument("--flavor", required=True,
                     help="a flavor name from --flavors, or sizes: "
                          "vcpus=4,memory_mb=8192,root_gb=80")
    cap.add_argument("--flavors",
                     help="a workload file whose flavors section names "
                          "the flavor")
    _cloud_args(cap, required=False)
    _config_args(cap, "gantt config; without --cloud or --from-placement, "
                      "its database is read")
    cap.add_argument("--format", choices=["table", "json"],
                     default="table")
    cap.set_defaults(handler=cmd_capacity)

    again = sub.add_parser(
        "replay", help="decide a logged decision again under a config, "
                       "on the cloud as it is now, and say what would "
                       "change")
    again.add_argument(
        "decision", metavar="INSTANCE_UUID|RECORD.json",
        help="an instance uuid (its newest logged decision) or a file "
             "holding a record ('gantt-manage decisions show UUID "
             "--format json' prints them)")
    _config_args(again, "gantt config to decide with; without --cloud, "
                        "its database holds the cloud decided on")
    again.add_argument("--cloud", help="decide on this cloud file (YAML or "
                                       "JSON) instead of the database")
    again.add_argument("--decisions", metavar="DIR",
                       help="the decision log's directory (default: "
                            "[decision_log] directory of --config-file)")
    again.add_argument("--format", choices=["table", "json"],
                       default="table")
    again.set_defaults(handler=cmd_replay)
    return parser


def _config_args(parser, help):
    parser.add_argument("--config-file", dest="config", help=help)
    parser.add_argument("--strict", action="store_true",
                        help="an option or section gantt does not know in "
                             "a config file is an error, not a warning")


def _cloud_args(parser, required):
    source = parser.add_mutually_exclusive_group(required=required)
    source.add_argument("--cloud", help="cloud file or template (YAML or "
                                        "JSON)")
    source.add_argument("--from-placement", metavar="URL", nargs="?",
                        const=from_placement.FROM_CATALOG,
                        help="take the cloud from a live placement "
                             "endpoint; without URL, the one in the "
                             "service catalog of the cloud (--os-cloud)")
    cloud_auth.add_options(parser, "--from-placement")


def _run_args(parser):
    parser.add_argument("--workload", required=True,
                        help="synthetic workload or trace (YAML, JSON, "
                             "CSV)")
    parser.add_argument("--seed", type=int,
                        help="overrides the workload's seed")
    parser.add_argument("--schedulers", type=int, default=1,
                        help="schedulers racing on stale views "
                             "(default: 1)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar")


def _read_cloud(args):
    if args.cloud:
        return cloud_mod.read(args.cloud), args.cloud
    doc, url = from_placement.read(
        args.from_placement, token=args.token, cloud=args.os_cloud,
        region=args.os_region_name)
    return loader.parse(doc, url), url


def _options(args, workload):
    if args.schedulers < 1 or args.schedulers > 64:
        raise UsageError("--schedulers: must be 1 to 64")
    seed = args.seed if args.seed is not None else (workload.seed or 0)
    return runner.Options(
        schedulers=args.schedulers, seed=seed,
        progress=not args.no_progress and sys.stderr.isatty())


def _simulate(conf, conf_path, cloud, cloud_label, workload, options):
    labels = {"cloud": cloud_label, "workload": workload.path,
              "config": conf_path}
    return runner.Simulation(conf, cloud, workload, options,
                             labels=labels).run()


def cmd_run(args):
    _need_extra()
    conf = _load_config(args, args.config)
    workload = workload_mod.read(args.workload, seed=args.seed)
    cloud, label = _read_cloud(args)
    options = _options(args, workload)
    for line in runner.unknown_zone_warnings(workload, cloud, conf, label):
        print(f"gantt-simulate: warning: {line}", file=sys.stderr)
    out = _simulate(conf, args.config, cloud, label, workload, options)
    paths = report.write(out, args.out)
    print(report.summary(out))
    print(f"\nreport: {paths['html']} (figures: {paths['json']})")


def cmd_compare(args):
    _need_extra()
    confs = [(name, path, _load_config(args, path))
             for name, path in (("a", args.config_a), ("b", args.config_b))]
    workload = workload_mod.read(args.workload, seed=args.seed)
    cloud, label = _read_cloud(args)
    options = _options(args, workload)
    # Each config may rule on a zone differently: say each line once.
    warnings = dict.fromkeys(
        line for _, _, conf in confs
        for line in runner.unknown_zone_warnings(workload, cloud, conf,
                                                 label))
    for line in warnings:
        print(f"gantt-simulate: warning: {line}", file=sys.stderr)
    results = []
    for name, path, conf in confs:
        print(f"simulating {path}", file=sys.stderr)
        out = _simulate(conf, path, cloud, label, workload, options)
        report.write(out, os.path.join(args.out, name))
        results.append(out)
    labels = tuple(os.path.basename(p) for p in (args.config_a,
                                                 args.config_b))
    if labels[0] == labels[1]:
        labels = (args.config_a, args.config_b)
    # The page sits beside a/ and b/: relative links keep working
    # wherever the directory is copied.
    paths = report.compare(results[0], results[1], args.out, labels=labels,
                           links=("a/report.html", "b/report.html"))
    print(report.compare_summary(paths["table"]))
    print(f"\ncomparison: {paths['html']}")


# -- capacity ---------------------------------------------------------------

def _flavor(args):
    """(name, flavor spec dict) of --flavor."""
    text = args.flavor
    if "=" in text:
        sizes = {}
        for part in text.split(","):
            key, _, value = part.partition("=")
            key = key.strip()
            if key not in ("vcpus", "memory_mb", "root_gb", "ephemeral_gb",
                           "swap"):
                raise UsageError(f"--flavor: unknown size {key!r}; use "
                                 "vcpus, memory_mb, root_gb, "
                                 "ephemeral_gb, swap")
            try:
                sizes[key] = int(value)
            except ValueError:
                raise UsageError(f"--flavor: {key}: not a whole number: "
                                 f"{value!r}") from None
        for key in ("vcpus", "memory_mb"):
            if key not in sizes:
                raise UsageError(f"--flavor: {key} is required")
        flavor = workload_mod.Flavor(name=text, **sizes)
        return text, flavor.as_spec()
    if not args.flavors:
        raise UsageError("--flavor: give sizes (vcpus=2,memory_mb=4096,"
                         "root_gb=20) or a name with --flavors FILE")
    flavors = _flavors_of(args.flavors)
    if text not in flavors:
        raise UsageError(f"--flavor: {text!r} is not in {args.flavors}; "
                         f"it has: {', '.join(flavors)}")
    return text, flavors[text].as_spec()


def _flavors_of(path):
    data = file_errors.read_yaml(path, workload_mod.WorkloadError)
    return workload_mod.parse_flavors(data, path)


@contextlib.contextmanager
def _scheduler(conf, cloud=None):
    """A Scheduler, up to date, on ``cloud`` (a cloud read: loaded into
    a scratch database) or, without, on the database of ``conf``;
    closed after."""
    if cloud is not None:
        _need_extra()
        scratch = runner.Simulation(conf, cloud, None)
        try:
            scratch.open_cloud()
            yield scratch.schedulers[0]
        finally:
            scratch.close()
        return
    scheduler = manager.Scheduler(conf)
    try:
        scheduler.sync()
        yield scheduler
    finally:
        scheduler.close()


def cmd_capacity(args):
    name, flavor = _flavor(args)
    conf = _load_config(args, args.config)
    cloud = None
    if args.cloud or args.from_placement:
        _need_extra()
        cloud, _ = _read_cloud(args)
    with _scheduler(conf, cloud) as scheduler:
        result = capacity_report(scheduler, conf, name, flavor)
    if args.format == "json":
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        print(render_capacity(result))


def cmd_replay(args):
    conf = _load_config(args, args.config)
    directory = os.path.expanduser(args.decisions
                                   or conf.decision_log.directory)
    record, count = decision_replay.logged(args.decision, directory)
    on = decision_replay.where(conf, args.cloud)
    cloud = cloud_mod.read(args.cloud) if args.cloud else None
    with _scheduler(conf, cloud) as scheduler:
        now = decision_replay.replay(scheduler, record)
    if args.format == "json":
        print(json.dumps({"decision": record, "replay": now,
                          "config": args.config, "decided_on": on,
                          "changes": decision_replay.changes(record, now)},
                         indent=2, sort_keys=True))
    else:
        print(decision_replay.render(record, now, args.config, on, count))


def capacity_report(scheduler, conf, name, flavor):
    """How many more of ``flavor`` fit, in all and per zone and
    aggregate, and which class runs out first."""
    view = capacity.CloudView(scheduler)
    resources = capacity.flavor_resources(flavor, conf, scheduler.table)
    fitted = view.host_fits(resources)
    groups = {"all hosts": None, **view.groups()}
    rows = []
    for label, mask in groups.items():
        fit = view.group_fit(resources, mask, fitted=fitted)
        rows.append({"group": label, "hosts": fit.hosts, "fits": fit.fits,
                     "runs_out_first": fit.limiting,
                     "fits_by_class": fit.by_class})
    return {"flavor": name, "resources": resources, "groups": rows}


def render_capacity(result):
    classes = list(result["resources"])
    asks = ", ".join(f"{rc} {n}" for rc, n in result["resources"].items())
    head = ["group", "hosts", "fit", "runs out first"] + [
        f"{rc} alone" for rc in classes]
    body = [[r["group"], str(r["hosts"]), str(r["fits"]),
             r["runs_out_first"] or "-"] +
            [str(r["fits_by_class"].get(rc, 0)) for rc in classes]
            for r in result["groups"]]
    widths = [max(len(row[i]) for row in [head] + body)
              for i in range(len(head))]
    lines = [f"flavor {result['flavor']}: {asks} per instance", ""]
    for row in [head] + body:
        lines.append("  ".join(
            cell.ljust(w) if i == 0 or i == 3 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))))
    lines.append("")
    lines.append("fit: instances that fit in all; <class> alone: how many "
                 "that class alone would allow")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    # What the simulator has to say it prints; the libraries' log lines
    # (a database retry, say) only with --debug.
    logging.basicConfig(
        level=logging.INFO if args.debug else logging.CRITICAL,
        format="%(levelname)s %(name)s: %(message)s")

    def body():
        _check_out_dir(args)
        args.handler(args)

    # OSError: the report directory cannot be written, most often.
    return command_errors.run(
        "gantt-simulate", body, debug=args.debug,
        usage=(loader.CloudFileError, workload_mod.WorkloadError,
               config.ConfigError, UsageError,
               from_placement.PlacementReadError,
               scheduler_errors.ConfigError, decision_replay.ReplayError),
        failures=(scheduler_errors.SchedulerError, OSError))


def _check_out_dir(args):
    """Refuse an --out that cannot take the report, before a simulation
    that may run for minutes finds out; nothing is left behind."""
    out = getattr(args, "out", None)
    if not out:
        return
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"--out {out}: a file is there; the report needs "
                         "a directory")
    # The nearest directory that exists must take a new entry. Trying
    # it is the only sure test: root passes access() where the
    # filesystem (/proc, read-only mounts) still says no.
    here = os.path.abspath(out)
    while not os.path.exists(here):
        here = os.path.dirname(here)
    if not os.path.isdir(here):
        raise UsageError(f"--out {out}: {here} is a file, not a directory")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".gantt-simulate-", dir=here))
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the report "
                         f"directory in {here} ({exc.strerror})") from None


if __name__ == "__main__":
    sys.exit(main())
