"""Minimal stand-ins for the image (Glance) and network (Neutron)
services, for the Nova stack test.

``python standins.py PORT`` serves both on one loopback port: the image
API under /image, the network API under /network. CI has neither
service, and Nova only needs a few answers from them: one public raw
image, and a network service where nothing exists (servers are booted
with ``networks: none``, so Nova asks for ports only to find there are
none). Every request is logged, so a request the stand-in does not know
shows up in its log with the 404 it got. Standard library only: it runs
under any Python.
"""

import http.server
import json
import re
import sys
import urllib.parse

IMAGE_ID = "5b0a2d0e-7c4e-4d8e-9a57-3f3a1c2b9e10"
IMAGE = {
    "id": IMAGE_ID,
    "name": "stack-image",
    "status": "active",
    "visibility": "public",
    "protected": False,
    "os_hidden": False,
    "disk_format": "raw",
    "container_format": "bare",
    "size": 1048576,
    "virtual_size": 1048576,
    "min_disk": 0,
    "min_ram": 0,
    "checksum": "0" * 32,
    "owner": "admin",
    "tags": [],
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
    "file": f"/v2/images/{IMAGE_ID}/file",
    "self": f"/v2/images/{IMAGE_ID}",
    "schema": "/v2/schemas/image",
}
# glanceclient checks images against this schema, and Nova takes the
# attributes it lists for the image's own (the rest become image
# properties): list every attribute of IMAGE, each allowing any value.
IMAGE_SCHEMA = {"name": "image",
                "properties": {name: {} for name in IMAGE},
                "additionalProperties": {"type": "string"}}


def _image(path, query):
    if path == "/v2/schemas/image":
        return 200, IMAGE_SCHEMA
    if path == f"/v2/images/{IMAGE_ID}":
        return 200, IMAGE
    if path == "/v2/images":
        return 200, {"images": [IMAGE], "schema": "/v2/schemas/images",
                     "first": "/v2/images"}
    return None


# Collections the network stand-in answers, always empty.
_EMPTY_LISTS = ("ports", "networks", "subnets", "floatingips",
                "security-groups", "security_groups", "trunks",
                "segments", "qos/policies")


def _network(path, query):
    path = re.sub(r"\.json$", "", path)
    if path in ("", "/"):
        return 200, {"versions": [{"id": "v2.0", "status": "CURRENT",
                                   "links": []}]}
    if path == "/v2.0/extensions":
        return 200, {"extensions": []}
    match = re.fullmatch(r"/v2\.0/quotas/[^/]+", path)
    if match:
        return 200, {"quota": {"port": -1, "network": -1}}
    name = path.removeprefix("/v2.0/")
    if name in _EMPTY_LISTS:
        return 200, {name.replace("-", "_").split("/")[-1]: []}
    return None


SERVICES = {"/image": _image, "/network": _network}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self):
        url = urllib.parse.urlsplit(self.path)
        found = None
        for prefix, service in SERVICES.items():
            if url.path == prefix or url.path.startswith(prefix + "/"):
                rest = url.path[len(prefix):]
                found = service(rest, urllib.parse.parse_qs(url.query))
                break
        if self.command != "GET" and found is not None:
            found = None
        status, body = found or (404, {"error": "not in the stand-in"})
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _drain(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)

    def do_GET(self):
        self._answer()

    def do_POST(self):
        self._drain()
        self._answer()

    def do_PUT(self):
        self._drain()
        self._answer()

    def do_DELETE(self):
        self._answer()

    def log_message(self, format, *args):
        sys.stdout.write("%s %s\n" % (self.log_date_time_string(),
                                      format % args))
        sys.stdout.flush()


def main(port):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"stand-ins listening on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]))
