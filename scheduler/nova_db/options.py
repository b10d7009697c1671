"""Options of the Nova host state source, under Nova's own names where
Nova has one, so that a nova.conf's sections carry over as they are.

``[scheduler] host_state_source`` itself is in scheduler.host_options.
"""

from oslo_config import cfg

API_DATABASE_OPTS = [
    cfg.StrOpt(
        "connection",
        secret=True,
        help="SQLAlchemy URL of Nova's API database (Nova's option). "
             "With [scheduler] host_state_source = nova, gantt-scheduler "
             "reads the cell mappings and the host aggregates from it, "
             "and each cell's database from its cell mapping. Read only."),
]

DATABASE_OPTS = [
    cfg.StrOpt(
        "connection",
        secret=True,
        help="SQLAlchemy URL of a Nova cell database (Nova's option). "
             "gantt reads it only to fill in cell mappings whose "
             "database_connection is a template ({username}, {password}, "
             "{hostname}, {port}, {path}, ...), as Nova does."),
]

SCHEDULER_OPTS = [
    cfg.FloatOpt(
        "host_state_poll_interval",
        default=1.0,
        min=0.0,
        help="With host_state_source = nova: at most this many seconds "
             "between two reads of the compute nodes and services that "
             "changed in the cell databases (and of the cell mappings and "
             "aggregates in the API database). A decision reads them when "
             "the last read is older; 0 reads before every decision."),
    cfg.FloatOpt(
        "host_state_change_margin",
        default=5.0,
        min=0.0,
        help="With host_state_source = nova: each poll reads the compute "
             "node and service rows whose created_at, updated_at or "
             "deleted_at is no older than the start of the previous poll "
             "less this many seconds. It covers transactions that commit "
             "a moment after they stamped their rows and the clock "
             "differences between the hosts running nova-conductor and "
             "this one: set it above the worst such difference."),
]

# Nova's allocation ratio options ([DEFAULT]): a compute node row whose
# ratio is NULL or 0.0 gets the configured ratio, else the initial one,
# as Nova's ComputeNode object does.
RATIO_OPTS = [
    cfg.FloatOpt(
        f"{kind}_allocation_ratio",
        min=0.0,
        help=f"Nova's {kind} allocation ratio. With host_state_source = "
             f"nova, used for compute nodes that report none.")
    for kind in ("cpu", "ram", "disk")
] + [
    cfg.FloatOpt(
        f"initial_{kind}_allocation_ratio",
        default=default,
        min=0.0,
        help=f"Nova's initial {kind} allocation ratio: for compute nodes "
             f"that report none when {kind}_allocation_ratio is unset.")
    for kind, default in (("cpu", 4.0), ("ram", 1.0), ("disk", 1.0))
]


def register_opts(conf):
    conf.register_opts(API_DATABASE_OPTS, group="api_database")
    conf.register_opts(DATABASE_OPTS, group="database")
    conf.register_opts(SCHEDULER_OPTS, group="scheduler")
    conf.register_opts(RATIO_OPTS)


def list_opts():
    """Options for oslo-config-generator."""
    return [("DEFAULT", RATIO_OPTS),
            ("api_database", API_DATABASE_OPTS),
            ("database", DATABASE_OPTS),
            ("scheduler", SCHEDULER_OPTS)]
