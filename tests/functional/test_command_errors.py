"""Errors end every command the same way: one line on stderr, exit status
2 for input that cannot be used and 1 for other failures, the traceback
only with --debug (placement.command_errors). The commands run as
subprocesses, as an operator runs them."""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile

import pytest

BIN = pathlib.Path(sys.executable).parent
REPO = pathlib.Path(__file__).parents[2]
SIM = REPO / "etc/examples/simulation"
CLUSTER = REPO / "etc/examples/cluster.yaml"

# Port 1 on loopback: nothing listens there, the connection is refused.
UNREACHABLE = "postgresql+psycopg://nobody:secret@127.0.0.1:1/placement"


def _env():
    return {k: v for k, v in os.environ.items() if not k.startswith("OS_")}


def _run(argv, cwd, timeout=120):
    return subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env=_env())


def _conf(tmp_path, text=""):
    path = tmp_path / "gantt.conf"
    path.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'state'}\n"
                    f"{text}")
    return path


def _one_line(done, code, line):
    assert done.returncode == code, done.stderr
    assert done.stderr.splitlines() == [line], done.stderr


def _database_conf(tmp_path, url):
    # No retries: an unreachable database fails at once.
    return _conf(tmp_path, f"[placement_database]\nconnection = {url}\n"
                           "max_retries = 0\n")


def _commands(conf):
    return {
        "gantt-manage": ["gantt-manage", "--config-file", str(conf), "db",
                         "sync"],
        "gantt-placement-api": ["gantt-placement-api", "--config-file",
                                str(conf), "--port", "0"],
        "gantt-scheduler": ["gantt-scheduler", "--config-file", str(conf)],
        "gantt-simulate": ["gantt-simulate", "capacity", "--config-file",
                           str(conf), "--flavor",
                           "vcpus=1,memory_mb=512,root_gb=1"],
    }


COMMANDS = ("gantt-manage", "gantt-placement-api", "gantt-scheduler",
            "gantt-simulate")


@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_unknown_database_type_exits_2(tmp_path, command):
    conf = _database_conf(tmp_path, "nosuchdb://host/placement")
    done = _run(_commands(conf)[command], tmp_path)
    _one_line(done, 2, f"{command}: database URL: Can't load plugin: "
                       "sqlalchemy.dialects:nosuchdb")


@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_unreachable_database_exits_1(tmp_path, command):
    conf = _database_conf(tmp_path, UNREACHABLE)
    done = _run(_commands(conf)[command], tmp_path)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"{command}: cannot use the database: "), line
    assert "Connection refused" in line
    assert "secret" not in line


def test_driver_not_installed_exits_2_saying_what_to_install(tmp_path):
    conf = _database_conf(tmp_path,
                          "postgresql+nosuchdriver://u@127.0.0.1/p")
    done = _run(_commands(conf)["gantt-manage"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert "nosuchdriver" in done.stderr


def test_debug_prints_the_traceback_then_the_line(tmp_path):
    conf = _database_conf(tmp_path, "nosuchdb://host/placement")
    done = _run(["gantt-manage", "--config-file", str(conf), "--debug",
                 "db", "sync"], tmp_path)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1] == ("gantt-manage: database URL: Can't load plugin: "
                         "sqlalchemy.dialects:nosuchdb")


def test_port_in_use_exits_1(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _run(["gantt-placement-api", "--config-file",
                     str(_conf(tmp_path)), "--port", str(port)], tmp_path)
    _one_line(done, 1, f"gantt-placement-api: 127.0.0.1:{port} is in use "
                       "(another server listens there): choose --port or "
                       "[api] bind_port")


def test_address_not_on_this_host_exits_2(tmp_path):
    # 10.99.99.99 is no address of the test machine: EADDRNOTAVAIL.
    done = _run(["gantt-placement-api", "--config-file",
                 str(_conf(tmp_path)), "--host", "10.99.99.99", "--port",
                 "8778"], tmp_path)
    _one_line(done, 2, "gantt-placement-api: cannot listen on "
                       "10.99.99.99:8778: address not available on this "
                       "host; choose --host or [api] bind_host")
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("argv, line", [
    (["--port", "abc"], "--port: 'abc' is not a port (0-65535)"),
    (["--port=70000"], "--port: '70000' is not a port (0-65535)"),
    (["--workers", "0"], "--workers: '0' is not an integer (>= 1)"),
    (["--threads", "many"], "--threads: 'many' is not an integer (>= 1)"),
    (["--host", "bad_host!"],
     "--host: 'bad_host!' is not a host name or an IP address"),
    (["--policy", "bogus"],
     "--policy: 'bogus' is not one of legacy, secure, open"),
], ids=["port", "port-range", "workers", "threads", "host", "policy"])
def test_bad_option_value_names_the_option_as_typed(tmp_path, argv, line):
    done = _run(["gantt-placement-api", "--config-file",
                 str(_conf(tmp_path)), *argv], tmp_path)
    _one_line(done, 2, f"gantt-placement-api: {line}")
    assert not (tmp_path / "state").exists()


def test_command_line_option_set_in_a_file_is_named_there(tmp_path):
    # oslo.config reads a command line option from [DEFAULT] too.
    conf = _conf(tmp_path, "strict = maybe\n")
    done = _run(["gantt-manage", "--config-file", str(conf), "db",
                 "version"], tmp_path)
    _one_line(done, 2, "gantt-manage: [DEFAULT] strict: 'maybe' is not "
                       "true or false")
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("scheme, meant", [
    ("postgres", "postgresql"), ("pgsql", "postgresql")])
def test_database_type_misnamed_says_the_right_name(tmp_path, scheme,
                                                    meant):
    conf = _database_conf(tmp_path, f"{scheme}://u@127.0.0.1/placement")
    done = _run(_commands(conf)["gantt-manage"], tmp_path)
    _one_line(done, 2, "gantt-manage: database URL: Can't load plugin: "
                       f"sqlalchemy.dialects:{scheme} (did you mean "
                       f"{meant}://?)")
    assert not (tmp_path / "state").exists()


def _as_nobody():
    """The start of a command line that runs as nobody when the tests run
    as root (who writes anywhere)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root, and no setpriv to run the command as nobody")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.parametrize("command", COMMANDS[:3], ids=list(COMMANDS[:3]))
def test_state_path_not_writable_names_state_path(command):
    with tempfile.TemporaryDirectory() as top:
        top = pathlib.Path(top)
        top.chmod(0o755)
        state = top / "state"
        state.mkdir(mode=0o555)
        state.chmod(0o555)
        conf = top / "gantt.conf"
        conf.write_text(f"[DEFAULT]\nstate_path = {state}\n")
        argv = _commands(conf)[command]
        done = subprocess.run([*_as_nobody(), str(BIN / argv[0]),
                               *argv[1:]], cwd=top, capture_output=True,
                              text=True, timeout=120, env=_env())
        _one_line(done, 2, f"{command}: [DEFAULT] state_path: {state}: "
                           "not writable")
        assert list(state.iterdir()) == []


@pytest.mark.parametrize("under, says", [
    ("", "not a directory"),
    ("x", "cannot create the directory: Not a directory"),
], ids=["a-file", "under-a-file"])
def test_state_path_on_a_file_names_state_path(tmp_path, under, says):
    taken = tmp_path / "taken"
    taken.write_text("")
    state = taken / under if under else taken
    conf = tmp_path / "gantt.conf"
    conf.write_text(f"[DEFAULT]\nstate_path = {state}\n")
    done = _run(_commands(conf)["gantt-manage"], tmp_path)
    _one_line(done, 2, f"gantt-manage: [DEFAULT] state_path: {state}: "
                       f"{says}")
    assert taken.read_text() == ""


KEYSTONE = "[api]\nauth_strategy = keystone\n"


@pytest.mark.parametrize("authtoken, line", [
    ("", "[api] auth_strategy = keystone needs [keystone_authtoken] "
         "auth_type (e.g. password) and that plugin's options (auth_url, "
         "username, ...) to check tokens with Keystone"),
    ("www_authenticate_uri = http://keystone.example/v3\n",
     "[api] auth_strategy = keystone needs [keystone_authtoken] "
     "auth_type (e.g. password) and that plugin's options (auth_url, "
     "username, ...) to check tokens with Keystone"),
    ("auth_type = password\n", "[keystone_authtoken]: the auth plugin "
     "needs auth_url (for [api] auth_strategy = keystone)"),
    ("auth_type = passwd\n",
     "[keystone_authtoken] auth_type: no auth plugin 'passwd'"),
], ids=["none", "uri-only", "no-auth-url", "no-such-plugin"])
def test_keystone_without_an_auth_plugin_refuses_to_start(tmp_path,
                                                          authtoken, line):
    conf = _conf(tmp_path, f"{KEYSTONE}[keystone_authtoken]\n{authtoken}")
    done = _run(["gantt-placement-api", "--config-file", str(conf),
                 "--port", "0"], tmp_path)
    _one_line(done, 2, f"gantt-placement-api: {line}")
    assert not (tmp_path / "state").exists()


def _closed_pipe_run(argv, cwd):
    """Run ``argv`` with its standard output a pipe nobody reads: the
    reader is closed before the command starts, as ``| head`` is once
    it has its lines."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=cwd,
                              stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120, env=_env())
    finally:
        os.close(write)


@pytest.mark.parametrize("argv", [
    ["gantt-manage", "--config-file", "{conf}", "cloud", "show"],
    ["gantt-manage", "--config-file", "{conf}", "cloud", "show", "--format",
     "json"],
    ["gantt-manage", "--config-file", "{conf}", "cloud", "export", "-"],
    ["gantt-manage", "--config-file", "{conf}", "db", "version"],
    ["gantt-simulate", "capacity", "--config-file", "{conf}", "--cloud",
     str(SIM / "cloud.yaml"), "--flavor", "vcpus=1,memory_mb=512,root_gb=1"],
], ids=["show", "show-json", "export", "db-version", "simulate"])
def test_closed_output_ends_quietly_with_141(tmp_path, argv):
    conf = _conf(tmp_path)
    assert _run(["gantt-manage", "--config-file", str(conf), "cloud",
                 "load", str(CLUSTER)], tmp_path).returncode == 0
    done = _closed_pipe_run([a.format(conf=conf) for a in argv], tmp_path)
    assert (done.returncode, done.stderr) == (141, "")


def test_simulate_out_naming_a_file_exits_2(tmp_path):
    out = tmp_path / "report"
    out.write_text("not a directory")
    done = _run(["gantt-simulate", "run", "--cloud", str(SIM / "cloud.yaml"),
                 "--workload", str(SIM / "workload.yaml"), "--out",
                 str(out), "--no-progress"], tmp_path)
    _one_line(done, 2, f"gantt-simulate: --out {out}: a file is there; the "
                       "report needs a directory")
    assert out.read_text() == "not a directory"


UNKNOWN_FILTER = "[filter_scheduler]\nenabled_filters = ComputeFilter,Nope\n"
FILTER_LINE = ("[filter_scheduler] enabled_filters: unknown filter Nope; "
               "known: ")


def test_unknown_filter_exits_2_from_the_scheduler(tmp_path):
    done = _run(["gantt-scheduler", "--config-file",
                 str(_conf(tmp_path, UNKNOWN_FILTER))], tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"gantt-scheduler: {FILTER_LINE}"), line
    assert "ComputeFilter" in line


def test_unknown_weigher_exits_2_from_manage_schedule(tmp_path):
    conf = _conf(tmp_path, "[filter_scheduler]\nweight_classes = "
                           "RAMWeigher,Heavy\n")
    assert _run(["gantt-manage", "--config-file", str(conf), "cloud",
                 "load", str(CLUSTER)], tmp_path).returncode == 0
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"flavor": {"vcpus": 1, "memory_mb": 512,
                                           "root_gb": 1}}))
    done = _run(["gantt-manage", "--config-file", str(conf), "schedule",
                 str(spec)], tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("gantt-manage: [filter_scheduler] "
                           "weight_classes: unknown weigher Heavy; known: ")


def test_unknown_filter_exits_2_from_simulate(tmp_path):
    conf = _conf(tmp_path, UNKNOWN_FILTER)
    done = _run(["gantt-simulate", "run", "--cloud", str(SIM / "cloud.yaml"),
                 "--workload", str(SIM / "workload.yaml"), "--config-file",
                 str(conf), "--out", str(tmp_path / "out"),
                 "--no-progress"], tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"gantt-simulate: {conf}: {FILTER_LINE}"), line


@pytest.mark.parametrize("field, value, says", [
    ("flavor", {"vcpus": "two", "memory_mb": 512, "root_gb": 1},
     "flavor.vcpus: 'two' is not of type 'integer'"),
    ("instance_group", 5, "instance_group: 5 is not an object or null"),
    ("numa_topology", {"cells": [{"pagesize": "big"}]},
     "numa_topology.cells.0.pagesize: 'big' is not null or an integer or "
     "one of -1, -2, -3"),
], ids=["wrong-type", "any-of-object", "any-of-enum"])
def test_bad_spec_names_the_file_and_the_field(tmp_path, field, value, says):
    conf = _conf(tmp_path)
    spec = {"flavor": {"vcpus": 1, "memory_mb": 512, "root_gb": 1}}
    spec[field] = value
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    done = _run(["gantt-manage", "--config-file", str(conf), "schedule",
                 str(path)], tmp_path)
    _one_line(done, 2, f"gantt-manage: {path}: {says}")


FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}


@pytest.mark.parametrize("spec, says", [
    ({"flavour": FLAVOR}, "flavour: unknown field (did you mean flavor?)"),
    ({"flavor": dict(FLAVOR, vpcus=2)},
     "flavor.vpcus: unknown field (did you mean vcpus?)"),
    ({"flavor": dict(FLAVOR, extra_specs={"hw:cpu_policy": "dedicatd"})},
     "flavor.extra_specs.hw:cpu_policy: expected one of shared, "
     "dedicated, mixed, got 'dedicatd'"),
    ({"flavor": dict(FLAVOR, extra_specs={
        "hw:cpu_thread_policy": "isolat"})},
     "flavor.extra_specs.hw:cpu_thread_policy: expected one of prefer, "
     "isolate, require, got 'isolat'"),
    ({"flavor": dict(FLAVOR, extra_specs={"resources:VCPUS": "1"})},
     "flavor.extra_specs.resources:VCPUS: unknown resource class VCPUS: "
     "neither a standard class nor CUSTOM_* (did you mean VCPU?)"),
], ids=["flavour", "vpcus", "cpu-policy", "thread-policy", "class"])
def test_spec_misspelling_names_the_field_and_what_was_meant(tmp_path, spec,
                                                             says):
    conf = _conf(tmp_path)
    assert _run(["gantt-manage", "--config-file", str(conf), "cloud",
                 "load", str(CLUSTER)], tmp_path).returncode == 0
    before = _run(["gantt-manage", "--config-file", str(conf), "cloud",
                   "show", "--format", "json"], tmp_path).stdout
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    done = _run(["gantt-manage", "--config-file", str(conf), "schedule",
                 str(path), "--claim"], tmp_path)
    _one_line(done, 2, f"gantt-manage: {path}: {says}")
    assert done.stdout == ""
    # Nothing claimed.
    assert _run(["gantt-manage", "--config-file", str(conf), "cloud",
                 "show", "--format", "json"], tmp_path).stdout == before


@pytest.mark.parametrize("command", ["gantt-scheduler",
                                     "gantt-compute-agent"])
def test_misspelt_transport_url_refuses_the_in_process_fallback(tmp_path,
                                                               command):
    conf = _conf(tmp_path, "transport_ulr = rabbit://guest:guest@"
                           "127.0.0.1:5672/\n")
    done = _run([command, "--config-file", str(conf)], tmp_path)
    _one_line(done, 2, f"{command}: {conf}: [DEFAULT] transport_ulr: "
                       "unknown option (did you mean transport_url?); "
                       "without transport_url the transport is the "
                       "in-process one (kombu+memory:////), which no other "
                       "process can reach")
    assert not (tmp_path / "state").exists()


def test_recording_without_a_path_exits_2(tmp_path):
    conf = _conf(tmp_path, "[recording]\nenabled = true\n")
    done = _run(["gantt-scheduler", "--config-file", str(conf)], tmp_path)
    _one_line(done, 2, "gantt-scheduler: [recording] path: required when "
                       "recording is enabled")
