"""gantt-scheduler as an operator meets it: a misstep at start is one
line and one exit (no workers failing over and over), SIGHUP reloads
instead of killing, and the parent serves every worker's Prometheus
metrics. Real processes, RabbitMQ and PostgreSQL."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest
import sqlalchemy as sa

from placement.db import migration
from tests import databases
from tests.integration.test_clients import _free_port
from tests.rpc import helpers
from tests.rpc.service_process import REPO, Service
from tests.rpc.test_service import pg_cloud  # noqa: F401 (fixture)
from tests.scheduler import nova_cloud

PROG = "gantt-scheduler"


def _run(tmp_path, text, timeout=90):
    config = tmp_path / "gantt.conf"
    config.write_text(textwrap.dedent(text))
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "rpc.service", "--config-file", str(config)],
        cwd=REPO, capture_output=True, text=True, timeout=timeout)
    return done, time.monotonic() - started


def _last(done):
    return done.stderr.strip().splitlines()[-1]


BROKER = helpers.RABBIT_URL


@pytest.mark.parametrize("url, status, line", [
    (BROKER.replace("rabbit://", "rabit://"), 2,
     "[DEFAULT] transport_url: no transport driver 'rabit' (installed: "
     "fake, kafka, kombu, rabbit)"),
    (BROKER.replace("guest:guest@", "guest:wrong@"), 2,
     "the broker at 127.0.0.1:5672 refused the login of user 'guest': "
     "check the user and password in [DEFAULT] transport_url"),
    (BROKER.replace(":5672/", ":5672/no-such-vhost"), 2,
     "the broker at 127.0.0.1:5672 refused virtual host 'no-such-vhost' "
     "for user 'guest' (NOT_ALLOWED - vhost no-such-vhost not found): "
     "check [DEFAULT] transport_url"),
])
def test_a_broker_misstep_is_one_line_whatever_the_workers(
        tmp_path, url, status, line):
    """Four workers (the default is one per CPU): before, each failed and
    was started again about once a second, forever."""
    helpers.require_rabbit()
    db = tmp_path / "p.sqlite"
    done, _ = _run(tmp_path, f"""\
        [DEFAULT]
        transport_url = {url}
        [scheduler]
        workers = 4
        [placement_database]
        connection = sqlite:///{db}
        """)
    assert done.returncode == status, done.stderr
    assert done.stderr.splitlines() == [f"{PROG}: {line}"]
    assert not db.exists()


def test_a_broker_that_does_not_answer_is_waited_for_then_one_line(
        tmp_path):
    port = _free_port()
    done, seconds = _run(tmp_path, f"""\
        [DEFAULT]
        transport_url = rabbit://guest:guest@127.0.0.1:{port}/
        [scheduler]
        workers = 4
        broker_start_timeout = 3
        [placement_database]
        connection = sqlite:///{tmp_path / 'p.sqlite'}
        """)
    assert done.returncode == 1
    assert _last(done) == (
        f"{PROG}: cannot reach the broker of [DEFAULT] transport_url after "
        f"3 s ([scheduler] broker_start_timeout): 127.0.0.1:{port}: "
        f"Connection refused")
    assert 3 <= seconds < 30
    assert len(done.stderr.splitlines()) == 1
    # The attempts are logged.
    assert "WARNING rpc.broker_check [-] Cannot reach the broker " \
        f"(127.0.0.1:{port}: Connection refused); trying again in 2 s" \
        in done.stdout


def test_a_database_without_gantt_schema_is_refused_before_workers(
        tmp_path):
    helpers.require_rabbit()
    try:
        url = databases.create_scratch("postgresql")
    except Exception as exc:  # noqa: BLE001 - any connection failure
        databases.unavailable("postgresql", str(exc).splitlines()[0])
    try:
        done, _ = _run(tmp_path, f"""\
            [DEFAULT]
            transport_url = {BROKER}
            [scheduler]
            workers = 4
            [placement_database]
            connection = {url}
            sync_on_startup = false
            """)
        assert done.returncode == 1
        shown = sa.make_url(url).render_as_string(hide_password=True)
        assert done.stderr.splitlines() == [
            f"{PROG}: the database {shown} has no gantt schema; run "
            f"gantt-manage --config-file {tmp_path / 'gantt.conf'} db sync"]
        engine = sa.create_engine(url)
        assert sa.inspect(engine).get_table_names() == []
        engine.dispose()
    finally:
        databases.drop_scratch("postgresql", url)


def test_a_worker_that_fails_at_start_stops_the_service_once(
        tmp_path, pg_cloud):  # noqa: F811
    """The parent's checks pass with one connection; each worker needs
    more than the role is allowed: the workers fail at start, and the
    service ends with one line instead of starting them again."""
    role = "gantt_one_conn_" + os.urandom(3).hex()
    admin = sa.create_engine(databases.SERVER_URLS["postgresql"],
                             isolation_level="AUTOCOMMIT")
    name = sa.make_url(pg_cloud).database
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 1")
    cloud = sa.create_engine(pg_cloud, isolation_level="AUTOCOMMIT")
    with cloud.connect() as conn:
        for what in ("TABLES", "SEQUENCES"):
            conn.exec_driver_sql(
                f"GRANT ALL ON ALL {what} IN SCHEMA public TO {role}")
    cloud.dispose()
    try:
        url = sa.make_url(pg_cloud).set(username=role).render_as_string(
            hide_password=False)
        done, _ = _run(tmp_path, f"""\
            [DEFAULT]
            transport_url = {BROKER}
            log_file = {tmp_path / 'scheduler.log'}
            control_exchange = {helpers.unique_topic()}
            [scheduler]
            workers = 2
            [placement_database]
            connection = {url}
            max_retries = 1
            retry_interval = 0.1
            [oslo_messaging_rabbit]
            amqp_auto_delete = true
            """)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                f"WHERE usename = '{role}'")
        cloud = sa.create_engine(pg_cloud, isolation_level="AUTOCOMMIT")
        with cloud.connect() as conn:
            conn.exec_driver_sql(f"DROP OWNED BY {role}")
        cloud.dispose()
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP ROLE {role}")
        admin.dispose()
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f'{PROG}: cannot use the database: connection failed: connection '
        f'to server at "127.0.0.1", port 5432 failed: FATAL:  too many '
        f'connections for role "{role}"'], done.stderr
    log = (tmp_path / "scheduler.log").read_text()
    assert "starting it again" not in log
    assert log.count("started 2 workers") == 1
    assert name  # the cloud's database itself is left as it was


def _scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                timeout=10) as answer:
        return answer.read().decode()


def _value(text, sample):
    for line in text.splitlines():
        if line.startswith(sample + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_sighup_reloads_and_metrics_cover_every_worker(tmp_path,
                                                       pg_cloud):  # noqa: F811
    port = _free_port()
    (tmp_path / "s").mkdir()
    reports = tmp_path / "reports"
    reports.mkdir()
    service = Service(tmp_path / "s", pg_cloud, workers=2, extra=f"""\
        [scheduler]
        metrics_bind_port = {port}
        [oslo_reports]
        log_dir = {reports}
        """)
    try:
        workers = {pid for pid, _, _ in service.lines(f"{PROG} ready")}
        for _ in range(6):
            assert service.select()[0]
        with pytest.raises(Exception, match="no valid host"):
            service.select(vcpus=10_000)
        text = _scrape(port)
        assert _value(text, 'gantt_scheduler_calls_total'
                            '{result="selected"}') == 6
        assert _value(text, 'gantt_scheduler_calls_total'
                            '{result="no_valid_host"}') == 1
        assert _value(text, 'gantt_scheduler_no_valid_host_total'
                            '{cause="no_candidates"}') == 1
        assert _value(text, "gantt_scheduler_instances_total") == 6
        assert _value(text, "gantt_scheduler_claim_attempts_total") >= 6
        # Claims lost to another writer and decided again: none here,
        # and the series is there.
        assert _value(text, "gantt_scheduler_claim_conflicts_total") == 0
        assert _value(text, "gantt_scheduler_call_seconds_count") == 7
        assert len(workers) == 2

        # logrotate moves the log away; SIGHUP to the parent: every
        # process reopens its log and goes on serving.
        service.log.rename(str(service.log) + ".1")
        service.proc.send_signal(signal.SIGHUP)
        helpers.wait_for(
            lambda: len(service.lines("reloading (SIGHUP)")) == 3,
            what="the parent and both workers to reload")
        assert service.proc.poll() is None
        for _ in range(4):
            assert service.select()[0]
        assert _value(_scrape(port), 'gantt_scheduler_calls_total'
                                     '{result="selected"}') == 10

        # A Guru Meditation report of one worker (oslo.reports, SIGUSR2).
        os.kill(min(workers), signal.SIGUSR2)
        report = helpers.wait_for(lambda: list(reports.iterdir()),
                                  what="a Guru Meditation report")
        [path] = report
        assert path.name.startswith("gantt-scheduler_gurumeditation_")

        def written():
            # The file appears before the worker has written it through;
            # Configuration is the last section.
            text = path.read_text()
            return text if "Configuration" in text else ""

        text = helpers.wait_for(written, timeout=10.0,
                                what="the report written through")
        assert "Threads" in text
        assert "gantt-scheduler" in text or "gantt" in text
        assert service.select()[0]
        assert service.terminate() == 0
    finally:
        service.close()


def test_metrics_give_the_host_state_lag_behind_novas_databases(
        tmp_path):
    """[scheduler] host_state_source = nova: the parent's endpoint
    serves how old the workers' last complete read of Nova's databases
    was at their last decision."""
    helpers.require_rabbit()
    nova = nova_cloud.NovaDatabases("sqlite", tmp_path)
    nova.reset()
    url = f"sqlite:///{tmp_path / 'gantt.sqlite'}"
    engine = sa.create_engine(url)
    migration.sync(engine)
    engine.dispose()
    port = _free_port()
    (tmp_path / "s").mkdir()
    service = Service(tmp_path / "s", url, workers=2, extra=f"""\
        [scheduler]
        metrics_bind_port = {port}
        host_state_source = nova
        host_state_poll_interval = 1
        [api_database]
        connection = {nova.urls["api"]}
        """)
    try:
        # gantt's placement has no provider: no valid host, a decision
        # all the same.
        with pytest.raises(Exception, match="no valid host"):
            service.select()
        text = _scrape(port)
        age = _value(text, "gantt_scheduler_host_state_age_seconds")
        assert age is not None and 0 < age < 30, text
        assert _value(text, 'gantt_scheduler_no_valid_host_total'
                            '{cause="no_candidates"}') == 1
        assert service.terminate() == 0
    finally:
        service.close()
        nova.close()


def test_workers_that_keep_dying_stop_the_service(tmp_path,
                                                  pg_cloud):  # noqa: F811
    """A worker killed once it serves is started again; the sixth death
    within a minute stops the service with one line, not a loop."""
    (tmp_path / "s").mkdir()
    service = Service(tmp_path / "s", pg_cloud, workers=2)
    try:
        killed = set()
        for death in range(1, 7):
            ready = {pid for pid, _, _ in service.lines(f"{PROG} ready")}
            victim = min(ready - killed)
            os.kill(victim, signal.SIGKILL)
            killed.add(victim)
            if death <= 5:
                helpers.wait_for(
                    lambda n=death: len(service.lines(f"{PROG} ready"))
                    == 2 + n, timeout=30, what=f"worker {death} again")
        assert service.proc.wait(60) == 1
        output = (tmp_path / "s" / "stdout.txt").read_text()
        assert output.strip().splitlines()[-1] == (
            f"{PROG}: workers keep dying (6 in 60 s, the last with status "
            f"-9); stopping, see the log")
        assert len(service.lines("starting it again")) == 5
    finally:
        service.close()


def test_workers_stop_when_their_parent_is_killed(tmp_path,
                                                  pg_cloud):  # noqa: F811
    """SIGKILL (the OOM killer) of the parent: its workers stop too,
    instead of serving on unsupervised."""
    (tmp_path / "s").mkdir()
    service = Service(tmp_path / "s", pg_cloud, workers=2)
    try:
        workers = {pid for pid, _, _ in service.lines(f"{PROG} ready")}
        assert len(workers) == 2
        service.proc.kill()
        service.proc.wait(10)

        def gone():
            alive = set()
            for pid in workers:
                try:
                    state = open(f"/proc/{pid}/stat").read().split()[2]
                except FileNotFoundError:
                    continue
                if state != "Z":
                    alive.add(pid)
            return not alive
        helpers.wait_for(gone, timeout=30, what="the workers to stop")
        assert len(service.lines(f"{PROG} stopped, pid=")) == 2
    finally:
        service.close()
