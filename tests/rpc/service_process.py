"""A gantt-scheduler process (``python -m rpc.service --config-file F``)
on RabbitMQ and a database, with a client transport to call it as a
Nova conductor does; for the service tests and the fault soak."""

import contextlib
import pathlib
import re
import signal
import subprocess
import sys
import textwrap
import time
import uuid as uuidlib

from cloudfile import loader
from placement.db import store as store_mod
from tests import databases
from tests.rpc import helpers

REPO = pathlib.Path(__file__).parents[2]
# oslo.log's default line: "<date> <time> <pid> <LEVEL> <logger> [...] msg"
LOG_LINE = re.compile(r"^\S+ \S+ (\d+) (\w+) (\S+) (?:\[.*?\] )?(.*)$")


MANAGE = pathlib.Path(sys.executable).parent / "gantt-manage"


def manage(config, *args):
    """gantt-manage --config-file ``config`` ARGS as a subprocess:
    (exit status, stdout, stderr, seconds it took)."""
    started = time.monotonic()
    result = subprocess.run([str(MANAGE), "--config-file", str(config),
                             *args], capture_output=True, text=True,
                            timeout=120)
    return (result.returncode, result.stdout, result.stderr,
            time.monotonic() - started)


@contextlib.contextmanager
def pg_cloud(tmp_path_factory, cloud):
    """The URL of a PostgreSQL scratch database holding ``cloud`` (a
    cloud file's text), loaded as `gantt-manage cloud load` loads it;
    RabbitMQ and PostgreSQL are needed (databases.unavailable)."""
    helpers.require_rabbit()
    try:
        url = databases.create_scratch("postgresql")
    except Exception as exc:  # any connection failure
        databases.unavailable("postgresql", str(exc).splitlines()[0])
    path = tmp_path_factory.mktemp("cloud") / "cloud.yaml"
    path.write_text(cloud)
    store = store_mod.Store.open(databases.make_conf(url))
    try:
        loader.load(store, loader.read(str(path)))
    finally:
        store.dispose()
    try:
        yield url
    finally:
        databases.drop_scratch("postgresql", url)


class Service:
    """A gantt-scheduler process and a client transport to call it."""

    def __init__(self, tmp_path, db_url, workers=1, debug=False,
                 extra="", worker_stats=True):
        self.topic = helpers.unique_topic()
        self.host = "sched-" + self.topic[-6:]
        self.workers = workers
        self.log = tmp_path / "gantt-scheduler.log"
        self.config = tmp_path / "gantt.conf"
        self.config.write_text(textwrap.dedent(f"""\
            [DEFAULT]
            transport_url = {helpers.RABBIT_URL}
            state_path = {tmp_path / "state"}
            host = {self.host}
            log_file = {self.log}
            debug = {debug}
            graceful_shutdown_timeout = 20
            control_exchange = {self.topic}
            [scheduler]
            workers = {workers}
            topic = {self.topic}
            log_worker_stats = {str(worker_stats).lower()}
            [placement_database]
            connection = {db_url}
            sync_on_startup = false
            [oslo_messaging_rabbit]
            rabbit_retry_interval = 1
            rabbit_retry_backoff = 1
            rabbit_interval_max = 1
            amqp_auto_delete = true
            """) + textwrap.dedent(extra))
        self.output = open(tmp_path / "stdout.txt", "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rpc.service", "--config-file",
             str(self.config)], cwd=REPO, stdout=self.output,
            stderr=subprocess.STDOUT)
        self.conf = helpers.messaging_conf(helpers.RABBIT_URL, self.topic)
        self.conf.set_override("control_exchange", self.topic)
        self.transport = helpers.client_transport(self.conf)
        helpers.wait_for(
            lambda: self._alive() and len(self.lines(
                "gantt-scheduler ready")) == workers,
            timeout=30, what="gantt-scheduler to be ready")

    def _alive(self):
        assert self.proc.poll() is None, self.text()
        return True

    def text(self):
        return self.log.read_text() if self.log.exists() else ""

    def lines(self, needle):
        """(pid, level, message) of the log lines containing
        ``needle``."""
        out = []
        for line in self.text().splitlines():
            found = LOG_LINE.match(line)
            if found and needle in found.group(4):
                out.append((int(found.group(1)), found.group(2),
                            found.group(4)))
        return out

    def client(self, version="4.5", timeout=10, **target):
        return helpers.raw_client(self.transport, self.topic, version,
                                  timeout=timeout, **target)

    def select(self, timeout=10, claim=True, **spec):
        """select_destinations for one instance (claimed unless
        ``claim`` is false: then it sends no instance uuid)."""
        return self.client(timeout=timeout).call(
            helpers.CONTEXT, "select_destinations",
            spec_obj=helpers.request_spec(**spec),
            instance_uuids=[str(uuidlib.uuid4())] if claim else None,
            return_objects=True, return_alternates=True)

    def terminate(self, timeout=30):
        """SIGTERM; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def close(self):
        try:
            if self.proc.poll() is None:
                self.terminate()
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        finally:
            self.transport.cleanup()
            self.output.close()
