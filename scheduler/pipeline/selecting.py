"""Stage 4: the answer, a list of Selections per instance.

Each instance gets its chosen host (with the allocation request it was
claimed with) and then, when asked, ``[scheduler] max_attempts - 1``
alternates from its own ranking (for several instances, from the
ranking made after every pick: see scheduler.pipeline.flow): same cell
as its pick, never a host picked for this request, each with its own
allocation request (not claimed), for the conductor's cell retry.
"""

from __future__ import annotations

from typing import Any

from placement import option_values
from placement.candidates import result as result_mod
from scheduler import selection
from scheduler.pipeline import state as state_mod


class Select:
    """Fills the state's selections."""

    def __init__(self, table: Any, conf: Any) -> None:
        self.table = table
        self.conf = conf

    def __call__(self, state: state_mod.RequestState,
                 alternates: bool = True,
                 after_picks: state_mod.Ranking | None = None) -> None:
        turns = state.turns
        state.alternate_rows = []
        if not alternates:
            state.selections = [
                [self._selection(turn.chosen, state.allocations.get(i))]
                for i, turn in enumerate(turns)]
            return
        picked = {turn.chosen for turn in turns}
        state.selections = [
            self._with_alternates(state, i, turn, picked,
                                  after_picks or turn.ranking)
            for i, turn in enumerate(turns)]

    def _with_alternates(self, state: state_mod.RequestState, i: int,
                         turn: state_mod.Turn, picked: set[int],
                         ranking: state_mod.Ranking
                         ) -> list[selection.Selection]:
        chosen = turn.chosen
        out = [self._selection(chosen, state.allocations.get(i))]
        want = option_values.read(self.conf, _max_attempts) - 1
        cell = self.table.cell[chosen]
        rows = []
        for row in ranking.ordered:
            if len(out) > want:
                break
            if row in picked or self.table.cell[row] != cell:
                continue
            rows.append(row)
            out.append(self._selection(row, state.first_request(row)))
        # For the decision log: no need to look the rows up again.
        state.alternate_rows.append(rows)
        return out

    def _selection(self, row: int,
                   allocation_request: result_mod.AllocationRequest | None
                   ) -> selection.Selection:
        table = self.table
        return selection.Selection(
            compute_node_uuid=table.uuids[row],
            service_host=table.hosts[row],
            nodename=table.nodenames[row],
            cell_uuid=table.cells.name(int(table.cell[row])),
            availability_zone=table.zone(row),
            allocation_request=(
                None if allocation_request is None
                else selection.allocation_request_json(allocation_request)),
            allocation_request_version=(
                None if allocation_request is None
                else selection.ALLOCATION_REQUEST_VERSION))


def _max_attempts(conf: Any) -> int:
    attempts: int = conf.scheduler.max_attempts
    return attempts
