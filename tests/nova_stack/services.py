"""The servers the Nova stack runs on: MariaDB and RabbitMQ.

The stack gets scratch databases of its own (Nova's API, cell0 and cell1
databases, gantt's placement database) and a RabbitMQ virtual host of
its own, all named with the harness's process id and a random part,
removed at the end. A run killed before its clean-up leaves them
behind: the next stack removes those whose process is gone. A server
that cannot be reached skips the test locally and fails it with
CI=true, as tests/databases.py does for the other tests.
"""

import os
import re
import shutil
import socket
import subprocess
import urllib.parse
import uuid

import sqlalchemy as sa

from tests import databases

RABBIT_URL = os.environ.get("GANTT_TEST_RABBIT_URL",
                            "rabbit://guest:guest@127.0.0.1:5672/")


# Names the harness gives: <kind>_<pid>x<6 hex digits>.
_OURS = re.compile(r"^(?:nova_api|nova_cell0|nova_cell1|nova_cell2|"
                   r"gantt_placement|nova_stack)_(\d+)x[0-9a-f]{6}$")


def suffix():
    return f"{os.getpid()}x{uuid.uuid4().hex[:6]}"


def _orphaned(name):
    """Whether ``name`` is one of ours whose process no longer runs."""
    match = _OURS.match(name)
    if not match or int(match.group(1)) == os.getpid():
        return False
    try:
        os.kill(int(match.group(1)), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def sweep_orphans():
    """Remove the databases and virtual hosts of stacks whose harness
    died without cleaning up. Best effort: a failure here is left for
    the stack's own set-up to report."""
    try:
        admin = sa.create_engine(mysql_admin_url(),
                                 connect_args={"connect_timeout": 5})
        try:
            with admin.connect() as conn:
                names = [row[0] for row in
                         conn.exec_driver_sql("SHOW DATABASES")]
        finally:
            admin.dispose()
        drop_databases([name for name in names if _orphaned(name)])
        listed = subprocess.run(["rabbitmqctl", "-q", "list_vhosts"],
                                capture_output=True, text=True,
                                timeout=30).stdout.split()
        for vhost in listed:
            if _orphaned(vhost):
                delete_vhost(vhost)
    except Exception:  # best effort: see the docstring
        pass


def mysql_admin_url():
    return sa.make_url(databases.SERVER_URLS["mysql"])


def database_url(name):
    """The URL of database ``name`` on the MariaDB server, with the
    PyMySQL driver both virtualenvs have."""
    url = mysql_admin_url().set(drivername="mysql+pymysql", database=name,
                                query={"charset": "utf8"})
    return url.render_as_string(hide_password=False)


def create_databases(names):
    _on_server([f"CREATE DATABASE {name}" for name in names])


def drop_databases(names):
    _on_server([f"DROP DATABASE IF EXISTS {name}" for name in names])


def _on_server(statements):
    admin = sa.create_engine(mysql_admin_url(),
                             connect_args={"connect_timeout": 5})
    try:
        with admin.connect() as conn:
            for statement in statements:
                conn.exec_driver_sql(statement)
    finally:
        admin.dispose()


def compute_node_hosts(url):
    """The hosts with a compute node record in a Nova cell database."""
    engine = sa.create_engine(url, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT host FROM compute_nodes WHERE deleted = 0")
            return {row[0] for row in rows}
    finally:
        engine.dispose()


def mysql_unreachable():
    """Why the MariaDB server cannot be used, or None."""
    try:
        _on_server(["SELECT 1"])
    except Exception as exc:  # any connection failure
        return str(exc).splitlines()[0]
    return None


def _rabbit_parts():
    return urllib.parse.urlsplit(RABBIT_URL)


def transport_url(vhost):
    """RABBIT_URL with ``vhost`` as its virtual host."""
    parts = _rabbit_parts()
    return urllib.parse.urlunsplit(parts._replace(path="/" + vhost))


def rabbit_unreachable():
    """Why a virtual host cannot be made on RabbitMQ, or None."""
    parts = _rabbit_parts()
    try:
        socket.create_connection((parts.hostname or "127.0.0.1",
                                  parts.port or 5672), timeout=2).close()
    except OSError as exc:
        return f"{RABBIT_URL}: {exc}"
    if shutil.which("rabbitmqctl") is None or os.geteuid() != 0:
        return "a virtual host of its own needs rabbitmqctl, as root"
    return None


def create_vhost(vhost):
    user = _rabbit_parts().username or "guest"
    _rabbitmqctl("add_vhost", vhost)
    _rabbitmqctl("set_permissions", "-p", vhost, user, ".*", ".*", ".*")


def delete_vhost(vhost):
    _rabbitmqctl("delete_vhost", vhost)


def _rabbitmqctl(*args):
    done = subprocess.run(["rabbitmqctl", *args], capture_output=True,
                          text=True, timeout=60)
    if done.returncode:
        raise RuntimeError(f"rabbitmqctl {' '.join(args)}: "
                           f"{done.stdout}{done.stderr}")


def require_servers():
    """Skip (locally) or fail (CI=true) when MariaDB or RabbitMQ is not
    there to run the stack on."""
    reason = mysql_unreachable()
    if reason:
        databases.unavailable("mysql", reason)
    reason = rabbit_unreachable()
    if reason:
        databases.unavailable("rabbitmq", reason)
