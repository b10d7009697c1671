"""The report client: make placement hold the provider tree a compute
node wants, writing only what differs.

    client = ReportClient(DirectPort(placement))   # or HttpPort(url)
    client.update_from_provider_tree(tree)          # diff, then flush
    client.update_from_provider_tree(tree, moves=[Move(...)])  # reshape

Without ``moves``, a change of shape that would strand allocations (a
class leaving a provider for others of the tree: a NUMA split, GPUs
moving to children) becomes a reshape with moves derived by
compute.reshape.derive_moves; a class that leaves with nothing allocated
is a plain update.

It keeps the tree placement holds (as last read or written, with
generations), so reporting an unchanged tree reads and writes nothing.
A generation conflict (someone else wrote to a provider in between)
drops that copy, reads the tree again and retries, a bounded number of
times.
"""

from collections.abc import Callable, Sequence
from typing import Any

from compute import reshape as reshape_mod
from compute.placement_port import ConsumerState, PlacementPort
from compute.provider_tree import (
    ProviderData,
    ProviderTree,
    TreeDiff,
    diff,
)
from placement import errors

DEFAULT_ATTEMPTS = 4


class ReportError(Exception):
    """Placement refused a write; the message names the provider."""


class GenerationConflictError(ReportError):
    """Concurrent writers kept changing the tree; retries ran out."""


class ReportClient:
    """Reports provider trees through one placement port."""

    def __init__(self, port: PlacementPort,
                 attempts: int = DEFAULT_ATTEMPTS) -> None:
        self.port = port
        self.attempts = attempts
        # root uuid -> that tree as placement holds it
        self._held: dict[str, ProviderTree] = {}

    def update_from_provider_tree(
            self, tree: ProviderTree,
            moves: Sequence[reshape_mod.Move] | None = None) -> None:
        """Make placement hold ``tree``: providers created parents first
        and deleted children first, inventories, traits and aggregates
        set where they differ; with ``moves``, inventory and allocations
        move first in one POST /reshaper (compute.reshape). Raises
        ReshapeError (nothing written) for moves that cannot be carried
        out, GenerationConflictError when retries run out, ReportError
        for any other refusal."""
        roots = tree.roots()
        if not moves and self._cached(roots) and diff(
                self._held_tree(roots), tree).empty:
            return
        last: errors.ConcurrentUpdate | None = None
        for _ in range(self.attempts):
            try:
                # A reshape reads afresh: allocations made since the last
                # report moved the generations it must give.
                held = self._held_tree(
                    roots, refresh=last is not None or bool(moves))
                if moves and diff(held, tree).empty:
                    moves = None  # reshaped already (a restart, say)
                exact = bool(moves)
                if not moves:
                    held, moves = self._derived_moves(roots, held, tree)
                if moves:
                    self._reshape(held, tree, moves, exact_totals=exact)
                    moves = None  # done: a retry only finishes the rest
                    held = self._held_tree(roots, refresh=True)
                self._flush(held, diff(held, tree))
                self._remember(roots, held)
                return
            except errors.ConcurrentUpdate as exc:
                self._forget(roots)
                last = exc
            except errors.PlacementError as exc:
                self._forget(roots)
                raise ReportError(
                    f"tree {', '.join(roots)}: {exc}") from exc
            except Exception:
                # Some writes may have landed: the cached copy is not to
                # be trusted any more.
                self._forget(roots)
                raise
        raise GenerationConflictError(
            f"tree {', '.join(roots)}: placement's generations kept "
            f"changing under {self.attempts} attempts ({last})")

    def check_moves(self, tree: ProviderTree,
                    moves: Sequence[reshape_mod.Move]) -> None:
        """Plan ``moves`` against placement as it is now, writing
        nothing: ReshapeError if they cannot be carried out."""
        held = self._held_tree(tree.roots(), refresh=True)
        usage = self._usage(held, moves)
        reshape_mod.plan(held, tree, moves, usage, self._consumers(usage))

    def forget(self) -> None:
        """Drop the cached trees: the next report reads placement."""
        self._held.clear()

    # the cache

    def _cached(self, roots: list[str]) -> bool:
        return all(root in self._held for root in roots)

    def _held_tree(self, roots: list[str],
                   refresh: bool = False) -> ProviderTree:
        for root in roots:
            if refresh or root not in self._held:
                self._held[root] = self.port.read_tree(root)
        combined = ProviderTree()
        for root in roots:
            for provider in self._held[root]:
                combined.add(provider.copy())
        return combined

    def _remember(self, roots: list[str], held: ProviderTree) -> None:
        for root in roots:
            self._held[root] = ProviderTree(
                p.copy() for p in held.subtree(root)) if root in held \
                else ProviderTree()

    def _forget(self, roots: list[str]) -> None:
        for root in roots:
            self._held.pop(root, None)

    # writing the diff

    def _flush(self, held: ProviderTree, changes: TreeDiff) -> None:
        """Apply ``changes`` in order, keeping ``held`` in step with what
        placement now holds (generations included)."""
        if changes.empty:
            return
        self._ensure_custom_names(held, changes)
        for provider in changes.create:
            self._create(held, provider)
        for uuid, (name, parent) in changes.update.items():
            self._write(held, uuid, "rename or re-parent",
                        self.port.update_provider, uuid, name, parent)
            held[uuid].name, held[uuid].parent_uuid = name, parent
        for uuid, invs in changes.inventories.items():
            held[uuid].generation = self._write(
                held, uuid, "set inventories", self.port.set_inventories,
                uuid, _generation(held, uuid), invs)
            held[uuid].inventories = invs
        for uuid, traits in changes.traits.items():
            held[uuid].generation = self._write(
                held, uuid, "set traits", self.port.set_traits,
                uuid, _generation(held, uuid), traits)
            held[uuid].traits = traits
        for uuid, aggs in changes.aggregates.items():
            held[uuid].generation = self._write(
                held, uuid, "set aggregates", self.port.set_aggregates,
                uuid, _generation(held, uuid), aggs)
            held[uuid].aggregates = aggs
        for uuid in changes.delete:
            self._write(held, uuid, "delete", self.port.delete_provider,
                        uuid)
            held.remove(uuid)

    def _create(self, held: ProviderTree, provider: ProviderData) -> None:
        generation = self._write(
            held, provider.uuid, "create", self.port.create_provider,
            provider.name, provider.uuid, provider.parent_uuid,
            name=provider.name)
        held.add(ProviderData(provider.uuid, provider.name,
                               provider.parent_uuid, generation=generation))

    def _ensure_custom_names(self, held: ProviderTree,
                             changes: TreeDiff) -> None:
        # Standard traits and classes exist; custom ones may not yet,
        # unless placement's tree uses them already.
        known = {name for p in held for name in (*p.inventories, *p.traits)}
        classes = {rc for invs in changes.inventories.values()
                   for rc in invs if rc.startswith("CUSTOM_")} - known
        traits = {t for names in changes.traits.values()
                  for t in names if t.startswith("CUSTOM_")} - known
        for rc in sorted(classes):
            self.port.ensure_resource_class(rc)
        for trait in sorted(traits):
            self.port.ensure_trait(trait)

    @staticmethod
    def _write(held: ProviderTree, uuid: str, what: str,
               call: Callable[..., Any], *args: Any,
               name: str | None = None) -> Any:
        """``call(*args)``, its refusal (but a generation conflict, which
        is retried) raised as ReportError naming the provider."""
        try:
            return call(*args)
        except errors.ConcurrentUpdate:
            raise
        except errors.PlacementError as exc:
            found = held.find(uuid) if uuid in held else None
            shown = name or (found.name if found else "?")
            raise ReportError(
                f"provider {uuid} ({shown}): {what} refused: "
                f"{exc}") from exc

    # reshapes

    def _derived_moves(self, roots: list[str], held: ProviderTree,
                       wanted: ProviderTree
                       ) -> tuple[ProviderTree, list[reshape_mod.Move]]:
        """(held, the moves the change of shape needs): none unless a
        class changes place with allocations on its way out. Reads
        placement only when a class changes place."""
        if not reshape_mod.derive_moves(held, wanted):
            return held, []
        held = self._held_tree(roots, refresh=True)
        derived = reshape_mod.derive_moves(held, wanted)
        usage = self._usage(held, derived)
        needed = [m for m in derived if any(
            amounts.get(rc) for amounts in usage.get(m.source, {}).values()
            for rc in m.resources)]
        return held, needed

    def _reshape(self, held: ProviderTree, wanted: ProviderTree,
                 moves: Sequence[reshape_mod.Move],
                 exact_totals: bool = True) -> None:
        """Plan the moves (refusing before any write), create the new
        providers, then POST /reshaper; a refused reshape removes the
        providers it created."""
        usage = self._usage(held, moves)
        consumers = self._consumers(usage)
        planned = reshape_mod.plan(held, wanted, moves, usage, consumers,
                                   exact_totals)
        created = [p for p in wanted if p.uuid not in held]
        for provider in created:
            self._create(held, provider)
        try:
            self.port.reshape(
                {uuid: (_generation(held, uuid), invs)
                 for uuid, invs in planned.inventories.items()},
                planned.consumers)
        except errors.PlacementError as exc:
            self._undo_creations(created)
            if isinstance(exc, errors.ConcurrentUpdate):
                raise
            raise ReportError(
                f"reshape of tree {', '.join(wanted.roots())} refused: "
                f"{exc}") from exc

    def _usage(self, held: ProviderTree,
               moves: Sequence[reshape_mod.Move]) -> reshape_mod.Usage:
        touched = {m.source for m in moves} | {
            m.destination for m in moves if m.destination in held}
        return {uuid: self.port.provider_consumers(uuid)
                for uuid in sorted(touched)}

    def _consumers(self, usage: reshape_mod.Usage
                   ) -> dict[str, ConsumerState]:
        found = {c for on_provider in usage.values() for c in on_provider}
        states = {c: self.port.consumer(c) for c in sorted(found)}
        # The providers' allocations and the consumers are separate
        # reads: a consumer deleted or rewritten in between (a claim, a
        # delete) would leave the plan inconsistent. Start over from a
        # fresh read, as for any other concurrent write.
        for uuid, on_provider in usage.items():
            for consumer, resources in on_provider.items():
                if states[consumer].allocations.get(uuid) != resources:
                    raise errors.ConcurrentUpdate(
                        f"consumer {consumer} changed on provider {uuid} "
                        f"while the reshape read it")
        return states

    def _undo_creations(self, created: list[ProviderData]) -> None:
        for provider in reversed(created):
            try:
                self.port.delete_provider(provider.uuid)
            except errors.PlacementError:
                pass  # best effort: the next report deletes or reuses it


def _generation(held: ProviderTree, uuid: str) -> int:
    # Every provider in ``held`` came from placement or was just created
    # there, so it has a generation.
    generation = held[uuid].generation
    assert generation is not None, uuid
    return generation
