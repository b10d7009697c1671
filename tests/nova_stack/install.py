"""Nova 34.0.0 in a virtualenv of its own, cached outside the repository
(tests/peer_venv.py: $GANTT_CACHE_DIR, default ~/.cache/gantt,
/nova-34.0.0, made once and reused).

Every dependency is pinned by nova-constraints.txt, the versions the
stack was proven with, so that a new release cannot break CI overnight.
"""

import pathlib

from tests import peer_venv

VERSION = "34.0.0"
# PyMySQL: Nova's databases are on MariaDB.
PEER = peer_venv.PeerVenv(
    f"nova-{VERSION}", (f"nova=={VERSION}", "PyMySQL"),
    constraints=pathlib.Path(__file__).with_name("nova-constraints.txt"))


def nova_venv():
    """The path of the Nova virtualenv, installed when missing.

    Raises RuntimeError, with pip's output, when the install fails.
    """
    return PEER.ensure()


if __name__ == "__main__":
    print(nova_venv())
