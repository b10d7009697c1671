"""Where a placement service is and how to authenticate to it, as
OpenStack clients find out.

``gantt-simulate --from-placement`` and ``gantt-manage placement verify
--against`` read a running placement service. They take either

- a raw token with the endpoint URL (``--token T URL``), sent as is; or
- a cloud, as the ``openstack`` client takes it: ``--os-cloud NAME``
  (default ``$OS_CLOUD``) naming an entry of ``clouds.yaml`` (found
  where openstacksdk looks: ``$OS_CLIENT_CONFIG_FILE``,
  ``./clouds.yaml``, ``~/.config/openstack/``, ``/etc/openstack/``), or
  the ``OS_*`` variables (``OS_AUTH_URL``, ``OS_USERNAME``,
  ``OS_PASSWORD``, ``OS_PROJECT_NAME``, ...). A keystoneauth session
  authenticates to Keystone, and its token goes to placement. Without a
  URL the placement endpoint comes from the service catalog (service
  type ``placement``; the cloud's interface and region, or
  ``--os-region-name``), or from the cloud's
  ``placement_endpoint_override``.

openstacksdk reads the cloud (``openstack.config``); it comes with
gantt's ``openstack`` extra and is imported only when a cloud is asked
for. Every failure is an :class:`AuthError` of one line.
"""

import contextlib
import dataclasses
import json
import logging
import os
from collections.abc import Callable

import yaml

# The other OS_* variables only choose among clouds or files: like
# openstacksdk, a cloud made of the environment needs one more.
_SELECTORS = frozenset({"OS_CLOUD", "OS_REGION_NAME", "OS_CLIENT_CONFIG_FILE",
                        "OS_CLIENT_SECURE_FILE", "OS_CLOUD_NAME"})
# Test-runner variables openstacksdk ignores too.
_IGNORED_PREFIXES = ("OS_TEST", "OS_STD", "OS_LOG")
# Where openstacksdk looks for clouds.yaml, for the error message.
_LOOKED_AT = ("./clouds.yaml", "~/.config/openstack/clouds.yaml",
              "/etc/openstack/clouds.yaml")
SERVICE_TYPE = "placement"
EXTRA_HINT = "pip install 'gantt[openstack]'"


class AuthError(Exception):
    """The endpoint or the credentials cannot be had; one line."""


@dataclasses.dataclass
class Endpoint:
    """A placement endpoint and what to send it."""

    url: str
    # The X-Auth-Token of the next request (a keystoneauth session renews
    # its token when it is about to expire), or None: none sent.
    token: Callable[[], str] | None = None
    # requests' verify and cert, from the cloud's cacert/insecure/cert.
    verify: bool | str = True
    cert: str | tuple | None = None
    # What the token came from, for messages: "--token", "cloud 'x'".
    source: str | None = None


def add_options(parser, url_option):
    """Add --token, --os-cloud and --os-region-name to ``parser``;
    ``url_option`` is the option that takes the URL (for help texts)."""
    parser.add_argument(
        "--token", default=None,
        help=f"a raw X-Auth-Token, sent as is to {url_option} URL "
             "(with gantt's API or placement under noauth2: admin); "
             "without it, the cloud's credentials are used")
    parser.add_argument(
        "--os-cloud", metavar="NAME", default=None,
        help="authenticate as the cloud NAME of clouds.yaml (default: "
             "$OS_CLOUD, else the OS_* variables such as OS_AUTH_URL); "
             f"without a URL, placement is found in its service catalog; "
             f"needs {EXTRA_HINT}")
    parser.add_argument(
        "--os-region-name", metavar="REGION", default=None,
        help="the region whose placement endpoint the catalog gives "
             "(default: $OS_REGION_NAME, else the cloud's)")


def wants_cloud(cloud=None, environ=None):
    """Whether a cloud is asked for: --os-cloud, OS_CLOUD or OS_*
    variables that describe one."""
    environ = os.environ if environ is None else environ
    return bool(cloud or environ.get("OS_CLOUD") or _auth_variables(environ))


def _auth_variables(environ):
    return sorted(k for k in environ
                  if k.startswith("OS_") and k not in _SELECTORS
                  and not k.startswith(_IGNORED_PREFIXES))


def connect(url=None, token=None, cloud=None, region=None,
            url_option="--url", timeout=30):
    """The :class:`Endpoint` to read (see the module doc).

    ``url`` (None or "" when not given), ``token``, ``cloud`` and
    ``region`` are the command line's; ``url_option`` names the URL's
    option in messages. With a URL and neither a token nor a cloud
    nothing is sent (as before clouds were read)."""
    if token:
        if cloud:
            raise AuthError("--token and --os-cloud: give one (a raw token "
                            "or the cloud's credentials)")
        if not url:
            raise AuthError(f"--token needs {url_option} URL: a raw token "
                            "comes with no service catalog to find "
                            "placement in")
        return Endpoint(url, lambda: token, source="--token")
    if url and not wants_cloud(cloud):
        return Endpoint(url)
    return _from_cloud(url, cloud, region, url_option, timeout)


@contextlib.contextmanager
def _quiet():
    # keystoneauth warns (through logging) when version discovery fails
    # before it tries the URL as given; the failure that follows is the
    # one line said.
    loggers = [logging.getLogger(name)
               for name in ("keystoneauth", "openstack")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _from_cloud(url, cloud, region, url_option, timeout):
    try:
        from keystoneauth1 import exceptions as ks_exc
        from openstack import exceptions as sdk_exc
        from openstack.config import loader as sdk_loader
    except ImportError as exc:
        raise AuthError(
            f"openstacksdk is not installed ({exc.name}); reading a cloud "
            f"(--os-cloud, OS_CLOUD, OS_*) needs gantt's 'openstack' "
            f"extra: {EXTRA_HINT}") from None
    with _quiet():
        try:
            config = sdk_loader.OpenStackConfig()
        except sdk_exc.ConfigException as exc:
            raise AuthError(f"clouds.yaml: {_one_line(exc)}") from None
        except Exception as exc:  # YAML or schema errors of the file
            raise AuthError(f"clouds.yaml: cannot be read: "
                            f"{_one_line(exc)}") from None
        name, said = _cloud_name(config, cloud, url_option,
                                 sdk_loader.CONFIG_FILES)
        label = (f"cloud {name!r}" if name != config.envvar_key
                 else "the cloud of the OS_* variables")
        region = region or os.environ.get("OS_REGION_NAME") or None
        try:
            found = config.get_one(cloud=name, region_name=region)
        except (sdk_exc.ConfigException, ks_exc.ClientException) as exc:
            raise AuthError(f"{label}{said}: {_one_line(exc)}") from None
        auth_url = found.get_auth_args().get("auth_url")
        keystone = f"Keystone at {auth_url}" if auth_url else "Keystone"
        try:
            session = found.get_session()
            session.timeout = timeout
            session.get_token()
            if not url:
                url = found.get_endpoint(SERVICE_TYPE) or _from_catalog(
                    found, session, ks_exc)
        except ks_exc.Unauthorized as exc:
            raise AuthError(
                f"{keystone} refused the credentials of {label}"
                f"{said} (HTTP {exc.http_status or 401})") from None
        except ks_exc.HttpError as exc:
            raise AuthError(
                f"{keystone} answered HTTP {exc.http_status} for {label}"
                f"{said}: {_one_line(exc)}") from None
        except ks_exc.ConnectionError as exc:
            raise AuthError(f"cannot reach {keystone} ({label}{said}): "
                            f"{_reason(exc)}") from None
        except Exception as exc:  # one line, never a traceback
            # keystoneauth's own (ClientException) and the plain
            # Exception its password plugin raises without a password.
            raise AuthError(f"{label}{said}: {_one_line(exc)}") from None
    if not url:
        interface = found.get_interface(SERVICE_TYPE) or "public"
        where = found.get_region_name(SERVICE_TYPE)
        in_region = f", region {where}" if where else ""
        raise AuthError(
            f"the service catalog of {label} has no placement endpoint "
            f"(interface {interface}{in_region}); give {url_option} URL")
    return Endpoint(url.rstrip("/") or url, _renewing(session, label),
                    verify=session.verify, cert=session.cert, source=label)


def _cloud_name(config, cloud, url_option, searched):
    """(the cloud to read, how it was named for messages)."""
    if cloud:
        name, said = cloud, "--os-cloud"
    elif os.environ.get("OS_CLOUD"):
        name, said = os.environ["OS_CLOUD"], "OS_CLOUD"
    else:
        name, said = config.default_cloud, None
    known = config.get_cloud_names()
    if said is not None:
        if name not in known:
            raise AuthError(f"{said} names cloud {name!r} that "
                            f"{_files(config, searched)}")
        return name, f" from {said}"
    if name == "defaults" and not config.config_filename:
        raise AuthError(
            f"no placement endpoint: give {url_option} URL, or a cloud "
            "(--os-cloud NAME, OS_CLOUD, or OS_AUTH_URL and the other "
            "OS_* variables)")
    if name is None:
        raise AuthError(
            f"{config.config_filename} defines clouds "
            f"{', '.join(sorted(known))}: choose one with --os-cloud "
            "or OS_CLOUD")
    return name, ""


def _files(config, searched):
    """The end of 'OS_CLOUD names cloud 'x' that ...'."""
    override = os.environ.get("OS_CLIENT_CONFIG_FILE")
    if override and not os.path.exists(override):
        return (f"no clouds.yaml defines (OS_CLIENT_CONFIG_FILE names "
                f"{override}, which does not exist)")
    if not config.config_filename:
        # openstacksdk skips a file it cannot parse, with a warning.
        for path in ([override] if override else []) + list(searched):
            problem = _unreadable(path)
            if problem:
                return f"no clouds.yaml defines ({path} {problem})"
    if config.config_filename:
        defined = sorted(n for n in config.get_cloud_names()
                         if n != "envvars")
        has = f" (it has: {', '.join(defined)})" if defined else ""
        return f"{config.config_filename} does not define{has}"
    return (f"no clouds.yaml defines (none found; looked at "
            f"$OS_CLIENT_CONFIG_FILE, {', '.join(_LOOKED_AT)})")


def _unreadable(path):
    """Why the clouds.yaml at ``path`` was skipped, or None."""
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            if path.endswith("json"):
                json.load(f)
            else:
                yaml.safe_load(f)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        return f"cannot be read: {_one_line(exc)}"
    return None


def _from_catalog(found, session, ks_exc):
    try:
        return session.get_endpoint(
            service_type=SERVICE_TYPE,
            interface=found.get_interface(SERVICE_TYPE),
            region_name=found.get_region_name(SERVICE_TYPE))
    except ks_exc.EndpointNotFound:
        return None


def _renewing(session, label):
    def token():
        # The first token is at hand; a later one may need Keystone.
        try:
            return session.get_token()
        except Exception as exc:  # one line, never a traceback
            raise AuthError(f"renewing the token of {label}: "
                            f"{_one_line(exc)}") from None
    return token


def _reason(exc):
    """What failed underneath keystoneauth's connection error, short."""
    seen = set()
    stack = [exc]
    while stack:
        err = stack.pop()
        if id(err) in seen or err is None:
            continue
        seen.add(id(err))
        if isinstance(err, OSError) and err.strerror:
            return err.strerror[0].lower() + err.strerror[1:]
        stack.extend([err.__cause__, err.__context__,
                      getattr(err, "reason", None)])
        stack.extend(a for a in getattr(err, "args", ())
                     if isinstance(a, BaseException))
    return _one_line(exc)


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__
