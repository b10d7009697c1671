"""Fixtures of the Nova stack test: the stack (one per module: starting
it costs about 20 s), the scenarios' view of it, and the reporting.

Prerequisites: MariaDB and RabbitMQ (with rabbitmqctl as root) on
loopback, and Nova 34 in its cached virtualenv (installed when
missing). Locally a missing prerequisite skips; with CI=true it fails,
and so does a stack that does not start, anywhere.

On a failure the report gets the tail of every process's log; the
terminal summary prints how long the install, the start and each
scenario took.
"""

import os
import pathlib
import tempfile
import time

import pytest

from tests import databases
from tests.nova_stack import checks, install, services
from tests.nova_stack import stack as stack_mod

# Seconds the scenarios together may take once the stack is up (its
# start is bounded by its own waits). Comfortably above a normal run on
# a busy 2-core machine; past it every wait fails at once.
SCENARIO_BUDGET = 900
TIMES = {}


def _nova_venv():
    began = time.monotonic()
    cached = install.PEER.is_complete()
    try:
        venv = install.nova_venv()
    except Exception as exc:  # pip, network, disk: all the same here
        message = f"Nova {install.VERSION} could not be installed: {exc}"
        if databases.in_ci():
            pytest.fail(message + " (CI=true: a failure, never a skip)",
                        pytrace=False)
        pytest.skip(message)
    TIMES["install"] = (time.monotonic() - began, cached)
    return venv


def _work_dir(tmp_path_factory):
    """The test's tmp dir, or a new folder under $GANTT_NOVA_STACK_WORK
    (pytest keeps only its last three tmp dirs, and on a shared machine
    other sessions' runs may rotate the logs away before they are read).
    """
    parent = os.environ.get("GANTT_NOVA_STACK_WORK")
    if not parent:
        return tmp_path_factory.mktemp("nova-stack")
    pathlib.Path(parent).mkdir(parents=True, exist_ok=True)
    return pathlib.Path(tempfile.mkdtemp(prefix="nova-stack-", dir=parent))


@pytest.fixture(scope="package")
def nova_stack(tmp_path_factory):
    """The running stack; stopped, and its databases and vhost removed,
    at the end of the module."""
    services.require_servers()
    venv = _nova_venv()
    work = _work_dir(tmp_path_factory)
    stack = stack_mod.Stack(work, venv, stack_mod.scheduler_choice())
    TIMES["scheduler"] = stack.scheduler
    TIMES["logs"] = stack.logs
    try:
        stack.start()
    except Exception as exc:
        tails = stack.log_tails()
        stack.stop()
        pytest.fail(f"{exc}\n\n{tails}", pytrace=False)
    except BaseException:  # Ctrl-C: stop, clean up, and go
        stack.stop()
        raise
    TIMES["start"] = stack.timings["start"]
    TIMES["steps"] = dict(stack.timings)
    yield stack
    began = time.monotonic()
    stack.stop()
    TIMES["stop"] = time.monotonic() - began


@pytest.fixture(scope="package")
def cloud(nova_stack):
    cloud = checks.Cloud(nova_stack, SCENARIO_BUDGET)
    cloud.make_flavors()
    return cloud


@pytest.fixture
def scenario(cloud):
    """The cloud, with whatever the scenario booted deleted after it."""
    yield cloud
    cloud.delete_all()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if "nova_stack" not in getattr(item, "fixturenames", ()):
        return
    if report.when == "call":
        TIMES.setdefault("scenarios", {})[item.name] = report.duration
    stack = getattr(item, "funcargs", {}).get("nova_stack")
    if report.failed and stack is not None:
        report.sections.append(("Nova stack: the end of every log",
                                stack.log_tails()))


def pytest_terminal_summary(terminalreporter):
    if "scheduler" not in TIMES:
        return
    write = terminalreporter.write_line
    terminalreporter.write_sep("=", f"Nova stack ({TIMES['scheduler']} "
                                    f"scheduler): time taken")
    install_s, cached = TIMES.get("install", (0.0, True))
    write(f"install: {install_s:.1f} s"
          f"{' (cached virtualenv)' if cached else ''}")
    if "start" in TIMES:
        steps = ", ".join(f"{k} {v}" for k, v in TIMES["steps"].items()
                          if k != "start")
        write(f"start: {TIMES['start']:.1f} s ({steps})")
    scenarios = TIMES.get("scenarios", {})
    for name, seconds in scenarios.items():
        write(f"  {name}: {seconds:.1f} s")
    for note in checks.NOTES:
        write(f"  {note}")
    stop_s = TIMES.get("stop", 0.0)
    run = TIMES.get("start", 0.0) + sum(scenarios.values()) + stop_s
    write(f"stop: {stop_s:.1f} s")
    write(f"total: {run:.1f} s without the install, "
          f"{run + install_s:.1f} s with it; logs in {TIMES['logs']}")
