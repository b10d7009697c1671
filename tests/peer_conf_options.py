"""The config options Nova 34 and OpenStack Placement 16 declare, read
from the real services in their cached virtualenvs: the source of
placement/conf_peers.json, which lets gantt's config check accept a
nova.conf or placement.conf as it is.

    python -m tests.peer_conf_options          # print the JSON
    python -m tests.peer_conf_options --write  # rewrite conf_peers.json

tests/integration/test_conf_peers.py checks the file against the services.
"""

import json
import subprocess
import sys

from placement import config_check
from tests.nova_stack import install as nova_install
from tests.placement16 import install as placement_install

# Run inside a peer's virtualenv: every option group of every
# oslo.config.opts entry point installed there, and the options of the
# service's own lists.
_LISTER = r"""
import json, sys
from importlib import metadata
own = sys.argv[1]
groups, options = set(), {}
for entry in metadata.entry_points(group="oslo.config.opts"):
    try:
        listed = entry.load()()
    except Exception:
        continue
    listed = listed.items() if isinstance(listed, dict) else listed
    for group, opts in listed:
        name = getattr(group, "name", group) or "DEFAULT"
        groups.add(name)
        if entry.name != own:
            continue
        names = options.setdefault(name, set())
        for opt in opts:
            names.add(opt.dest)
            names.update(d.name.replace("-", "_")
                         for d in opt.deprecated_opts if d.name)
print(json.dumps({"groups": sorted(groups),
                  "options": {g: sorted(n) for g, n in options.items()}}))
"""

PEERS = (("nova-34.0.0", nova_install.nova_venv, "nova.conf"),
         ("placement-16.0.0", placement_install.PEER.ensure,
          "placement.conf"))


def _listed(venv, own):
    # -I: not this checkout's packages (gantt has a "placement" too).
    python = str(venv / "bin" / "python")
    out = subprocess.run([python, "-I", "-c", _LISTER, own],
                         capture_output=True, text=True, check=True,
                         timeout=300)
    return json.loads(out.stdout)


def read_peers():
    """The content conf_peers.json should have: per service, the options
    it declares in the sections gantt owns; every section any of them
    or their libraries declare."""
    owned = config_check.owned_sections()
    options, sections = {}, set()
    for name, ensure, own in PEERS:
        listed = _listed(ensure(), own)
        sections.update(listed["groups"])
        options[name] = {group: names
                         for group, names in sorted(listed["options"].items())
                         if group in owned}
    return {"options": options, "sections": sorted(sections)}


def main(argv):
    text = json.dumps(read_peers(), indent=1, sort_keys=True) + "\n"
    if "--write" in argv:
        config_check.PEERS_FILE.write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
