"""Who is asking: authentication middleware and the request context.

``[api] auth_strategy = noauth2`` (the embedded default) believes the
``x-auth-token`` header: ``user`` or ``user:project``; roles come from
``x-roles`` (a token of ``admin`` alone means the admin role) and an
``x-project-id`` header names the project explicitly. ``keystone`` puts
keystonemiddleware's auth_token in front, configured by
``[keystone_authtoken]``. The version document at the root is public
either way.
"""

from oslo_config import cfg
from oslo_context import context as context_mod

from placement.api import errors

CONTEXT_KEY = "placement.context"
KEYSTONE_GROUP = "keystone_authtoken"


class AuthConfigError(cfg.Error):
    """``auth_strategy = keystone`` with a [keystone_authtoken] that
    cannot check a token."""

    def __str__(self):
        return self.msg


def check_conf(conf):
    """With ``[api] auth_strategy = keystone``, an auth plugin in
    [keystone_authtoken] that loads (its auth_type and the options that
    plugin requires, such as auth_url): keystonemiddleware needs it to
    check a token and to name Keystone in a 401's WWW-Authenticate, and
    without it every request is a 500. AuthConfigError otherwise, at
    start."""
    if conf.api.auth_strategy != "keystone":
        return
    from keystoneauth1 import exceptions, loading

    group = getattr(conf, KEYSTONE_GROUP)
    if not group.auth_type and not group.auth_section:
        raise AuthConfigError(
            "[api] auth_strategy = keystone needs [keystone_authtoken] "
            "auth_type (e.g. password) and that plugin's options (auth_url, "
            "username, ...) to check tokens with Keystone")
    where = f"[{group.auth_section or KEYSTONE_GROUP}]"
    try:
        plugin = loading.load_auth_from_conf_options(conf, KEYSTONE_GROUP)
    except exceptions.NoMatchingPlugin as exc:
        raise AuthConfigError(
            f"{where} auth_type: no auth plugin {exc.name!r}") from None
    except exceptions.MissingRequiredOptions as exc:
        names = ", ".join(opt.dest for opt in exc.options)
        raise AuthConfigError(
            f"{where}: the auth plugin needs {names} (for [api] "
            "auth_strategy = keystone)") from None
    if plugin is None:
        raise AuthConfigError(
            f"{where}: no auth plugin (set auth_type) for [api] "
            "auth_strategy = keystone")


def is_root(environ):
    return environ.get("PATH_INFO", "") in ("", "/")


def _unauthorized(environ, start_response):
    return errors.respond(
        environ, start_response, 401,
        "This server could not verify that you are authorized to access "
        "the document you requested.")


class NoAuth:
    """Fake authentication from request headers (see the module doc)."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        if is_root(environ):
            return self.application(environ, start_response)
        token = environ.get("HTTP_X_AUTH_TOKEN")
        if token is None:
            return _unauthorized(environ, start_response)
        user_id, _sep, project_id = token.partition(":")
        project_id = project_id or user_id
        if "HTTP_X_ROLES" in environ:
            roles = environ["HTTP_X_ROLES"]
        else:
            roles = "admin" if user_id == "admin" else ""
        environ["HTTP_X_USER_ID"] = user_id
        environ["HTTP_X_ROLES"] = roles
        # A system-scoped request has no project unless one is named.
        if not environ.get("HTTP_OPENSTACK_SYSTEM_SCOPE"):
            environ["HTTP_X_TENANT_ID"] = project_id
        return self.application(environ, start_response)


class Keystone:
    """keystonemiddleware's auth_token, skipped for the root document."""

    def __init__(self, application, conf):
        from keystonemiddleware import auth_token
        self.application = application
        self.protected = auth_token.AuthProtocol(
            application, {"oslo_config_config": conf})

    def __call__(self, environ, start_response):
        if is_root(environ):
            return self.application(environ, start_response)
        return self.protected(environ, start_response)


class Context:
    """Build the oslo.context RequestContext from the identity headers
    the authentication layer left; 401 when there is no user."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        ctx = context_mod.RequestContext.from_environ(environ)
        if ctx.user_id is None and not is_root(environ):
            return _unauthorized(environ, start_response)
        environ[CONTEXT_KEY] = ctx
        return self.application(environ, start_response)


def wrap(application, conf):
    """``application`` behind the configured authentication."""
    application = Context(application)
    if conf.api.auth_strategy == "keystone":
        return Keystone(application, conf)
    return NoAuth(application)
