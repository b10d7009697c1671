"""gantt-manage scheduler ping against a real gantt-scheduler on
RabbitMQ, run as an operator runs it: the answer names the scheduler's
host; no scheduler on the topic is one line and exit status 1 after
--timeout; an unreachable broker too."""

import json

import pytest
import sqlalchemy as sa

from placement import conf as conf_mod
from placement.db import migration
from tests.rpc import helpers
from tests.rpc.service_process import Service, manage


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    helpers.require_rabbit()
    tmp_path = tmp_path_factory.mktemp("ping")
    url = f"sqlite:///{tmp_path / 'gantt.sqlite'}"
    engine = sa.create_engine(url)
    migration.sync(engine)
    engine.dispose()
    running = Service(tmp_path, url)
    yield running
    running.close()


def test_ping_names_the_scheduler(service):
    code, out, err, _ = manage(service.config, "scheduler", "ping")
    assert (code, err) == (0, "")
    [pid] = {pid for pid, _, _ in service.lines("gantt-scheduler ready")}
    prefix = (f"gantt-scheduler on {service.host} answered on topic "
              f"'{service.topic}' in ")
    assert out.startswith(prefix), out
    assert out.count("\n") == 1
    assert f" ms: pid {pid}, gantt " in out
    assert out.endswith(" compute hosts known\n")


def test_ping_as_json(service):
    code, out, err, _ = manage(service.config, "scheduler", "ping",
                                "--format", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    answer = data["answer"]
    assert answer["host"] == service.host
    assert answer["version"] == conf_mod.version()
    assert answer["uptime"] > 0
    assert answer["hosts"] == 0
    assert data["topic"] == service.topic
    assert 0 < data["round_trip_ms"] < 10_000


def test_no_scheduler_on_the_topic_exits_1_after_the_timeout(service):
    topic = helpers.unique_topic()
    code, out, err, took = manage(service.config, "scheduler", "ping",
                                   "--topic", topic, "--timeout", "2")
    assert (code, out, err) == (
        1, "", f"gantt-manage: no gantt-scheduler answered on topic "
               f"'{topic}' within 2 s\n")
    assert 2 <= took < 30


def test_unreachable_broker_exits_1(tmp_path):
    config = tmp_path / "gantt.conf"
    config.write_text("[DEFAULT]\ntransport_url = "
                      "rabbit://guest:guest@127.0.0.1:9/\n")
    code, out, err, took = manage(config, "scheduler", "ping",
                                   "--timeout", "2")
    assert (code, out, err) == (
        1, "", "gantt-manage: could not reach the message broker: "
               "127.0.0.1:9: Connection refused\n")
    assert took < 30


def test_the_in_process_transport_exits_2(tmp_path):
    config = tmp_path / "gantt.conf"
    config.write_text("")
    assert manage(config, "scheduler", "ping")[:3] == (
        2, "", "gantt-manage: [DEFAULT] transport_url is the in-process "
               "transport (kombu+memory:////), which no gantt-scheduler "
               "shares: set it to the schedulers' message broker\n")


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_a_bad_timeout_exits_2(tmp_path, value):
    (tmp_path / "gantt.conf").write_text("")
    code, out, err, _ = manage(tmp_path / "gantt.conf", "scheduler",
                                "ping", "--timeout", value)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"gantt-manage scheduler ping: error: argument --timeout: invalid "
        f"seconds value: '{value}'")
