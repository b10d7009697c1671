"""OpenStack Placement 16.0.0 in a virtualenv of its own, cached outside
the repository (tests/peer_venv.py: $GANTT_CACHE_DIR, default
~/.cache/gantt, /placement-16.0.0, made once and reused), for tests that
need the real service's database and answers.
"""

from tests import peer_venv

VERSION = "16.0.0"
# The drivers: placement-manage's schema on MariaDB and PostgreSQL too.
PEER = peer_venv.PeerVenv(
    f"placement-{VERSION}",
    (f"openstack-placement=={VERSION}", "PyMySQL", "psycopg2-binary"))


def placement_venv():
    """The virtualenv's path, installed when missing; RuntimeError with
    pip's output when the install fails."""
    return PEER.ensure()


if __name__ == "__main__":
    print(placement_venv())
