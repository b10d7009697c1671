"""SIGHUP as OpenStack services take it (oslo.service's reload): the
config files read again, so that the options marked mutable change
(oslo.log applies ``[DEFAULT] debug`` itself), and the log files
reopened, so that logrotate may move them away.

The handler only notes the signal; the service's main loop reloads
between two waits (``reload_if_asked``): a handler may have interrupted
a thread holding the logging locks that a reload takes.
"""

import signal

from oslo_log import log as logging


def reload_config(conf):
    conf.mutate_config_files()
    logging.setup(conf, "gantt")


class Hangup:
    """SIGHUP noted by ``handle``, acted on by ``reload_if_asked``, which
    calls ``reload()``."""

    def __init__(self, reload):
        self.reload = reload
        self.asked = False

    def install(self):
        signal.signal(signal.SIGHUP, self.handle)

    def handle(self, signum, frame):
        self.asked = True

    def reload_if_asked(self):
        if self.asked:
            self.asked = False
            self.reload()
