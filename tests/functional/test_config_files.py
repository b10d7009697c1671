"""Every command reads config files the same way (placement.config_check):
a nova.conf's sections as they are, unknown options and sections in
gantt's sections reported alike (a warning, an error with --strict),
values that do not convert stopped with one line and exit status 2.

The commands run as subprocesses, as an operator runs them.
"""

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

BIN = pathlib.Path(sys.executable).parent
COMMANDS = ("gantt-manage", "gantt-placement-api", "gantt-scheduler",
            "gantt-simulate")
REPO = pathlib.Path(__file__).parents[2]
SIM = REPO / "etc/examples/simulation"

# A nova.conf as Nova's scheduler hosts have it, with three mistakes of
# the kind gantt must report: a misspelt option, a misspelt section
# (both in sections gantt owns) and nothing else.
NOVA_CONF = """\
[DEFAULT]
debug = false
my_ip = 10.0.0.5
transport_url = kombu+memory:////
state_path = {state}

[scheduler]
discover_hosts_in_cells_interval = 300
max_attempts = 3
workers = 1

[filter_scheduler]
available_filters = nova.scheduler.filters.all_filters
enabled_filters = ComputeFilter,ImagePropertiesFilter
host_subset_size = 1

[placement]
auth_type = password
auth_url = http://keystone.example/v3
username = nova
password = secret
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
valid_interfaces = internal

[api_database]
connection = sqlite:///{state}/nova_api.sqlite

[keystone_authtoken]
www_authenticate_uri = http://keystone.example/v3
memcached_servers = localhost:11211

[oslo_messaging_notifications]
driver = noop
"""
TYPOS = """
[filter_scheduler]
ram_weight_multipler = 2.0

[filter_schedular]
host_subset_size = 2
"""
WARNINGS = (
    "warning: {path}: [filter_scheduler] ram_weight_multipler: unknown "
    "option (did you mean ram_weight_multiplier?)",
    "warning: {path}: [filter_schedular]: unknown section (did you mean "
    "[filter_scheduler]?)",
)


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OS_")}
    env.update(extra)
    return env


def _conf(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text.format(state=tmp_path / "state"))
    (tmp_path / "state").mkdir(exist_ok=True)
    return path


def _argv(command, conf, tmp_path, strict=False):
    """A command line that reads ``conf`` and, for the two one-shot
    commands, does something quick with it."""
    flag = ["--strict"] if strict else []
    if command == "gantt-manage":
        # db sync: db version exits 1 on a database without the schema.
        return [command, "--config-file", str(conf), *flag, "db", "sync"]
    if command == "gantt-simulate":
        return [command, "capacity", "--cloud", str(SIM / "cloud.yaml"),
                "--flavor", "vcpus=1,memory_mb=512,root_gb=1",
                "--config-file", str(conf), *flag]
    if command == "gantt-placement-api":
        return [command, "--config-file", str(conf), *flag, "--port", "0"]
    return [command, "--config-file", str(conf), *flag]


def _run(argv, tmp_path, env=None, timeout=120):
    return subprocess.run([str(BIN / argv[0]), *argv[1:]],
                          capture_output=True, text=True, timeout=timeout,
                          env=env or _env(tmp_path), cwd=tmp_path)


def _service_stderr(argv, tmp_path, want, timeout=60):
    """Start a service, wait until its output has every line of ``want``
    (or it exits), stop it with SIGTERM; (output, exit status). Its log
    (oslo.log writes to stdout) and stderr go to one file."""
    log = tmp_path / f"{argv[0]}.err"
    with open(log, "w") as err:
        proc = subprocess.Popen([str(BIN / argv[0]), *argv[1:]],
                                stdout=err, stderr=subprocess.STDOUT,
                                env=_env(tmp_path), cwd=tmp_path)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if all(line in log.read_text() for line in want):
                break
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return log.read_text(), proc.returncode


def _stderr(command, conf, tmp_path, want):
    argv = _argv(command, conf, tmp_path)
    if command in ("gantt-manage", "gantt-simulate"):
        done = _run(argv, tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stderr
    err, _ = _service_stderr(argv, tmp_path, want)
    return err


@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_nova_conf_as_it_is_gives_no_warning(tmp_path, command):
    conf = _conf(tmp_path, "nova.conf", NOVA_CONF)
    if command in ("gantt-manage", "gantt-simulate"):
        done = _run(_argv(command, conf, tmp_path), tmp_path)
        assert done.returncode == 0, done.stderr
        assert "warning" not in done.stderr
        assert "unknown" not in done.stderr
    else:
        # A service started from it runs (it is stopped by SIGTERM) and
        # has said nothing of unknown options by the time it is up.
        # The ready lines come once the service handles SIGTERM.
        ready = f"{command} ready"
        err, code = _service_stderr(_argv(command, conf, tmp_path),
                                    tmp_path, [ready])
        assert ready in err, err
        assert "unknown" not in err, err
        # Nor do the libraries warn on every start.
        assert "Eventlet is deprecated" not in err, err
        assert "No hostname was supplied" not in err, err
        assert "Warning" not in err, err
        assert f"{command} stopped" in err, err
        assert code == 0, err


@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_unknown_names_warned_alike_by_every_command(tmp_path, command):
    conf = _conf(tmp_path, "gantt.conf", NOVA_CONF + TYPOS)
    want = [f"{command}: " + w.format(path=conf) for w in WARNINGS]
    err = _stderr(command, conf, tmp_path, want)
    for line in want:
        assert line in err.splitlines(), err


@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_strict_makes_them_an_error(tmp_path, command):
    conf = _conf(tmp_path, "gantt.conf", NOVA_CONF + TYPOS)
    done = _run(_argv(command, conf, tmp_path, strict=True), tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    for w in WARNINGS:
        line = f"{command}: " + w.format(path=conf).replace(
            "warning:", "error:")
        assert line in lines, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_value_that_does_not_convert_is_one_line_exit_2(tmp_path, command):
    conf = _conf(tmp_path, "gantt.conf",
                 NOVA_CONF + "\n[placement_database]\nmax_pool_size = "
                             "many\n")
    done = _run(_argv(command, conf, tmp_path), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"{command}: {conf}: [placement_database] max_pool_size: invalid "
        "value: invalid literal for int() with base 10: 'many'"]


@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_another_commands_option_is_checked_too(tmp_path, command):
    # [scheduler] workers is gantt-scheduler's: the other commands do not
    # read it, and stop on its bad value all the same.
    conf = _conf(tmp_path, "gantt.conf",
                 NOVA_CONF.replace("workers = 1", "workers = two"))
    done = _run(_argv(command, conf, tmp_path), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"{command}: {conf}: [scheduler] workers: invalid value: invalid "
        "literal for int() with base 10: 'two'"]
    assert list((tmp_path / "state").iterdir()) == []


@pytest.mark.parametrize("command", COMMANDS[:3], ids=list(COMMANDS[:3]))
def test_misspelt_state_path_is_refused(tmp_path, command):
    # Not the default directory, quietly: the operator meant another.
    home = tmp_path / "home"
    conf = _conf(tmp_path, "gantt.conf", NOVA_CONF.replace(
        "state_path =", "stat_path =").replace(
        "[api_database]\nconnection = sqlite:///{state}/nova_api.sqlite\n",
        ""))
    done = _run(_argv(command, conf, tmp_path), tmp_path,
                env=_env(tmp_path, HOME=str(home), XDG_STATE_HOME=""))
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"{command}: {conf}: [DEFAULT] stat_path: unknown option (did you "
        "mean state_path?); without state_path the embedded database goes "
        f"to the default directory, {home}/.local/state/gantt"]
    assert not (home / ".local").exists()


@pytest.mark.parametrize("command", COMMANDS[:3], ids=list(COMMANDS[:3]))
def test_bad_os_variable_is_named(tmp_path, command):
    conf = _conf(tmp_path, "nova.conf", NOVA_CONF)
    env = _env(tmp_path, OS_PLACEMENT_DATABASE__MAX_POOL_SIZE="three")
    done = _run(_argv(command, conf, tmp_path), tmp_path, env=env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"{command}: OS_PLACEMENT_DATABASE__MAX_POOL_SIZE: "
        "[placement_database] max_pool_size: invalid value: invalid "
        "literal for int() with base 10: 'three'"]


def test_strict_can_be_set_in_the_file(tmp_path):
    conf = _conf(tmp_path, "gantt.conf",
                 NOVA_CONF.replace("[DEFAULT]\n", "[DEFAULT]\nstrict = true\n")
                 + TYPOS)
    done = _run(_argv("gantt-manage", conf, tmp_path), tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "gantt-manage: 2 unknown option(s) or section(s) in the config "
        "files; --strict makes them an error")


def test_config_dir_files_are_checked(tmp_path):
    folder = tmp_path / "gantt.conf.d"
    folder.mkdir()
    conf = _conf(tmp_path, "gantt.conf", NOVA_CONF)
    extra = folder / "10-typo.conf"
    extra.write_text("[scheduler]\nmax_attemps = 2\n")
    done = _run(["gantt-manage", "--config-file", str(conf), "--config-dir",
                 str(folder), "db", "sync"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"gantt-manage: warning: {extra}: [scheduler] max_attemps: unknown "
        "option (did you mean max_attempts?)"]
