"""A real OpenStack peer (Nova, Placement) in a virtualenv of its own,
cached outside the repository, for the tests that run it.

The virtualenv lives in $GANTT_CACHE_DIR (default ~/.cache/gantt)/NAME.
It is made the first time it is needed and reused after: a marker file,
written last and holding the requirements (and constraints) it was made
with, says it is complete. A changed requirement or constraint makes the
next run install again over it (pip then changes only what differs). A
file lock keeps two test sessions from installing at once.
"""

import dataclasses
import fcntl
import os
import pathlib
import subprocess
import sys

MARKER = ".gantt-complete"
INSTALL_TIMEOUT = 1800


def cache_root():
    base = os.environ.get("GANTT_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "gantt")
    return pathlib.Path(base)


@dataclasses.dataclass(frozen=True)
class PeerVenv:
    name: str  # the folder under the cache root, e.g. nova-34.0.0
    requirements: tuple
    constraints: pathlib.Path | None = None  # a pip constraints file

    def path(self):
        return cache_root() / self.name

    def marker_text(self):
        text = "\n".join(self.requirements) + "\n"
        if self.constraints is not None:
            text += self.constraints.read_text()
        return text

    def is_complete(self):
        marker = self.path() / MARKER
        return marker.exists() and marker.read_text() == self.marker_text()

    def ensure(self):
        """The virtualenv's path, installed when missing. RuntimeError,
        with pip's output, when the install fails."""
        target = self.path()
        if self.is_complete():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target.parent / f".{self.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not self.is_complete():
                self._install(target)
        return target

    def _install(self, target):
        print(f"installing {' '.join(self.requirements)} into {target} "
              f"(once; reused after)", file=sys.stderr, flush=True)
        python = target / "bin" / "python"
        if not python.exists():
            _call([_base_python(), "-m", "venv", str(target)])
        constraints = (["-c", str(self.constraints)]
                       if self.constraints is not None else [])
        _call([str(python), "-m", "pip", "install", "-q",
               "--disable-pip-version-check", *constraints,
               *self.requirements])
        (target / MARKER).write_text(self.marker_text())


def _base_python():
    """The interpreter the running virtualenv (gantt's) was made from:
    the peer gets the same Python, made from the base interpreter rather
    than through gantt's virtualenv."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _call(argv):
    done = subprocess.run(argv, capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT)
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed "
                           f"({done.returncode}):\n{done.stdout[-3000:]}"
                           f"{done.stderr[-3000:]}")
