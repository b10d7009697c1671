"""docs/api-ref.md documents every route and method of the route table,
and nothing else (OpenStack Placement gates on the same rule)."""

import pathlib
import re

from placement.api import routes

DOC = pathlib.Path(__file__).parents[2] / "docs" / "api-ref.md"
ENTRY = re.compile(r"^### (GET|PUT|POST|DELETE|PATCH|HEAD) (\S+)$",
                   re.MULTILINE)


def test_every_route_has_an_entry():
    documented = set(ENTRY.findall(DOC.read_text()))
    served = {(method, path) for path, methods in routes.ROUTES.items()
              for method in methods}
    assert served - documented == set(), "routes without an api-ref entry"
    assert documented - served == set(), "api-ref entries for no route"


def test_entries_name_their_microversions():
    text = DOC.read_text()
    for method, path in ENTRY.findall(text):
        start = text.index(f"### {method} {path}\n")
        following = text.find("\n### ", start + 1)
        entry = text[start:following if following > 0 else None]
        assert "Microversions:" in entry, f"{method} {path}"
