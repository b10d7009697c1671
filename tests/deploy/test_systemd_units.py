"""The systemd files of etc/systemd, checked by systemd's own tools (the
`systemd` package; installed with apt-get when missing):

- each service unit is Type=notify (the services say READY=1 and
  STOPPING=1: test_service_notify.py), runs as user gantt and starts the
  command setup.py installs;
- `systemd-analyze security --offline=true` rates each unit's sandbox
  OK, at an exposure of at most 2.0 (an unsandboxed copy of the same
  unit rates above 9 and fails the same threshold);
- `systemd-analyze verify` finds nothing to say of them (with ExecStart
  pointing at this installation's commands: it checks they exist), and
  does speak of a misspelt directive;
- sysusers.d/gantt.conf makes the gantt user and group, and
  tmpfiles.d/gantt.conf their directories, owned by them, on a scratch
  root (`--root`).
"""

import pathlib
import re
import subprocess
import sys

import pytest

from tests.deploy.tools import need_tool

REPO = pathlib.Path(__file__).parents[2]
SYSTEMD = REPO / "etc" / "systemd"
BIN = pathlib.Path(sys.executable).parent
UNITS = ("gantt-placement-api", "gantt-scheduler", "gantt-compute-agent")
# systemd-analyze's rating: 0.0 (locked down) to 10.0 (nothing set).
MAX_EXPOSURE = 2.0
# Directives of the sandbox (what an unsandboxed copy leaves out).
SANDBOX = re.compile(
    r"^(Protect|Private|Restrict|SystemCall|Capability|Ambient|"
    r"NoNewPrivileges|LockPersonality|RemoveIPC|UMask|DevicePolicy)")


def _tool(name):
    return need_tool(name, "systemd")


def _run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          **kwargs)


def _directives(text):
    """{name: [values]} of a unit's [Service] section."""
    found = {}
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]":
            name, _, value = line.partition("=")
            found.setdefault(name, []).append(value)
    return found


def _installed_copy(unit, folder, edit=None):
    """The unit with ExecStart's command from this installation's
    bin/, written to ``folder``."""
    text = (SYSTEMD / f"{unit}.service").read_text()
    text = text.replace("/opt/gantt/bin/", f"{BIN}/")
    if edit is not None:
        text = edit(text)
    path = folder / f"{unit}.service"
    path.write_text(text)
    return path


@pytest.mark.parametrize("unit", UNITS)
def test_unit_is_type_notify_as_gantt(unit):
    service = _directives((SYSTEMD / f"{unit}.service").read_text())
    assert service["Type"] == ["notify"]
    assert service["NotifyAccess"] == ["main"]
    assert service["User"] == service["Group"] == ["gantt"]
    assert service["ExecStart"][0].split()[0] == f"/opt/gantt/bin/{unit}"
    assert service["RestartPreventExitStatus"] == ["2"]
    assert service["StateDirectory"] == service["LogsDirectory"] == ["gantt"]
    assert service["ProtectSystem"] == ["strict"]
    assert service["CapabilityBoundingSet"] == [""]


def _exposure(unit_path, threshold):
    done = _run([_tool("systemd-analyze"), "security", "--offline=true",
                 f"--threshold={threshold}", str(unit_path)])
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d) (\w+)",
                      done.stdout)
    assert found, done.stdout + done.stderr
    return done.returncode, float(found.group(1)), found.group(2)


@pytest.mark.parametrize("unit", UNITS)
def test_security_exposure_is_low(unit, tmp_path):
    # --threshold is in tenths: exit status 1 above it.
    threshold = int(MAX_EXPOSURE * 10)
    code, exposure, verdict = _exposure(SYSTEMD / f"{unit}.service",
                                        threshold)
    assert (code, verdict) == (0, "OK")
    assert exposure <= MAX_EXPOSURE

    bare = tmp_path / f"{unit}.service"
    bare.write_text("\n".join(
        line for line in (SYSTEMD / f"{unit}.service").read_text()
        .splitlines() if not SANDBOX.match(line)) + "\n")
    code, exposure, verdict = _exposure(bare, threshold)
    assert code == 1
    assert exposure > 9.0


def test_verify_finds_nothing(tmp_path):
    paths = [str(_installed_copy(unit, tmp_path)) for unit in UNITS]
    done = _run([_tool("systemd-analyze"), "verify", *paths])
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_verify_speaks_of_a_misspelt_directive(tmp_path):
    path = _installed_copy(
        "gantt-scheduler", tmp_path,
        lambda text: text.replace("ProtectHome=", "ProtectHomes="))
    lineno = path.read_text().splitlines().index("ProtectHomes=yes") + 1
    done = _run([_tool("systemd-analyze"), "verify", str(path)])
    assert done.stderr == (f"{path}:{lineno}: Unknown key 'ProtectHomes' "
                           "in section [Service], ignoring.\n")


def test_sysusers_and_tmpfiles_on_a_scratch_root(tmp_path):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    done = _run([_tool("systemd-sysusers"), f"--root={root}",
                 str(SYSTEMD / "sysusers.d" / "gantt.conf")])
    assert done.returncode == 0, done.stderr
    users = {line.split(":")[0]: line.split(":")
             for line in (root / "etc" / "passwd").read_text().splitlines()}
    groups = {line.split(":")[0]: line.split(":")
              for line in (root / "etc" / "group").read_text().splitlines()}
    gantt = users["gantt"]
    uid, gid = int(gantt[2]), int(gantt[3])
    assert int(groups["gantt"][2]) == gid
    assert gantt[5:] == ["/var/lib/gantt", "/usr/sbin/nologin"]
    assert uid < 1000  # a system user

    done = _run([_tool("systemd-tmpfiles"), f"--root={root}", "--create",
                 str(SYSTEMD / "tmpfiles.d" / "gantt.conf")])
    assert done.returncode == 0, done.stderr
    for path, owner in (("etc/gantt", 0), ("var/lib/gantt", uid),
                        ("var/log/gantt", uid)):
        made = (root / path).stat()
        assert (made.st_uid, made.st_gid, made.st_mode & 0o7777) == (
            owner, gid, 0o750), path
