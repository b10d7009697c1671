"""The two upgrade paths of a reshape.

- Whole cloud, offline (or one node when it starts, before it takes
  work): ``reshape_offline`` plans every node first and refuses them all,
  writing nothing, if any node's moves are bad; then reshapes each.
- Rolling, while the cloud runs: ``reshape_rolling`` reshapes one node
  at a time, each in its own POST /reshaper; a node whose reshape fails
  is reported and the others go on. Claims the scheduler makes meanwhile
  only bump generations, which the report client refreshes and retries.
"""

import dataclasses
from collections.abc import Iterable, Sequence

from compute import reshape
from compute.provider_tree import ProviderTree
from compute.report_client import ReportClient, ReportError


@dataclasses.dataclass(frozen=True)
class NodeReshape:
    """One compute node's wanted tree and the moves that lead to it."""

    tree: ProviderTree
    moves: Sequence[reshape.Move]


@dataclasses.dataclass(frozen=True)
class Outcome:
    roots: tuple[str, ...]
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def reshape_at_start(client: ReportClient, node: NodeReshape) -> None:
    """A node's whole tree, as it starts and before it reports anything
    else."""
    client.update_from_provider_tree(node.tree, node.moves)


def reshape_offline(client: ReportClient,
                    nodes: Iterable[NodeReshape]) -> list[Outcome]:
    """Every node, all planned before any is written: a bad node raises
    ReshapeError and nothing changes."""
    nodes = list(nodes)
    for node in nodes:
        client.check_moves(node.tree, node.moves)
    for node in nodes:
        reshape_at_start(client, node)
    return [Outcome(tuple(node.tree.roots())) for node in nodes]


def reshape_rolling(client: ReportClient,
                    nodes: Iterable[NodeReshape]) -> list[Outcome]:
    """One node at a time; a failure is recorded and the next goes on."""
    outcomes = []
    for node in nodes:
        try:
            reshape_at_start(client, node)
        except (ReportError, reshape.ReshapeError) as exc:
            outcomes.append(Outcome(tuple(node.tree.roots()), str(exc)))
        else:
            outcomes.append(Outcome(tuple(node.tree.roots())))
    return outcomes
