"""Stage 1: the request's candidates, and the hosts they are on.

The request becomes a placement query (scheduler.resource_request)
answered through the placement port; candidates are grouped by the
host state row of their root provider, and the rows are narrowed to
what the request allows (a cell, hosts, ignored hosts). A rebuild asks
placement nothing: its candidates are the live hosts it names.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt

from placement import errors as placement_errors
from placement.candidates import request as cand
from placement.candidates import result as result_mod
from scheduler import errors, framework, placement_port, resource_request
from scheduler.pipeline import state as state_mod

Rows = npt.NDArray[np.int64]


class HostRows:
    """Host table rows of provider index rows (-1: not a compute node),
    through a map rebuilt only when either side's rows are
    reassigned."""

    def __init__(self, index: Any, table: Any) -> None:
        self.index = index
        self.table = table
        self._key: tuple[int, int, int] | None = None
        self._map: Rows | None = None

    def __call__(self, index_rows: Rows) -> Rows:
        index, table = self.index, self.table
        key = (index.structure_version, index.size, table.layout_version)
        mapping = self._map
        if self._key != key or mapping is None:
            mapping = table.rows_for_uuids(index.uuids[:index.size])
            self._key, self._map = key, mapping
        return mapping[index_rows]


class FindCandidates:
    """Fills the state's query, candidates, candidate hosts and rows.
    The caller has brought the candidates index up to date."""

    def __init__(self, port: placement_port.PlacementPort, table: Any,
                 conf: Any, host_rows: HostRows) -> None:
        self.port = port
        self.table = table
        self.conf = conf
        self.host_rows = host_rows

    def __call__(self, state: state_mod.RequestState) -> None:
        if state.rebuild:
            state.rows = self.restrict(state, self.table.live_rows(), None)
        else:
            self._search(state)
        state.forced = self._forced(state)

    def _search(self, state: state_mod.RequestState) -> None:
        try:
            query = resource_request.from_spec(state.spec, self.conf,
                                               self.table)
        except resource_request.NoHostsPossible as exc:
            # A zone, tenant or destination no host can match: for the
            # caller that is no valid host (Nova says the same).
            raise errors.NoValidHost(
                f"no valid host: {exc.message}", "request") from None
        state.query = query
        result = self.find(query)
        if not len(result) and query.fallback is not None:
            query = state.query = query.fallback
            result = self.find(query)
        if state.explain is not None:
            state.explain["query"] = query.query()
            state.explain["candidates"] = len(result)
            if not len(result):
                state.explain["short_of"] = self._short_of(query)
        host_rows = self.host_rows(result.anchors)
        # Sorted distinct rows by marking: cheaper than np.unique.
        size = self.table.size
        rows = result_mod.distinct_rows(host_rows, size)
        state.hold_candidates(result, host_rows, rows, size)
        if state.explain is not None:
            state.explain["placement_hosts"] = len(rows)
            zone = self._zone_note(state.spec)
            if zone:
                state.explain["zone"] = zone
        state.rows = self.restrict(state, rows, query)

    def find(self, query: resource_request.ResourceRequest
             ) -> result_mod.CandidateResult:
        """The candidates of ``query``. A resource class or trait
        placement does not know is no valid host: placement refuses the
        query and Nova's scheduler then has no candidate either."""
        try:
            return self.port.find(query.candidates_request(), sync=False)
        except (placement_errors.ResourceClassNotFound,
                placement_errors.TraitNotFound) as exc:
            raise errors.NoValidHost(f"no valid host: {exc}",
                                     "unknown_name") from None

    def _short_of(self, query: resource_request.ResourceRequest
                  ) -> list[str]:
        """For an explanation of no candidates: the amounts of the query
        (``CLASS:N``) that no provider can give even alone, whatever the
        traits, aggregates and trees asked. Empty when each could: then
        it is their combination or the other constraints."""
        short = []
        for group in query.groups.values():
            for rc, amount in sorted(group.resources.items()):
                if not amount:
                    continue
                alone = cand.CandidatesRequest(groups=(cand.RequestGroup(
                    resources={rc: amount}),), limit=1)
                try:
                    found = len(self.port.find(alone, sync=False))
                except placement_errors.ResourceClassNotFound:
                    found = 0
                if not found:
                    short.append(f"{rc}:{amount}")
        return short

    def of_host(self, state: state_mod.RequestState,
                row: int) -> result_mod.CandidateResult:
        """Fresh candidates of the request in host ``row``'s tree alone
        (after a lost claim there), on the index brought up to date."""
        assert state.query is not None
        query = dataclasses.replace(state.query, limit=None)
        query.groups = dict(query.groups)
        query.groups[""] = dataclasses.replace(
            query.unsuffixed, in_tree=self.table.uuids[row])
        return self.port.find(query.candidates_request(), sync=True)

    def _zone_note(self, spec: Any) -> str | None:
        """What the request's availability zone did to the candidates,
        in words (the rule is resource_request's), for an explanation."""
        zone = spec.availability_zone
        if not zone:
            return None
        names = sorted(a.name or a.uuid for a in self.table.agg_records
                       if a is not None
                       and a.metadata.get("availability_zone") == zone)
        if names:
            return (f"availability zone {zone}: placement was asked only "
                    f"for hosts in aggregate{'s' if len(names) > 1 else ''} "
                    f"{', '.join(names)}")
        if self.conf.scheduler.strict_availability_zones:
            # Only the default zone gets here (resource_request).
            return (f"availability zone {zone} (the default zone): hosts "
                    "in other zones' aggregates were left out")
        return (f"availability zone {zone}: no aggregate carries it, so "
                "it leaves every host (as Nova)")

    def restrict(self, state: state_mod.RequestState, rows: Rows,
                 query: resource_request.ResourceRequest | None) -> Rows:
        table = self.table
        hosts = table.hosts
        spec = state.spec
        narrowed: list[str] = []

        def keep(kept: Rows, why: str) -> Rows:
            # Said only in an explanation: no words for other requests.
            if state.explain is not None and len(kept) != len(rows):
                narrowed.append(f"{why}: {len(rows)} -> "
                                f"{framework.hosts(len(kept), 'host')}")
            return kept

        if query is not None and query.hosts is not None:
            rows = keep(rows[[hosts[r] in query.hosts for r in rows]],
                        "requested hosts")
        dest = spec.requested_destination
        cell = (query.cell if query is not None else None) or (
            dest.cell if dest is not None else None)
        if cell:
            rows = keep(rows[table.cell[rows] == table.cell_code(cell)],
                        f"cell {cell}")
        if state.rebuild and dest is not None and (dest.host or dest.node):
            rows = keep(rows[[
                (not dest.host or hosts[r] == dest.host) and
                (not dest.node or table.nodenames[r] == dest.node)
                for r in rows]], "requested destination")
        if spec.ignore_hosts:
            ignore = set(spec.ignore_hosts)
            rows = keep(rows[[hosts[r] not in ignore for r in rows]],
                        "ignored hosts")
        if state.explain is not None and narrowed:
            state.explain["narrowed"] = narrowed
        return rows

    def _forced(self, state: state_mod.RequestState) -> Rows | None:
        """Rows of the forced hosts/nodes, or None when nothing is
        forced. Forced hosts skip the filters, as in Nova, unless the
        request carries Nova's internal hint ``_nova_check_type`` (a
        rebuild with a new image: its own host, forced, must still pass
        the filters that run on a rebuild); then they only narrow the
        rows. A forced host that is not among the rows is no valid
        host, and the answer says so."""
        spec = state.spec
        force_hosts = set(spec.force_hosts)
        force_nodes = set(spec.force_nodes)
        if not force_hosts and not force_nodes:
            return None
        rows = state.rows
        table = self.table
        forced = rows[[(not force_hosts or table.hosts[r] in force_hosts)
                       and (not force_nodes
                            or table.nodenames[r] in force_nodes)
                       for r in rows]]
        names = _forced_names(force_hosts, force_nodes)
        checked = bool(spec.scheduler_hints.get("_nova_check_type"))
        if state.explain is not None:
            state.explain.setdefault("narrowed", []).append(
                f"{names}: {len(rows)} -> "
                f"{framework.hosts(len(forced), 'host')}"
                f"{'' if checked else '; forced hosts skip the filters'}")
        if not len(forced):
            raise errors.NoValidHost(
                f"no valid host: {names} not among the "
                f"{framework.hosts(len(rows))}"
                f"{'' if state.rebuild else ' placement returned'}",
                "forced_host")
        if checked:
            state.rows = forced
            return None
        return forced


def _forced_names(hosts: set[str], nodes: set[str]) -> str:
    """The forced hosts and nodes, in words."""
    parts = []
    if hosts:
        parts.append(("forced host " if len(hosts) == 1 else
                      "forced hosts ") + ", ".join(sorted(hosts)))
    if nodes:
        parts.append(("node " if len(nodes) == 1 else "nodes ")
                     + ", ".join(sorted(nodes)))
    return " and ".join(parts)
