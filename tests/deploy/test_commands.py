"""The installed commands, run as an operator runs them:

- every console script goes through gantt.cmd.console (the clash
  check first);
- every gantt command answers ``--version`` with ``<command> <version>``
  (the installed distribution's) and exit status 0;
- oslo.policy's tools find gantt's rules under ``--namespace gantt``
  (entry point oslo.policy.enforcer), merged with the policy file of the
  config they are given.
"""

import importlib.metadata
import pathlib
import subprocess
import sys

import pytest

from placement.api import policies

BIN = pathlib.Path(sys.executable).parent
COMMANDS = ("gantt-manage", "gantt-placement-api", "gantt-scheduler",
            "gantt-simulate", "gantt-compute-agent", "gantt-status")


def _run(argv, cwd):
    return subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          cwd=cwd)


@pytest.mark.parametrize("command", COMMANDS)
def test_version(command, tmp_path):
    done = _run([str(BIN / command), "--version"], tmp_path)
    version = importlib.metadata.version("gantt")
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"{command} {version}\n", "")


def test_every_command_checks_for_a_clash_first():
    # The console scripts are gantt.cmd.console's functions, which run
    # gantt.clash's check before importing the command
    # (tests/deploy/test_clash.py runs them beside OpenStack Placement).
    scripts = {point.name: point.value for point in
               importlib.metadata.distribution("gantt").entry_points
               if point.group == "console_scripts"}
    assert sorted(scripts) == sorted(COMMANDS)
    assert all(value.startswith("gantt.cmd.console:")
               for value in scripts.values()), scripts


def test_version_comes_before_a_missing_subcommand(tmp_path):
    # gantt-manage and gantt-simulate need a command, but not for this.
    for command in ("gantt-manage", "gantt-simulate", "gantt-status"):
        done = _run([str(BIN / command), "--version"], tmp_path)
        assert done.returncode == 0, done.stderr
        done = _run([str(BIN / command)], tmp_path)
        assert done.returncode == 2


def test_policy_generator_prints_the_rules(tmp_path):
    done = _run([str(BIN / "oslopolicy-policy-generator"), "--namespace",
                 "gantt"], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert ('"placement:resource_providers:list": '
            '"rule:admin_or_service_api"') in lines
    assert '"admin_api": "role:admin"' in lines
    assert len([x for x in lines if x.startswith('"placement:')]) == len(
        [rule for rule in policies.list_rules()
         if rule.name.startswith("placement:")])


def test_policy_tools_read_the_policy_file_of_the_config(tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        '"placement:resource_providers:list": "role:reader"\n'
        # The default, as it is: redundant.
        '"placement:resource_classes:list": "rule:admin_or_service_api"\n')
    conf = tmp_path / "gantt.conf"
    conf.write_text(f"[oslo_policy]\npolicy_file = {policy}\n")
    args = ["--namespace", "gantt", "--config-file", str(conf)]

    done = _run([str(BIN / "oslopolicy-policy-generator"), *args], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert '"placement:resource_providers:list": "role:reader"' in lines
    assert ('"placement:resource_providers:create": '
            '"rule:admin_or_service_api"') in lines

    done = _run([str(BIN / "oslopolicy-list-redundant"), *args], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        '"placement:resource_classes:list": "rule:admin_or_service_api"']
