"""Minimal stand-ins for the image (Glance) and network (Neutron)
services, for the Nova stack test.

``python standins.py PORT`` serves both on one loopback port: the image
API under /image, the network API under /network. CI has neither
service, and Nova only needs a few answers from them: three public raw
images (one of them for a CPU architecture no fake driver runs), the
images Nova makes itself (a shelved server's snapshot: created, read
and deleted in memory), and a network service where nothing exists
(servers are booted with ``networks: none``, so Nova asks for ports
only to find there are none). Every request is logged, so a request
the stand-in does not know shows up in its log with the 404 it got.
Standard library only: it runs
under any Python.
"""

import http.server
import json
import re
import sys
import threading
import urllib.parse
import uuid

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
# A second image any host runs (a rebuild with a new image), and one
# for a CPU architecture no fake driver reports (x86_64 only): a
# rebuild to it is refused by ImagePropertiesFilter.
IMAGE_2_ID = "0e3b6a5c-2f1d-4c7b-8e9a-6d5c4b3a2f10"
ARM_IMAGE_ID = "a7c1e2d3-4b5a-4968-8776-5a4b3c2d1e0f"
# glanceclient checks images against this schema, and Nova takes the
# attributes it lists for the image's own (the rest become image
# properties): list every attribute of IMAGE, each allowing any value.
IMAGE_SCHEMA = {"name": "image",
                "properties": {name: {} for name in IMAGE},
                "additionalProperties": {"type": "string"}}


def _with_id(image_id, **fields):
    return {**IMAGE, "id": image_id, "file": f"/v2/images/{image_id}/file",
            "self": f"/v2/images/{image_id}", **fields}


# {image id: image}; Nova adds and deletes snapshots.
IMAGES = {IMAGE_ID: IMAGE,
          IMAGE_2_ID: _with_id(IMAGE_2_ID, name="stack-image-2"),
          ARM_IMAGE_ID: _with_id(ARM_IMAGE_ID, name="stack-image-arm",
                                 hw_architecture="aarch64")}
_images_lock = threading.Lock()


def _image(method, path, query, body):
    if path == "/v2/schemas/image":
        return 200, IMAGE_SCHEMA
    if path == "/v2/images":
        if method == "POST":
            return _create_image(body)
        with _images_lock:
            return 200, {"images": list(IMAGES.values()),
                         "schema": "/v2/schemas/images",
                         "first": "/v2/images"}
    match = re.fullmatch(r"/v2/images/([^/]+)(/file)?", path)
    if not match:
        return None
    image_id, file = match.groups()
    with _images_lock:
        image = IMAGES.get(image_id)
        if image is None:
            return 404, {"error": f"no image {image_id}"}
        if file:
            # A snapshot's upload (PUT) makes it active; its data is
            # not kept.
            image["status"] = "active"
            return (204, None) if method == "PUT" else (200, "")
        if method == "DELETE":
            del IMAGES[image_id]
            return 204, None
        if method == "PATCH":
            for change in json.loads(body or "[]"):
                name = change["path"].lstrip("/")
                if change["op"] == "remove":
                    image.pop(name, None)
                else:
                    image[name] = change["value"]
        return 200, image


def _create_image(body):
    fields = json.loads(body or "{}")
    image_id = fields.pop("id", None) or str(uuid.uuid4())
    image = _with_id(image_id, **{"status": "queued", "size": 0,
                                  "virtual_size": 0, "checksum": None,
                                  "visibility": "private", **fields})
    with _images_lock:
        IMAGES[image_id] = image
    return 201, image


# Collections the network stand-in answers, always empty.
_EMPTY_LISTS = ("ports", "networks", "subnets", "floatingips",
                "security-groups", "security_groups", "trunks",
                "segments", "qos/policies")


def _network(method, path, query, body):
    if method != "GET":
        return None
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
        body = self._body()
        found = None
        for prefix, service in SERVICES.items():
            if url.path == prefix or url.path.startswith(prefix + "/"):
                rest = url.path[len(prefix):]
                found = service(self.command, rest,
                                urllib.parse.parse_qs(url.query), body)
                break
        status, answer = found or (404, {"error": "not in the stand-in"})
        data = b"" if answer is None else json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            return self.rfile.read(length).decode(errors="replace")
        if self.headers.get("Transfer-Encoding") == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                chunks.append(self.rfile.read(size + 2)[:size])
                if not size:
                    return b"".join(chunks).decode(errors="replace")
        return ""

    def do_GET(self):
        self._answer()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

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
