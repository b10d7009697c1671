"""Fixtures of the report client tests: the same tests run on the
embedded placement and on gantt's REST API served over a real socket,
on every database engine."""

import uuid

import pytest

from compute.placement_port import DirectPort, HttpPort
from placement import direct
from tests.functional.api_helpers import serve_http

PROJECT, USER = "project-1", "user-1"


@pytest.fixture
def placement(store):
    """The embedded placement on the test store: what other writers use,
    and how tests read back."""
    return direct.PlacementDirect(store)


@pytest.fixture(params=["direct", "http"])
def port(request, store, placement):
    if request.param == "direct":
        yield DirectPort(placement)
        return
    url, _, stop = serve_http(store)
    http = HttpPort(url)
    yield http
    http.session.close()
    stop()


class CountingPort:
    """A port that records the name of every call made through it, and
    runs ``before[name]`` (a concurrent writer) before that call."""

    def __init__(self, port):
        self.port = port
        self.calls = []
        self.before = {}

    def __getattr__(self, name):
        real = getattr(self.port, name)

        def call(*args, **kwargs):
            self.calls.append(name)
            if name in self.before:
                self.before[name]()
            return real(*args, **kwargs)
        return call

    def writes(self):
        return [c for c in self.calls if not c.startswith(("read", "consumer",
                                                            "provider_"))]


def allocate(placement, provider_amounts):
    """A new consumer with ``{provider uuid: {rc: n}}``; its uuid."""
    consumer = str(uuid.uuid4())
    placement.put_allocations(consumer, provider_amounts, PROJECT, USER,
                              consumer_generation=None)
    return consumer


def resources_of(placement, consumer):
    return {rp: dict(a.resources) for rp, a in
            placement.get_allocations(consumer).allocations.items()}


def totals(placement, provider):
    return {rc: inv.total for rc, inv in
            placement.get_inventories(provider)[1].items()}
