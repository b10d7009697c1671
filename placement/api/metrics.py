"""Prometheus metrics of the Placement API (prometheus-client), served
at ``GET /metrics`` without authentication when ``[api] metrics`` is on.

- ``gantt_api_requests_total{route,method,status}``: requests answered,
  by route template (``/resource_providers/{uuid}``, never the uuid
  itself), method and status code;
- ``gantt_api_request_seconds{route,method}``: their latency;
- ``gantt_api_allocation_candidates``: allocation requests per computed
  allocation candidates answer, and
  ``gantt_api_candidates_cache_hits_total`` for answers served from the
  answer cache.

Under a pre-forking server every worker counts its own requests; with
``PROMETHEUS_MULTIPROC_DIR`` set (gantt-placement-api sets it for its
workers) each writes there and ``/metrics`` reads them all, so that
whichever worker answers the scrape reports the whole server.
prometheus_client chooses its storage when first imported, so it is
imported here only when the application is built, in the worker.
"""

import os
import time

ROUTE_KEY = "gantt.route"
CANDIDATES_KEY = "gantt.candidates"
CACHE_HIT_KEY = "gantt.candidates_cached"
PATH = "/metrics"
MULTIPROC_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"

# Seconds: from a cached GET (well under a millisecond) to a large
# candidates answer or a reshape.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                   0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CANDIDATE_BUCKETS = (0, 1, 5, 10, 50, 100, 500, 1000, 5000, 10000)


class ApiMetrics:
    """The API's metrics in a registry of their own (not the library's
    global one: several applications in one process, as in the tests,
    each count their own)."""

    def __init__(self):
        import prometheus_client as prom

        self._prom = prom
        self.registry = prom.CollectorRegistry()
        self.requests = prom.Counter(
            "gantt_api_requests", "Requests answered by the Placement API.",
            ["route", "method", "status"], registry=self.registry)
        self.latency = prom.Histogram(
            "gantt_api_request_seconds",
            "Time to answer a Placement API request.",
            ["route", "method"], buckets=LATENCY_BUCKETS,
            registry=self.registry)
        self.candidates = prom.Histogram(
            "gantt_api_allocation_candidates",
            "Allocation requests in a computed allocation candidates "
            "answer.", buckets=CANDIDATE_BUCKETS, registry=self.registry)
        self.cache_hits = prom.Counter(
            "gantt_api_candidates_cache_hits",
            "Allocation candidates answers served from the answer cache.",
            registry=self.registry)

    def exposition(self):
        """(body, content type) of a scrape: every worker's figures when
        they share a multiprocess directory, else this process's."""
        prom = self._prom
        registry = self.registry
        if os.environ.get(MULTIPROC_VARIABLE):
            from prometheus_client import multiprocess
            registry = prom.CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
        return prom.generate_latest(registry), prom.CONTENT_TYPE_LATEST

    def observe(self, environ, status, seconds):
        route = environ.get(ROUTE_KEY) or "unmatched"
        method = environ.get("REQUEST_METHOD", "-")
        self.requests.labels(route, method, status).inc()
        self.latency.labels(route, method).observe(seconds)
        if CANDIDATES_KEY in environ:
            self.candidates.observe(environ[CANDIDATES_KEY])
        if environ.get(CACHE_HIT_KEY):
            self.cache_hits.inc()


class Metrics:
    """WSGI middleware: answer GET /metrics, count every other request.
    ``route_of(path)``: the route template of a request refused before
    the dispatcher named it (a 401, a bad microversion)."""

    def __init__(self, application, metrics, route_of):
        self.application = application
        self.metrics = metrics
        self.route_of = route_of

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") == PATH:
            return self._scrape(environ, start_response)
        started = time.monotonic()
        seen = {}

        def start(status, headers, exc_info=None):
            seen["status"] = status.split(" ", 1)[0]
            return start_response(status, headers, exc_info)

        body = self.application(environ, start)
        if ROUTE_KEY not in environ:
            environ[ROUTE_KEY] = self.route_of(environ.get("PATH_INFO", ""))
        self.metrics.observe(environ, seen.get("status", "-"),
                             time.monotonic() - started)
        return body

    def _scrape(self, environ, start_response):
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed",
                           [("Allow", "GET, HEAD"),
                            ("Content-Type", "text/plain"),
                            ("Content-Length", "0")])
            return [b""]
        body, content_type = self.metrics.exposition()
        start_response("200 OK", [("Content-Type", content_type),
                                  ("Content-Length", str(len(body)))])
        return [body] if environ["REQUEST_METHOD"] == "GET" else [b""]
