"""CrossCellWeigher: on a move that may cross cells, prefer the hosts
in the instance's current cell.

How the source cell is known: Nova's conductor, before it asks for a
move destination, writes the instance's current cell into
``RequestSpec.requested_destination.cell`` and sets
``allow_cross_cell_move`` when policy lets the move leave the cell (when
it may not, the same cell restricts the candidates instead, and
weighing by it would change nothing). gantt's RequestSpec carries the
same two fields (``requested_destination.cell`` as a cell uuid), so the
weigher reads them, compared with the table's cell column.

Weights: 1 for hosts in that cell, 0 for the others; 0 everywhere when
the request is no cross-cell move. (Nova's own code gives -1 to hosts in
other cells; min-max normalisation maps both {1, -1} and {1, 0} to
{1, 0}, and a single value to 0, so the result is the same.)
"""

import numpy as np

from weighers import base


def source_cell(spec):
    """The cell a cross-cell move starts from, or None."""
    dest = spec.requested_destination
    if dest is None or not dest.cell or not dest.allow_cross_cell_move:
        return None
    return dest.cell


class CrossCellWeigher(base.BaseWeigher):
    name = "CrossCellWeigher"
    multiplier_option = "cross_cell_move_weight_multiplier"

    def raw(self, request, rows):
        cell = source_cell(request.spec)
        if cell is None:
            return np.zeros(len(rows))
        code = request.table.cell_code(cell)
        if code < 0:  # no host of that cell is known
            return np.zeros(len(rows))
        return (request.table.cell[rows] == code).astype(np.float64)
