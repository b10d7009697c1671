"""Record what placement is asked and answers, in either mode, so that
two runs of the same tests can be compared (tests/nova_functional/
compare.py).

Runs inside the Nova virtualenv. Each worker appends JSON lines to
``<folder>/<pid>.jsonl``: the test, the exchange's number within the
fixture's application, the request (method, target, microversion
header, body), the answer (status, headers, body) and how long the
application took to give it.
"""

import io
import itertools
import json
import os
import time

# Request headers worth keeping: the rest (the token, the request id,
# the client's name) say nothing about the answer.
KEPT_REQUEST_HEADERS = ("HTTP_OPENSTACK_API_VERSION", "CONTENT_TYPE")


class Recorder:
    def __init__(self, folder):
        os.makedirs(folder, exist_ok=True)
        self._out = open(os.path.join(folder, f"{os.getpid()}.jsonl"), "a")
        self.test_id = None
        self._apps = itertools.count()

    def wrap(self, app):
        return _Recording(app, self, next(self._apps))

    def write(self, record):
        record["test"] = self.test_id
        self._out.write(json.dumps(record) + "\n")
        self._out.flush()


class _Recording:
    def __init__(self, app, recorder, app_number):
        self.app = app
        self.recorder = recorder
        self.app_number = app_number
        self._numbers = itertools.count()

    def __call__(self, environ, start_response):
        length = environ.get("CONTENT_LENGTH")
        body = environ["wsgi.input"].read(int(length)) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        seen = {}

        def remember(status, headers, exc_info=None):
            seen["status"], seen["headers"] = status, headers
            return start_response(status, headers, exc_info)

        began = time.monotonic()
        chunks = list(self.app(environ, remember))
        seconds = time.monotonic() - began
        self.recorder.write({
            "app": self.app_number,
            "n": next(self._numbers),
            "method": environ["REQUEST_METHOD"],
            "target": environ.get("RAW_URI") or environ.get("PATH_INFO"),
            "request_headers": {key: environ[key]
                                for key in KEPT_REQUEST_HEADERS
                                if key in environ},
            "request_body": body.decode("utf-8", "replace"),
            "status": seen.get("status"),
            "headers": [list(pair) for pair in seen.get("headers", ())],
            "body": b"".join(chunks).decode("utf-8", "replace"),
            "seconds": round(seconds, 5),
        })
        return chunks
