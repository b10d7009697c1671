"""The host filter protocol.

A filter looks at all candidate hosts at once: ``mask(request, rows)``
gets a scheduler.host_request.HostRequest and an int64 array of rows of
the host state table and returns a boolean array, True for the rows that
pass. Explanations are computed only when asked: ``why(request, row)``
says in one line why a rejected row failed.

Class attributes, as in Nova:

- ``run_filter_once_per_request``: for a multi-instance request, run
  before the first instance only (the answer cannot change in between);
- ``RUN_ON_REBUILD``: run when an instance is rebuilt on its own host.

A request a filter cannot judge at all (a JsonFilter query that does
not parse) is the caller's mistake, not a host's: the filter raises
:class:`RequestError` and the whole request fails; the scheduler reports
it as its InvalidRequestSpec. A filter imports nothing of the scheduler
for that, so that filters stay plugins of the framework.

Third-party filters can be written per host instead: subclass
:class:`PerHostFilter` and implement ``host_passes(host, request)``, where
``host`` is a :class:`HostView` of one row. Register either kind under
the ``gantt.scheduler.filters`` entry point group; ``[filter_scheduler]
enabled_filters`` names them by their ``name``.
"""

from typing import Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

# Rows of the host state table, and a pass/fail flag per row.
Rows = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


class Request(Protocol):
    """What a filter sees of one scheduling request
    (scheduler.host_request.HostRequest is the one the scheduler
    passes)."""

    @property
    def spec(self) -> Any: ...  # scheduler.request_spec.RequestSpec

    @property
    def table(self) -> Any: ...  # scheduler.host_state.HostStateTable

    @property
    def conf(self) -> Any: ...

    @property
    def now(self) -> float: ...

    @property
    def rebuild(self) -> bool: ...

    @property
    def chosen_rows(self) -> list[int]: ...

    @property
    def memo(self) -> dict[Any, Any]: ...

    def hint(self, name: str, default: Any = None) -> Any: ...

    def hints(self, name: str) -> tuple[Any, ...]: ...


class RequestError(ValueError):
    """The request cannot be judged as given: it fails, whatever the
    hosts. ``message`` says why, starting with the field at fault."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BaseFilter:
    # The name enabled_filters uses; Nova's class name for ours.
    name: ClassVar[str | None] = None
    run_filter_once_per_request: ClassVar[bool] = False
    RUN_ON_REBUILD: ClassVar[bool] = False

    def __init__(self, conf: Any) -> None:
        self.conf = conf

    def mask(self, request: Request, rows: Rows) -> Mask:
        """True for the ``rows`` that pass; may raise RequestError."""
        raise NotImplementedError

    def why(self, request: Request, row: int) -> str:
        """Why ``row`` was rejected, for explain; override for detail."""
        return f"rejected by {self.name}"


def all_pass(rows: Rows) -> Mask:
    return np.ones(len(rows), bool)


class HostView:
    """One row of the host state table, read as Nova's HostState reads:
    for per-host plugins, not for built-in filters."""

    def __init__(self, table: Any, row: int) -> None:
        self._table = table
        self.row = int(row)

    @property
    def uuid(self) -> str:
        return self._table.uuids[self.row]

    @property
    def host(self) -> str:
        return self._table.hosts[self.row]

    @property
    def nodename(self) -> str:
        return self._table.nodenames[self.row]

    def __getattr__(self, column: str) -> Any:
        # free_ram_mb, free_disk_mb, vcpus_total, vcpus_used,
        # num_instances, num_io_ops, failed_builds, hypervisor_version...
        if column.startswith("_"):
            raise AttributeError(column)
        array = getattr(self._table, column, None)
        if not isinstance(array, np.ndarray) or array.ndim != 1:
            raise AttributeError(column)
        return array[self.row].item()

    @property
    def hypervisor_type(self) -> str | None:
        return self._table.hypervisor_types.name(
            int(self._table.hypervisor_type[self.row]))

    @property
    def cell_uuid(self) -> str | None:
        return self._table.cells.name(int(self._table.cell[self.row]))

    @property
    def availability_zone(self) -> str | None:
        return self._table.zone(self.row)

    @property
    def aggregates(self) -> Any:
        return self._table.aggregates_of(self.row)

    @property
    def instances(self) -> Any:
        return self._table.instances_on(self.row)

    @property
    def node(self) -> Any:
        """The compute node record (cpu_info, numa_topology, stats...)."""
        return self._table.node(self.row)

    @property
    def service(self) -> Any:
        return self._table.service(self.row)

    @property
    def metrics(self) -> dict[str, Any]:
        return {m["name"]: m.get("value")
                for m in (self.node.metrics or ())}


class PerHostFilter(BaseFilter):
    """A filter that judges one host at a time (third-party plugins)."""

    def host_passes(self, host: HostView, request: Request) -> bool:
        raise NotImplementedError

    def mask(self, request: Request, rows: Rows) -> Mask:
        table = request.table
        return np.fromiter(
            (bool(self.host_passes(HostView(table, r), request))
             for r in rows), bool, count=len(rows))
