"""Cell retry: move an instance's claim to the next alternate host.

select_destinations claims the chosen host of each instance and returns
alternates from the same cell, each with its own (unclaimed) allocation
request. When the build fails on the chosen host, the conductor of that
cell does not call the scheduler again: it removes the instance's
allocations, then claims the alternates' requests in order until one
succeeds, as Nova's conductor does with its host lists.

``placement`` is the scheduler's placement port
(scheduler.placement_port.PlacementPort) or what it claims through:
the embedded engine (placement.direct.PlacementDirect) or
:class:`PlacementHttp` in front of a placement REST API
(gantt-placement-api or OpenStack Placement). Both offer the allocation
writes and raise the typed errors of placement.errors, so the port's
one claim loop (scheduler.claims) serves both.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import requests

from placement import direct
from placement import errors as placement_errors
from placement.candidates import result as result_mod
from scheduler import claims, errors, placement_port
from scheduler import selection as selection_mod

# The microversion of the HTTP writes: consumer generations (1.28) and
# mappings accepted in the body (1.34), without the consumer type that
# 1.38 makes mandatory. Nova claims at its allocation requests' 1.36.
HTTP_MICROVERSION = "1.36"


class MaxRetriesExceeded(errors.SchedulerError):
    """No alternate of the instance could be claimed."""

    def __init__(self, instance_uuid: str, failed_host: str | None,
                 tried: Iterable[tuple[str, str]],
                 kept_source: bool = False) -> None:
        self.instance_uuid = instance_uuid
        self.failed_host = failed_host
        # [(host, why)] in the order tried
        self.tried = list(tried)
        where = f" after the build failed on {failed_host}" \
            if failed_host else ""
        if self.tried:
            hosts = ", ".join(f"{host} ({why})" for host, why in self.tried)
            detail = f"no alternate host could be claimed: {hosts}"
        else:
            detail = "no alternate host left"
        holds = ("only what it held before the failed claim (its source)"
                 if kept_source else "no allocations")
        super().__init__(
            f"exhausted the hosts for instance {instance_uuid}{where}: "
            f"{detail}; the instance holds {holds}")


class InvalidSelection(errors.SchedulerError, ValueError):
    """A selection the retry cannot use (nothing was changed)."""


class PlacementUnavailable(errors.SchedulerError):
    """The placement API did not answer, refused the caller, or answered
    what no client expects (a 5xx, a body that is not placement's)."""


def claim_first(placement: placement_port.PlacementPort
                | claims.AllocationWriter,
                selections: Sequence[selection_mod.Selection
                                     | dict[str, Any]],
                instance_uuid: str, project_id: str | None,
                user_id: str | None,
                failed_host: str | None = None) -> selection_mod.Selection:
    """Claim the first alternate that fits for ``instance_uuid``; return
    its Selection.

    ``selections``: what select_destinations returned for the instance
    (Selection objects or their dict form), or what is left of it. When
    ``failed_host`` is None, the first selection is the host that failed
    and the others are the alternates; otherwise every selection on
    ``failed_host`` (a service host or a node name) is skipped and the
    rest are tried in order.

    The failed host's claim is removed first: the instance's
    allocations, except what it also holds outside the failed host's
    tree and its request (an evacuated instance's source allocation,
    which stays, and which the alternate's claim is made beside). An
    alternate whose request cannot be claimed (its host filled up or
    went away) is skipped. A selection without an allocation request is
    taken as it is, as Nova does. Raises MaxRetriesExceeded when none
    remains: the instance then holds no allocations (or its source
    only). InvalidSelection (before any change) for a malformed
    selection.
    """
    if not isinstance(selections, list | tuple):
        raise InvalidSelection(
            f"instance {instance_uuid}: selections: expected a list, got "
            f"{type(selections).__name__}")
    given = [_as_selection(s, i) for i, s in enumerate(selections)]
    if failed_host is None:
        if not given:
            raise InvalidSelection(
                f"instance {instance_uuid}: no selections given (expected "
                "the failed host first, then its alternates)")
        failed_host = given[0].service_host
        failed, alternates = given[:1], given[1:]
    else:
        failed = [s for s in given
                  if failed_host in (s.service_host, s.nodename)]
        alternates = [s for s in given if s not in failed]
    # Parse every request before changing anything.
    wanted = [(s, _allocation_request(s, instance_uuid))
              for s in alternates]
    failed_requests = [_allocation_request(s, instance_uuid)
                       for s in failed]
    port = placement_port.for_writer(placement)
    kept_source = _release_failed(port, instance_uuid, failed,
                                  failed_requests, project_id, user_id)
    tried = []
    for chosen, request in wanted:
        if request is None:
            return chosen
        outcome = port.claim(instance_uuid, request, project_id, user_id)
        if outcome is claims.Outcome.CLAIMED:
            return chosen
        tried.append((chosen.service_host, outcome.value))
    raise MaxRetriesExceeded(instance_uuid, failed_host, tried, kept_source)


def _release_failed(port: placement_port.PlacementPort, instance_uuid: str,
                    failed: Sequence[selection_mod.Selection],
                    requests: Sequence[result_mod.AllocationRequest | None],
                    project_id: str | None, user_id: str | None) -> bool:
    """Remove the failed hosts' claim of the instance; True when it kept
    a source allocation beside it.

    A new instance holds only what its claim wrote, all of it in the
    failed request. An evacuated instance also holds its source host's
    allocation (Nova's scheduler claims the destination beside it): then
    only the failed hosts' trees are removed, and the source (with any
    sharing provider it uses) stays."""
    writer = port.writer
    held, generation = claims.read_held(writer, instance_uuid)
    claimed: set[str] = set()
    for request in requests:
        if request is None:
            claimed = set()
            break
        claimed.update(request.allocations)
    if generation is None or not claimed or set(held) <= claimed:
        port.unclaim(instance_uuid)
        return False
    trees: set[str] = set()
    for sel in failed:
        if sel.compute_node_uuid:
            trees.update(str(p.uuid) for p in
                         writer.provider_tree(sel.compute_node_uuid))
    source = {rp: amounts for rp, amounts in held.items()
              if rp not in trees}
    if source == held:
        return True
    try:
        writer.put_allocations(instance_uuid, source,
                               project_id=project_id, user_id=user_id,
                               consumer_generation=generation)
    except placement_errors.ConsumerGenerationConflict:
        raise errors.AllocationUpdateFailed(
            instance_uuid, "another process changed the instance's "
            "allocations while the failed host's claim was removed"
        ) from None
    return True


def _as_selection(value: Any, position: int) -> selection_mod.Selection:
    if isinstance(value, selection_mod.Selection):
        return value
    if isinstance(value, dict):
        try:
            return selection_mod.Selection(**value)
        except TypeError as exc:
            raise InvalidSelection(
                f"selections[{position}]: not a Selection: {exc}") from None
    raise InvalidSelection(
        f"selections[{position}]: not a Selection: {type(value).__name__}")


def _allocation_request(sel: selection_mod.Selection, instance_uuid: str
                        ) -> result_mod.AllocationRequest | None:
    """The selection's allocation request as placement.candidates'
    AllocationRequest; None when it has none."""
    text = sel.allocation_request
    if text is None:
        return None
    where = (f"instance {instance_uuid}: the allocation request of host "
             f"{sel.service_host}")
    try:
        data = json.loads(text) if isinstance(text, str | bytes) else text
    except ValueError as exc:
        raise InvalidSelection(f"{where} is not JSON: {exc}") from None
    if data is None:
        # Nova sends "no request" JSON-encoded: "null".
        return None
    allocations = data.get("allocations") if isinstance(data, dict) else None
    if not isinstance(allocations, dict) or not allocations:
        raise InvalidSelection(
            f"{where} has no allocations: {text!r}")
    resources = {}
    for rp, entry in allocations.items():
        amounts = entry.get("resources") if isinstance(entry, dict) else None
        if not isinstance(amounts, dict) or not amounts or not all(
                isinstance(n, int) and not isinstance(n, bool) and n > 0
                for n in amounts.values()):
            raise InvalidSelection(
                f"{where}: provider {rp} needs resources as "
                f"{{class: positive integer}}, got {entry!r}")
        resources[rp] = dict(amounts)
    return result_mod.AllocationRequest(
        allocations=resources, mappings=data.get("mappings") or {})


class PlacementHttp:
    """The allocation writes of the cell retry over placement's REST API.

    ``endpoint``: the API's root URL. ``token`` goes in X-Auth-Token
    (gantt's noauth2 default believes ``admin``; with Keystone, a real
    token). ``session``: a requests.Session to reuse connections.
    """

    def __init__(self, endpoint: str, token: str | None = "admin",
                 session: requests.Session | None = None,
                 timeout: float = 30.0) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.token = token
        self.session = session or requests.Session()
        self.timeout = timeout

    def put_allocations(self, consumer_uuid: str,
                        allocation_map: Mapping[str, Any],
                        project_id: str | None, user_id: str | None,
                        consumer_generation: int | None = None) -> None:
        """Replace the consumer's allocations ({provider uuid: {class:
        amount}} or the REST form); ``consumer_generation`` None: a new
        consumer."""
        body = {
            "allocations": {rp: {"resources": direct.as_resources(a)}
                            for rp, a in allocation_map.items()},
            "project_id": project_id,
            "user_id": user_id,
            "consumer_generation": consumer_generation,
        }
        response = self._request("PUT", f"/allocations/{consumer_uuid}",
                                 body)
        if response.status_code != 204:
            raise _failure(response)

    def post_allocations(self, writes: Iterable[Any]) -> None:
        """Several consumers' allocations in one transaction, all or
        none (placement.objects.allocations.ConsumerAllocations, as
        PlacementDirect takes them); a consumer_generation of None: a
        new consumer."""
        body = {}
        for write in writes:
            body[write.consumer_uuid] = {
                "allocations": {rp: {"resources": direct.as_resources(a)}
                                for rp, a in write.allocations.items()},
                "project_id": write.project_id,
                "user_id": write.user_id,
                "consumer_generation": write.consumer_generation,
            }
        response = self._request("POST", "/allocations", body)
        if response.status_code != 204:
            raise _failure(response)

    def get_allocations(self, consumer_uuid: str) -> HttpConsumerView:
        """The consumer's allocations and generation (GET
        /allocations/{consumer})."""
        response = self._request("GET", f"/allocations/{consumer_uuid}")
        if response.status_code != 200:
            raise _failure(response)
        body = _json_of(response)
        try:
            held = {rp: _Resources(dict(entry["resources"]))
                    for rp, entry in body["allocations"].items()}
        except (KeyError, TypeError, AttributeError):
            raise PlacementUnavailable(
                f"placement answered GET /allocations/{consumer_uuid} "
                f"with no allocations: {response.text[:200]!r}") from None
        generation = body.get("consumer_generation")
        return HttpConsumerView(
            held, None if generation is None else _Generation(generation))

    def provider_tree(self, uuid: str) -> list[Any]:
        """The providers of ``uuid``'s tree (each with ``.uuid``)."""
        response = self._request("GET", f"/resource_providers?in_tree={uuid}")
        if response.status_code != 200:
            raise _failure(response)
        try:
            return [_Resources({}, rp["uuid"])
                    for rp in _json_of(response)["resource_providers"]]
        except (KeyError, TypeError):
            raise PlacementUnavailable(
                f"placement answered GET /resource_providers?in_tree={uuid}"
                f" without providers: {response.text[:200]!r}") from None

    def delete_allocations(self, consumer_uuid: str) -> None:
        response = self._request("DELETE", f"/allocations/{consumer_uuid}")
        if response.status_code == 404:
            raise placement_errors.AllocationsNotFound(consumer_uuid)
        if response.status_code != 204:
            raise _failure(response)

    def _request(self, method: str, path: str,
                 body: dict[str, Any] | None = None) -> requests.Response:
        url = self.endpoint + path
        # No token (None): requests leaves the header out.
        headers: dict[str, Any] = {
            "X-Auth-Token": self.token,
            "OpenStack-API-Version": f"placement {HTTP_MICROVERSION}",
            "Accept": "application/json"}
        try:
            return self.session.request(
                method, url, json=body, timeout=self.timeout,
                headers=headers)
        except requests.RequestException as exc:
            raise PlacementUnavailable(
                f"placement at {self.endpoint} did not answer {method} "
                f"{path}: {exc}") from None


class _Resources(NamedTuple):
    """An allocation's resources (and a provider's uuid), as the
    embedded placement's answers have them."""

    resources: dict[str, int]
    uuid: str = ""


class _Generation(NamedTuple):
    generation: int


class HttpConsumerView(NamedTuple):
    """GET /allocations/{consumer} in the shape of the embedded
    placement's ConsumerView (what scheduler.claims reads)."""

    allocations: dict[str, _Resources]
    consumer: _Generation | None


def _json_of(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise PlacementUnavailable(
            f"placement answered {response.status_code} with a body that "
            f"is not JSON: {response.text[:200]!r}") from None


# The server's wording is kept: these carry it instead of composing their
# own message, and keep the types scheduler.claims tells apart.
class _Worded:
    def __init__(self, message: str) -> None:
        placement_errors.PlacementError.__init__(
            self, message)  # type: ignore[arg-type]


class _ConsumerConflict(_Worded, placement_errors.ConsumerGenerationConflict):
    raced = False


class _ConcurrentUpdate(_Worded, placement_errors.ConcurrentUpdate):
    pass


class _NoRoom(_Worded, placement_errors.InvalidInventory):
    pass


class _ProviderGone(_Worded, placement_errors.AllocationProviderNotFound):
    pass


class _ClassGone(_Worded, placement_errors.ResourceClassNotFound):
    pass


class _BadRequest(_Worded, placement_errors.BadRequest):
    pass


def _failure(response: requests.Response) -> Exception:
    """The exception for an error answer: a placement.errors type, as
    claims.claim tells outcomes apart, or PlacementUnavailable."""
    status = response.status_code
    try:
        error = response.json()["errors"][0]
        detail, code = error["detail"], error.get("code")
    except (ValueError, KeyError, IndexError, TypeError):
        return PlacementUnavailable(
            f"placement answered {status} without an error body: "
            f"{response.text[:200]!r}")
    if status == 409 and code == placement_errors.CONCURRENT_UPDATE:
        if "consumer generation conflict" in detail:
            return _ConsumerConflict(detail)
        return _ConcurrentUpdate(detail)
    if status == 409:
        # Placement's "Unable to allocate inventory": capacity, limits.
        return _NoRoom(detail)
    if status == 400 and "that does not exist" in detail:
        return _ProviderGone(detail)
    if status == 400 and "No such resource class" in detail:
        return _ClassGone(detail)
    if status in (401, 403):
        return PlacementUnavailable(
            f"placement refused the request ({status}): {detail}; check "
            "the token")
    if status < 500:
        return _BadRequest(f"placement answered {status}: {detail}")
    return PlacementUnavailable(f"placement answered {status}: {detail}")
