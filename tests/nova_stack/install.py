"""Nova 34.0.0 in a virtualenv of its own, cached outside the repository.

The virtualenv lives in $GANTT_CACHE_DIR (default ~/.cache/gantt)
/nova-34.0.0. It is made the first time it is needed and reused after:
a marker file, written last and holding the requirements and
constraints it was made with, says it is complete. A changed
requirement or constraint makes the next run install again over it
(pip then changes only what differs). A file lock keeps two test
sessions from installing at once.

Every dependency is pinned by nova-constraints.txt, the versions the
stack was proven with, so that a new release cannot break CI overnight.
"""

import fcntl
import os
import pathlib
import subprocess
import sys

VERSION = "34.0.0"
# PyMySQL: Nova's databases are on MariaDB.
REQUIREMENTS = (f"nova=={VERSION}", "PyMySQL")
CONSTRAINTS = pathlib.Path(__file__).with_name("nova-constraints.txt")
MARKER = ".gantt-complete"
INSTALL_TIMEOUT = 1800


def cache_root():
    base = os.environ.get("GANTT_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "gantt")
    return pathlib.Path(base)


def venv_dir():
    return cache_root() / f"nova-{VERSION}"


def marker_text():
    return "\n".join(REQUIREMENTS) + "\n" + CONSTRAINTS.read_text()


def is_complete(target):
    marker = target / MARKER
    return marker.exists() and marker.read_text() == marker_text()


def nova_venv():
    """The path of the Nova virtualenv, installed when missing.

    Raises RuntimeError, with pip's output, when the install fails.
    """
    target = venv_dir()
    if is_complete(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".nova-{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_complete(target):
            _install(target)
    return target


def _install(target):
    print(f"installing Nova {VERSION} into {target} (once; reused after)",
          file=sys.stderr, flush=True)
    python = target / "bin" / "python"
    if not python.exists():
        _call([_base_python(), "-m", "venv", str(target)])
    _call([str(python), "-m", "pip", "install", "-q",
           "--disable-pip-version-check", "-c", str(CONSTRAINTS),
           *REQUIREMENTS])
    (target / MARKER).write_text(marker_text())


def _base_python():
    """The interpreter the running virtualenv (gantt's) was made from:
    Nova's gets the same Python, made from the base interpreter rather
    than through gantt's virtualenv."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _call(argv):
    done = subprocess.run(argv, capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed "
                           f"({done.returncode}):\n{done.stdout[-3000:]}"
                           f"{done.stderr[-3000:]}")


if __name__ == "__main__":
    print(nova_venv())
