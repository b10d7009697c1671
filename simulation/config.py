"""The gantt config of a simulation: an oslo.config file (gantt.conf
format, or a nova.conf as it is: [filter_scheduler] enabled_filters,
weigher multipliers, host_subset_size, ...), checked up front so that a
mistake stops the run before the cloud is loaded, with the file and the
option named.

Checked as every gantt command checks its files (placement.config_check):
the file parses; every value converts to its option's type; an option or
section gantt does not know in a section gantt owns is a warning (an
error with ``strict``). Here, also: filter and weigher names load.
"""

from oslo_config import cfg

from placement import conf as placement_conf
from placement import config_check, file_errors
from scheduler import conf as scheduler_conf
from scheduler import errors, framework, host_options


class ConfigError(file_errors.InputFileError):
    """A config file that cannot be used; names the file and option."""


def load(path=None, strict=False, warn=None):
    """A ConfigOpts with gantt's options from ``path`` (None: every
    option at its default; no other file is read). ``warn(line)`` is
    told of unknown options and sections (ConfigError when ``strict``).
    """
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    scheduler_conf.register_opts(conf)
    host_options.register_opts(conf)
    args = ["--config-file", path] if path else []
    try:
        conf(args, project="gantt", default_config_files=[])
    except cfg.ConfigFilesNotFoundError:
        raise ConfigError(path, None, "no such file") from None
    except cfg.ConfigFileParseError as exc:
        raise ConfigError(path, None, f"cannot parse: {exc.msg}") from None
    except cfg.Error as exc:
        raise ConfigError(path, None, str(exc)) from None
    if path:
        try:
            config_check.check(conf, warn or (lambda line: None),
                               strict=strict)
        except config_check.ConfigCheckError as exc:
            raise ConfigError(exc.where or path, exc.field,
                              exc.reason) from None
        _check_plugins(conf, path)
    return conf


def _check_plugins(conf, path):
    for load_plugins in (framework.enabled_filters,
                         framework.enabled_weighers):
        try:
            load_plugins(conf)
        except errors.SchedulerError as exc:
            # The message names the option.
            raise ConfigError(path, None, exc.message) from None
