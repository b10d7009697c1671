"""OpenStack Placement 16.0.0 in a virtualenv of its own, cached outside
the repository, for tests that need the real service's database and
answers.

The virtualenv lives in $GANTT_CACHE_DIR (default ~/.cache/gantt)
/placement-16.0.0; made the first time it is needed, reused after (a
marker file, written last, holds the requirements it was made with; a
file lock keeps two sessions from installing at once).
"""

import fcntl
import os
import pathlib
import subprocess
import sys

VERSION = "16.0.0"
# The drivers: placement-manage's schema on MariaDB and PostgreSQL too.
REQUIREMENTS = (f"openstack-placement=={VERSION}", "PyMySQL",
                "psycopg2-binary")
MARKER = ".gantt-complete"
INSTALL_TIMEOUT = 1800


def venv_dir():
    base = os.environ.get("GANTT_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "gantt")
    return pathlib.Path(base) / f"placement-{VERSION}"


def _marker_text():
    return "\n".join(REQUIREMENTS) + "\n"


def placement_venv():
    """The virtualenv's path, installed when missing; RuntimeError with
    pip's output when the install fails."""
    target = venv_dir()
    marker = target / MARKER
    if marker.exists() and marker.read_text() == _marker_text():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".placement-{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (marker.exists() and marker.read_text() == _marker_text()):
            _install(target)
            marker.write_text(_marker_text())
    return target


def _install(target):
    print(f"installing OpenStack Placement {VERSION} into {target} "
          f"(once; reused after)", file=sys.stderr, flush=True)
    python = target / "bin" / "python"
    if not python.exists():
        base = getattr(sys, "_base_executable", None) or sys.executable
        _call([base, "-m", "venv", str(target)])
    _call([str(python), "-m", "pip", "install", "-q",
           "--disable-pip-version-check", *REQUIREMENTS])


def _call(argv):
    done = subprocess.run(argv, capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n"
                           f"{done.stdout[-3000:]}{done.stderr[-3000:]}")


if __name__ == "__main__":
    print(placement_venv())
