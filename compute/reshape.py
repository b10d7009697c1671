"""Reshapes: move inventory, and the allocations against it, from one
provider to others in one atomic POST /reshaper.

A node that splits its flat VGPU=8 into two GPU children says so with
moves, one per (source, destination):

    Move(root, gpu0, {"VGPU": 4}, allocations={vm1: {"VGPU": 2}})
    Move(root, gpu1, {"VGPU": 4})

``resources`` is the inventory that moves (units of total); the source's
old total must equal what it keeps plus what all its moves take.
``allocations`` says which consumer's allocation goes to this destination
(the driver knows which instance owns which device). Allocations no move
names are placed by first-fit:

- staying on the source comes first, when the source keeps an inventory
  of that class (a reshape moves no allocation it does not have to);
- then the destinations, in the order the moves list them;
- consumers are taken largest amount first (of the first class moved,
  then the next...), ties by consumer uuid, and each class of a consumer
  goes whole to the first destination where it fits: within what is
  left of the capacity ((total - reserved) x allocation_ratio, less what
  is already there and what was placed before it), min_unit, max_unit
  and step_size;
- a consumer's classes from one source stay together where they can: a
  destination where one of them went is tried first, and a destination
  is passed over while the consumer's other classes it offers would not
  fit there too (an instance's VCPU, PCPU and MEMORY_MB land on one NUMA
  child), unless no destination takes them together.

A node that does not name its moves (the compute agent, when the
hardware or the config changes the tree's shape) gets them from
``derive_moves``: every class a provider loses or shrinks moves to the
providers of the wanted tree that gain it. Such moves describe the
change rather than conserve it (memory a NUMA split reports per node
need not add up to MemTotal), so their totals are not checked; every
allocation must still fit.

A consumer that fits nowhere, an assignment that exceeds a destination,
or moves that do not add up refuse the reshape with ReshapeError before
anything is written.
"""

import dataclasses
from collections.abc import Mapping, Sequence

from compute.placement_port import ConsumerState
from compute.provider_tree import InventoryFields, ProviderData, ProviderTree


@dataclasses.dataclass(frozen=True)
class Move:
    """Inventory moving from ``source`` to ``destination`` (a provider of
    the wanted tree, created if new). ``allocations``: {consumer uuid:
    {rc: amount}} that go to this destination."""

    source: str
    destination: str
    resources: Mapping[str, int]
    allocations: Mapping[str, Mapping[str, int]] = dataclasses.field(
        default_factory=dict)


# {provider uuid: {consumer uuid: {rc: amount}}}
Usage = Mapping[str, Mapping[str, Mapping[str, int]]]
# (consumer, rc, source, destination, amount)
Shift = tuple[str, str, str, str, int]


class ReshapeError(ValueError):
    """Moves that cannot be carried out; nothing was written."""


@dataclasses.dataclass
class ReshapePlan:
    """What one POST /reshaper writes: the final inventories of every
    provider whose inventory changes, and every moved consumer's
    allocations."""

    inventories: dict[str, dict[str, InventoryFields]]
    consumers: list[ConsumerState]


def plan(held: ProviderTree, wanted: ProviderTree, moves: Sequence[Move],
         usage: Usage, consumers: Mapping[str, ConsumerState],
         exact_totals: bool = True) -> ReshapePlan:
    """The reshape that carries out ``moves``. ``usage``: {provider uuid:
    {consumer uuid: {rc: amount}}} for every source and every destination
    placement already holds; ``consumers``: the state of every consumer
    found there. ``exact_totals=False`` (derived moves) skips the check
    that the moves conserve inventory."""
    _check_moves(held, wanted, moves, exact_totals)
    _check_nothing_stranded(held, wanted, moves, usage)
    placed = _Placement(held, wanted, usage)
    for source in dict.fromkeys(m.source for m in moves):
        _place(placed, source, [m for m in moves if m.source == source])
    return ReshapePlan(_new_inventories(held, wanted, moves),
                       _rewritten(placed.shifts, consumers))


def _name(tree: ProviderTree, uuid: str) -> str:
    found = tree.find(uuid) if uuid in tree else None
    return f"{uuid} ({found.name})" if found else uuid


def _total(tree: ProviderTree, uuid: str, rc: str) -> int:
    if uuid not in tree:
        return 0
    fields = tree[uuid].inventories.get(rc)
    return fields["total"] if fields else 0


def derive_moves(held: ProviderTree, wanted: ProviderTree) -> list[Move]:
    """The moves a change of shape implies: for every provider placement
    holds whose inventory of a class the wanted tree removes or shrinks,
    one move per provider of the wanted tree that gains that class (new,
    or a larger total), destinations by name. Empty when no class
    changes place."""
    gainers: dict[str, list[ProviderData]] = {}
    for provider in sorted(wanted, key=lambda p: (p.name, p.uuid)):
        for rc in provider.inventories:
            if _total(wanted, provider.uuid, rc) > _total(
                    held, provider.uuid, rc):
                gainers.setdefault(rc, []).append(provider)
    taken: dict[tuple[str, str], dict[str, int]] = {}
    for source in sorted(held, key=lambda p: (p.name, p.uuid)):
        for rc in sorted(source.inventories):
            lost = _total(held, source.uuid, rc) - _total(
                wanted, source.uuid, rc)
            if lost <= 0:
                continue
            for dest in gainers.get(rc, ()):
                if dest.uuid != source.uuid:
                    gain = _total(wanted, dest.uuid, rc) - _total(
                        held, dest.uuid, rc)
                    taken.setdefault((source.uuid, dest.uuid), {})[rc] = \
                        gain
    return [Move(source, dest, resources)
            for (source, dest), resources in taken.items()]


def _check_moves(held: ProviderTree, wanted: ProviderTree,
                 moves: Sequence[Move], exact_totals: bool = True) -> None:
    for move in moves:
        if move.source not in held:
            raise ReshapeError(f"move source {move.source}: placement holds "
                               f"no such provider in this tree")
        if move.destination not in wanted:
            raise ReshapeError(f"move destination {move.destination}: not "
                               f"in the wanted tree")
        if move.source == move.destination:
            raise ReshapeError(f"move from {_name(held, move.source)} to "
                               f"itself")
        for rc, amount in move.resources.items():
            if not isinstance(amount, int) or amount <= 0:
                raise ReshapeError(
                    f"move {rc} from {_name(held, move.source)}: amount "
                    f"{amount!r} is not a positive integer")
            if rc not in wanted[move.destination].inventories:
                raise ReshapeError(
                    f"destination {_name(wanted, move.destination)} has no "
                    f"{rc} inventory in the wanted tree")
        for consumer, amounts in move.allocations.items():
            stray = sorted(set(amounts) - set(move.resources))
            if stray:
                raise ReshapeError(
                    f"move to {_name(wanted, move.destination)}: consumer "
                    f"{consumer}'s {', '.join(stray)} is not among the "
                    f"resources this move takes")
    if exact_totals:
        _check_totals(held, wanted, moves)


def _check_totals(held: ProviderTree, wanted: ProviderTree,
                  moves: Sequence[Move]) -> None:
    """Inventory is conserved: what a source had = what it keeps + what
    it moves; a destination has room for what arrives."""
    out: dict[tuple[str, str], int] = {}
    into: dict[tuple[str, str], int] = {}
    for move in moves:
        for rc, amount in move.resources.items():
            out[move.source, rc] = out.get((move.source, rc), 0) + amount
            key = (move.destination, rc)
            into[key] = into.get(key, 0) + amount
    for (source, rc), moved in sorted(out.items()):
        had, keeps = _total(held, source, rc), _total(wanted, source, rc)
        if had != keeps + moved:
            raise ReshapeError(
                f"source {_name(held, source)}: {rc} total {had} but the "
                f"moves take {moved} and it keeps {keeps}")
    for (dest, rc), arriving in sorted(into.items()):
        had, gets = _total(held, dest, rc), _total(wanted, dest, rc)
        if gets < had - out.get((dest, rc), 0) + arriving:
            raise ReshapeError(
                f"destination {_name(wanted, dest)}: {rc} total {gets} is "
                f"less than the {arriving} moved in plus the "
                f"{had - out.get((dest, rc), 0)} it keeps")


def _check_nothing_stranded(held: ProviderTree, wanted: ProviderTree,
                            moves: Sequence[Move], usage: Usage) -> None:
    """An allocation on a source, of a class the source gives up, that no
    move takes: the reshaper would refuse it; say so first."""
    moved = set(_moved_classes(moves))
    for source in sorted({m.source for m in moves}):
        kept = wanted[source].inventories if source in wanted else {}
        for consumer, amounts in sorted(usage.get(source, {}).items()):
            for rc in sorted(amounts):
                if rc not in kept and (source, rc) not in moved:
                    raise ReshapeError(
                        f"source {_name(held, source)} gives up its {rc} "
                        f"inventory but consumer {consumer} holds "
                        f"{amounts[rc]} {rc} there and no move takes it")


def _moved_classes(moves: Sequence[Move]) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    for move in moves:
        for rc in move.resources:
            if (move.source, rc) not in seen:
                seen.append((move.source, rc))
    return seen


class _Placement:
    """What is left of each provider's capacity as allocations are
    placed, and the shifts made: (consumer, rc, source, dest, amount)."""

    def __init__(self, held: ProviderTree, wanted: ProviderTree,
                 usage: Usage) -> None:
        self.held, self.wanted, self.usage = held, wanted, usage
        self.used: dict[tuple[str, str], int] = {}
        self.shifts: list[Shift] = []

    def inventory(self, uuid: str, rc: str) -> InventoryFields | None:
        return self.wanted[uuid].inventories.get(rc) if (
            uuid in self.wanted) else None

    def left(self, uuid: str, rc: str) -> int:
        fields = self.inventory(uuid, rc)
        if fields is None:
            return 0
        capacity = int((fields["total"] - fields["reserved"])
                       * fields["allocation_ratio"])
        return capacity - self._used(uuid, rc)

    def _used(self, uuid: str, rc: str) -> int:
        if (uuid, rc) not in self.used:
            # Allocations already there that no move takes away.
            self.used[uuid, rc] = sum(
                amounts.get(rc, 0)
                for amounts in self.usage.get(uuid, {}).values())
        return self.used[uuid, rc]

    def fits(self, uuid: str, rc: str, amount: int) -> bool:
        fields = self.inventory(uuid, rc)
        return (fields is not None and amount <= self.left(uuid, rc)
                and fields["min_unit"] <= amount <= fields["max_unit"]
                and amount % fields["step_size"] == 0)

    def take(self, uuid: str, rc: str, amount: int) -> None:
        self.used[uuid, rc] = self._used(uuid, rc) + amount

    def release(self, uuid: str, rc: str, amount: int) -> None:
        self.used[uuid, rc] = self._used(uuid, rc) - amount

    def shift(self, consumer: str, rc: str, source: str, dest: str,
              amount: int) -> None:
        self.release(source, rc, amount)
        self.take(dest, rc, amount)
        self.shifts.append((consumer, rc, source, dest, amount))


def _place(placed: _Placement, source: str, moves: list[Move]) -> None:
    """Place every allocation on ``source`` of a class ``moves`` take:
    the named ones first, then the rest consumer by consumer."""
    classes = [rc for s, rc in _moved_classes(moves) if s == source]
    left: dict[str, dict[str, int]] = {}
    for rc in classes:
        on_source = {c: a[rc] for c, a in
                     placed.usage.get(source, {}).items() if a.get(rc)}
        left[rc] = _assign_named(
            placed, source, rc, [m for m in moves if rc in m.resources],
            on_source)
        # The unnamed allocations leave the source for now; those that
        # stay come back one by one, within what the source keeps.
        placed.release(source, rc, sum(left[rc].values()))
    consumers = {c for amounts in left.values() for c in amounts}
    for consumer in sorted(consumers, key=lambda c: (
            tuple(-left[rc].get(c, 0) for rc in classes), c)):
        bundle = {rc: left[rc][consumer] for rc in classes
                  if left[rc].get(consumer)}
        for rc in list(bundle):
            amount = bundle.pop(rc)
            destinations = [source] if placed.inventory(source, rc) else []
            destinations += [m.destination for m in moves
                             if rc in m.resources]
            target = _first_fit(placed, consumer, source, destinations, rc,
                                amount, bundle)
            placed.take(target, rc, amount)
            if target != source:
                placed.shifts.append((consumer, rc, source, target, amount))


def _first_fit(placed: _Placement, consumer: str, source: str,
               destinations: list[str], rc: str, amount: int,
               rest: dict[str, int]) -> str:
    """Where the consumer's ``amount`` of ``rc`` goes: the first of the
    preferred destinations where it fits together with the rest of the
    consumer's classes that destination offers; else the first where it
    fits alone."""
    ordered = _preferred(placed, consumer, source, destinations)
    fitting = [d for d in ordered if placed.fits(d, rc, amount)]
    for dest in fitting:
        if all(placed.fits(dest, other, n) for other, n in rest.items()
               if placed.inventory(dest, other) is not None):
            return dest
    if fitting:
        return fitting[0]
    raise ReshapeError(
        f"consumer {consumer}: its {amount} {rc} on "
        f"{_name(placed.held, source)} fits on none of the destinations ("
        + ", ".join(f"{_name(placed.wanted, d)} has {placed.left(d, rc)} "
                    f"left" for d in destinations) + ")")


def _preferred(placed: _Placement, consumer: str, source: str,
               destinations: list[str]) -> list[str]:
    """``destinations`` with the source first (staying moves nothing),
    then where the consumer's other classes from this source went."""
    went = {d for c, _rc, s, d, _n in placed.shifts
            if c == consumer and s == source}
    return sorted(destinations, key=lambda d: (d != source, d not in went))


def _assign_named(placed: _Placement, source: str, rc: str,
                  moves: list[Move], on_source: dict[str, int]
                  ) -> dict[str, int]:
    """Carry out the moves' per-consumer assignments; return {consumer:
    amount} of what no move names."""
    left = dict(on_source)
    for move in moves:
        for consumer, amounts in move.allocations.items():
            amount = amounts.get(rc, 0)
            if not amount:
                continue
            if amount > left.get(consumer, 0):
                raise ReshapeError(
                    f"move to {_name(placed.wanted, move.destination)}: "
                    f"consumer {consumer} holds {on_source.get(consumer, 0)}"
                    f" {rc} on {_name(placed.held, source)}, the moves "
                    f"assign more")
            if amount > placed.left(move.destination, rc):
                raise ReshapeError(
                    f"move to {_name(placed.wanted, move.destination)}: "
                    f"consumer {consumer}'s {amount} {rc} exceeds its "
                    f"capacity ({placed.left(move.destination, rc)} left)")
            placed.shift(consumer, rc, source, move.destination, amount)
            left[consumer] -= amount
    return {c: a for c, a in left.items() if a}


def _new_inventories(held: ProviderTree, wanted: ProviderTree,
                     moves: Sequence[Move]
                     ) -> dict[str, dict[str, InventoryFields]]:
    touched = {m.source for m in moves} | {m.destination for m in moves}
    changed = {}
    for uuid in sorted(touched):
        before = held[uuid].inventories if uuid in held else {}
        after = wanted[uuid].inventories if uuid in wanted else {}
        if before != after or uuid not in held:
            changed[uuid] = after
    return changed


def _rewritten(shifts: list[Shift], consumers: Mapping[str, ConsumerState]
               ) -> list[ConsumerState]:
    new: dict[str, dict[str, dict[str, int]]] = {}
    for consumer, rc, source, dest, amount in shifts:
        allocs = new.setdefault(consumer, {
            rp: dict(r) for rp, r in consumers[consumer].allocations.items()})
        allocs[source][rc] -= amount
        allocs.setdefault(dest, {})
        allocs[dest][rc] = allocs[dest].get(rc, 0) + amount
    return [dataclasses.replace(
        consumers[c], allocations=_without_zeros(allocs))
        for c, allocs in sorted(new.items())]


def _without_zeros(allocs: dict[str, dict[str, int]]
                   ) -> dict[str, dict[str, int]]:
    cleaned = {rp: {rc: n for rc, n in r.items() if n}
               for rp, r in allocs.items()}
    return {rp: r for rp, r in cleaned.items() if r}
