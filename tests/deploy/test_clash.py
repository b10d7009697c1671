"""gantt installed beside OpenStack Placement, whose top-level package is
also ``placement``: every command says so in one line, status 2, before
it imports anything that would fail (gantt.clash, called first by the
console scripts of gantt.cmd.console).

- merged: gantt installed from a wheel into a fresh virtualenv, then
  openstack-placement 16.0.0 into the same one (both write
  site-packages/placement/); before the second install the commands
  run, after it each says what is wrong;
- hidden: gantt as this checkout installs it (editable) with
  OpenStack Placement first on PYTHONPATH.

The fresh virtualenv gets gantt and OpenStack Placement without their
dependencies (pip --no-deps, with this virtualenv's pip); it reads
gantt's dependencies from this virtualenv's site-packages (a .pth file
placed after its own), so that a clean install can run too. Needs the
package index, as `make install` does.
"""

import importlib.metadata
import pathlib
import subprocess
import sys
import sysconfig

import pytest

REPO = pathlib.Path(__file__).parents[2]
BIN = pathlib.Path(sys.executable).parent
PLACEMENT = "openstack-placement==16.0.0"
COMMANDS = ("gantt-manage", "gantt-placement-api", "gantt-scheduler",
            "gantt-simulate", "gantt-compute-agent", "gantt-status")
ADVICE = ("install gantt in a virtualenv (or a container) of its own: "
          "python3 -m venv /opt/gantt && /opt/gantt/bin/pip install gantt")


def _run(argv, **kwargs):
    done = subprocess.run([str(a) for a in argv], capture_output=True,
                          text=True, timeout=300, **kwargs)
    return done


def _pip(python, *args):
    done = _run([BIN / "pip", "--python", python, "install", "-q",
                 "--no-deps", *args], cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr


def _line(prog, path):
    return (f"{prog}: gantt's 'placement' modules are mixed with or hidden "
            f"by those of openstack-placement 16.0.0 ({path}); {ADVICE}\n")


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh virtualenv with gantt installed from a wheel of this
    tree, and this virtualenv's packages after its own."""
    target = tmp_path_factory.mktemp("clash") / "venv"
    done = _run([sys._base_executable, "-m", "venv", "--without-pip",
                 target])
    assert done.returncode == 0, done.stderr
    python = target / "bin" / "python"
    _pip(python, REPO)
    site = pathlib.Path(_run([python, "-c",
                              "import sysconfig; "
                              "print(sysconfig.get_path('purelib'))"])
                        .stdout.strip())
    # "zz": read after anything pip put there.
    (site / "zz-gantt-dependencies.pth").write_text(
        sysconfig.get_path("purelib") + "\n")
    return target, site


def test_merged_into_one_site_packages(venv, tmp_path):
    target, site = venv
    version = importlib.metadata.version("gantt")
    for command in COMMANDS:
        done = _run([target / "bin" / command, "--version"], cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (
            0, f"{command} {version}\n", ""), command

    _pip(target / "bin" / "python", PLACEMENT)
    # Both wrote there: OpenStack Placement's conf/ package beside
    # gantt's conf.py, which Python would no longer import.
    assert (site / "placement" / "conf" / "__init__.py").exists()
    assert (site / "placement" / "command_errors.py").exists()
    for command in COMMANDS:
        for args in (["--version"], ["--config-file", "/nonexistent"]):
            done = _run([target / "bin" / command, *args], cwd=tmp_path)
            assert (done.returncode, done.stdout, done.stderr) == (
                2, "", _line(command, site / "placement")), command


def test_hidden_by_an_earlier_path(tmp_path):
    shadow = tmp_path / "shadow"
    done = _run([BIN / "pip", "install", "-q", "--no-deps", "--target",
                 shadow, PLACEMENT])
    assert done.returncode == 0, done.stdout + done.stderr
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(shadow)}
    done = _run([BIN / "gantt-manage", "db", "version"], cwd=tmp_path,
                env=env)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", _line("gantt-manage", shadow / "placement"))
    # Without it, the same command runs.
    done = _run([BIN / "gantt-manage", "--version"], cwd=tmp_path,
                env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
