"""The gantt config of a simulation: an oslo.config file (gantt.conf
format: [filter_scheduler] enabled_filters, weigher multipliers,
host_subset_size, ...), checked up front so that a mistake stops the run
before the cloud is loaded, with the file and the option named.

Checked: the file parses; in the sections gantt owns, every key is an
option gantt knows (a misspelt option would otherwise be ignored
silently); every value converts to its option's type; filter and weigher
names load. Options of other libraries (in [DEFAULT] and their own
sections) are left to them.
"""

import configparser

from oslo_config import cfg

from placement import conf as placement_conf
from placement import file_errors
from scheduler import conf as scheduler_conf
from scheduler import errors, framework, host_options


class ConfigError(file_errors.InputFileError):
    """A config file that cannot be used; names the file and option."""


def _owned():
    """{section: {option names}} of the options gantt declares."""
    out = {}
    for lister in (placement_conf.list_opts, scheduler_conf.list_opts,
                   host_options.list_opts):
        for group, opts in lister():
            names = out.setdefault(group, set())
            for opt in opts:
                names.add(opt.dest)
                names.update(d.name for d in opt.deprecated_opts
                             if d.name and d.group in (None, group))
    return out


def load(path=None):
    """A ConfigOpts with gantt's options from ``path`` (None: every
    option at its default; no other file is read)."""
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
        _check_keys(path)
        _check_values(conf, path)
    return conf


def _check_keys(path):
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error as exc:
        raise ConfigError(path, None, f"cannot parse: {exc}") from None
    owned = _owned()
    for section in parser.sections():
        known = owned.get(section)
        if known is None:
            continue
        for key in parser[section]:
            if key not in known and key.replace("-", "_") not in known:
                raise ConfigError(
                    path, f"[{section}] {key}",
                    f"unknown option; [{section}] has: "
                    f"{', '.join(sorted(known))}")


def _check_values(conf, path):
    for section, names in _owned().items():
        group = conf if section == "DEFAULT" else conf[section]
        for name in sorted(names):
            try:
                getattr(group, name)
            except (cfg.ConfigFileValueError, ValueError) as exc:
                raise ConfigError(path, f"[{section}] {name}",
                                  str(exc)) from None
            except cfg.NoSuchOptError:
                continue  # a deprecated alias: checked under its name
    checks = (("[filter_scheduler] enabled_filters",
               framework.enabled_filters),
              ("[filter_scheduler] weight_classes",
               framework.enabled_weighers))
    for field, load_plugins in checks:
        try:
            load_plugins(conf)
        except errors.SchedulerError as exc:
            raise ConfigError(path, field, exc.message) from None
