"""Does gantt answer what a running placement service answers?

After an import (placement.adopt.importer), gantt's REST API, run in
this process on its own database, and the other service, over HTTP, are
asked the same GETs: the resource classes and traits, every provider
(itself with its generation, parent and root; its inventories, traits,
aggregates, usages and allocations), every consumer's allocations,
every project's usages, and allocation candidates for queries built
from the cloud's own classes and traits. The answers are compared after
putting in order what placement leaves unordered.
"""

import json
import logging
import urllib.parse

import requests
import webob

from placement.adopt import cloud_auth

PROVIDER_PATHS = ("", "/inventories", "/traits", "/aggregates", "/usages",
                  "/allocations")
# Classes that make a query of their own, at most; one query per trait
# in use, at most.
MAX_CLASS_QUERIES = 20
MAX_TRAIT_QUERIES = 20


class VerifyError(Exception):
    """The other service cannot be asked (unreachable, refused)."""


class GanttSide:
    """gantt's REST API on ``store``, in this process."""

    def __init__(self, conf, store, version):
        # Imported here: gantt-manage loads this module for its options,
        # and the API application is a second of imports every command
        # would pay.
        from placement.api import app as app_mod
        from placement.candidates import engine as engine_mod

        conf.set_override("auth_strategy", "noauth2", group="api")
        # Thousands of in-process GETs: no access log line for each.
        logging.getLogger("placement.requestlog").setLevel(logging.WARNING)
        self.engine = engine_mod.CandidatesEngine(store, conf)
        self.app = app_mod.make_app(conf, store=store, engine=self.engine)
        self.version = version

    def get(self, path):
        request = webob.Request.blank(path)
        request.headers["x-auth-token"] = "admin"
        request.headers["openstack-api-version"] = f"placement {self.version}"
        request.headers["accept"] = "application/json"
        response = request.get_response(self.app)
        return response.status_int, (json.loads(response.body)
                                     if response.body else None)

    def close(self):
        self.engine.close()


class HttpSide:
    """A placement service over HTTP; ``token`` in X-Auth-Token (a
    string, or a callable giving each request's: a keystoneauth
    session's, renewed when it expires). ``verify`` and ``cert``:
    requests' TLS settings when given. :func:`connect` makes one from
    the command line's --against, --token and --os-cloud."""

    def __init__(self, url, token, version, timeout=30, verify=None,
                 cert=None, source=None):
        self.root = url.rstrip("/")
        self.session = requests.Session()
        if verify is not None:
            self.session.verify = verify
        if cert is not None:
            self.session.cert = cert
        self.headers = {"accept": "application/json",
                        "openstack-api-version": f"placement {version}"}
        self.token = token
        self.timeout = timeout
        self.source = source or ("--token" if token else None)

    def _headers(self, path):
        token = self.token
        if callable(token):
            try:
                token = token()
            except cloud_auth.AuthError as exc:
                raise VerifyError(f"GET {self.root}{path}: {exc}") from None
        if not token:
            return self.headers
        return dict(self.headers, **{"x-auth-token": token})

    def get(self, path):
        headers = self._headers(path)
        try:
            response = self.session.get(self.root + path,
                                        headers=headers,
                                        timeout=self.timeout)
        except requests.RequestException as exc:
            raise VerifyError(f"GET {self.root}{path}: {exc}") from None
        if response.status_code in (401, 403):
            check = (f"the token of {self.source}" if self.source
                     else "--token or --os-cloud: none was sent")
            raise VerifyError(f"GET {self.root}{path}: "
                              f"{response.status_code} (check {check})")
        try:
            body = response.json() if response.content else None
        except ValueError:
            raise VerifyError(f"GET {self.root}{path}: not JSON "
                              f"({response.status_code})") from None
        return response.status_code, body

    def close(self):
        self.session.close()


def add_options(parser):
    """--token, --os-cloud and --os-region-name of placement verify."""
    cloud_auth.add_options(parser, "--against")


def connect(url, token, cloud, region, version, timeout=30):
    """The :class:`HttpSide` of ``placement verify``: ``url`` (--against,
    None to take placement from the cloud's service catalog) read with
    the raw ``token`` or as ``cloud`` (--os-cloud, OS_CLOUD, OS_*; see
    placement.adopt.cloud_auth) in ``region``."""
    try:
        endpoint = cloud_auth.connect(url, token=token, cloud=cloud,
                                      region=region, url_option="--against",
                                      timeout=timeout)
    except cloud_auth.AuthError as exc:
        raise VerifyError(str(exc)) from None
    return HttpSide(endpoint.url, endpoint.token, version, timeout=timeout,
                    verify=endpoint.verify, cert=endpoint.cert,
                    source=endpoint.source)


def normal(body):
    """``body`` with placement's unordered lists in order."""
    if not isinstance(body, dict):
        return body
    for request in body.get("allocation_requests", ()):
        for providers in request.get("mappings", {}).values():
            providers.sort()
    if isinstance(body.get("allocation_requests"), list):
        body["allocation_requests"].sort(key=json.dumps)
    for summary in (body.get("provider_summaries") or {}).values():
        if isinstance(summary.get("traits"), list):
            summary["traits"].sort()
    if isinstance(body.get("resource_providers"), list):
        body["resource_providers"].sort(key=lambda r: r.get("uuid", ""))
    for key in ("traits", "aggregates", "resource_classes"):
        if isinstance(body.get(key), list):
            body[key].sort(key=json.dumps)
    for error in body.get("errors", ()):
        error.pop("request_id", None)
    return body


class Comparison:
    """The GETs asked of both sides and the ones whose answers differ."""

    def __init__(self, gantt, other):
        self.gantt = gantt
        self.other = other
        self.asked = 0
        self.differences = []

    def ask(self, path):
        """Both answers to GET ``path``; a difference is recorded. Returns
        the other service's body (what the walk follows)."""
        self.asked += 1
        ours = self.gantt.get(path)
        theirs = self.other.get(path)
        ours = (ours[0], normal(ours[1]))
        theirs = (theirs[0], normal(theirs[1]))
        if ours != theirs:
            self.differences.append(f"{path}: {_what_differs(ours, theirs)}")
        return ours[1], theirs[1]


def _what_differs(ours, theirs):
    if ours[0] != theirs[0]:
        return f"status {ours[0]} here, {theirs[0]} there"
    a, b = ours[1], theirs[1]
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        return "; ".join(_first_difference(k, a.get(k), b.get(k))
                         for k in keys)
    return _first_difference("body", a, b)


def _first_difference(where, a, b):
    """'where.path: a here, b there' at the first place ``a`` and ``b``
    differ, going down through objects they both have."""
    while isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        if not keys:
            break
        where, a, b = f"{where}.{keys[0]}", a.get(keys[0]), b.get(keys[0])
    return f"{where}: {_short(a)} here, {_short(b)} there"


def _short(value, limit=120):
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "..."


def run(gantt, other):
    """Compare everything (see the module doc); the Comparison."""
    cmp = Comparison(gantt, other)
    cmp.ask("/resource_classes")
    cmp.ask("/traits")
    ours, theirs = cmp.ask("/resource_providers")
    uuids = sorted({r["uuid"] for body in (ours, theirs)
                    for r in (body or {}).get("resource_providers", ())})
    consumers, classes, traits = set(), {}, set()
    for uuid in uuids:
        for what in PROVIDER_PATHS:
            ours, theirs = cmp.ask(f"/resource_providers/{uuid}{what}")
            for body in (ours, theirs):
                body = body or {}
                if what == "/allocations":
                    consumers.update(body.get("allocations", {}))
                elif what == "/inventories":
                    for rc in body.get("inventories", {}):
                        classes.setdefault(rc, uuid)
                elif what == "/traits":
                    traits.update((t, uuid) for t in body.get("traits", ()))
    projects = set()
    for consumer in sorted(consumers):
        for body in cmp.ask(f"/allocations/{consumer}"):
            if (body or {}).get("project_id"):
                projects.add(body["project_id"])
    for project in sorted(projects):
        cmp.ask("/usages?" + urllib.parse.urlencode({"project_id": project}))
    for query in candidate_queries(classes, traits):
        cmp.ask("/allocation_candidates?" + query)
    return cmp


def candidate_queries(classes, traits):
    """Queries from the cloud's own classes ({class: a provider with
    it}) and traits ({(trait, provider)}): one unit of each class alone,
    the usual compute trio together, and each trait required with one
    unit of a class of the provider that has it (or of VCPU)."""
    queries = [f"resources={rc}:1" for rc in sorted(classes)
               ][:MAX_CLASS_QUERIES]
    trio = [rc for rc in ("VCPU", "MEMORY_MB", "DISK_GB") if rc in classes]
    if len(trio) > 1:
        queries.append("resources=" + ",".join(f"{rc}:1" for rc in trio))
    by_provider = {}
    for rc, uuid in classes.items():
        by_provider.setdefault(uuid, rc)
    for trait, uuid in sorted(traits)[:MAX_TRAIT_QUERIES]:
        rc = by_provider.get(uuid, "VCPU" if "VCPU" in classes else None)
        if rc:
            queries.append(f"resources={rc}:1&required={trait}")
    return list(dict.fromkeys(queries))
