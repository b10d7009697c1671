"""Layers point one way (docs/architecture.md): a test that fails when a
module imports across them.

- placement knows nothing of scheduling: nothing under placement/ imports
  scheduler, rpc, filters, weighers, simulation, cloudfile or gantt;
- filters and weighers are plugins: they import only their own packages
  (filters.base, weighers.base, shared maths) and no scheduler, rpc or
  placement internals;
- the scheduler does not import what sits on top of it (rpc, simulation,
  cloudfile, compute, gantt), nor the RPC service, cloud files and the
  simulator one another's (but the simulator reads cloud files) or the
  commands;
- the compute side (compute/) sits beside the scheduler: it uses
  placement and rpc's client, and nothing below it imports it.

Imports are read from the source (every ``import`` and ``from`` at any
depth, functions included), so a late import inside a function counts.
"""

import ast
import pathlib

import pytest

REPO = pathlib.Path(__file__).parents[2]
PACKAGES = ("placement", "scheduler", "filters", "weighers", "rpc",
            "simulation", "cloudfile", "compute", "gantt")
FORBIDDEN = {
    "placement": {"scheduler", "rpc", "filters", "weighers", "simulation",
                  "cloudfile", "compute", "gantt"},
    "filters": {"scheduler", "rpc", "placement", "weighers", "simulation",
                "cloudfile", "compute", "gantt"},
    "weighers": {"scheduler", "rpc", "placement", "filters", "simulation",
                 "cloudfile", "compute", "gantt"},
    "scheduler": {"rpc", "simulation", "cloudfile", "compute", "gantt"},
    "rpc": {"simulation", "cloudfile", "compute", "gantt"},
    "cloudfile": {"rpc", "simulation", "compute", "gantt"},
    "simulation": {"rpc", "gantt"},
    # The compute side reports to placement (and to the scheduler over
    # RPC, with rpc's client); the scheduler's insides are not its own.
    "compute": {"scheduler", "filters", "weighers", "simulation",
                "cloudfile", "gantt"},
}


def _imports(path):
    """(line, top-level package) of every import in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.lineno, (node.module or "").split(".")[0]


def _modules(package):
    return sorted((REPO / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_one_way(package):
    crossing = [f"{path.relative_to(REPO)}:{line} imports {name}"
                for path in _modules(package)
                for line, name in _imports(path)
                if name in FORBIDDEN[package]]
    assert crossing == []


def test_every_package_is_looked_at():
    # A package renamed or added is not silently left out.
    found = {p.parent.name for p in REPO.glob("*/__init__.py")
             if p.parent.name in PACKAGES}
    assert found == set(PACKAGES)
    assert all(_modules(package) for package in FORBIDDEN)


def test_a_late_import_inside_a_function_is_seen(tmp_path):
    # The guard reads source: an import in a function body counts too.
    module = tmp_path / "late.py"
    module.write_text("import numpy\n\n\ndef f():\n"
                      "    from scheduler import manager\n"
                      "    import rpc.client\n")
    assert list(_imports(module)) == [(1, "numpy"), (5, "scheduler"),
                                      (6, "rpc")]
