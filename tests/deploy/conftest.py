"""Fixtures of the deployment tests."""

import pytest

from tests.deploy.notify_socket import NotifySocket


@pytest.fixture
def notify():
    """A stand-in for systemd's notification socket."""
    listener = NotifySocket()
    yield listener
    listener.close()
