"""Reshape compute nodes' trees from a file, offline or one node at a
time (compute.upgrade), against the embedded placement or a REST API:

    gantt-manage [--config-file gantt.conf] compute reshape nodes.json
        [--rolling] [--check] [--endpoint URL [--token TOKEN]]
    python -m compute.reshape_command nodes.json [--rolling] [--check]
        [--endpoint URL [--token TOKEN] | --config-file gantt.conf]

nodes.json: {"nodes": [{"tree": [provider, ...], "moves": [move, ...]}]}
where a provider is {"uuid", "name", "parent_uuid", "inventories": {rc:
total or fields}, "traits": [...], "aggregates": [...]} (parents first)
and a move {"source", "destination", "resources": {rc: n},
"allocations": {consumer: {rc: n}}}. Prints JSON: one outcome per node.
Exit status 0 when every node was reshaped (or, with --check, would be),
1 when one was not (--rolling: the others went on) or placement refused,
2 for a nodes file or moves that cannot be used (one line naming the file
or the move, nothing written).
"""

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from compute import upgrade
from compute.placement_port import DirectPort, HttpPort, PlacementPort
from compute.provider_tree import ProviderTree
from compute.report_client import ReportClient, ReportError
from compute.reshape import Move, ReshapeError
from placement import command_errors, direct
from placement import conf as conf_mod


def load_nodes(document: Mapping[str, Any]) -> list[upgrade.NodeReshape]:
    return [upgrade.NodeReshape(_tree(node["tree"]),
                                [_move(m) for m in node.get("moves", [])])
            for node in document["nodes"]]


def _tree(providers: Sequence[Mapping[str, Any]]) -> ProviderTree:
    tree = ProviderTree()
    for p in providers:
        fields = {k: p[k] for k in ("inventories", "traits", "aggregates")
                  if k in p}
        if p.get("parent_uuid"):
            tree.new_child(p["name"], p["parent_uuid"], uuid=p["uuid"],
                           **fields)
        else:
            tree.new_root(p["name"], uuid=p["uuid"], **fields)
    return tree


def _move(move: Mapping[str, Any]) -> Move:
    return Move(move["source"], move["destination"],
                dict(move["resources"]), dict(move.get("allocations", {})))


def _port(args: argparse.Namespace) -> PlacementPort:
    if args.endpoint:
        return HttpPort(args.endpoint, token=args.token)
    conf = conf_mod.new_conf(
        ["--config-file", args.config_file] if args.config_file else [])
    return DirectPort(direct.PlacementDirect.open(conf))


class NodesFileError(Exception):
    """The nodes file cannot be used; names the file and what is wrong."""


PROG = "python -m compute.reshape_command"


def read_nodes(path: str) -> list[upgrade.NodeReshape]:
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as exc:
        raise NodesFileError(f"{path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise NodesFileError(f"{path}: not JSON: {exc}") from None
    try:
        return load_nodes(document)
    except KeyError as exc:
        raise NodesFileError(f"{path}: missing field {exc}") from None
    except (TypeError, AttributeError, ValueError) as exc:
        raise NodesFileError(f"{path}: {exc}") from None


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("nodes", help="the JSON file of trees and moves")
    parser.add_argument("--rolling", action="store_true",
                        help="one node at a time; a failed node does not "
                             "stop the others")
    parser.add_argument("--check", action="store_true",
                        help="plan every node and write nothing")
    parser.add_argument("--endpoint",
                        help="placement's REST API URL (default: the "
                             "embedded placement of the config)")
    parser.add_argument("--token", default="admin",
                        help="X-Auth-Token for --endpoint")


# gantt-manage's: `gantt-manage compute reshape`, on the database of its
# --config-file unless --endpoint is given.
USAGE_ERRORS = (NodesFileError, ReshapeError)
FAILURES = (ReportError,)


def add_actions(actions: Any) -> None:
    """gantt-manage compute's actions: reshape."""
    reshape = actions.add_parser(
        "reshape", help="move inventories and allocations to the trees "
                        "of a nodes file (offline, or --rolling)")
    _add_arguments(reshape)
    reshape.set_defaults(run=run)


def run(conf: Any) -> int:
    args = conf.command
    port: PlacementPort
    if args.endpoint:
        port = HttpPort(args.endpoint, token=args.token)
    else:
        port = DirectPort(direct.PlacementDirect.open(conf))
    return _reshape(args, port)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG,
                                     description=__doc__.splitlines()[0])
    _add_arguments(parser)
    parser.add_argument("--config-file",
                        help="gantt's config (the embedded placement)")
    parser.add_argument("--debug", action="store_true",
                        help="print the traceback of an error too")
    args = parser.parse_args(argv)
    return command_errors.run(
        PROG, lambda: _reshape(args, _port(args)), debug=args.debug,
        usage=USAGE_ERRORS, failures=FAILURES)


def _reshape(args: Any, port: PlacementPort) -> int:
    nodes = read_nodes(args.nodes)
    client = ReportClient(port)
    if args.check:
        for node in nodes:
            client.check_moves(node.tree, node.moves)
        outcomes = [upgrade.Outcome(tuple(n.tree.roots())) for n in nodes]
    elif args.rolling:
        outcomes = upgrade.reshape_rolling(client, nodes)
    else:
        outcomes = upgrade.reshape_offline(client, nodes)
    print(json.dumps([{"roots": list(o.roots), "error": o.error}
                      for o in outcomes], indent=2))
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
