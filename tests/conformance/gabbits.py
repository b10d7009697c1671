"""Test generation shared by the per-engine gabbi modules."""

import atexit

from gabbi import driver

from tests import databases
from tests.conformance import fixtures, upstream
from tests.conformance.harness import Harness


def generate(metafunc, engine_name):
    """Parametrize gabbi's test function with every upstream test, run
    in process against an application on ``engine_name``."""
    harness = Harness(engine_name)
    atexit.register(harness.close)
    problem = harness.available()
    if problem:
        databases.unavailable(engine_name, problem)
    driver.py_test_generator(
        str(upstream.gabbits_dir()), intercept=harness.intercept,
        fixture_module=fixtures.bind(harness),
        test_loader_name=f"placement_{engine_name}", metafunc=metafunc)
