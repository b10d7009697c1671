"""Guru Meditation reports (oslo.reports): on SIGUSR2 a service writes
what each of its threads is doing, its config and its package versions,
to stderr or, with ``[oslo_reports] log_dir``, to a file
``<service>_gurumeditation_<time>`` there; the service goes on. What an
operator asks a stuck OpenStack service for.

gunicorn's master keeps SIGUSR2 (its binary upgrade): in
gantt-placement-api only the workers answer it.
"""

from oslo_reports import guru_meditation_report as gmr
from oslo_reports import opts as reports_opts

from placement import conf as conf_mod


def register_opts(conf):
    for group, opts in reports_opts.list_opts():
        conf.register_opts(opts, group=group)


class _Version:
    """What the report's header says of the product."""

    @staticmethod
    def vendor_string():
        return "gantt"

    @staticmethod
    def product_string():
        return "gantt"

    @staticmethod
    def version_string_with_package():
        return conf_mod.version()


def enable(conf, service_name):
    """SIGUSR2 writes a report of this process (and of a child forked
    after this, of the child)."""
    gmr.TextGuruMeditation.setup_autorun(_Version(), service_name,
                                         conf=conf)
