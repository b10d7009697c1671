"""The benchmarks that reach oslo.messaging start without eventlet's
deprecation warning (benchmarks/__init__.py has oslo.service take its
threading backend first, as gantt's services do): their --help, run as
a user runs them, prints usage and nothing on stderr."""

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
