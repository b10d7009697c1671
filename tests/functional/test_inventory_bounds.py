"""Inventory numbers at and past what gantt holds (every engine).

Every integer field is at most 2147483647 (the INTEGER columns), as in
OpenStack Placement. allocation_ratio is at most 2147483647 too: the
candidates index keeps capacity, (total - reserved) * ratio, in 64-bit
integers, which that bound always fits. Placement takes ratios up to
3.40282e38; gantt refuses those above its bound with a 400 that says
why, on every path (REST, PlacementDirect, cloud files, reshaper), and
stores nothing. Elsewhere the answers are Placement 16's own, recorded
in fixtures/placement16/inventory_bounds.json (its make_fixtures.py).
"""

import json
import pathlib

import pytest
import yaml

from cloudfile import loader
from placement import direct, errors
from placement.objects import inventories, providers, reshaper
from tests.functional import api_helpers
from tests.functional import objects_helpers as h

Inventory = inventories.Inventory
MAX_INT = inventories.MAX_INT

FIXTURE = (pathlib.Path(__file__).parent / "fixtures" / "placement16"
           / "inventory_bounds.json")
CASES = {c["name"]: c for c in json.loads(FIXTURE.read_text())["cases"]}
# Ratios Placement stores and gantt refuses: capacity would not fit.
GANTT_REFUSES = ["ratio_3_4e38_put_all", "ratio_3_4e38_post",
                 "ratio_3_4e38_put_one", "ratio_above_max_int"]


@pytest.fixture
def client(store):
    app, engine = api_helpers.make_app(store)
    yield api_helpers.Client(app)
    engine.close()


def _send(client, request):
    method, path, version, body = request
    response = client.request(method, path, body, version=version)
    data = response.json if response.body else None
    for error in (data or {}).get("errors", ()):
        error.pop("request_id", None)
    return response.status_int, data


def _setup(client, case):
    for request in case["setup"]:
        status, body = _send(client, request)
        assert status < 300, body


@pytest.mark.parametrize("name", sorted(set(CASES) - set(GANTT_REFUSES)))
def test_answer_is_placements(store, client, name):
    """At the bounds and past Placement's own, gantt answers as
    Placement does: the same status and body."""
    case = CASES[name]
    _setup(client, case)
    assert _send(client, case["request"]) == (case["status"], case["body"])


@pytest.mark.parametrize("name", GANTT_REFUSES)
def test_ratio_gantt_cannot_hold(store, client, name):
    """Placement stores these ratios; gantt refuses them with a 400
    naming its bound, and nothing changes."""
    case = CASES[name]
    assert case["status"] in (200, 201)
    _setup(client, case)
    before = api_helpers.snapshot(store)
    status, body = _send(client, case["request"])
    assert status == 400
    [error] = body["errors"]
    assert error["code"] == "placement.undefined_code"
    detail = error["detail"]
    assert "Unable to " in detail and "inventory for resource provider" in (
        detail)
    assert "allocation_ratio must be a number from -3.40282e+38 to " \
        "2147483647" in detail
    assert "64-bit integer" in detail
    assert api_helpers.snapshot(store) == before


def test_the_issue_ratio_over_rest(store, client):
    """The issue's request: 3.4e38 passes the schema but is refused, and
    the candidates of the provider stay what they were."""
    case = CASES["ratio_3_4e38_put_one"]
    _setup(client, case)
    path = "/allocation_candidates?resources=VCPU:1"
    before = _send(client, ["GET", path, "1.39", None])
    assert _send(client, case["request"])[0] == 400
    assert _send(client, ["GET", path, "1.39", None]) == before
    [summary] = before[1]["provider_summaries"].values()
    assert summary["resources"] == {"VCPU": {"capacity": 8, "used": 0}}


# The object layer: every way in.

TOO_BIG = [3.4e38, float(MAX_INT) + 1, 1e300, 1.7e308, 10 ** 400]


@pytest.fixture
def rp(store):
    return providers.create(store, "cn1").uuid


@pytest.mark.parametrize("ratio", TOO_BIG)
def test_objects_refuse_ratio(store, rp, ratio):
    """replace_all, add and update all refuse, with nothing written."""
    inv = Inventory("VCPU", 8, allocation_ratio=ratio)
    for write, args in ((inventories.replace_all, (rp, None, [inv])),
                        (inventories.add, (rp, inv))):
        error = h.raises_unchanged(store, errors.InvalidInventoryValue,
                                   write, *args)
        assert "allocation_ratio" in error.message
        assert error.http_status == 400
    inventories.add(store, rp, Inventory("VCPU", 8))
    h.raises_unchanged(store, errors.InvalidInventoryValue,
                       inventories.update, rp, inv)


def test_direct_refuses_ratio(store, rp):
    placement = direct.PlacementDirect(store)
    before = h.snapshot(store)
    with pytest.raises(errors.InvalidInventoryValue):
        placement.set_inventories(
            rp, {"VCPU": {"total": 8, "allocation_ratio": 3.4e38}})
    with pytest.raises(errors.InvalidInventoryValue):
        placement.update_inventory(
            rp, "VCPU", {"total": 8, "allocation_ratio": 3.4e38})
    assert h.snapshot(store) == before


def test_reshaper_refuses_ratio(store, rp):
    invs = {rp: (0, [Inventory("VCPU", 8, allocation_ratio=3.4e38)])}
    h.raises_unchanged(store, errors.InvalidInventoryValue,
                       reshaper.reshape, invs, [])


def test_cloud_file_refuses_ratio(store, tmp_path):
    path = tmp_path / "cloud.yaml"
    path.write_text(yaml.safe_dump({"providers": [{
        "name": "a", "inventories": {
            "VCPU": {"total": 8, "allocation_ratio": 3.4e38}}}]}))
    with pytest.raises(loader.CloudFileError) as caught:
        loader.load(store, loader.read(str(path)))
    assert caught.value.field == "providers[0].inventories.VCPU"
    assert "allocation_ratio" in caught.value.message
    assert providers.list_all(store) == []


# Inventory.check itself (no database).

@pytest.mark.parametrize("reserved", [0, 8])
@pytest.mark.parametrize("ratio", TOO_BIG)
def test_check_refuses_above_the_bound(ratio, reserved):
    """Above 2147483647 whatever the capacity (none, with reserved ==
    total)."""
    with pytest.raises(errors.InvalidInventoryValue) as info:
        Inventory("VCPU", 8, reserved=reserved,
                  allocation_ratio=ratio).check("rp")
    assert "2147483647" in info.value.message


def test_check_takes_the_bound_and_capacity_fits():
    """The largest inventory: capacity below 2 ** 62, an int64 with room
    to spare."""
    inv = Inventory("VCPU", MAX_INT, allocation_ratio=MAX_INT)
    inv.check("rp")
    assert inv.capacity == MAX_INT * MAX_INT < 2 ** 62
    Inventory("VCPU", MAX_INT, allocation_ratio=float(MAX_INT)).check("rp")


@pytest.mark.parametrize("ratio", [-1.0, -0.125, -float(MAX_INT) * 10,
                                   -3.5e38, -1e300, -1.7e308, -10 ** 400])
def test_check_negative_capacity_is_placements_error(ratio):
    """A negative ratio leaving a capacity of -1 or less gets Placement's
    capacity error, whatever its size."""
    with pytest.raises(errors.InvalidInventoryCapacity):
        Inventory("VCPU", 8, allocation_ratio=ratio).check("rp")


def test_check_small_negative_capacity_counts_as_zero():
    """A capacity above -1 is truncated to 0, as Placement's is: no
    capacity, taken from 1.26."""
    inv = Inventory("VCPU", 8, allocation_ratio=-0.1)
    assert inv.capacity == 0
    inv.check("rp")
    with pytest.raises(errors.InvalidInventoryCapacity):
        inv.check("rp", reserved_can_be_total=False)


@pytest.mark.parametrize("ratio", [-5.0, -3e9, -3.40282e38])
def test_check_negative_ratio_without_capacity(ratio):
    """With reserved == total the capacity is 0 whatever the ratio:
    taken (from 1.26), down to Placement's bound."""
    inv = Inventory("VCPU", 8, reserved=8, allocation_ratio=ratio)
    inv.check("rp")
    with pytest.raises(errors.InvalidInventoryCapacity):
        inv.check("rp", reserved_can_be_total=False)


@pytest.mark.parametrize("ratio", [-3.5e38, -1e300, -10 ** 400])
def test_check_refuses_below_placements_bound(ratio):
    with pytest.raises(errors.InvalidInventoryValue):
        Inventory("VCPU", 8, reserved=8, allocation_ratio=ratio).check("rp")
