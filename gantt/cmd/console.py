"""The console scripts' entry points (setup.py): each first makes sure
that gantt's packages are gantt's (gantt.clash), then imports its
command. The commands' modules import gantt's packages when they load,
so the check has to come before them: nothing here imports one at
module level."""

import importlib

from gantt import clash


def _run(prog, module):
    clash.check(prog)
    return importlib.import_module(module).main()


def manage():
    return _run("gantt-manage", "gantt.cmd.manage")


def placement_api():
    return _run("gantt-placement-api", "gantt.cmd.api")


def scheduler():
    return _run("gantt-scheduler", "rpc.service")


def simulate():
    return _run("gantt-simulate", "simulation.cli")


def compute_agent():
    return _run("gantt-compute-agent", "compute.agent")


def status():
    return _run("gantt-status", "gantt.cmd.status")
