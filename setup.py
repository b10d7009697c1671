"""Packaging for gantt: a cloud scheduler with an embedded placement engine."""

from setuptools import find_packages, setup

PACKAGES = ("placement", "scheduler", "filters", "weighers", "rpc",
            "simulation", "cloudfile", "gantt")

setup(
    name="gantt",
    version="0.1.0",
    description=(
        "Cloud scheduler with an embedded placement engine, wire-compatible "
        "with OpenStack Nova's scheduler and OpenStack Placement"
    ),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(
        include=[name for p in PACKAGES for name in (p, p + ".*")]),
    include_package_data=True,
    package_data={"placement.db": ["alembic/*.py", "alembic/*.mako",
                                   "alembic/versions/*.py"]},
    install_requires=[
        "oslo.config>=9.0,<11",
        "oslo.log>=5.0,<9",
        "oslo.messaging>=14.0,<19",
        "oslo.policy>=4.0,<7",
        "kombu>=5.3,<6",
        "SQLAlchemy>=2.0,<2.2",
        "alembic>=1.12,<2",
        "networkx>=3.0,<4",
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
        "keystonemiddleware>=10.0,<14",
        "gunicorn>=22.0,<28",
        "orjson>=3.9,<4",
        "requests>=2.25,<3",
        "matplotlib>=3.7,<4",
        "tqdm>=4.60,<5",
    ],
    extras_require={
        "test": [
            "pytest>=8.0,<10",
            "hypothesis>=6.90,<7",
            "fakeredis>=2.20,<3",
            "gabbi>=3.0,<5",
            "ruff>=0.6,<1",
            "python-openstackclient>=7.0,<11",
            "osc-placement>=4.0,<5",
            "openstacksdk>=3.0,<5",
        ],
        "postgres": ["psycopg[binary]>=3.1,<4"],
        "mysql": ["PyMySQL>=1.1,<2"],
        "redis": ["redis>=5.0,<9"],
    },
    entry_points={
        "console_scripts": [
            "gantt-manage = gantt.cmd.manage:main",
            "gantt-placement-api = gantt.cmd.api:main",
            "gantt-scheduler = rpc.service:main",
            "gantt-simulate = simulation.cli:main",
        ],
        "oslo.policy.policies": [
            "gantt = placement.api.policies:list_rules",
        ],
        "oslo.config.opts": [
            "gantt = placement.conf:list_opts",
            "gantt.scheduler.hosts = scheduler.host_options:list_opts",
            "gantt.scheduler = scheduler.conf:list_opts",
            "gantt.rpc = rpc.conf:list_opts",
        ],
        "oslo.config.opts.defaults": [
            "gantt.rpc = rpc.conf:set_sample_defaults",
        ],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: Apache Software License",
        "Operating System :: POSIX :: Linux",
    ],
)
