"""Microversions: which one a request asks for, and the headers that
say which one answered.

A request names its version in ``openstack-api-version: placement X.Y``.
No header means the oldest version (1.0); ``latest`` means the newest.
A malformed value is a 400; a well-formed one outside 1.0-1.39 is a 406.
"""

import microversion_parse

SERVICE_TYPE = "placement"
HEADER = microversion_parse.STANDARD_HEADER
ENVIRON_KEY = "placement.microversion"

# 1.0 to 1.39; docs/api-ref.md says what each one added.
VERSIONS = tuple(f"1.{minor}" for minor in range(40))
MIN_VERSION = VERSIONS[0]
MAX_VERSION = VERSIONS[-1]


class BadVersion(ValueError):
    """The header cannot be parsed (400)."""


class UnacceptableVersion(ValueError):
    """The header names a version this service does not have (406)."""


def parse(text):
    """'1.15' -> Version(1, 15); BadVersion when malformed."""
    try:
        return microversion_parse.parse_version_string(text)
    except TypeError as exc:
        raise BadVersion(str(exc)) from None


def negotiate(environ):
    """The Version the request asks for (see the module doc)."""
    headers = microversion_parse.headers_from_wsgi_environ(environ)
    try:
        version = microversion_parse.extract_version(
            headers, SERVICE_TYPE, VERSIONS)
    except ValueError as exc:
        raise UnacceptableVersion(str(exc)) from None
    except TypeError as exc:
        raise BadVersion(str(exc)) from None
    return version


def header_value(version):
    return f"{SERVICE_TYPE} {version}"
