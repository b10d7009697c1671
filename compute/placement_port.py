"""The few placement calls the report client makes, behind one small
interface with two implementations: the embedded placement
(PlacementDirect) and the REST API at microversion 1.39.

Both raise placement.errors types, so the client tells a generation
conflict (errors.ConcurrentUpdate) from any other refusal the same way
whichever placement it talks to.
"""

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any, Protocol

import requests

from compute.provider_tree import (
    InventoryFields,
    ProviderData,
    ProviderTree,
)
from placement import direct, errors
from placement.objects import allocations

MICROVERSION = "placement 1.39"
UNTYPED_MICROVERSION = "placement 1.37"


@dataclasses.dataclass(frozen=True)
class ConsumerState:
    """A consumer's allocations ({provider uuid: {rc: amount}}) as read,
    with what a rewrite of them must give back."""

    uuid: str
    allocations: dict[str, dict[str, int]]
    generation: int | None
    project_id: str | None
    user_id: str | None
    consumer_type: str | None = None


class PlacementPort(Protocol):
    def read_tree(self, root_uuid: str) -> ProviderTree:
        """The tree under ``root_uuid`` (empty when there is none)."""

    def create_provider(self, name: str, uuid: str,
                        parent_uuid: str | None) -> int:
        """Returns the new provider's generation."""

    def update_provider(self, uuid: str, name: str,
                        parent_uuid: str | None) -> None: ...

    def delete_provider(self, uuid: str) -> None: ...

    def set_inventories(self, uuid: str, generation: int,
                        inventories: Mapping[str, InventoryFields]) -> int:
        """Returns the provider's new generation."""

    def set_traits(self, uuid: str, generation: int,
                   traits: Collection[str]) -> int: ...

    def set_aggregates(self, uuid: str, generation: int,
                       aggregates: Collection[str]) -> int: ...

    def ensure_trait(self, name: str) -> None: ...

    def ensure_resource_class(self, name: str) -> None: ...

    def provider_consumers(self, uuid: str) -> dict[str, dict[str, int]]:
        """{consumer uuid: {rc: amount}} of the allocations on a
        provider."""

    def consumer(self, consumer_uuid: str) -> ConsumerState: ...

    def reshape(self, inventories: Mapping[
                    str, tuple[int, Mapping[str, InventoryFields]]],
                consumers: Collection[ConsumerState]) -> None:
        """One POST /reshaper: every provider's new inventories
        ({uuid: (generation, {rc: fields})}) and every moved consumer's
        new allocations, all or nothing."""


class DirectPort:
    """The embedded placement."""

    def __init__(self, placement: direct.PlacementDirect) -> None:
        self.placement = placement

    def read_tree(self, root_uuid: str) -> ProviderTree:
        try:
            found = self.placement.provider_tree(root_uuid)
        except errors.NotFound:
            return ProviderTree()
        by_parent_first = _parents_first(
            [(p.uuid, p.parent_provider_uuid) for p in found])
        rows = {p.uuid: p for p in found}
        tree = ProviderTree()
        for uuid in by_parent_first:
            tree.add(self._provider(rows[uuid]))
        return tree

    def _provider(self, row: Any) -> ProviderData:
        _, invs = self.placement.get_inventories(row.uuid)
        _, traits = self.placement.get_provider_traits(row.uuid)
        generation, aggs = self.placement.get_provider_aggregates(row.uuid)
        return ProviderData(
            row.uuid, row.name, row.parent_provider_uuid,
            {rc: inv.values() for rc, inv in invs.items()},
            frozenset(traits), frozenset(aggs), generation)

    def create_provider(self, name: str, uuid: str,
                        parent_uuid: str | None) -> int:
        return self.placement.create_provider(
            name, uuid=uuid, parent_uuid=parent_uuid).generation

    def update_provider(self, uuid: str, name: str,
                        parent_uuid: str | None) -> None:
        self.placement.update_provider(uuid, name=name,
                                       parent_uuid=parent_uuid)

    def delete_provider(self, uuid: str) -> None:
        self.placement.delete_provider(uuid)

    def set_inventories(self, uuid: str, generation: int,
                        inventories: Mapping[str, InventoryFields]) -> int:
        return self.placement.set_inventories(uuid, inventories,
                                              generation=generation)[0]

    def set_traits(self, uuid: str, generation: int,
                   traits: Collection[str]) -> int:
        return self.placement.set_provider_traits(
            uuid, traits, generation=generation)[0]

    def set_aggregates(self, uuid: str, generation: int,
                       aggregates: Collection[str]) -> int:
        return self.placement.set_provider_aggregates(
            uuid, aggregates, generation=generation)[0]

    def ensure_trait(self, name: str) -> None:
        self.placement.ensure_trait(name)

    def ensure_resource_class(self, name: str) -> None:
        self.placement.ensure_resource_class(name)

    def provider_consumers(self, uuid: str) -> dict[str, dict[str, int]]:
        found = self.placement.get_provider_allocations(uuid)
        return {consumer: dict(resources)
                for consumer, resources in found.allocations.items()}

    def consumer(self, consumer_uuid: str) -> ConsumerState:
        view = self.placement.get_allocations(consumer_uuid)
        known = view.consumer
        return ConsumerState(
            consumer_uuid,
            {rp: dict(a.resources) for rp, a in view.allocations.items()},
            known.generation if known else None,
            known.project_id if known else None,
            known.user_id if known else None,
            known.consumer_type if known else None)

    def reshape(self, inventories: Mapping[
                    str, tuple[int, Mapping[str, InventoryFields]]],
                consumers: Collection[ConsumerState]) -> None:
        self.placement.reshape(
            {uuid: (gen, dict(invs))
             for uuid, (gen, invs) in inventories.items()},
            [allocations.ConsumerAllocations(
                c.uuid, c.allocations, c.project_id, c.user_id,
                c.generation, c.consumer_type) for c in consumers])


class HttpPort:
    """Placement's REST API at microversion 1.39 (gantt's or OpenStack
    Placement). ``token`` goes in X-Auth-Token."""

    def __init__(self, endpoint: str, token: str | None = "admin",
                 session: requests.Session | None = None,
                 timeout: float = 30.0) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.token = token
        self.session = session or requests.Session()
        self.timeout = timeout

    def read_tree(self, root_uuid: str) -> ProviderTree:
        found = self._call("GET", "/resource_providers",
                           params={"in_tree": root_uuid}, missing_ok=True)
        if found is None:
            return ProviderTree()
        rows = {p["uuid"]: p for p in found["resource_providers"]}
        tree = ProviderTree()
        for uuid in _parents_first(
                [(u, p["parent_provider_uuid"]) for u, p in rows.items()]):
            tree.add(self._provider(rows[uuid]))
        return tree

    def _provider(self, row: Mapping[str, Any]) -> ProviderData:
        base = f"/resource_providers/{row['uuid']}"
        invs = self._call("GET", base + "/inventories")["inventories"]
        traits = self._call("GET", base + "/traits")["traits"]
        aggs = self._call("GET", base + "/aggregates")
        return ProviderData(
            row["uuid"], row["name"], row["parent_provider_uuid"],
            {rc: direct.as_inventory(rc, fields).values()
             for rc, fields in invs.items()},
            frozenset(traits), frozenset(aggs["aggregates"]),
            aggs["resource_provider_generation"])

    def create_provider(self, name: str, uuid: str,
                        parent_uuid: str | None) -> int:
        body = {"name": name, "uuid": uuid}
        if parent_uuid is not None:
            body["parent_provider_uuid"] = parent_uuid
        return self._call("POST", "/resource_providers", body)["generation"]

    def update_provider(self, uuid: str, name: str,
                        parent_uuid: str | None) -> None:
        self._call("PUT", f"/resource_providers/{uuid}",
                   {"name": name, "parent_provider_uuid": parent_uuid})

    def delete_provider(self, uuid: str) -> None:
        self._call("DELETE", f"/resource_providers/{uuid}")

    def set_inventories(self, uuid: str, generation: int,
                        inventories: Mapping[str, InventoryFields]) -> int:
        return self._call(
            "PUT", f"/resource_providers/{uuid}/inventories",
            {"resource_provider_generation": generation,
             "inventories": _inventories_body(inventories)},
        )["resource_provider_generation"]

    def set_traits(self, uuid: str, generation: int,
                   traits: Collection[str]) -> int:
        return self._call(
            "PUT", f"/resource_providers/{uuid}/traits",
            {"resource_provider_generation": generation,
             "traits": sorted(traits)})["resource_provider_generation"]

    def set_aggregates(self, uuid: str, generation: int,
                       aggregates: Collection[str]) -> int:
        return self._call(
            "PUT", f"/resource_providers/{uuid}/aggregates",
            {"resource_provider_generation": generation,
             "aggregates": sorted(aggregates)}
        )["resource_provider_generation"]

    def ensure_trait(self, name: str) -> None:
        self._call("PUT", f"/traits/{name}")

    def ensure_resource_class(self, name: str) -> None:
        self._call("PUT", f"/resource_classes/{name}")

    def provider_consumers(self, uuid: str) -> dict[str, dict[str, int]]:
        found = self._call("GET", f"/resource_providers/{uuid}/allocations")
        return {consumer: dict(a["resources"])
                for consumer, a in found["allocations"].items()}

    def consumer(self, consumer_uuid: str) -> ConsumerState:
        found = self._call("GET", f"/allocations/{consumer_uuid}")
        return ConsumerState(
            consumer_uuid,
            {rp: dict(a["resources"])
             for rp, a in found["allocations"].items()},
            found.get("consumer_generation"), found.get("project_id"),
            found.get("user_id"), found.get("consumer_type"))

    def reshape(self, inventories: Mapping[
                    str, tuple[int, Mapping[str, InventoryFields]]],
                consumers: Collection[ConsumerState]) -> None:
        # 1.38 made consumer_type required, but a consumer written
        # without one reads back as "unknown", which may not be written.
        # A reshape does not change types: such a batch goes at 1.37,
        # which leaves every consumer's type as it is.
        typed = all(_known_type(c) for c in consumers)
        body = {
            "inventories": {
                uuid: {"resource_provider_generation": gen,
                       "inventories": _inventories_body(invs)}
                for uuid, (gen, invs) in inventories.items()},
            "allocations": {
                c.uuid: {
                    "allocations": {rp: {"resources": resources}
                                    for rp, resources
                                    in c.allocations.items()},
                    "project_id": c.project_id, "user_id": c.user_id,
                    "consumer_generation": c.generation,
                    **({"consumer_type": c.consumer_type} if typed else {})}
                for c in consumers}}
        self._call("POST", "/reshaper", body,
                   version=MICROVERSION if typed else UNTYPED_MICROVERSION)

    def _call(self, method: str, path: str, body: Any = None,
              params: Mapping[str, str] | None = None,
              missing_ok: bool = False, version: str = MICROVERSION) -> Any:
        headers = {"OpenStack-API-Version": version,
                   "Accept": "application/json"}
        if self.token is not None:
            headers["X-Auth-Token"] = self.token
        response = self.session.request(
            method, self.endpoint + path, json=body, params=params,
            headers=headers, timeout=self.timeout)
        if missing_ok and response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise _http_failure(method, path, response)
        return response.json() if response.content else None


def _known_type(consumer: ConsumerState) -> bool:
    return consumer.consumer_type not in (None, "unknown")


def _inventories_body(inventories: Mapping[str, InventoryFields]
                      ) -> dict[str, dict[str, Any]]:
    return {rc: {f: v for f, v in fields.items() if v is not None}
            for rc, fields in inventories.items()}


def _http_failure(method: str, path: str,
                  response: requests.Response) -> errors.PlacementError:
    """The placement.errors type of an error answer: a conflict on a
    generation is ConcurrentUpdate, as PlacementDirect raises it."""
    try:
        error = response.json()["errors"][0]
        detail, code = error["detail"], error.get("code")
    except (ValueError, KeyError, IndexError, TypeError):
        detail, code = response.text[:200], None
    message = f"{method} {path}: {response.status_code} {detail}"
    if response.status_code == 409 and code == errors.CONCURRENT_UPDATE:
        return errors.ConcurrentUpdate(message)
    if response.status_code == 404:
        return errors.NotFound(message)
    failure = (errors.Conflict if response.status_code == 409
               else errors.PlacementError)
    return failure(message)


def _parents_first(pairs: list[tuple[str, str | None]]) -> list[str]:
    """Provider uuids ordered so that each comes after its parent."""
    children: dict[str | None, list[str]] = {}
    for uuid, parent in pairs:
        children.setdefault(parent, []).append(uuid)
    ordered: list[str] = []
    queue = sorted(children.get(None, []))
    known = {uuid for uuid, _ in pairs}
    # A subtree read from below its root has a parent outside the set.
    queue += sorted(u for u, p in pairs if p is not None and p not in known)
    while queue:
        uuid = queue.pop(0)
        ordered.append(uuid)
        queue.extend(sorted(children.get(uuid, [])))
    return ordered
