"""The host weigher protocol.

A weigher gives a raw float per candidate row: ``raw(request, rows)``
(a scheduler.host_request.HostRequest and an int64 row array). The
scheduler's framework (scheduler.framework.WeigherChain) normalises
each weigher's raw values to [0, 1] over the hosts that passed the
filters (min-max; all equal -> all 0, as Nova does; a weigher may fix
``minval``/``maxval``), multiplies by the weigher's multiplier per host
and adds the products up. The multiplier is the config option
``multiplier_option`` of ``multiplier_group``, replaced per host by the
lowest value of aggregate metadata ``aggregate_key`` over the host's
aggregates, where one sets it. As in Nova, a host one of whose
aggregates sets the key to something that is not a number gets the
option (its other aggregates' values are not used either). Known
difference: "nan" counts as not a number here; Nova takes it (a lone
one weighs the host NaN, next to others the minimum depends on the
order of a set).
"""

from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

# Rows of the host state table, and a float per row.
Rows = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


class Request(Protocol):
    """What a weigher sees of one scheduling request
    (scheduler.host_request.HostRequest is the one the scheduler
    passes); the same view filters get."""

    @property
    def spec(self) -> Any: ...  # scheduler.request_spec.RequestSpec

    @property
    def table(self) -> Any: ...  # scheduler.host_state.HostStateTable

    @property
    def chosen_rows(self) -> list[int]: ...

    @property
    def memo(self) -> dict[Any, Any]: ...

    def hint(self, name: str, default: Any = None) -> Any: ...


class BaseWeigher:
    name: ClassVar[str | None] = None
    multiplier_group: ClassVar[str] = "filter_scheduler"
    multiplier_option: ClassVar[str | None] = None
    # Aggregate metadata key overriding the multiplier; None: the
    # option's name.
    aggregate_key: ClassVar[str | None] = None
    minval: ClassVar[float | None] = None
    maxval: ClassVar[float | None] = None

    def __init__(self, conf: Any) -> None:
        self.conf = conf

    def raw(self, request: Request, rows: Rows) -> npt.ArrayLike:
        """A raw value per row of ``rows`` (any float-like array)."""
        raise NotImplementedError

    # The option's value, kept until oslo.config may have changed it,
    # as the scheduler's framework hands it to each weigher of its chain
    # (every request asks); None: read from ``conf`` at every call.
    read_multiplier: Callable[[], float] | None = None

    def configured_multiplier(self) -> float:
        read = self.read_multiplier
        if read is not None:
            return read()
        return self.multiplier_in(self.conf)

    def multiplier_in(self, conf: Any) -> float:
        """The multiplier option's value in ``conf``."""
        # A weigher without its option (None) fails here, as it did.
        name: Any = self.multiplier_option
        return float(getattr(getattr(conf, self.multiplier_group), name))

    def multiplier(self, request: Request,
                   rows: Rows) -> float | Floats:
        """The option, or per row the lowest aggregate override (the
        option where an override is not a number): a float when no
        aggregate sets the key to a number (every row has the option),
        else an array over ``rows``."""
        key = self.aggregate_key or self.multiplier_option
        table = request.table
        default = self.configured_multiplier()
        if not table.aggregate_sets(key):
            return default
        return table.aggregate_number_or(key, default, "min")[rows]

    def multipliers(self, request: Request, rows: Rows) -> Floats:
        """The multiplier of each row, as an array."""
        return np.broadcast_to(
            np.asarray(self.multiplier(request, rows), np.float64),
            (len(rows),))


def bound(line: Floats, minval: float | None = None,
          maxval: float | None = None) -> None:
    """Keep ``line`` (a float array, changed in place) within the
    weigher's minval/maxval, where it sets them."""
    if minval is not None:
        np.maximum(line, minval, out=line)
    if maxval is not None:
        np.minimum(line, maxval, out=line)


def value_range(values: Floats, minval: float | None = None,
                maxval: float | None = None) -> tuple[float, float]:
    """(low, span) of min-max normalisation: the weigher's bounds, or the
    values' own minimum and maximum where it sets none."""
    low = float(minval) if minval is not None else float(values.min())
    high = float(maxval) if maxval is not None else float(values.max())
    return low, high - low


def normalize(values: npt.ArrayLike, minval: float | None = None,
              maxval: float | None = None) -> Floats:
    """Min-max to [0, 1]; all zeros when every value is the same."""
    values = np.asarray(values, np.float64)
    if not len(values):
        return values
    low, span = value_range(values, minval, maxval)
    if span == 0:
        return np.zeros(len(values))
    return (values - low) / span
