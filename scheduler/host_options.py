"""Options the host state table reads ([DEFAULT], named as in Nova).

Declared once here; the scheduler's entry points register them with
:func:`register_opts` (registering twice is harmless) and the sample
config lists them through :func:`list_opts`.
"""

from oslo_config import cfg

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


def register_opts(conf):
    conf.register_opts(DEFAULT_OPTS)


def list_opts():
    """Options for oslo-config-generator."""
    return [("DEFAULT", DEFAULT_OPTS)]
