"""gantt-compute-agent as a real process: on a fake 2-socket host, against
the embedded store, and as a service against a remote gantt (the REST
API over HTTP, gantt-scheduler over RabbitMQ)."""

import contextlib
import json
import os
import pathlib
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from tests.compute import fake_sysfs
from tests.rpc import helpers as rpc_helpers

BIN = pathlib.Path(sys.executable).parent
HOST = "cn-test"


def _env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    return env


def _conf(tmp_path, extra=""):
    path = tmp_path / "gantt.conf"
    path.write_text(f"""\
[DEFAULT]
state_path = {tmp_path / 'state'}
host = {HOST}
{extra}
[compute]
cpu_shared_set = 0-7,16-23
cpu_dedicated_set = 8-15,24-31
numa_providers = true
sriov_physnets = ens1f0=physnet1
report_interval = 1
host_file = {tmp_path / 'host.yaml'}
[devices]
enabled_mdev_types = nvidia-35
""")
    # The host file names the node: the fake tree has no hostname.
    (tmp_path / "host.yaml").write_text(f"hostname: {HOST}\n")
    return path


def _run(argv, cwd, timeout=120):
    return subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env=_env())


def _show(conf, cwd):
    done = _run(["gantt-manage", "--config-file", str(conf), "cloud", "show",
                 "--format", "json"], cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _fake_root(tmp_path):
    root = tmp_path / "root"
    fake_sysfs.two_socket_host(root)
    return root


def _by_name(shown):
    return {p["name"]: p for p in shown["providers"]}


def test_once_reports_the_fake_host_and_again_writes_nothing(tmp_path):
    conf = _conf(tmp_path)
    root = _fake_root(tmp_path)
    agent = ["gantt-compute-agent", "--config-file", str(conf), "--root",
             str(root), "--once"]
    done = _run(agent, tmp_path)
    assert done.returncode == 0, done.stderr
    # (oslo.log writes the log lines to stdout too)
    assert any(line.startswith(f"reported {HOST}: root provider ")
               for line in done.stdout.splitlines()), done.stdout
    providers = _by_name(_show(conf, tmp_path))
    # What the fake tree says: two NUMA nodes of 16 CPUs, half shared and
    # half dedicated each; PFs with 8 and 16 VFs; a GPU whose nvidia-35
    # type offers 16 instances.
    assert sorted(providers) == sorted([
        HOST, f"{HOST}_NUMA_0", f"{HOST}_NUMA_1", f"{HOST}:ens1f0",
        f"{HOST}:ens6f0", f"{HOST}_pci_0000_af_00_0"])
    for node in (0, 1):
        inventories = providers[f"{HOST}_NUMA_{node}"]["inventories"]
        assert inventories["VCPU"]["total"] == 8
        assert inventories["PCPU"]["total"] == 8
    assert providers[f"{HOST}:ens1f0"]["inventories"]["SRIOV_NET_VF"][
        "total"] == 8
    assert "CUSTOM_PHYSNET_PHYSNET1" in providers[f"{HOST}:ens1f0"]["traits"]
    assert providers[f"{HOST}:ens6f0"]["inventories"]["SRIOV_NET_VF"][
        "total"] == 16
    assert providers[f"{HOST}_pci_0000_af_00_0"]["inventories"]["VGPU"][
        "total"] == 16
    generations = {n: p["generation"] for n, p in providers.items()}
    # A second start finds its tree (the uuids are stable) and writes
    # nothing: every generation stays.
    done = _run(agent, tmp_path)
    assert done.returncode == 0, done.stderr
    again = _by_name(_show(conf, tmp_path))
    assert {n: p["generation"] for n, p in again.items()} == generations


def test_a_vf_count_change_becomes_an_update(tmp_path):
    conf = _conf(tmp_path)
    root = _fake_root(tmp_path)
    agent = ["gantt-compute-agent", "--config-file", str(conf), "--root",
             str(root), "--once"]
    assert _run(agent, tmp_path).returncode == 0
    before = _by_name(_show(conf, tmp_path))
    # The operator enables 4 VFs on ens1f0 instead of 8.
    numvfs = root / "sys/bus/pci/devices" / fake_sysfs.PF0 / "sriov_numvfs"
    numvfs.write_text("4\n")
    done = _run(agent, tmp_path)
    assert done.returncode == 0, done.stderr
    after = _by_name(_show(conf, tmp_path))
    pf, other = f"{HOST}:ens1f0", f"{HOST}:ens6f0"
    assert after[pf]["inventories"]["SRIOV_NET_VF"]["total"] == 4
    assert after[pf]["generation"] > before[pf]["generation"]
    # Only that provider was written.
    assert after[other]["generation"] == before[other]["generation"]
    assert after[HOST]["generation"] == before[HOST]["generation"]


def _allocations(url):
    """Every consumer's allocations in the store at ``url``, by provider
    name: {consumer: {provider name: {rc: n}}}."""
    from placement import direct
    from placement.db import store as store_mod
    from tests import databases

    store = store_mod.Store.open(databases.make_conf(url))
    try:
        placement = direct.PlacementDirect(store)
        names = {p.uuid: p.name for p in placement.list_providers()}
        out = {}
        for uuid in names:
            for consumer, resources in placement.get_provider_allocations(
                    uuid).allocations.items():
                out.setdefault(consumer, {})[names[uuid]] = dict(resources)
        return out
    finally:
        store.dispose()


def _allocate(url, host_uuid, vms):
    from placement import direct
    from placement.db import store as store_mod
    from tests import databases

    store = store_mod.Store.open(databases.make_conf(url))
    try:
        placement = direct.PlacementDirect(store)
        for vm, resources in vms.items():
            placement.put_allocations(vm, {host_uuid: resources},
                                      project_id="p", user_id="u",
                                      consumer_generation=None)
    finally:
        store.dispose()


def test_a_numa_split_becomes_a_reshape_that_keeps_every_allocation(
        tmp_path):
    """The operator turns [compute] numa_providers on under running
    instances: the next start moves the root's VCPU, PCPU and MEMORY_MB
    to the NUMA children in one reshape, each instance's allocation
    whole on one node; turning it off merges them back."""
    url = f"sqlite:///{tmp_path / 'placement.sqlite'}"
    extra = f"\n[placement_database]\nconnection = {url}\n"
    conf = _conf(tmp_path, extra)
    flat = conf.read_text().replace("numa_providers = true",
                                    "numa_providers = false")
    nested = conf.read_text()
    conf.write_text(flat)
    root = _fake_root(tmp_path)
    agent = ["gantt-compute-agent", "--config-file", str(conf), "--root",
             str(root), "--once"]
    done = _run(agent, tmp_path)
    assert done.returncode == 0, done.stderr
    host = _by_name(_show(conf, tmp_path))[HOST]
    assert host["inventories"]["VCPU"]["total"] == 16
    vms = {f"00000000-0000-0000-0000-00000000000{i}": {
        "VCPU": 4, "PCPU": 2, "MEMORY_MB": 8192}
        for i in range(1, 6)}
    _allocate(url, host["uuid"], vms)

    conf.write_text(nested)
    done = _run(agent, tmp_path)
    assert done.returncode == 0, done.stderr
    providers = _by_name(_show(conf, tmp_path))
    # (the fake host has no local disk: the root keeps no inventory)
    assert providers[HOST]["inventories"] == {}
    held = _allocations(url)
    assert sorted(held) == sorted(vms)
    nodes = {f"{HOST}_NUMA_0", f"{HOST}_NUMA_1"}
    for by_provider in held.values():
        # One node holds the instance's CPUs and memory.
        assert len(by_provider) == 1, by_provider
        [(node, resources)] = by_provider.items()
        assert node in nodes
        assert resources == {"VCPU": 4, "PCPU": 2, "MEMORY_MB": 8192}
    # First fit, each instance whole: node 0 takes four (its 8 dedicated
    # CPUs, 2 each), node 1 the fifth.
    placed = [next(iter(by)) for by in held.values()]
    assert placed.count(f"{HOST}_NUMA_0") == 4
    assert placed.count(f"{HOST}_NUMA_1") == 1

    # And back: numa_providers off merges the nodes into the root.
    conf.write_text(flat)
    done = _run(agent, tmp_path)
    assert done.returncode == 0, done.stderr
    providers = _by_name(_show(conf, tmp_path))
    assert f"{HOST}_NUMA_0" not in providers
    for vm, by_provider in _allocations(url).items():
        assert by_provider == {HOST: vms[vm]}, vm


def test_on_the_embedded_store_the_scheduler_learns_the_node(tmp_path):
    """No broker: the agent writes the host record into the embedded
    database itself, and a scheduler reading it (gantt-manage schedule)
    places and claims on the node."""
    conf = _conf(tmp_path)
    root = _fake_root(tmp_path)
    done = _run(["gantt-compute-agent", "--config-file", str(conf),
                 "--root", str(root), "--once"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "no scheduler can hear" not in done.stdout + done.stderr
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"flavor": {"vcpus": 2, "memory_mb": 2048,
                                           "root_gb": 0},
                                "num_instances": 2}))
    done = _run(["gantt-manage", "--config-file", str(conf), "schedule",
                 str(spec), "--claim", "--format", "json"], tmp_path)
    assert done.returncode == 0, done.stderr
    providers = _by_name(_show(conf, tmp_path))
    # Two instances of 2 VCPU, on the NUMA children of the node.
    used = sum(p["usages"].get("VCPU", 0) for p in providers.values())
    assert used == 4, providers


def test_bad_compute_option_is_one_line_exit_2(tmp_path):
    conf = _conf(tmp_path)
    conf.write_text(conf.read_text().replace(
        "cpu_dedicated_set = 8-15,24-31", "cpu_dedicated_set = 15-8"))
    done = _run(["gantt-compute-agent", "--config-file", str(conf),
                 "--root", str(_fake_root(tmp_path)), "--once"], tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("gantt-compute-agent: ") and "15-8" in line


@pytest.mark.parametrize("url, line", [
    (rpc_helpers.RABBIT_URL.replace("rabbit://", "rabit://"),
     "[DEFAULT] transport_url: no transport driver 'rabit' (installed: "
     "fake, kafka, kombu, rabbit)"),
    (rpc_helpers.RABBIT_URL.replace("guest:guest@", "guest:wrong@"),
     "the broker at 127.0.0.1:5672 refused the login of user 'guest': "
     "check the user and password in [DEFAULT] transport_url"),
], ids=["driver", "password"])
def test_a_broker_misstep_is_one_line_exit_2(tmp_path, url, line):
    """As gantt-scheduler says them, before the database is opened (it
    said 'failed: DriverLoadFailure' or 'failed: AccessRefused', exit
    1)."""
    rpc_helpers.require_rabbit()
    conf = _conf(tmp_path, f"transport_url = {url}\n")
    done = _run(["gantt-compute-agent", "--config-file", str(conf),
                 "--root", str(_fake_root(tmp_path))], tmp_path, timeout=60)
    assert (done.returncode, done.stderr) == (
        2, f"gantt-compute-agent: {line}\n")
    assert not (tmp_path / "state").exists()


def test_a_broker_it_cannot_reach_is_waited_for_then_one_line(tmp_path):
    """As gantt-scheduler: [scheduler] broker_start_timeout, each try
    logged, then one line and exit 1, nothing opened (it waited in
    oslo.messaging's reconnection loop for ever, deaf to SIGTERM)."""
    port = _free_port()
    conf = _conf(tmp_path, f"transport_url = rabbit://guest:guest@"
                           f"127.0.0.1:{port}/\n[scheduler]\n"
                           f"broker_start_timeout = 2\n")
    started = time.monotonic()
    done = _run(["gantt-compute-agent", "--config-file", str(conf),
                 "--root", str(_fake_root(tmp_path))], tmp_path, timeout=60)
    assert done.returncode == 1, done.stderr
    [line] = [x for x in done.stderr.splitlines()
              if x.startswith("gantt-compute-agent: ")]
    assert line.startswith(
        "gantt-compute-agent: cannot reach the broker of [DEFAULT] "
        "transport_url after 2 s ([scheduler] broker_start_timeout): "
        f"127.0.0.1:{port}: "), line
    assert time.monotonic() - started < 30
    assert not (tmp_path / "state").exists()


def test_a_database_without_gantt_schema_is_refused_at_start(tmp_path):
    """sync_on_startup = false on an empty database: one line naming the
    db sync, exit 1 (it logged 'report failed: ... relation
    "resource_providers" does not exist' every report_interval)."""
    db = tmp_path / "empty.sqlite"
    sqlite3.connect(db).close()
    conf = _conf(tmp_path, f"[placement_database]\nconnection = "
                           f"sqlite:///{db}\nsync_on_startup = false\n")
    done = _run(["gantt-compute-agent", "--config-file", str(conf),
                 "--root", str(_fake_root(tmp_path))], tmp_path, timeout=60)
    assert (done.returncode, done.stderr) == (
        1, f"gantt-compute-agent: the database sqlite:///{db} has no gantt "
           f"schema; run gantt-manage --config-file {conf} db sync\n")
    with sqlite3.connect(db) as check:
        assert check.execute("SELECT name FROM sqlite_master").fetchall() \
            == []


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(argv, cwd, log):
    out = open(log, "w")
    return subprocess.Popen([str(BIN / argv[0]), *argv[1:]], cwd=cwd,
                            stdout=out, stderr=subprocess.STDOUT,
                            env=_env()), out


def _stop(proc, out):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    out.close()
    return code


def _wait(predicate, timeout=90):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = predicate()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError("timed out")


def test_service_reports_to_remote_placement_and_scheduler(tmp_path):
    rpc_helpers.require_rabbit()
    topic = rpc_helpers.unique_topic()
    conf = _conf(tmp_path, f"transport_url = {rpc_helpers.RABBIT_URL}\n"
                           "[scheduler]\n"
                           f"topic = {topic}\nworkers = 1\n")
    assert _run(["gantt-manage", "--config-file", str(conf), "db", "sync"],
                tmp_path).returncode == 0
    port = _free_port()
    api, api_out = _start(["gantt-placement-api", "--config-file", str(conf),
                           "--port", str(port), "--workers", "1"],
                          tmp_path, tmp_path / "api.log")
    scheduler, sched_out = _start(["gantt-scheduler", "--config-file",
                                   str(conf)], tmp_path,
                                  tmp_path / "scheduler.log")
    agent = agent_out = None
    try:
        _wait(lambda: "ready" in (tmp_path / "scheduler.log").read_text())
        agent, agent_out = _start(
            ["gantt-compute-agent", "--config-file", str(conf), "--root",
             str(_fake_root(tmp_path)), "--placement-url",
             f"http://127.0.0.1:{port}"], tmp_path, tmp_path / "agent.log")

        def reported():
            hosts = _show(conf, tmp_path).get("hosts", [])
            return [h for h in hosts if h["host"] == HOST
                    and h["hypervisor_type"] == "gantt" and h["up"]]
        [host] = _wait(reported)
        assert host["vcpus"] == 16
        assert host["nodename"] == HOST
        providers = _by_name(_show(conf, tmp_path))
        assert host["uuid"] == providers[HOST]["uuid"]
        assert f"{HOST}_NUMA_1" in providers
    finally:
        codes = {}
        if agent is not None:
            codes["agent"] = _stop(agent, agent_out)
        codes["scheduler"] = _stop(scheduler, sched_out)
        codes["api"] = _stop(api, api_out)
    log = (tmp_path / "agent.log").read_text()
    assert codes["agent"] == 0, log
    assert "gantt-compute-agent stopped" in log
    assert "report failed" not in log, log


class _Forwarder:
    """A TCP relay to the broker that the test can cut: the broker, as
    the agent sees it, goes away."""

    def __init__(self, target):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b),
                                 daemon=True).start()

    @staticmethod
    def _pipe(a, b):
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        for end in (a, b):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self):
        self.listener.close()
        for end in self.sockets:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
                end.close()


def test_sigterm_while_a_report_waits_for_a_broker_gone(tmp_path):
    """The broker goes away under a running agent: its report to the
    scheduler waits in oslo.messaging's reconnection loop, and SIGTERM
    still stops it, with its stop line and status 0 (it did not stop)."""
    rpc_helpers.require_rabbit()
    relay = _Forwarder(("127.0.0.1", 5672))
    topic = rpc_helpers.unique_topic()
    log = tmp_path / "agent.log"
    url = rpc_helpers.RABBIT_URL.replace("127.0.0.1:5672",
                                         f"127.0.0.1:{relay.port}")
    assert f":{relay.port}/" in url
    # No scheduler listens on the topic: each report's call waits for
    # its answer until the broker goes.
    conf = _conf(tmp_path, f"transport_url = {url}\nlog_file = {log}\n"
                           f"[scheduler]\ntopic = {topic}\n")
    agent, out = _start(["gantt-compute-agent", "--config-file", str(conf),
                         "--root", str(_fake_root(tmp_path))], tmp_path,
                        tmp_path / "stdout.log")
    try:
        _wait(lambda: log.exists() and "starting" in log.read_text(),
              timeout=30)
        time.sleep(3)  # the first report's call is in flight
        relay.cut()
        _wait(lambda: "AMQP server on 127.0.0.1" in log.read_text()
              and "unreachable" in log.read_text(), timeout=30)
        agent.send_signal(signal.SIGTERM)
        code = agent.wait(20)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        out.close()
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert "stopped while a report to the scheduler waited for the " \
        "broker" in text
    assert "gantt-compute-agent stopped" in text


def test_sighup_reopens_the_log_and_applies_report_interval(tmp_path):
    """logrotate moves the log away and the operator changes the report
    interval (a mutable option): SIGHUP, and the agent goes on, in the
    new file, at the new pace."""
    log = tmp_path / "agent.log"
    conf = _conf(tmp_path, f"log_file = {log}\ndebug = true\n")
    agent, out = _start(["gantt-compute-agent", "--config-file", str(conf),
                         "--root", str(_fake_root(tmp_path))], tmp_path,
                        tmp_path / "stdout.log")
    try:
        _wait(lambda: log.exists() and "reported cn-test" in log.read_text())
        log.rename(tmp_path / "agent.log.1")
        conf.write_text(conf.read_text().replace("report_interval = 1",
                                                 "report_interval = 3"))
        agent.send_signal(signal.SIGHUP)
        _wait(lambda: log.exists() and "reloading (SIGHUP)" in
              log.read_text(), timeout=20)
        _wait(lambda: log.read_text().count("reported cn-test") >= 2,
              timeout=20)
        assert agent.poll() is None
    finally:
        code = _stop(agent, out)
    assert code == 0
    text = log.read_text()
    assert "Option compute.report_interval changed from [1] to [3]" in text
    assert "gantt-compute-agent stopped" in text
    assert "reloading" not in (tmp_path / "agent.log.1").read_text()


def test_sigusr2_writes_a_guru_meditation_report(tmp_path):
    """oslo.reports: SIGUSR2 writes what the agent is doing to
    [oslo_reports] log_dir, and the agent goes on reporting."""
    log = tmp_path / "agent.log"
    reports = tmp_path / "reports"
    reports.mkdir()
    conf = _conf(tmp_path, f"log_file = {log}\ndebug = true\n"
                           f"[oslo_reports]\nlog_dir = {reports}\n")
    agent, out = _start(["gantt-compute-agent", "--config-file", str(conf),
                         "--root", str(_fake_root(tmp_path))], tmp_path,
                        tmp_path / "stdout.log")
    try:
        _wait(lambda: log.exists() and "reported cn-test" in log.read_text())
        agent.send_signal(signal.SIGUSR2)
        _wait(lambda: list(reports.iterdir()), timeout=20)
        [path] = reports.iterdir()
        assert path.name.startswith("gantt-compute-agent_gurumeditation_")
        _wait(lambda: "Threads" in path.read_text()
              and "Configuration" in path.read_text(), timeout=20)
        seen = log.read_text().count("reported cn-test")
        _wait(lambda: log.read_text().count("reported cn-test") > seen,
              timeout=20)
        assert agent.poll() is None
    finally:
        code = _stop(agent, out)
    assert code == 0
