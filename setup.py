"""Packaging for gantt: a cloud scheduler with an embedded placement engine.

The metadata, requirements and entry points live here (the product's
layout names setup.py); pyproject.toml holds the build requirements and
the tools' settings. The constants below are read by
tests/unit/test_packaging.py.
"""

import glob
import os

from setuptools import find_namespace_packages, setup

PACKAGES = ("placement", "scheduler", "filters", "weighers", "rpc",
            "simulation", "cloudfile", "compute", "gantt")


def _packages():
    """Every directory of PACKAGES that holds a file. Some have no
    __init__.py: alembic's script directory (alembic loads env.py and the
    revisions by path) and scheduler/nova_db; find_packages would leave
    them out of the wheel."""
    found = find_namespace_packages(
        include=[name for p in PACKAGES for name in (p, p + ".*")],
        exclude=["*.__pycache__"])
    return [p for p in found
            if any(entry.is_file()
                   for entry in os.scandir(p.replace(".", os.sep)))]


# The samples and examples go to <prefix>/share/gantt/etc/, laid out as in
# the source tree: a command that names etc/examples/... runs as it is
# from <prefix>/share/gantt. <prefix> is the virtualenv, /usr/local, ...:
# python -c 'import sysconfig; print(sysconfig.get_path("data"))'
SHARE = "share/gantt"
SAMPLES = ("etc/gantt.conf.sample", "etc/policy.yaml.sample")


def _data_files():
    files = list(SAMPLES)
    for path in sorted(glob.glob("etc/examples/**/*", recursive=True)
                       + glob.glob("etc/systemd/**/*", recursive=True)):
        if os.path.isfile(path):
            files.append(path)
    by_dir = {}
    for path in files:
        by_dir.setdefault(os.path.dirname(path), []).append(path)
    return [(f"{SHARE}/{d}", paths) for d, paths in sorted(by_dir.items())]


INSTALL_REQUIRES = [
    "oslo.config>=9.0,<11",
    "oslo.log>=5.0,<9",
    "oslo.messaging>=14.0,<19",
    # oslo.service's threading backend (rpc/__init__.py): without it
    # oslo.messaging loads the eventlet one, deprecated, on every start.
    "oslo.service[threading]>=4.1,<5",
    "oslo.policy>=4.0,<7",
    # gantt-status upgrade check (gantt/cmd/status.py)
    "oslo.upgradecheck>=2.1,<3",
    "kombu>=5.3,<6",
    "SQLAlchemy>=2.0,<2.2",
    "alembic>=1.12,<2",
    "numpy>=1.24,<3",
    "os-traits>=3.0,<4",
    "os-resource-classes>=1.1,<2",
    "microversion-parse>=1.0,<3",
    "WebOb>=1.8,<2",
    "jsonschema>=4.0,<5",
    "fastjsonschema>=2.16,<3",
    "PyYAML>=6.0,<7",
    "oslo.context>=5.0,<7",
    "oslo.middleware>=6.0,<9",
    # Guru Meditation reports on SIGUSR2 (placement/guru.py).
    "oslo.reports>=3.0,<4",
    # Metrics of the API and gantt-scheduler (multiprocess mode).
    "prometheus-client>=0.17,<1",
    "keystonemiddleware>=10.0,<14",
    "gunicorn>=22.0,<28",
    "orjson>=3.9,<4",
    "requests>=2.25,<3",
    # networkx (>=3.0,<4) joins when the compute side (compute/) lands:
    # its provider trees (diffs, create and delete order, reshape
    # planning) are graphs. Nothing imports it before then.
]

EXTRAS_REQUIRE = {
    # gantt-simulate's report (plots) and progress bar; only simulation/
    # imports them. The services and gantt-manage run without.
    "simulate": [
        "matplotlib>=3.7,<4",
        # report.html's interactive plots (plotly.js inline)
        "plotly>=5.5,<8",
        "tqdm>=4.60,<5",
    ],
    "test": [
        "pytest>=8.0,<10",
        # make test runs most tests two at a time
        "pytest-xdist>=3.5,<4",
        "hypothesis>=6.90,<7",
        # the change feed's fault tests
        # (tests/functional/test_change_feed_faults.py)
        "fakeredis>=2.20,<3",
        "gabbi>=3.0,<5",
        "ruff>=0.6,<1",
        "mypy>=2.3,<3",
        "python-openstackclient>=7.0,<11",
        "osc-placement>=4.0,<5",
        "openstacksdk>=3.0,<5",
        # the report pages in headless chromium over the DevTools
        # protocol (tests/simulation/test_browser.py)
        "websocket-client>=1.6,<2",
    ],
    # Reading a running placement service as OpenStack clients do:
    # clouds.yaml, OS_CLOUD and the OS_* variables, a keystoneauth
    # session (placement/adopt/cloud_auth.py; gantt-simulate
    # --from-placement, gantt-manage placement verify). A raw --token
    # with a URL needs neither.
    "openstack": [
        "openstacksdk>=3.0,<5",
        "keystoneauth1>=5.1,<6",
    ],
    "postgres": ["psycopg[binary]>=3.2,<4"],
    "mysql": ["PyMySQL>=1.1,<2"],
    "redis": ["redis>=5.0,<9"],
}


def _readme():
    with open("README.md", encoding="utf-8") as readme:
        return readme.read()


setup(
    name="gantt",
    version="0.1.0",
    description=(
        "Cloud scheduler with an embedded placement engine, wire-compatible "
        "with OpenStack Nova's scheduler and OpenStack Placement"
    ),
    long_description=_readme(),
    long_description_content_type="text/markdown",
    license_expression="Apache-2.0",
    python_requires=">=3.10",
    # Flat layout, said outright: an editable install (make) is then a
    # plain .pth to this directory rather than an import hook, and
    # setuptools has nothing to warn about.
    package_dir={"": "."},
    packages=_packages(),
    include_package_data=True,
    package_data={"placement.db.alembic": ["*.mako"],
                  "placement": ["conf_peers.json"]},
    data_files=_data_files(),
    install_requires=INSTALL_REQUIRES,
    extras_require=EXTRAS_REQUIRE,
    entry_points={
        "console_scripts": [
            # Through gantt.cmd.console: gantt.clash's check first.
            "gantt-manage = gantt.cmd.console:manage",
            "gantt-status = gantt.cmd.console:status",
            "gantt-placement-api = gantt.cmd.console:placement_api",
            "gantt-scheduler = gantt.cmd.console:scheduler",
            "gantt-simulate = gantt.cmd.console:simulate",
            "gantt-compute-agent = gantt.cmd.console:compute_agent",
        ],
        "oslo.middleware.healthcheck": [
            "gantt_database = placement.api.health:DatabaseCheck",
        ],
        "oslo.policy.policies": [
            "gantt = placement.api.policies:list_rules",
        ],
        # oslopolicy-policy-generator, oslopolicy-list-redundant and
        # oslopolicy-validator --namespace gantt: the defaults merged
        # with the policy file of the config they are given.
        "oslo.policy.enforcer": [
            "gantt = placement.api.policy:get_enforcer",
        ],
        "oslo.config.opts": [
            "gantt = placement.conf:list_opts",
            "gantt.scheduler.hosts = scheduler.host_options:list_opts",
            "gantt.scheduler = scheduler.conf:list_opts",
            "gantt.rpc = rpc.options:list_opts",
            "gantt.compute = compute.conf:list_opts",
        ],
        "oslo.config.opts.defaults": [
            "gantt.rpc = rpc.conf:set_sample_defaults",
        ],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Operating System :: POSIX :: Linux",
    ],
)
