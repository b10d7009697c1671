"""The benchmarks that reach oslo.messaging start without eventlet's
deprecation warning (benchmarks/__init__.py has oslo.service take its
threading backend first, as gantt's services do): their --help, run as
a user runs them, prints usage and nothing on stderr; and that import
hides no benchmark module."""

import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).parents[2]


@pytest.mark.parametrize("name", ["rpc", "messaging_floor", "ha_conductor"])
def test_benchmark_starts_without_eventlet_warning(name):
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", "--help"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout
    assert "Eventlet is deprecated" not in done.stderr, done.stderr
    assert done.stderr == "", done.stderr


def test_from_benchmarks_import_rpc_is_the_benchmark():
    # In a fresh interpreter: the package's import of gantt's rpc must
    # not stand for the benchmark module of the same name.
    done = subprocess.run(
        [sys.executable, "-c",
         "from benchmarks import rpc; print(rpc.__name__)"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (0, "benchmarks.rpc\n"), \
        done.stderr
