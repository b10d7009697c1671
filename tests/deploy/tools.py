"""Helpers of the deployment tests: a free port, a command installed
when missing, a gantt-scheduler config on RabbitMQ and a client to
ping it, a gantt-compute-agent config on a fake host."""

import contextlib
import shutil
import socket
import subprocess
import textwrap

from tests.compute import fake_sysfs
from tests.rpc import helpers


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def need_tool(name, package):
    """The path of command ``name``, Debian's ``package`` installed
    first when it is missing (the tests run as root, in CI too)."""
    if shutil.which(name) is None:
        for argv in (["apt-get", "update", "-q"],
                     ["apt-get", "install", "-y", "-q", package]):
            done = subprocess.run(argv, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, done.stdout + done.stderr
    path = shutil.which(name)
    assert path, f"{name} is not installed"
    return path


def scheduler_conf(tmp_path, workers):
    """(a gantt-scheduler config file on RabbitMQ and an SQLite file in
    ``tmp_path``, its topic and exchange)."""
    topic = helpers.unique_topic()
    conf = tmp_path / "gantt.conf"
    conf.write_text(textwrap.dedent(f"""\
        [DEFAULT]
        transport_url = {helpers.RABBIT_URL}
        host = sched-{topic[-6:]}
        log_file = {tmp_path / 'gantt-scheduler.log'}
        control_exchange = {topic}
        graceful_shutdown_timeout = 20
        [scheduler]
        workers = {workers}
        topic = {topic}
        [placement_database]
        connection = sqlite:///{tmp_path / 'placement.sqlite'}
        [oslo_messaging_rabbit]
        amqp_auto_delete = true
        """))
    return conf, topic


@contextlib.contextmanager
def scheduler_ping(topic):
    """A function that pings the scheduler of ``topic`` (Nova's baseapi
    ping) and returns what it answers."""
    conf = helpers.messaging_conf(helpers.RABBIT_URL, topic)
    conf.set_override("control_exchange", topic)
    transport = helpers.client_transport(conf)
    client = helpers.raw_client(transport, topic, version="1.1",
                                namespace="baseapi", timeout=30)
    try:
        yield lambda arg: client.call(helpers.CONTEXT, "ping", arg=arg)
    finally:
        transport.cleanup()


def agent_conf(tmp_path, hostname, compute=""):
    """(a gantt-compute-agent config on the embedded store in
    ``tmp_path``, the --root of a fake two-socket host named
    ``hostname``); ``compute``: more lines of its [compute] section."""
    root = tmp_path / "root"
    fake_sysfs.two_socket_host(root)
    (tmp_path / "host.yaml").write_text(f"hostname: {hostname}\n")
    conf = tmp_path / "gantt.conf"
    conf.write_text(f"[DEFAULT]\nstate_path = {tmp_path / 'state'}\n"
                    f"[compute]\nhost_file = {tmp_path / 'host.yaml'}\n"
                    + compute)
    return conf, root
