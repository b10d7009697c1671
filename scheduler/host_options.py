"""Options the host state table reads ([DEFAULT], named as in Nova, and
where its records come from).

Declared once here; the scheduler's entry points register them with
:func:`register_opts` (registering twice is harmless) and the sample
config lists them through :func:`list_opts`.
"""

from oslo_config import cfg

from scheduler.nova_db import options as nova_options

DEFAULT_OPTS = [
    cfg.IntOpt(
        "service_down_time",
        default=60,
        min=1,
        help="Seconds since a compute service's last heartbeat after "
             "which the scheduler takes it for down and sends nothing to "
             "its hosts. Keep it a few times the compute services' report "
             "interval. A host loaded from a cloud file that has never "
             "sent a heartbeat counts as up."),
    cfg.StrOpt(
        "default_availability_zone",
        default="nova",
        help="Availability zone of compute hosts that are in no host "
             "aggregate with availability_zone metadata."),
]

GANTT, NOVA = "gantt", "nova"

SCHEDULER_OPTS = [
    cfg.StrOpt(
        "host_state_source",
        default=GANTT,
        choices=[(GANTT, "gantt's own host records in the placement "
                         "database: cloud files, update_host_info, the "
                         "fanout casts"),
                 (NOVA, "Nova's databases, read only: compute nodes and "
                        "services of every enabled cell, aggregates and "
                        "cell mappings from [api_database] connection, "
                        "each host's instances at start; the fanout casts "
                        "then keep instances and aggregates current in "
                        "memory, as nova-scheduler does")],
        help="Where gantt-scheduler learns the compute hosts it schedules "
             "on. Set nova to run in place of nova-scheduler in a Nova "
             "deployment."),
]


def register_opts(conf):
    conf.register_opts(DEFAULT_OPTS)
    conf.register_opts(SCHEDULER_OPTS, group="scheduler")
    nova_options.register_opts(conf)


def list_opts():
    """Options for oslo-config-generator (with the Nova source's)."""
    nova = dict(nova_options.list_opts())
    return [("DEFAULT", DEFAULT_OPTS + nova["DEFAULT"]),
            ("scheduler", SCHEDULER_OPTS + nova["scheduler"]),
            ("api_database", nova["api_database"]),
            ("database", nova["database"])]
