"""The route table: every path, method and handler of the REST API, with
the microversions each handler answers.

A path that matches no route is a 404; a method a route does not have is
a 405 listing the ones it has (Allow header); a method outside the
versions of its handlers gets the route's ``otherwise`` status (404
unless said otherwise). docs/api-ref.md documents every entry (a test
checks it).
"""

import dataclasses
import re

from placement.api.handlers import (
    aggregates,
    allocation_candidates,
    allocations,
    inventories,
    reshaper,
    resource_classes,
    resource_providers,
    root,
    traits,
    usages,
)


@dataclasses.dataclass(frozen=True)
class Version:
    """``handler`` answers microversions ``since`` to ``until``."""

    handler: object
    since: tuple = (1, 0)
    until: tuple = (1, 999)


@dataclasses.dataclass(frozen=True)
class Method:
    versions: tuple
    # Status for a microversion no handler answers.
    otherwise: int = 404

    def handler_for(self, version):
        for candidate in self.versions:
            if candidate.since <= version <= candidate.until:
                return candidate.handler
        return None

    @property
    def since(self):
        return min(v.since for v in self.versions)


def _v(text):
    major, minor = text.split(".")
    return (int(major), int(minor))


def op(handler, since="1.0", until=None, otherwise=404):
    """A method answered by one handler from ``since`` (to ``until``)."""
    version = Version(handler, _v(since),
                      _v(until) if until else (1, 999))
    return Method((version,), otherwise)


def ops(*variants, otherwise=404):
    """A method whose handler depends on the version: (handler, since,
    until) triples."""
    return Method(tuple(Version(h, _v(s), _v(u) if u else (1, 999))
                        for h, s, u in variants), otherwise)


RP = "/resource_providers/{uuid}"

ROUTES = {
    "/": {
        "GET": op(root.home),
    },
    "/resource_providers": {
        "GET": op(resource_providers.list_all),
        "POST": op(resource_providers.create),
    },
    # Methods in OpenStack Placement's order: a 405's Allow header lists
    # them so.
    RP: {
        "GET": op(resource_providers.show),
        "DELETE": op(resource_providers.delete),
        "PUT": op(resource_providers.update),
    },
    RP + "/inventories": {
        "GET": op(inventories.list_all),
        "POST": op(inventories.create),
        "PUT": op(inventories.replace_all),
        "DELETE": op(inventories.delete_all, "1.5", otherwise=405),
    },
    RP + "/inventories/{resource_class}": {
        "GET": op(inventories.show),
        "PUT": op(inventories.update),
        "DELETE": op(inventories.delete),
    },
    RP + "/usages": {
        "GET": op(usages.for_provider),
    },
    RP + "/aggregates": {
        "GET": op(aggregates.list_all, "1.1"),
        "PUT": op(aggregates.replace, "1.1"),
    },
    RP + "/traits": {
        "GET": op(traits.list_for_provider, "1.6"),
        "PUT": op(traits.replace_for_provider, "1.6"),
        "DELETE": op(traits.delete_for_provider, "1.6"),
    },
    RP + "/allocations": {
        "GET": op(allocations.for_provider),
    },
    "/resource_classes": {
        "GET": op(resource_classes.list_all, "1.2"),
        "POST": op(resource_classes.create, "1.2"),
    },
    "/resource_classes/{name}": {
        "GET": op(resource_classes.show, "1.2"),
        "PUT": ops((resource_classes.rename, "1.2", "1.6"),
                   (resource_classes.ensure, "1.7", None)),
        "DELETE": op(resource_classes.delete, "1.2"),
    },
    "/traits": {
        "GET": op(traits.list_all, "1.6"),
    },
    "/traits/{name}": {
        "GET": op(traits.show, "1.6"),
        "PUT": op(traits.create, "1.6"),
        "DELETE": op(traits.delete, "1.6"),
    },
    "/allocations": {
        "POST": op(allocations.replace_many, "1.13"),
    },
    "/allocations/{consumer_uuid}": {
        "GET": op(allocations.for_consumer),
        "PUT": op(allocations.replace),
        "DELETE": op(allocations.delete),
    },
    "/allocation_candidates": {
        "GET": op(allocation_candidates.list_candidates, "1.10"),
    },
    "/usages": {
        "GET": op(usages.totals, "1.9"),
    },
    "/reshaper": {
        "POST": op(reshaper.reshape, "1.30"),
    },
}


def _compile(template):
    """'/a/{x}/b' -> a regex with a named group per {field}; a field is
    one path segment."""
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)",
                     re.escape(template))
    return re.compile(f"^{pattern}$")


class Router:
    def __init__(self, routes=None):
        routes = ROUTES if routes is None else routes
        self._table = [(_compile(path), path, methods)
                       for path, methods in routes.items()]

    def match(self, path):
        """(template, {method: Method}, {field: value}), or None."""
        for regex, template, methods in self._table:
            found = regex.match(path)
            if found:
                return template, methods, found.groupdict()
        return None
