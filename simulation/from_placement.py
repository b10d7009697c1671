"""Read a live placement endpoint into a cloud document.

``gantt-simulate run --from-placement URL`` models the cloud behind a
running placement service (gantt's own REST API or OpenStack Placement)
instead of a cloud file. :func:`fetch` reads that service over HTTP and
returns a plain dict in the cloud-file format (see README, "Cloud files"),
which the caller checks and loads like a file::

    doc = from_placement.fetch(url, token="admin")
    cloud = loader.parse(doc, path=url)
    loader.load(store, cloud)

Where the endpoint is and which token goes to it come from the command
line as OpenStack clients take them (placement.adopt.cloud_auth): a raw
``--token`` with the URL, or a cloud (``--os-cloud``, ``OS_CLOUD``,
``OS_*``) whose Keystone gives the token and, without a URL, the
placement endpoint from its service catalog; :func:`read` does both.

Placement has no bulk read of inventories, traits or aggregates, so every
provider costs a few GETs. They go over one keep-alive session from a
small thread pool; the results are put back in a fixed order, so the same
cloud always gives the same document.
"""

import concurrent.futures
import re

import requests
import requests.adapters

from placement.adopt import cloud_auth

# Parallel GETs of the per-provider and per-consumer reads.
WORKERS = 8

# parent_provider_uuid appears in provider listings from 1.14; everything
# else read here (traits 1.6, consumer project/user 1.12) is older.
MIN_VERSION = (1, 14)

# Inventory fields a cloud file takes; a newer server may add others.
_INVENTORY_FIELDS = ("total", "reserved", "min_unit", "max_unit",
                     "step_size", "allocation_ratio")

# Resource classes whose presence in a tree makes its root a compute node.
_COMPUTE_CLASSES = frozenset({"VCPU", "PCPU", "MEMORY_MB"})

# What placement (1.38+) reports for a consumer created without a type;
# real types are upper case, so this never names one.
_UNTYPED = "unknown"


class _FromCatalog(str):
    """--from-placement given without a URL."""


# argparse's const for a --from-placement without URL: the endpoint
# comes from the cloud's service catalog.
FROM_CATALOG = _FromCatalog("the service catalog")


class PlacementReadError(Exception):
    """A read of the placement endpoint that failed; names the URL."""

    def __init__(self, url, message):
        super().__init__(f"GET {url}: {message}")
        self.url = url
        self.message = message


class EndpointError(PlacementReadError):
    """No endpoint or no token to read it with (the cloud cannot be
    read, Keystone unreachable or refusing); one line, no URL prefix."""

    def __init__(self, message):
        Exception.__init__(self, message)
        self.url = None
        self.message = message


def read(url=None, token=None, cloud=None, region=None, **kwargs):
    """(cloud document, endpoint URL) of the placement service that
    ``url``, ``token``, ``cloud`` and ``region`` (the command line's
    --from-placement, --token, --os-cloud, --os-region-name) name; see
    placement.adopt.cloud_auth. ``kwargs`` go to :func:`fetch`."""
    if isinstance(url, _FromCatalog):
        url = None
    try:
        endpoint = cloud_auth.connect(url, token=token, cloud=cloud,
                                      region=region,
                                      url_option="--from-placement")
    except cloud_auth.AuthError as exc:
        raise EndpointError(str(exc)) from None
    return fetch(endpoint.url, token=endpoint.token, verify=endpoint.verify,
                 cert=endpoint.cert, **kwargs), endpoint.url


def fetch(url, token=None, microversion="1.39", timeout=30, session=None,
          verify=None, cert=None):
    """The cloud behind the placement endpoint ``url`` as a cloud document.

    ``token`` goes out as X-Auth-Token when given (gantt's API and
    placement with noauth2 take ``admin``); a callable gives the token
    of each request (a keystoneauth session's, renewed when it expires).
    ``verify`` and ``cert``, when given, are requests' TLS settings (a
    cloud's cacert, insecure, cert and key). ``microversion`` is lowered
    to the newest version the endpoint offers if that is older; below
    1.14 the endpoint cannot describe provider trees and the read fails.
    ``session`` (a requests.Session) is used as is and not closed.
    """
    wanted = _parse_version(microversion)
    own = session is None
    if own:
        session = _new_session(url, verify, cert)
    try:
        reader = _Reader(session, url, token, timeout)
        reader.version = _negotiate(reader, wanted)
        return _read_cloud(reader)
    finally:
        if own:
            session.close()


def _parse_version(text):
    match = re.fullmatch(r"(\d+)\.(\d+)", str(text).strip())
    if not match:
        raise ValueError(f"not a placement microversion: {text!r}")
    return int(match.group(1)), int(match.group(2))


def _new_session(url, verify=None, cert=None):
    session = requests.Session()
    # Proxy and CA bundle settings from the environment, looked up once:
    # requests would scan the environment again on every request, a
    # quarter of its time per GET.
    settings = session.merge_environment_settings(url, {}, None, None, None)
    session.proxies.update(settings["proxies"])
    session.verify = settings["verify"] if verify is None else verify
    if cert is not None:
        session.cert = cert
    session.trust_env = False
    # One pooled connection per worker, so the pool reuses them all.
    adapter = requests.adapters.HTTPAdapter(pool_connections=1,
                                            pool_maxsize=WORKERS)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


class _Reader:
    """GETs of JSON documents under one endpoint root."""

    def __init__(self, session, url, token, timeout):
        self.session = session
        self.root = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.version = None  # (major, minor) once negotiated

    def headers(self):
        headers = {"Accept": "application/json"}
        if self.version is not None:
            headers["OpenStack-API-Version"] = (
                "placement %d.%d" % self.version)
        token = self.token() if callable(self.token) else self.token
        if token is not None:
            headers["X-Auth-Token"] = token
        return headers

    def get(self, path, key=None):
        """The JSON body of GET ``path``, or its member ``key``."""
        url = self.root + path
        try:
            headers = self.headers()
        except cloud_auth.AuthError as exc:
            raise PlacementReadError(url, str(exc)) from None
        try:
            response = self.session.get(url, headers=headers,
                                        timeout=self.timeout)
        except requests.Timeout:
            raise PlacementReadError(
                url, f"no answer within {self.timeout} s") from None
        except requests.ConnectionError as exc:
            reason = _connection_reason(exc)
            raise PlacementReadError(
                url, f"connection failed: {reason}") from None
        except requests.RequestException as exc:
            raise PlacementReadError(url, str(exc)) from None
        if not 200 <= response.status_code < 300:
            raise PlacementReadError(url, _status_message(response))
        try:
            body = response.json()
        except ValueError:
            raise PlacementReadError(url, _not_json(response)) from None
        if key is None:
            return body
        if not isinstance(body, dict) or key not in body:
            raise PlacementReadError(
                url, f"the answer has no {key!r}; is this a placement "
                     f"endpoint?")
        return body[key]


def _connection_reason(exc):
    # requests wraps urllib3's error, whose text starts with the repr of
    # a connection object (the URL says that already).
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    text = str(reason if reason is not None else exc)
    return re.sub(r"^(<[^>]*>|\w+\([^)]*\)): ", "", text)


def _status_message(response):
    message = f"HTTP {response.status_code}"
    if response.reason:
        message += f" {response.reason}"
    detail = _error_detail(response)
    return f"{message}: {detail}" if detail else message


def _error_detail(response):
    """Title and detail of a placement error body, on one line."""
    try:
        error = response.json()["errors"][0]
        parts = [str(error[k]) for k in ("title", "detail") if error.get(k)]
    except (ValueError, KeyError, IndexError, TypeError):
        return ""
    text = " ".join(" ".join(parts).split())
    return text if len(text) <= 300 else text[:297] + "..."


def _not_json(response):
    kind = response.headers.get("Content-Type", "no content type")
    start = " ".join(response.text[:80].split())
    return (f"HTTP {response.status_code} answer is not JSON ({kind}): "
            f"{start!r}")


def _negotiate(reader, wanted):
    """The microversion to read with: ``wanted``, or the endpoint's
    newest if that is older. The version document at the root needs no
    token and no version header."""
    versions = reader.get("/", "versions")
    try:
        newest = _parse_version(versions[0]["max_version"])
    except (IndexError, KeyError, TypeError, ValueError):
        # Not the usual document; let the reads say what is wrong.
        return wanted
    version = min(wanted, newest)
    if version < MIN_VERSION:
        raise PlacementReadError(
            reader.root + "/",
            "placement %d.%d is the newest version this endpoint offers; "
            "reading provider trees needs %d.%d" % (*newest, *MIN_VERSION))
    return version


def _parallel(fn, items):
    """[fn(item) for item in items], WORKERS at a time, in order."""
    if len(items) < 2:
        return [fn(item) for item in items]
    pool = concurrent.futures.ThreadPoolExecutor(WORKERS)
    try:
        return list(pool.map(fn, items))
    finally:
        # After a failure, do not start the reads still queued.
        pool.shutdown(cancel_futures=True)


def _read_cloud(reader):
    listed = reader.get("/resource_providers", "resource_providers")
    ordered = _parents_first(listed)
    _check_names(reader, ordered)
    details = _parallel(lambda rp: _provider_details(reader, rp), ordered)
    entries = [_provider_entry(rp, d)
               for rp, d in zip(ordered, details, strict=True)]
    _mark_compute_roots(entries)
    consumers = sorted({c for d in details for c in d["consumers"]})
    allocations = [a for a in _parallel(
        lambda c: _consumer_entry(reader, c), consumers) if a is not None]
    return {
        "resource_classes": _custom_classes(reader),
        "traits": _custom_traits(reader),
        "providers": entries,
        "allocations": allocations,
    }


def _parents_first(listed):
    """Providers depth first from the roots; roots and siblings sorted by
    name, then uuid."""
    by_uuid = {rp["uuid"]: rp for rp in listed}
    children = {}
    for rp in listed:
        parent = rp.get("parent_provider_uuid")
        # A parent missing from the listing (a tree changing while it is
        # read) leaves the child at the top; the loader will report it.
        key = parent if parent in by_uuid else None
        children.setdefault(key, []).append(rp)
    ordered = []
    # A stack of the providers still to visit, the next one last.
    stack = _sorted_reversed(children.get(None, []))
    while stack:
        rp = stack.pop()
        ordered.append(rp)
        stack.extend(_sorted_reversed(children.get(rp["uuid"], [])))
    return ordered


def _sorted_reversed(providers):
    return sorted(providers, key=lambda rp: (rp["name"], rp["uuid"]),
                  reverse=True)


def _check_names(reader, ordered):
    # The loader looks providers up by name or uuid in one table; a name
    # that is another provider's uuid would send references astray.
    uuids = {rp["uuid"]: rp for rp in ordered}
    for rp in ordered:
        other = uuids.get(rp["name"])
        if other is not None and other is not rp:
            raise PlacementReadError(
                reader.root + "/resource_providers",
                f"provider {rp['uuid']} is named {rp['name']!r}, the uuid "
                f"of another provider; a cloud file cannot tell them apart")


def _provider_details(reader, rp):
    base = f"/resource_providers/{rp['uuid']}"
    inventories = reader.get(base + "/inventories", "inventories")
    details = {
        "inventories": inventories,
        "traits": reader.get(base + "/traits", "traits"),
        "aggregates": reader.get(base + "/aggregates", "aggregates"),
        "consumers": [],
    }
    # Nothing can be allocated from a provider without inventory.
    if inventories:
        details["consumers"] = list(
            reader.get(base + "/allocations", "allocations"))
    return details


def _provider_entry(rp, details):
    entry = {"name": rp["name"], "uuid": rp["uuid"]}
    if rp.get("parent_provider_uuid"):
        entry["parent"] = rp["parent_provider_uuid"]
    entry["inventories"] = {
        rc: {k: inv[k] for k in _INVENTORY_FIELDS if k in inv}
        for rc, inv in sorted(details["inventories"].items())}
    entry["traits"] = sorted(details["traits"])
    entry["aggregates"] = sorted(details["aggregates"])
    # The root uuid, to find compute trees; taken out before returning.
    entry["_root"] = rp.get("root_provider_uuid") or rp["uuid"]
    return entry


def _mark_compute_roots(entries):
    """Roots with CPU or memory inventory in their tree become compute
    nodes named after the root; placement knows nothing more of them."""
    compute_roots = {e["_root"] for e in entries
                     if _COMPUTE_CLASSES & e["inventories"].keys()}
    for entry in entries:
        if "parent" not in entry and entry["uuid"] in compute_roots:
            entry["compute"] = {"host": entry["name"]}
        del entry["_root"]


def _consumer_entry(reader, consumer):
    body = reader.get(f"/allocations/{consumer}")
    allocations = body.get("allocations") if isinstance(body, dict) else None
    if not allocations:
        # Deleted since its provider was read.
        return None
    entry = {"consumer": consumer,
             "project_id": body.get("project_id"),
             "user_id": body.get("user_id")}
    if body.get("consumer_type") not in (None, _UNTYPED):
        entry["consumer_type"] = body["consumer_type"]
    entry["resources"] = {rp: dict(sorted(a["resources"].items()))
                          for rp, a in sorted(allocations.items())}
    return entry


def _custom_classes(reader):
    listed = reader.get("/resource_classes", "resource_classes")
    return sorted(rc["name"] for rc in listed
                  if rc["name"].startswith("CUSTOM_"))


def _custom_traits(reader):
    listed = reader.get("/traits?name=startswith:CUSTOM_", "traits")
    return sorted(listed)
