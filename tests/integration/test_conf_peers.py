"""placement/conf_peers.json holds what Nova 34 and OpenStack Placement
16 declare (so that gantt's config check accepts their files as they
are): read again from the real services, it must be the same. When it is
not, `python -m tests.peer_conf_options --write` rewrites it."""

import json

from placement import config_check
from tests import peer_conf_options


def test_conf_peers_file_matches_the_real_services():
    stored = json.loads(config_check.PEERS_FILE.read_text())
    assert stored == peer_conf_options.read_peers()


def test_every_nova_scheduler_option_is_known():
    # The sections the issue names: a nova.conf gives them as they are.
    nova = json.loads(config_check.PEERS_FILE.read_text())["options"][
        "nova-34.0.0"]
    for section in ("scheduler", "filter_scheduler", "placement",
                    "api_database"):
        assert nova[section], section
        assert set(nova[section]) <= config_check.known_options(section)
