"""Start and stop the Nova stack: Nova 34's own services on MariaDB and
RabbitMQ, with gantt-placement-api as placement and a scheduler of the
caller's choice.

    python -m tests.nova_stack.stack [--scheduler gantt|nova] [--work DIR]
                                    [--scheduler-workers N]

brings a stack up by hand (from the repository root, with gantt's
virtualenv), prints its endpoints and log directory, and stops it on
Ctrl-C. The test (test_nova_stack.py) uses the same class.

What runs, each process logging to ``<work>/logs/<name>.log``:

- stand-ins for the image and network services (standins.py);
- gantt-placement-api on the stack's scratch placement database;
- nova-api (Nova's WSGI application, nova_side/api_server.py),
  nova-conductor and three nova-compute services on fake drivers
  (nova_side/stack_drivers.py): compute-large (a large host that fails
  the first spawn of instances named ``reschedule-...``),
  compute-nested (a child provider with CUSTOM_MAGIC), compute-small;
- the scheduler: gantt-scheduler with the Nova host state source
  (``gantt``, the default) or Nova's own nova-scheduler (``nova``).
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from tests.nova_stack import clients, configs, install, processes, services

HERE = pathlib.Path(__file__).resolve().parent
NOVA_SIDE = HERE / "nova_side"
GANTT_BIN = pathlib.Path(sys.executable).parent
SCHEDULERS = ("gantt", "nova")

# (host, driver): the first is the weighers' favourite (the most free
# RAM by far) and fails the first spawn of reschedule-... instances.
COMPUTES = (
    ("compute-large", "stack_drivers.FailFirstSpawnDriver"),
    ("compute-nested", "stack_drivers.NestedDriver"),
    ("compute-small", "stack_drivers.PlainDriver"),
)
LARGE, NESTED, SMALL = (host for host, _ in COMPUTES)
# A second cell, added while the stack runs (Stack.add_cell2), with its
# own conductor and computes: a large host that fails the first spawn
# of reschedule-... instances, and a plain one.
CELL2_COMPUTES = (
    ("cell2-large", "stack_drivers.FailFirstSpawnDriver"),
    ("cell2-small", "stack_drivers.PlainDriver"),
)
START_TIMEOUT = 120


def scheduler_choice():
    """The scheduler the test runs: $GANTT_NOVA_STACK_SCHEDULER, or
    gantt."""
    choice = os.environ.get("GANTT_NOVA_STACK_SCHEDULER", "gantt")
    if choice not in SCHEDULERS:
        raise ValueError(f"GANTT_NOVA_STACK_SCHEDULER={choice!r}: expected "
                         f"one of {', '.join(SCHEDULERS)}")
    return choice


def child_env(**extra):
    """The environment of a child: ours without OS_* options (oslo.config
    reads OS_<GROUP>__<OPTION> from the environment: the developer's own
    must not reach the stack) and without another virtualenv's traces."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("OS_")
           and name not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


class Stack:
    """One Nova deployment; ``start()`` it, ``stop()`` it (always)."""

    def __init__(self, work, nova_venv, scheduler="gantt",
                 scheduler_workers=1, nova_conf_extra=None):
        """``scheduler_workers``: the scheduler's processes;
        ``nova_conf_extra``: {section: {option: value}} added to
        nova.conf (configs.nova_conf)."""
        if scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler {scheduler!r}")
        self.work = pathlib.Path(work)
        self.logs = self.work / "logs"
        self.etc = self.work / "etc"
        self.nova_bin = pathlib.Path(nova_venv) / "bin"
        self.scheduler = scheduler
        self.scheduler_workers = scheduler_workers
        self.nova_conf_extra = nova_conf_extra
        tag = services.suffix()
        self.databases = {
            "api_db": f"nova_api_{tag}",
            "cell0_db": f"nova_cell0_{tag}",
            "cell_db": f"nova_cell1_{tag}",
            "cell2_db": f"nova_cell2_{tag}",
            "placement_db": f"gantt_placement_{tag}",
        }
        self.vhost = f"nova_stack_{tag}"
        self.vhost2 = f"nova_cell2_{tag}"
        self.urls = {key: services.database_url(name)
                     for key, name in self.databases.items()}
        self.urls["transport_url"] = services.transport_url(self.vhost)
        self.cell2 = {"cell_db": self.urls["cell2_db"],
                      "transport_url": services.transport_url(self.vhost2)}
        self.ports = {name: processes.free_port()
                      for name in ("placement", "standins", "api")}
        self.procs = {}
        self._made = []  # what stop() removes: ("databases"|"vhost")
        self.timings = {}

    # -- endpoints ---------------------------------------------------

    @property
    def placement_url(self):
        return f"http://127.0.0.1:{self.ports['placement']}"

    @property
    def api_url(self):
        return f"http://127.0.0.1:{self.ports['api']}/v2.1"

    # -- start -------------------------------------------------------

    def start(self):
        """Bring everything up; raise, naming the step, when a part does
        not come up within its bound."""
        began = time.monotonic()
        for path in (self.logs, self.etc, self.work / "locks"):
            path.mkdir(parents=True, exist_ok=True)
        self._step("servers", self._make_server_resources)
        self._write_configs()
        self._start_standins_and_placement()
        self._step("nova databases", self._prepare_nova_databases)
        self._step("placement up", self._wait_placement)
        self._step("services started", self._start_nova_services)
        self._step("computes registered", self._wait_computes)
        self._step("hosts discovered", self._discover_hosts)
        self._step("stack ready", self._wait_ready)
        self.timings["start"] = time.monotonic() - began
        return self

    def _step(self, name, action):
        began = time.monotonic()
        try:
            action()
        except Exception as exc:
            raise RuntimeError(f"Nova stack: step {name!r} failed: {exc}"
                               f"\n{self.log_hint()}") from exc
        self.timings[name] = round(time.monotonic() - began, 1)

    def _make_server_resources(self):
        services.sweep_orphans()
        services.create_databases(self.databases.values())
        self._made.append("databases")
        services.create_vhost(self.vhost)
        services.create_vhost(self.vhost2)
        self._made.append("vhost")

    def _write_configs(self):
        etc = self.etc
        (etc / "nova.conf").write_text(configs.nova_conf(
            self.urls, self.ports, self.work, self.scheduler_workers,
            self.nova_conf_extra))
        (etc / "api-paste.ini").write_text(configs.API_PASTE)
        for name in ("conductor", "scheduler", "api", "manage"):
            (etc / f"{name}.conf").write_text(
                configs.service_conf(f"stack-{name}"))
        for cell, computes in ((None, COMPUTES),
                               (self.cell2, CELL2_COMPUTES)):
            for host, driver in computes:
                state = self.work / "nova-state" / host
                (state / "instances").mkdir(parents=True, exist_ok=True)
                (etc / f"{host}.conf").write_text(
                    configs.compute_conf(host, driver, state, cell))
        (etc / "conductor-cell2.conf").write_text(configs.service_conf(
            "stack-conductor-cell2", configs.cell_sections(self.cell2)))
        (etc / "gantt.conf").write_text(configs.gantt_conf(self.urls))

    def _nova_conf_args(self, own):
        return ["--config-file", self.etc / "nova.conf",
                "--config-file", self.etc / f"{own}.conf"]

    def _start_standins_and_placement(self):
        python = sys.executable
        self._spawn("standins", [python, HERE / "standins.py",
                                 self.ports["standins"]])
        self._spawn("placement-api", [
            GANTT_BIN / "gantt-placement-api", "--host", "127.0.0.1",
            "--port", self.ports["placement"], "--workers", "1",
            "--threads", "4", "--db", self.urls["placement_db"]])

    def _spawn(self, name, argv, env=None):
        proc = processes.Proc(name, argv, self.logs,
                              env=env or child_env(), cwd=self.work)
        self.procs[name] = proc.start()
        return proc

    def _manage(self, *args):
        processes.run("nova-manage", [
            self.nova_bin / "nova-manage",
            *self._nova_conf_args("manage"), *args], self.logs,
            env=child_env(), timeout=120)

    def _prepare_nova_databases(self):
        """Nova's schema and cell mappings. The cell databases are synced
        each on its own (``db sync --local_cell``), beside the API
        database's chain, so that the three run at once."""
        cell0_conf = self.etc / "cell0.conf"
        cell0_conf.write_text(configs.render(
            {"database": {"connection": self.urls["cell0_db"]}}))
        manage = [self.nova_bin / "nova-manage",
                  *self._nova_conf_args("manage")]
        cell_syncs = [
            processes.Proc("nova-manage-cell1", [
                *manage, "db", "sync", "--local_cell"], self.logs,
                env=child_env()).start(),
            processes.Proc("nova-manage-cell0", [
                *manage, "--config-file", cell0_conf, "db", "sync",
                "--local_cell"], self.logs, env=child_env()).start(),
            # cell2's schema now, its mapping only when it is added.
            processes.Proc("nova-manage-cell2", [
                *manage, "--config-file", self.etc / "conductor-cell2.conf",
                "db", "sync", "--local_cell"], self.logs,
                env=child_env()).start(),
        ]
        try:
            self._manage("api_db", "sync")
            self._manage("cell_v2", "map_cell0", "--database_connection",
                         self.urls["cell0_db"])
            self._manage("cell_v2", "create_cell", "--name", "cell1",
                         "--database_connection", self.urls["cell_db"],
                         "--transport-url", self.urls["transport_url"])
            for proc in cell_syncs:
                proc.wait_success(120)
        finally:
            processes.stop_all(cell_syncs)

    def _wait_placement(self):
        processes.wait_for(
            "gantt-placement-api answers",
            lambda: (_http_ok(self.placement_url + "/"), "no answer"), 60,
            procs=[self.procs["placement-api"], self.procs["standins"]])

    def _start_nova_services(self):
        """The conductor first: a nova-compute pings it at start and,
        when the ping is lost for want of a queue, waits 10 s to try
        again."""
        self._spawn("nova-conductor", [self.nova_bin / "nova-conductor",
                                       *self._nova_conf_args("conductor")])
        self._start_scheduler()
        self._api_etc()
        self._start_api()
        processes.wait_for(
            "nova-conductor consumes the 'conductor' queue",
            lambda: self._consumed("conductor"), START_TIMEOUT,
            interval=0.5, procs=self.procs.values())
        for host, _ in COMPUTES:
            self.start_compute(host)

    def _start_api(self):
        self._spawn("nova-api", [self.nova_bin / "python",
                                 NOVA_SIDE / "api_server.py",
                                 self.ports["api"], self.etc / "api-etc"])

    def _api_etc(self):
        """nova-api reads api-paste.ini and nova.conf from one directory
        (OS_NOVA_CONFIG_DIR); they are its own files plus the shared
        options."""
        api_etc = self.etc / "api-etc"
        api_etc.mkdir(exist_ok=True)
        shutil.copy(self.etc / "api-paste.ini", api_etc / "api-paste.ini")
        (api_etc / "nova.conf").write_text(
            (self.etc / "nova.conf").read_text() + "\n"
            + (self.etc / "api.conf").read_text())

    @property
    def scheduler_proc(self):
        return self.procs[f"{self.scheduler}-scheduler"]

    def restart_scheduler(self, workers):
        """Stop the scheduler and start it again with ``workers``
        processes (the scheduler's own file, read after nova.conf, says
        so); return once that many consume the 'scheduler' queue."""
        (self.etc / "scheduler.conf").write_text(configs.service_conf(
            "stack-scheduler", {"scheduler": {"workers": workers}}))
        self.scheduler_proc.stop()
        self.scheduler_workers = workers
        self._start_scheduler()
        processes.wait_for(
            f"{workers} scheduler workers consume the 'scheduler' queue",
            lambda: self._consumed("scheduler", exactly=workers),
            START_TIMEOUT, interval=0.5, procs=self.procs.values())

    def _start_scheduler(self):
        if self.scheduler == "nova":
            self._spawn("nova-scheduler", [
                self.nova_bin / "nova-scheduler",
                *self._nova_conf_args("scheduler")])
        else:
            self._spawn("gantt-scheduler", [
                GANTT_BIN / "gantt-scheduler",
                *self._nova_conf_args("scheduler"), "--config-file",
                self.etc / "gantt.conf"], env=child_env())

    def start_compute(self, host):
        """Start (or start again) the nova-compute of ``host``."""
        return self._spawn(host, [
            self.nova_bin / "python", NOVA_SIDE / "compute.py",
            *self._nova_conf_args(host)])

    def stop_compute(self, host):
        self.procs[host].stop()

    def _wait_computes(self):
        """Each nova-compute writes its compute node record at start;
        discover_hosts maps only the hosts that have one. (Nova's API
        lists hypervisors only once they are mapped, so the cell
        database is read here, once, for readiness alone.)"""
        self.nova = clients.NovaApi(self.api_url)
        self.placement = clients.PlacementApi(self.placement_url)
        processes.wait_for(
            "every nova-compute wrote its compute node record",
            self._nodes_recorded, START_TIMEOUT, interval=1,
            procs=self.procs.values())

    def _nodes_recorded(self):
        found = services.compute_node_hosts(self.urls["cell_db"])
        return {host for host, _ in COMPUTES} <= found, sorted(found)

    def _discover_hosts(self):
        self._manage("cell_v2", "discover_hosts", "--verbose")

    def add_cell2(self):
        """Map a second cell, start its conductor and computes and
        discover them, while everything else runs. nova-scheduler loads
        the cells at start, so it is restarted (Nova's documented step
        after adding a cell); gantt-scheduler follows the API database
        and is told nothing."""
        began = time.monotonic()
        self._manage("cell_v2", "create_cell", "--name", "cell2",
                     "--database_connection", self.cell2["cell_db"],
                     "--transport-url", self.cell2["transport_url"])
        self._spawn("nova-conductor-cell2", [
            self.nova_bin / "nova-conductor",
            *self._nova_conf_args("conductor-cell2")])
        for host, _ in CELL2_COMPUTES:
            self.start_compute(host)
        wanted = {host for host, _ in CELL2_COMPUTES}
        processes.wait_for(
            "every cell2 nova-compute wrote its compute node record",
            lambda: (wanted <= (found := services.compute_node_hosts(
                self.cell2["cell_db"])), sorted(found)),
            START_TIMEOUT, interval=1, procs=self.procs.values())
        self._discover_hosts()
        if self.scheduler == "nova":
            # Nova's documented step: nova-scheduler loads the cells at
            # start (its SIGHUP reload left the worker deaf to calls).
            self.procs["nova-scheduler"].stop()
            self._start_scheduler()
            processes.wait_for(
                "nova-scheduler consumes the 'scheduler' queue again",
                lambda: self._consumed("scheduler",
                                       exactly=self.scheduler_workers),
                START_TIMEOUT,
                interval=0.5, procs=self.procs.values())
        # nova-api lists servers from the cells it loaded at start: it
        # is restarted, as Nova's documentation asks after a new cell.
        self.procs["nova-api"].stop()
        self._start_api()
        processes.wait_for(
            "nova-api answers again",
            lambda: (self.nova.services() is not None, "no answer"),
            START_TIMEOUT, interval=0.5, procs=self.procs.values())
        processes.wait_for(
            "placement holds the cell2 providers",
            lambda: (wanted <= (names := {
                p["name"] for p in self.placement.providers()}),
                sorted(names)), START_TIMEOUT, interval=1,
            procs=self.procs.values())
        processes.wait_for("every Nova service reports up",
                           self._services_up, START_TIMEOUT, interval=1,
                           procs=self.procs.values())
        self.timings["add cell2"] = round(time.monotonic() - began, 1)

    def _wait_ready(self):
        """Every service up in Nova, every provider in placement, the
        scheduler consuming its queue."""
        processes.wait_for(
            "every Nova service reports up",
            self._services_up, START_TIMEOUT, interval=1,
            procs=self.procs.values())
        processes.wait_for(
            "placement holds the compute providers (and the nested child)",
            self._providers_reported, START_TIMEOUT, interval=1,
            procs=self.procs.values())
        processes.wait_for(
            "every scheduler worker consumes the 'scheduler' queue",
            lambda: self._consumed("scheduler",
                                   exactly=self.scheduler_workers),
            START_TIMEOUT, interval=1, procs=self.procs.values())

    def _services_up(self):
        """Every service with a heartbeat (nova-api has none) is up."""
        found = [(s["binary"], s["host"], s["state"])
                 for s in self.nova.services()
                 if s["binary"] != "nova-osapi_compute"]
        binaries = {binary for binary, _, _ in found}
        wanted = {"nova-conductor", "nova-compute"}
        return (wanted <= binaries
                and all(state == "up" for _, _, state in found)), found

    def _providers_reported(self):
        names = {p["name"] for p in self.placement.providers()}
        wanted = {host for host, _ in COMPUTES} | {f"{NESTED}-child"}
        return wanted <= names, sorted(names)

    def _consumed(self, queue, exactly=None):
        """Whether ``queue`` has a consumer (``exactly``: that many)."""
        consumers = self.queue(queue)[1]
        done = consumers > 0 if exactly is None else consumers == exactly
        return done, f"{consumers} consumers"

    def queue(self, name):
        """(messages waiting, consumers) of a queue of the stack's vhost;
        (0, 0) for a queue that does not exist."""
        done = subprocess.run(
            ["rabbitmqctl", "-q", "list_queues", "-p", self.vhost, "name",
             "messages", "consumers"], capture_output=True, text=True,
            timeout=30)
        for line in done.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == name:
                return int(parts[1]), int(parts[2])
        return 0, 0

    # -- stop --------------------------------------------------------

    def stop(self):
        """Stop every process, newest first, then remove the databases
        and the virtual host (each tried even if another fails). Safe
        to call after a failed start."""
        processes.stop_all(reversed(list(self.procs.values())))
        errors = []
        for made, remove in (
                ("databases",
                 lambda: services.drop_databases(self.databases.values())),
                ("vhost", lambda: [services.delete_vhost(v) for v in
                                   (self.vhost, self.vhost2)])):
            if made in self._made:
                try:
                    remove()
                except Exception as exc:  # report, but go on cleaning
                    errors.append(f"removing the {made}: {exc}")
        self._made.clear()
        if errors:
            raise RuntimeError("; ".join(errors))

    # -- diagnosis ---------------------------------------------------

    def log_hint(self):
        return f"logs of every process: {self.logs}"

    def log_lines(self, name, pattern):
        """The lines of ``<name>.log`` that match the regular expression
        ``pattern``."""
        path = self.logs / f"{name}.log"
        if not path.exists():
            return []
        return [line for line in path.read_text(
            errors="replace").splitlines() if re.search(pattern, line)]

    def log_tails(self, lines=30):
        """The end of every log, for a failure message."""
        parts = []
        for path in sorted(self.logs.glob("*.log")):
            parts.append(f"==> {path} <==\n"
                         f"{processes.tail(path, lines)}")
        return "\n\n".join(parts)


def _http_ok(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status == 200


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", choices=SCHEDULERS,
                        default=scheduler_choice())
    parser.add_argument("--work", help="directory for configs and logs "
                                       "(default: a new temporary one)")
    parser.add_argument("--scheduler-workers", type=int, default=1,
                        help="the scheduler's processes (default 1)")
    args = parser.parse_args(argv)
    # SIGTERM (and SIGINT even where a shell ignores it for background
    # jobs) stop the stack the same way as Ctrl-C.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _interrupt)
    work = pathlib.Path(args.work or tempfile.mkdtemp(prefix="nova-stack-"))
    stack = Stack(work, install.nova_venv(), args.scheduler,
                  scheduler_workers=args.scheduler_workers)
    try:
        stack.start()
        print(json.dumps({"nova_api": stack.api_url,
                          "placement": stack.placement_url,
                          "scheduler": stack.scheduler,
                          "logs": str(stack.logs),
                          "timings": stack.timings}, indent=2), flush=True)
        print("Ctrl-C (or SIGTERM) stops the stack", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
