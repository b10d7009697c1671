"""Who is asking: authentication middleware and the request context.

``[api] auth_strategy = noauth2`` (the embedded default) believes the
``x-auth-token`` header: ``user`` or ``user:project``; roles come from
``x-roles`` (a token of ``admin`` alone means the admin role) and an
``x-project-id`` header names the project explicitly. ``keystone`` puts
keystonemiddleware's auth_token in front, configured by
``[keystone_authtoken]``. The version document at the root is public
either way.
"""

from oslo_context import context as context_mod

from placement.api import errors

CONTEXT_KEY = "placement.context"


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
