"""Config files checked the same way by every gantt command.

oslo.config ignores what it does not know: a misspelt option in a file is
silently the default. Every command (gantt-manage, gantt-placement-api,
gantt-scheduler, gantt-simulate) runs :func:`check` on the files it read
and reports what it finds the same way: one warning per finding, naming
the file, the section and the option with the closest known name; with
``--strict`` (or ``strict = true`` in ``[DEFAULT]``) they are an error.

What counts as known, so that a nova.conf or placement.conf can be given
as it is:

- in the sections gantt owns ([scheduler], [filter_scheduler],
  [placement], [api_database], ...): gantt's own options (the
  ``oslo.config.opts`` entry points named ``gantt*``, the same lists
  oslo-config-generator writes the sample from), the options Nova 34 and
  OpenStack Placement 16 declare in those sections (conf_peers.json,
  checked against the real services by tests/integration), and in
  [placement] keystoneauth's session, adapter and auth plugin options;
- [DEFAULT] and every other section belong to others (oslo.log,
  oslo.messaging, Nova's other services): not checked. Only a section
  whose name is one letter or two away from a section gantt owns is
  reported, as a likely typo.

Values are checked for every option gantt declares, whichever command it
is for (gantt-manage stops on gantt-scheduler's ``[scheduler] workers =
two`` too). In [DEFAULT], an unknown option much like one whose default
would quietly do the wrong thing when it is not set (``transport_ulr``:
the in-process transport; ``stat_path``: the database in the default
directory) is an error, not a warning (misspelt_shared_option).
"""

import dataclasses
import difflib
import functools
import json
import os
import pathlib
from importlib import metadata

from oslo_config import cfg

from placement import conf as conf_mod

PEERS_FILE = pathlib.Path(__file__).with_name("conf_peers.json")
ENTRY_POINTS = "oslo.config.opts"
GANTT_PREFIX = "gantt"
SHARED_SECTION = "DEFAULT"
# The section Nova reads its placement client (keystoneauth) from.
CLIENT_SECTION = "placement"
# How like an owned section's name an unknown one must be to be reported.
SECTION_LIKENESS = 0.8

class ConfigCheckError(cfg.Error):
    """A value that does not convert, or findings in strict mode:
    ``where`` (a file, an OS_* variable or the command line), ``field``
    (``[section] option``, or None) and ``reason``."""

    def __init__(self, where, field, reason):
        super().__init__(": ".join(p for p in (where, field, reason) if p))
        self.where = where
        self.field = field
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class Finding:
    path: str
    section: str
    option: str | None  # None: the section itself is unknown
    closest: str | None

    def __str__(self):
        if self.option is None:
            what = f"[{self.section}]: unknown section"
            hint = f" (did you mean [{self.closest}]?)" if self.closest else ""
        else:
            what = f"[{self.section}] {self.option}: unknown option"
            hint = f" (did you mean {self.closest}?)" if self.closest else ""
        return f"{self.path}: {what}{hint}"


def _names(opts):
    for opt in opts:
        yield opt.dest
        for old in opt.deprecated_opts:
            if old.name:
                yield old.name.replace("-", "_")


@functools.cache
def gantt_opts():
    """{section: {option name: Opt}} gantt declares, from its entry
    points (an option under each of its names, deprecated ones too)."""
    known = {}
    for entry in metadata.entry_points(group=ENTRY_POINTS):
        if entry.name.split(".")[0] != GANTT_PREFIX:
            continue
        for group, opts in entry.load()():
            names = known.setdefault(group or SHARED_SECTION, {})
            for opt in opts:
                for name in _names([opt]):
                    names.setdefault(name, opt)
    return known


@functools.cache
def gantt_options():
    """{section: option names} gantt declares, from its entry points."""
    return {group: frozenset(opts) for group, opts in gantt_opts().items()}


@functools.cache
def _peers():
    return json.loads(PEERS_FILE.read_text())


@functools.cache
def _keystoneauth_options(auth_type):
    """keystoneauth's session, adapter and common auth options and those
    of the ``auth_type`` plugin (its name as a config file gives it)."""
    from keystoneauth1 import exceptions, loading  # only for [placement]

    opts = (loading.get_session_conf_options()
            + loading.get_auth_common_conf_options()
            + loading.get_adapter_conf_options())
    names = set(_names(opts))
    if auth_type:
        try:
            names.update(_names(
                loading.get_auth_plugin_conf_options(auth_type)))
        except exceptions.NoMatchingPlugin:
            pass  # the service reports an auth_type it cannot load
    return frozenset(names)


def owned_sections():
    return frozenset(gantt_options()) - {SHARED_SECTION}


def known_options(section, auth_type=None):
    """Every option name a file may set in ``section`` (owned); in
    [placement], with the options of the file's keystoneauth plugin."""
    names = set(gantt_options().get(section, ()))
    for service in _peers()["options"].values():
        names.update(service.get(section, ()))
    if section == CLIENT_SECTION:
        names.update(_keystoneauth_options(auth_type))
    return names


def _closest(word, choices):
    found = difflib.get_close_matches(word, sorted(choices), n=1,
                                      cutoff=0.6)
    return found[0] if found else None


def _read(path):
    sections = {}
    cfg.ConfigParser(path, sections).parse()
    return sections


def check_file(path):
    """The findings in one file (which oslo.config has parsed already)."""
    owned = owned_sections()
    foreign = set(_peers()["sections"])
    findings = []
    for section, values in _read(path).items():
        if section in owned:
            auth_type = values.get("auth_type", [None])[-1]
            known = known_options(section, auth_type)
            for key in values:
                if key.replace("-", "_") not in known:
                    findings.append(Finding(
                        path, section, key,
                        _closest(key, known)))
        elif section != SHARED_SECTION and section not in foreign:
            like = difflib.get_close_matches(section, sorted(owned), n=1,
                                             cutoff=SECTION_LIKENESS)
            if like:
                findings.append(Finding(path, section, None, like[0]))
    return findings


def files_of(conf):
    """The files a parsed ConfigOpts read: --config-file ones (or the
    default ones found), then the *.conf of each --config-dir, in the
    order oslo.config reads them."""
    paths = list(conf.config_file or ())
    for folder in conf.config_dir or ():
        paths.extend(sorted(str(p) for p in pathlib.Path(folder).glob(
            "*.conf")))
    return [p for p in paths if os.path.isfile(p)]


def _value_source(conf, section, name):
    """Where the value of an option came from: its OS_* variable, else
    the last file that sets it, else the command line."""
    variable = f"OS_{section.upper()}__{name.upper()}"
    if variable in os.environ:
        return variable
    for path in reversed(files_of(conf)):
        if name in _read(path).get(section, {}):
            return path
    return "command line"


def _read_value(conf, section, group, name):
    """The value of one option; ConfigCheckError when it does not
    convert to the option's type."""
    try:
        return getattr(group, name)
    except (cfg.Error, ValueError) as exc:
        reason = exc.__context__ or exc
        where = _value_source(conf, section, name)
        raise ConfigCheckError(where, f"[{section}] {name}",
                               f"invalid value: {reason}") from None


def check_values(conf):
    """Read every option ``conf`` registers, so that a value which does
    not convert to its option's type stops the command now, with a
    ConfigCheckError naming where it came from (file or OS_* variable),
    the section and the option, rather than a traceback later."""
    for name in list(conf):
        value = _read_value(conf, SHARED_SECTION, conf, name)
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            for option in list(value):
                _read_value(conf, name, value, option)


def _registered(conf):
    """(section, option) of every option ``conf`` registers."""
    found = set()
    for name in list(conf):
        value = getattr(conf, name, None)
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            found.update((name, option) for option in list(value))
        else:
            found.add((SHARED_SECTION, name))
    return found


def check_file_values(conf):
    """The values the files give gantt's options that this command does
    not register (another gantt command's, such as gantt-scheduler's
    [scheduler] workers read by gantt-manage), converted as the option
    would convert them: a bad one stops every command alike, with a
    ConfigCheckError naming the file, the section and the option."""
    registered = _registered(conf)
    declared = gantt_opts()
    for path in files_of(conf):
        for section, values in _read(path).items():
            opts = declared.get(section, {})
            for key, given in values.items():
                name = key.replace("-", "_")
                opt = opts.get(name)
                if opt is None or (section, opt.dest) in registered:
                    continue
                for value in given if opt.multi else given[-1:]:
                    if "$" in value:
                        continue  # substituted when the option is read
                    try:
                        opt.type(value)
                    except ValueError as exc:
                        raise ConfigCheckError(
                            path, f"[{section}] {key}",
                            f"invalid value: {exc}") from None


# How like an option's name an unknown one in [DEFAULT] must be to be
# taken for it (transport_ulr for transport_url).
OPTION_LIKENESS = 0.8


def misspelt_shared_option(conf, name, consequence):
    """When no file sets ``[DEFAULT] name`` (a registered option) but one
    sets an unknown option of [DEFAULT] much like it, a ConfigCheckError
    naming that file and option, the option meant and ``consequence``
    (what the default would do instead). [DEFAULT] is shared with
    oslo.log, oslo.messaging and Nova's services, so its unknown options
    are not reported in general; a near miss of an option whose default
    would quietly do the wrong thing is."""
    files = files_of(conf)
    sections = [(path, _read(path).get(SHARED_SECTION, {}))
                for path in files]
    if any(name in values for _, values in sections):
        return
    registered = {option for section, option in _registered(conf)
                  if section == SHARED_SECTION}
    for path, values in sections:
        for key in values:
            option = key.replace("-", "_")
            if option in registered:
                continue
            if difflib.SequenceMatcher(None, option, name).ratio() >= \
                    OPTION_LIKENESS:
                raise ConfigCheckError(
                    path, f"[{SHARED_SECTION}] {key}",
                    f"unknown option (did you mean {name}?); without "
                    f"{name} {consequence}")


def check_state_path_name(conf):
    """A misspelt ``[DEFAULT] state_path`` (stat_path = ...) would put
    the embedded SQLite database in the default directory: refused
    (ConfigCheckError) when the database is the embedded one."""
    try:
        if conf.placement_database.connection:
            return
    except cfg.NoSuchOptError:
        return
    misspelt_shared_option(
        conf, "state_path", "the embedded database goes to the default "
        f"directory, {conf.state_path}")


def register(conf):
    """The --strict option (also ``strict`` in [DEFAULT])."""
    conf.register_cli_opt(conf_mod.STRICT_OPT)


def check(conf, warn, strict=None):
    """Check what ``conf`` (parsed) read: every value converts
    (check_values; check_file_values for gantt's options this command
    does not register), and the files name only options and sections gantt
    knows. Calls ``warn(line)`` for each unknown one; in strict mode
    they are errors: ConfigCheckError after them all."""
    check_values(conf)
    check_file_values(conf)
    strict = conf.strict if strict is None else strict
    findings = [f for path in files_of(conf) for f in check_file(path)]
    kind = "error" if strict else "warning"
    for finding in findings:
        warn(f"{kind}: {finding}")
    if strict and findings:
        raise ConfigCheckError(
            None, None, f"{len(findings)} unknown option(s) or section(s) "
                        "in the config files; --strict makes them an error")
    return findings
