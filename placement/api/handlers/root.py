"""GET /: the version document, public (no token needed)."""

from placement.api import microversion, util


def home(req):
    body = {"versions": [{
        "id": f"v{microversion.MIN_VERSION}",
        "min_version": microversion.MIN_VERSION,
        "max_version": microversion.MAX_VERSION,
        "status": "CURRENT",
        # A relative link to this same document: the service never needs
        # to know the address clients reach it by.
        "links": [{"rel": "self", "href": ""}],
    }]}
    return util.json_response(req, body)
