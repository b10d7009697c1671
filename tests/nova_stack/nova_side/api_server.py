"""Serve Nova's compute API WSGI application on a loopback port.

Runs inside Nova's virtualenv: ``python api_server.py PORT CONFIG_DIR``.
Nova ships its API only as a WSGI application (nova.wsgi.osapi_compute)
for a web server to host; this is the smallest such host, a threading
wsgiref server, so the test needs no uwsgi or Apache. CONFIG_DIR holds
the harness's api-paste.ini (Nova's pipeline without keystonemiddleware:
the test sends the identity headers the middleware would set) and
nova.conf.
"""

import os
import socketserver
import sys
from wsgiref import simple_server


class _Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True
    # socketserver's backlog of 5 resets connections when a dozen
    # clients connect at once (the group burst does).
    request_queue_size = 128


class _Handler(simple_server.WSGIRequestHandler):
    def log_message(self, format, *args):
        # Nova's request_log middleware logs every request already.
        pass


def main(port, config_dir):
    os.environ["OS_NOVA_CONFIG_DIR"] = config_dir
    os.environ["OS_NOVA_CONFIG_FILES"] = "api-paste.ini;nova.conf"
    # Nova parses sys.argv for oslo.config options: give it none.
    sys.argv = sys.argv[:1]
    from nova.wsgi import osapi_compute

    server = simple_server.make_server(
        "127.0.0.1", port, osapi_compute.application,
        server_class=_Server, handler_class=_Handler)
    print(f"nova-api listening on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
