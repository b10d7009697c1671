"""Is gantt's code the code Python imports? A check every command makes
first, before it imports anything of gantt's other packages.

gantt's top-level packages have short names (``placement``, ``rpc``,
``scheduler``...). Another distribution may use one of them: OpenStack
Placement ships ``placement`` too. Installed into one site-packages,
both end up in the same folder (pip writes one's files beside the
other's) and Python then imports a mix: ``import placement.conf`` finds
OpenStack Placement's ``placement/conf/`` package before gantt's
``placement/conf.py``. Or, with gantt installed from a source tree (a
.pth file), the other's ``placement`` comes first on sys.path and gantt's
is never seen. Either way the command would fail later with an error
that says nothing of the cause. This module says it in one line, before
that: another package's files are in one of gantt's package folders, or
the folder Python finds is not gantt's.

It imports only the standard library and looks at the folders without
importing the packages (importlib.util.find_spec of a top-level name
runs no code of it).
"""

import importlib.metadata
import importlib.util
import os
import pathlib
import sys

# gantt's top-level packages besides gantt itself (setup.py PACKAGES).
PACKAGES = ("placement", "scheduler", "filters", "weighers", "rpc",
            "simulation", "cloudfile", "compute")
DISTRIBUTION = "gantt"
ADVICE = ("install gantt in a virtualenv (or a container) of its own: "
          "python3 -m venv /opt/gantt && /opt/gantt/bin/pip install gantt")
USAGE = 2
# Left in a package folder by Python or by tools, not shipped by anyone.
_IGNORED = {"__pycache__"}


class Clash(Exception):
    """Another distribution's package stands where one of gantt's
    should. ``package``: the name; ``path``: the folder Python imports
    it from."""

    def __init__(self, package, path):
        self.package = package
        self.path = path
        super().__init__(package, path)


def _root():
    """The folder gantt's packages were installed into (site-packages,
    or the source tree of an editable install): where this package is."""
    return pathlib.Path(__file__).resolve().parent.parent


def _recorded():
    """{package: the names directly in its folder} from the files pip
    recorded for gantt; empty when gantt is not installed from a wheel
    (an editable install records no package file: its folders are the
    source tree, which no installer writes into)."""
    try:
        files = importlib.metadata.files(DISTRIBUTION) or ()
    except importlib.metadata.PackageNotFoundError:
        return {}
    shipped = {}
    for path in files:
        parts = path.parts
        if len(parts) >= 2 and parts[0] in PACKAGES:
            shipped.setdefault(parts[0], set()).add(parts[1])
    return shipped


def _folder(package):
    """The folder Python imports ``package`` from, or None."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return pathlib.Path(list(spec.submodule_search_locations)[0]).resolve()


def find(root=None, recorded=None):
    """The first Clash of gantt's packages, or None."""
    root = _root() if root is None else root
    recorded = _recorded() if recorded is None else recorded
    for package in PACKAGES:
        folder = _folder(package)
        if folder is None:
            continue
        if folder != root / package:
            return Clash(package, folder)
        shipped = recorded.get(package)
        if shipped is None:
            continue
        try:
            present = set(os.listdir(folder))
        except OSError:
            continue
        if present - shipped - _IGNORED:
            return Clash(package, folder)
    return None


def owner(clash):
    """Who else ships the clashing package: 'name version', or
    'an unknown package'. Reads every distribution's metadata: only
    for the message."""
    names = importlib.metadata.packages_distributions().get(
        clash.package, ())
    for name in sorted(set(names)):
        if name.lower() == DISTRIBUTION:
            continue
        try:
            return f"{name} {importlib.metadata.version(name)}"
        except importlib.metadata.PackageNotFoundError:
            return name
    return "an unknown package"


def line(prog, clash):
    return (f"{prog}: gantt's '{clash.package}' modules are mixed with or "
            f"hidden by those of {owner(clash)} ({clash.path}); {ADVICE}")


def check(prog):
    """Leave with the line and status 2 when another package's code
    stands where gantt's should."""
    clash = find()
    if clash is not None:
        print(line(prog, clash), file=sys.stderr)
        sys.exit(USAGE)
