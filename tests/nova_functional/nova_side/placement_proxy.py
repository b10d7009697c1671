"""The one change the gantt mode makes to Nova's functional tests: what
answers placement's made-up endpoint.

Runs inside the Nova virtualenv. Nova's PlacementFixture
(nova.tests.functional.fixtures) extends upstream Placement's
(placement.tests.functional.fixtures.placement), which sets up its
configuration and database, then builds placement's WSGI application
with ``deploy.loadapp(conf)`` and has wsgi-intercept serve it at
``http://<uuid>/placement``. Nova's report client and the tests' own
placement client reach that address through ``requests``.

:func:`install` puts a stand-in for ``deploy`` in the upstream fixture's
module only: its ``loadapp`` answers with :class:`Proxy`, a WSGI
application that forwards each request, as it came, to a
gantt-placement-api process the runner started on a fresh database for
this fixture, and returns that server's answer as it came. Everything
else of both fixtures runs unchanged (upstream's database fixture too,
though nothing reads that database then).
"""

import http.client
import urllib.parse

# Hop-by-hop headers: about one connection, which the proxy does not
# share with its caller (PEP 3333 forbids them in a WSGI answer).
HOP_BY_HOP = frozenset((
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
    "te", "trailer", "transfer-encoding", "upgrade"))
TIMEOUT_S = 120


def install(new_server, recorder=None):
    """Serve placement's endpoint from ``new_server()`` (a function that
    answers the URL of a fresh gantt-placement-api), or, when it is None,
    from upstream's application; ``recorder`` (traffic.Recorder) sees
    every exchange either way."""
    from placement.tests.functional.fixtures import placement as fixture

    fixture.deploy = _Deploy(fixture.deploy, new_server, recorder)


class _Deploy:
    """Stands for placement.deploy in the fixture's module."""

    def __init__(self, real, new_server, recorder):
        self._real = real
        self._new_server = new_server
        self._recorder = recorder

    def __getattr__(self, name):
        return getattr(self._real, name)

    def loadapp(self, conf):
        if self._new_server is None:
            app = self._real.loadapp(conf)
        else:
            app = Proxy(self._new_server())
        if self._recorder is not None:
            app = self._recorder.wrap(app)
        return app


def request_target(environ):
    """The path and query the client sent: wsgi-intercept keeps the
    request line's target as RAW_URI; else it is rebuilt."""
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if raw:
        return raw
    path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
    target = urllib.parse.quote(path.encode("latin-1"), safe="/;=,:@!$&'()*+")
    query = environ.get("QUERY_STRING")
    return f"{target}?{query}" if query else target


def request_headers(environ):
    """[(name, value)] of the request's headers, Host included."""
    headers = []
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            name = key[5:].replace("_", "-").title()
            if name.lower() not in HOP_BY_HOP:
                headers.append((name, value))
    for key, name in (("CONTENT_TYPE", "Content-Type"),
                      ("CONTENT_LENGTH", "Content-Length")):
        if environ.get(key):
            headers.append((name, environ[key]))
    return headers


def request_body(environ):
    length = environ.get("CONTENT_LENGTH")
    if not length:
        return b""
    return environ["wsgi.input"].read(int(length))


class Proxy:
    """A WSGI application answering every request with what the server at
    ``url`` answers to it."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.url = url
        self.host, self.port = parts.hostname, parts.port

    def __call__(self, environ, start_response):
        body = request_body(environ)
        # A connection per request: the servers are on loopback, and a
        # kept connection the server timed out would need retrying.
        conn = http.client.HTTPConnection(self.host, self.port,
                                          timeout=TIMEOUT_S)
        try:
            conn.putrequest(environ["REQUEST_METHOD"],
                            request_target(environ), skip_host=True,
                            skip_accept_encoding=True)
            for name, value in request_headers(environ):
                conn.putheader(name, value)
            conn.endheaders(body or None)
            answer = conn.getresponse()
            data = answer.read()
        finally:
            conn.close()
        headers = [(name, value) for name, value in answer.getheaders()
                   if name.lower() not in HOP_BY_HOP]
        start_response(f"{answer.status} {answer.reason}", headers)
        return [data]
