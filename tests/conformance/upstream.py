"""OpenStack Placement's own gabbi files, fetched at test time.

The YAML files come from the openstack-placement wheel (pip download, no
dependencies, no install) and are cached under
$GANTT_CACHE_DIR (default ~/.cache/gantt)/placement-<version>/gabbits.
They are never committed to this repository.
"""

import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

VERSION = "16.0.0"
GABBITS_IN_WHEEL = "placement/tests/functional/gabbits/"
# The wheel's gabbi files; every one of their tests must pass in
# process (over HTTP one of them needs a malformed Content-Length
# header, which no HTTP client sends).
FILES = 79


def cache_dir():
    base = os.environ.get("GANTT_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "gantt")
    return pathlib.Path(base) / f"placement-{VERSION}"


def gabbits_dir():
    """The directory of the upstream YAML files, fetched when missing."""
    target = cache_dir() / "gabbits"
    done = target / ".complete"
    if done.exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps",
             "--disable-pip-version-check", "-q", "-d", scratch,
             f"openstack-placement=={VERSION}"], check=True)
        wheel = next(pathlib.Path(scratch).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if name.startswith(GABBITS_IN_WHEEL) and name.endswith(
                        ".yaml"):
                    (target / name.rsplit("/", 1)[1]).write_bytes(
                        archive.read(name))
    found = len(list(target.glob("*.yaml")))
    if found != FILES:
        raise RuntimeError(f"expected {FILES} gabbi files in the "
                           f"openstack-placement {VERSION} wheel, got "
                           f"{found}")
    done.touch()
    return target
