"""Nova 34.0.0 with its functional tests' requirements, in a virtualenv
of its own cached outside the repository (tests/peer_venv.py:
$GANTT_CACHE_DIR, default ~/.cache/gantt, /nova-functional-34.0.0, made
once and reused).

Besides Nova it holds OpenStack Placement 16.0.0, whose fixture Nova's
functional fixture module imports (the upstream mode serves it; the gantt
mode only replaces its WSGI application), and the test runners' libraries
from Nova's test-requirements.txt (not the linters). Every version is
pinned by constraints.txt.
"""

import pathlib
import shutil

from tests import peer_venv

VERSION = "34.0.0"
PLACEMENT_VERSION = "16.0.0"
TEST_REQUIREMENTS = (
    "ddt", "fixtures", "oslotest", "osprofiler", "python-barbicanclient",
    "requests-mock", "stestr", "testresources", "testscenarios",
    "testtools", "wsgi-intercept", "PyMySQL", "psycopg2-binary")
# SQLAlchemy: 2.1 deprecates noload(), and Nova 34's tests make every
# SQLAlchemy deprecation warning an error.
PEER = peer_venv.PeerVenv(
    f"nova-functional-{VERSION}",
    (f"nova=={VERSION}", f"openstack-placement=={PLACEMENT_VERSION}",
     "SQLAlchemy<2.1", *TEST_REQUIREMENTS),
    constraints=pathlib.Path(__file__).with_name("constraints.txt"))


def site_packages(venv):
    """The folder the ``nova`` package is installed in."""
    found = sorted(pathlib.Path(venv).glob(
        "lib/python*/site-packages/nova/__init__.py"))
    if not found:
        raise RuntimeError(f"no nova package in {venv}")
    return found[-1].parent.parent


def _place_api_paste(venv):
    """Nova's tests read etc/nova/api-paste.ini under Nova's pybasedir,
    the folder that holds the ``nova`` package; the wheel installs the
    file under the virtualenv's prefix instead."""
    source = pathlib.Path(venv) / "etc" / "nova" / "api-paste.ini"
    target = site_packages(venv) / "etc" / "nova" / "api-paste.ini"
    if target.exists() and target.read_bytes() == source.read_bytes():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def nova_venv():
    """The path of the virtualenv, installed when missing.

    Raises RuntimeError, with pip's output, when the install fails.
    """
    venv = PEER.ensure()
    _place_api_paste(venv)
    return venv


if __name__ == "__main__":
    print(nova_venv())
