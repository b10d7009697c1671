"""OpenStack Placement's own API tests (its 79 gabbi files, fetched from
the openstack-placement wheel at test time) against the WSGI application
in process on mysql, with this project's fixtures."""

from gabbi.driver import test_pytest  # noqa: F401 (the generated test)

from tests.conformance import gabbits


def pytest_generate_tests(metafunc):
    gabbits.generate(metafunc, "mysql")
