"""Compare placement's answers in two recorded runs of the same tests
(``run.py --record DIR``), one with upstream Placement and one with
gantt-placement-api.

    .venv/bin/python -m tests.nova_functional.compare UPSTREAM_DIR GANTT_DIR

Both runs must be made with one hash seed (run.py's workers use 0): a
test then sends the same requests in the same order as long as the
answers lead it the same way. Each test's exchanges are walked in both
runs together while Nova asked the same thing (method, target,
microversion, body, with each run's uuids renamed: a provider after its
name, any other in the order first seen); each pair's status, the
headers that carry meaning and the JSON body (whitespace and request ids
aside; lists as sets, then their order) are compared. The walk ends
where the requests part, and the last difference seen before is counted
as the likely reason. Differences are counted by kind and route, with
one example each (``--examples``).
"""

import argparse
import collections
import json
import pathlib
import re
import sys

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                  r"[0-9a-f]{12}")
# Headers whose value is compared; the others only for presence, and
# these never (they differ by nature).
COMPARED_HEADERS = ("content-type", "openstack-api-version", "vary",
                    "cache-control", "location")
IGNORED_HEADERS = ("date", "server", "x-openstack-request-id",
                   "content-length")


def load(folder):
    """{test id: [exchange]} in the order each fixture's app saw them."""
    tests = collections.defaultdict(list)
    for path in sorted(pathlib.Path(folder).glob("*.jsonl")):
        with open(path) as lines:
            for line in lines:
                record = json.loads(line)
                tests[record["test"]].append(record)
    for exchanges in tests.values():
        exchanges.sort(key=lambda r: (r["app"], r["n"]))
    return tests


class Names:
    """Renames a run's uuids: a resource provider Nova created after its
    name (its uuid is new in each run, its name is not), any other U0,
    U1, ... in the order first seen."""

    def __init__(self, exchanges):
        self.names = {}
        for exchange in exchanges:
            if (exchange["method"] == "POST"
                    and exchange["target"].endswith("/resource_providers")):
                body, _ = _json(exchange["request_body"])
                name = isinstance(body, dict) and body.get("name")
                # A name made of uuids is as new as the uuid.
                if name and "uuid" in body and not UUID.search(name):
                    self.names[body["uuid"]] = f"rp:{name}"

    def text(self, text):
        return UUID.sub(self._name, text or "")

    def _name(self, match):
        return self.names.setdefault(match.group(0),
                                     f"U{len(self.names)}")

    def value(self, value):
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.value(v) for k, v in value.items()}
        return value


def _json(text):
    try:
        return json.loads(text), True
    except ValueError:
        return text, False


def _key(exchange, names):
    body, _ = _json(exchange["request_body"])
    return (exchange["method"], names.text(exchange["target"]),
            exchange["request_headers"].get("HTTP_OPENSTACK_API_VERSION"),
            json.dumps(names.value(body), sort_keys=True))


def _without_request_ids(value):
    if isinstance(value, dict):
        return {k: _without_request_ids(v) for k, v in value.items()
                if k != "request_id"}
    if isinstance(value, list):
        return [_without_request_ids(v) for v in value]
    return value


def _canonical(value, ordered):
    """A string that tells ints from floats; lists sorted unless
    ``ordered``."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_canonical(v, ordered)}"
                              for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        items = [_canonical(v, ordered) for v in value]
        return "[" + ",".join(items if ordered else sorted(items)) + "]"
    return json.dumps(value)


def first_difference(a, b, path="", ordered=False):
    """(path, a's value, b's value) where two JSON values first differ
    (lists as sets unless ``ordered``), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return (f"{path}.{key}", a.get(key, "<absent>"),
                        b.get(key, "<absent>"))
            found = first_difference(a[key], b[key], f"{path}.{key}",
                                     ordered)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return (f"{path}[len]", len(a), len(b))
        if not ordered:
            a = sorted(a, key=lambda v: _canonical(v, False))
            b = sorted(b, key=lambda v: _canonical(v, False))
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{index}]", ordered)
            if found:
                return found
        return None
    if _canonical(a, False) != _canonical(b, False):
        return (path or ".", a, b)
    return None


def _route(target):
    """The target with uuids and query values left out."""
    path, _, query = target.partition("?")
    path = re.sub(r"U\d+|rp:[^/]*", "{uuid}", path)
    names = sorted({part.split("=")[0] for part in query.split("&")
                    if part})
    return path + (f"?{'&'.join(names)}" if names else "")


def _headers(exchange, names):
    out = {}
    for name, value in exchange["headers"]:
        name = name.lower()
        if name in IGNORED_HEADERS:
            continue
        if name == "location":
            value = re.sub(r"^https?://[^/]*", "", value)
        out[name] = names.text(value) if name in COMPARED_HEADERS else "*"
    return out


def compare_pair(a, b, names_a, names_b):
    """[(kind, what, example)] of one pair of exchanges."""
    found = []
    if a["status"] != b["status"]:
        found.append(("status", f"{a['status']} vs {b['status']}", None))
    headers_a, headers_b = _headers(a, names_a), _headers(b, names_b)
    for name in sorted(set(headers_a) | set(headers_b)):
        if headers_a.get(name) != headers_b.get(name):
            found.append(("header", f"{name}: "
                          f"{headers_a.get(name, '<absent>')} vs "
                          f"{headers_b.get(name, '<absent>')}", None))
    body_a, json_a = _json(a["body"])
    body_b, json_b = _json(b["body"])
    if json_a and json_b:
        body_a = _without_request_ids(names_a.value(body_a))
        body_b = _without_request_ids(names_b.value(body_b))
        difference = first_difference(body_a, body_b)
        if difference:
            path, x, y = difference
            found.append(("body", f"{path}: {_short(x)} vs {_short(y)}",
                          None))
        else:
            in_order = first_difference(body_a, body_b, ordered=True)
            if in_order:
                # Where the first list in another order is, not what.
                where = re.sub(r"\[\d+\].*$", "", in_order[0])
                found.append(("order", f"{where}: the same items in "
                                       f"another order", None))
    elif names_a.text(a["body"]) != names_b.text(b["body"]):
        found.append(("body", f"{_short(a['body'])} vs "
                              f"{_short(b['body'])}", None))
    return found


def _short(value, chars=160):
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= chars else text[:chars] + "..."


def compare(upstream, gantt):
    """(counts, differences, divergences).

    Each test's two sequences are walked together while Nova asked the
    same thing in both (with one hash seed, a run repeats its requests
    exactly); the first request that differs ends the walk, since what
    follows answers other questions. ``differences``: {(kind, method,
    route, what): [count, example]} of the answers compared;
    ``divergences``: {the last difference seen before the requests
    parted (or None): [count, example test]}.
    """
    counts = collections.Counter()
    differences, divergences = {}, {}
    for test_id in sorted(set(upstream) & set(gantt)):
        counts["tests"] += 1
        run_a, run_b = upstream[test_id], gantt[test_id]
        names_a, names_b = Names(run_a), Names(run_b)
        last = None
        for a, b in zip(run_a, run_b, strict=False):
            key = _key(a, names_a)
            if key != _key(b, names_b):
                break
            counts["exchanges compared"] += 1
            for kind, what, _ in compare_pair(a, b, names_a, names_b):
                group = (kind, key[0], _route(key[1]), what)
                entry = differences.setdefault(group, [0, None])
                entry[0] += 1
                if entry[1] is None:
                    entry[1] = _example(test_id, key, a, b)
                last = group
        else:
            if len(run_a) == len(run_b):
                counts["tests asking the same to the end"] += 1
                continue
        counts["tests whose requests part"] += 1
        entry = divergences.setdefault(last, [0, test_id])
        entry[0] += 1
    counts["tests in one run only"] = len(set(upstream) ^ set(gantt))
    return counts, differences, divergences


def _example(test_id, key, a, b):
    return {"test": test_id, "target": a["target"], "version": key[2],
            "request_body": a["request_body"][:500],
            "upstream": f"{a['status']} {a['body'][:800]}",
            "gantt": f"{b['status']} {b['body'][:800]}"}


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tests.nova_functional.compare",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("upstream")
    parser.add_argument("gantt")
    parser.add_argument("--examples", action="store_true",
                        help="print an example exchange of each")
    args = parser.parse_args(argv)
    counts, differences, divergences = compare(load(args.upstream),
                                               load(args.gantt))
    for name, value in counts.items():
        print(f"{name}: {value}")
    print("\nDifferences in the answers (count, kind, request, where):")
    ordered = sorted(differences.items(), key=lambda item: -item[1][0])
    for (kind, method, route, what), (count, example) in ordered:
        print(f"{count:6d}  {kind:6}  {method} {route}  {what}")
        if args.examples:
            for key, value in example.items():
                print(f"          {key}: {value}")
    print("\nWhere the requests parted: the last difference before "
          "(count, difference, a test):")
    ordered = sorted(divergences.items(), key=lambda item: -item[1][0])
    for group, (count, test_id) in ordered:
        what = "  ".join(group) if group else "none (Nova itself)"
        print(f"{count:6d}  {what}\n          {test_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
