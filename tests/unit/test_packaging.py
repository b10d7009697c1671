"""Packaging: what setup.py gives setuptools, checked without a build.

- every directory of the product's packages that holds a file is a
  package (some have no __init__.py: alembic's script directory,
  scheduler/nova_db), so the wheel misses none of them;
- the samples, every example and the systemd units go to share/gantt/etc/
  as data files;
- no deprecated license classifier (the SPDX expression says it);
- every requirement is imported by the product: the core ones somewhere
  in its packages, the simulate extra's only by simulation/;
- gantt-simulate without the simulate extra: --help works, a command
  that needs the extra fails with one line saying how to install it.
"""

import ast
import importlib.metadata
import os
import pathlib
import re
import runpy
import subprocess
import sys
from unittest import mock

import pytest

REPO = pathlib.Path(__file__).parents[2]


@pytest.fixture(scope="module")
def setup_py():
    """(setup.py's module globals, the keywords it gives setup())."""
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        with mock.patch("setuptools.setup") as setup:
            module = runpy.run_path(str(REPO / "setup.py"))
    finally:
        os.chdir(cwd)
    return module, setup.call_args.kwargs


def _dirs_with_files(top):
    for path, dirs, files in os.walk(REPO / top):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if files:
            yield ".".join(pathlib.Path(path).relative_to(REPO).parts)


def test_every_directory_is_a_package(setup_py):
    module, kwargs = setup_py
    expected = {name for top in module["PACKAGES"]
                for name in _dirs_with_files(top)}
    assert expected <= set(kwargs["packages"])
    assert {"placement.db.alembic",
            "placement.db.alembic.versions"} <= set(kwargs["packages"])
    assert "*.mako" in kwargs["package_data"]["placement.db.alembic"]


def test_samples_and_examples_are_data_files(setup_py):
    _, kwargs = setup_py
    shipped = {path: target for target, paths in kwargs["data_files"]
               for path in paths}
    expected = ["etc/gantt.conf.sample", "etc/policy.yaml.sample"] + [
        str(p.relative_to(REPO)) for folder in ("etc/examples", "etc/systemd")
        for p in (REPO / folder).rglob("*") if p.is_file()]
    for path in expected:
        assert shipped.get(path) == "share/gantt/" + os.path.dirname(path)


def test_license_is_an_spdx_expression(setup_py):
    _, kwargs = setup_py
    assert kwargs["license_expression"] == "Apache-2.0"
    assert "license" not in kwargs
    assert not [c for c in kwargs["classifiers"] if c.startswith("License")]


def _normal(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _modules_of(requirement):
    """The top-level modules the installed distribution provides."""
    name = _normal(re.match(r"[A-Za-z0-9._-]+", requirement).group())
    modules = {module for module, dists
               in importlib.metadata.packages_distributions().items()
               if name in {_normal(d) for d in dists}}
    if not modules:
        pytest.skip(f"{name} is not installed here")
    return modules


def _imports(tops):
    """{top-level module imported: {package of REPO importing it}}."""
    found = {}
    for top in tops:
        for path in (REPO / top).rglob("*.py"):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.partition(".")[0], set()).add(top)
    return found


def test_every_requirement_is_imported(setup_py):
    module, _ = setup_py
    imports = _imports(module["PACKAGES"])
    for requirement in module["INSTALL_REQUIRES"]:
        assert _modules_of(requirement) & set(imports), (
            f"{requirement}: nothing in {module['PACKAGES']} imports it")
    for requirement in module["EXTRAS_REQUIRE"]["simulate"]:
        users = set().union(*(imports.get(m, set())
                              for m in _modules_of(requirement)))
        assert users == {"simulation"}, (requirement, users)


def _simulate_without_extra(*args):
    """gantt-simulate ``args`` with matplotlib impossible to import."""
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "from simulation import cli; sys.exit(cli.main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_simulate_without_its_extra():
    helped = _simulate_without_extra("--help")
    assert helped.returncode == 0, helped.stderr
    assert "gantt-simulate" in helped.stdout
    refused = _simulate_without_extra(
        "run", "--cloud", "cloud.yaml", "--workload", "workload.yaml")
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert refused.stderr == (
        "gantt-simulate: matplotlib is not installed; the simulator needs "
        "gantt's 'simulate' extra: pip install 'gantt[simulate]'\n")
