import dataclasses
import threading

import pytest

from rpc import server as server_mod
from scheduler import manager
from tests.rpc import helpers


@dataclasses.dataclass
class InProcess:
    """A scheduler served on the in-process transport, and what a test
    needs to call it."""

    conf: object
    store: object
    scheduler: object
    transport: object
    server: object
    topic: str
    uuids: dict  # host name -> compute node uuid

    def client(self, version="4.5", **target):
        return helpers.raw_client(self.transport, self.topic, version,
                                  **target)


@pytest.fixture(scope="module")
def _stopping():
    """Servers being stopped in the background: a server takes up to a
    second to stop (its listener polls once a second), so tests do not
    wait for it; the module does, once, at the end."""
    threads = []
    yield threads
    for thread in threads:
        thread.join(10)


def _stop(server, transport, scheduler):
    server.stop()
    server.wait()
    transport.cleanup()
    scheduler.close()


@pytest.fixture
def in_process(sqlite_store, _stopping):
    """gantt's RPC server over a three-host cloud in a fresh SQLite file,
    on the in-process transport (its own topic)."""
    uuids = helpers.build_cloud(sqlite_store)
    topic = helpers.unique_topic()
    conf = helpers.messaging_conf(topic=topic, conf=sqlite_store.conf)
    scheduler = manager.Scheduler(conf, store=sqlite_store)
    transport = helpers.client_transport(conf)
    server = server_mod.build_server(conf, scheduler, transport)
    server.start()
    try:
        yield InProcess(conf, sqlite_store, scheduler, transport, server,
                        topic, uuids)
    finally:
        # Its topic is its own: nothing reaches it any more.
        thread = threading.Thread(target=_stop, daemon=True,
                                  args=(server, transport, scheduler))
        thread.start()
        _stopping.append(thread)


@pytest.fixture(params=["in-process", "rabbitmq"])
def transport_url(request):
    """A transport URL: None (the in-process broker), then the test
    RabbitMQ's."""
    if request.param == "rabbitmq":
        helpers.require_rabbit()
        return helpers.RABBIT_URL
    return None
