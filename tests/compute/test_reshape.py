"""Reshapes: inventory and the allocations against it move in one POST
/reshaper: split, merge, move; named assignments and first-fit; bad
moves refused with nothing changed (the planner without a database,
then the report client on the embedded placement and the REST API, on
every engine)."""

import json
import uuid

import pytest

from compute import reshape_command, upgrade
from compute.placement_port import ConsumerState, DirectPort, HttpPort
from compute.provider_tree import ProviderTree
from compute.report_client import ReportClient, ReportError
from compute.reshape import Move, ReshapeError, derive_moves, plan
from tests.compute import report_fixtures
from tests.compute.report_fixtures import (
    CountingPort,
    allocate,
    resources_of,
    totals,
)
from tests.functional.api_helpers import serve_http, snapshot

# The shared fixtures: the embedded placement and a port on it (two kinds).
placement = report_fixtures.placement
port = report_fixtures.port


def _u(n):
    return str(uuid.UUID(int=n))


ROOT = _u(1)


def _flat(vgpu=8, vf=2):
    tree = ProviderTree()
    tree.new_root("cn1", uuid=ROOT, inventories={
        "VCPU": 16, "VGPU": vgpu, "SRIOV_NET_VF": vf})
    return tree


def _nested(gpus=(4, 4), vf=2):
    """The example of issue 25: the root keeps VCPU, each GPU child gets
    its VGPU, a PF child the VFs."""
    tree = ProviderTree()
    tree.new_root("cn1", uuid=ROOT, inventories={"VCPU": 16})
    for i, vgpu in enumerate(gpus):
        tree.new_child(f"cn1-gpu{i}", ROOT, uuid=_u(10 + i),
                       inventories={"VGPU": vgpu})
    tree.new_child("cn1-pf0", ROOT, uuid=_u(20),
                   inventories={"SRIOV_NET_VF": vf})
    return tree


def _split_moves(named=None):
    named = named or {}
    return [Move(ROOT, _u(10), {"VGPU": 4}, named.get(_u(10), {})),
            Move(ROOT, _u(11), {"VGPU": 4}, named.get(_u(11), {})),
            Move(ROOT, _u(20), {"SRIOV_NET_VF": 2})]


def _state(consumer, allocations):
    return ConsumerState(consumer, allocations, 1, "p", "u")


def _plan(held, wanted, moves, on_root):
    """Plan with ``on_root``: {consumer: {rc: n}} on the root."""
    consumers = {c: _state(c, {ROOT: dict(a)}) for c, a in on_root.items()}
    return plan(held, wanted, moves, {ROOT: on_root}, consumers)


def _moved(planned):
    return {c.uuid: c.allocations for c in planned.consumers}


# the planner (no database)


def test_first_fit_takes_the_largest_first_and_keeps_each_whole():
    on_root = {_u(100): {"VGPU": 1}, _u(101): {"VGPU": 3},
               _u(102): {"VGPU": 2}, _u(103): {"VGPU": 2}}
    planned = _plan(_flat(), _nested(), _split_moves(), on_root)
    # 3 -> gpu0 (1 left); 2 and 2 -> gpu1 (0 left); 1 -> gpu0.
    assert _moved(planned) == {
        _u(100): {_u(10): {"VGPU": 1}}, _u(101): {_u(10): {"VGPU": 3}},
        _u(102): {_u(11): {"VGPU": 2}}, _u(103): {_u(11): {"VGPU": 2}}}
    assert planned.inventories[ROOT] == _nested()[ROOT].inventories
    assert set(planned.inventories) == {ROOT, _u(10), _u(11), _u(20)}


def test_first_fit_leaves_alone_what_the_source_keeps_room_for():
    held = _flat(vgpu=8)
    wanted = _nested(gpus=(4,))
    wanted.update_inventories(ROOT, {"VCPU": 16, "VGPU": 4})
    moves = [Move(ROOT, _u(10), {"VGPU": 4})]
    on_root = {_u(100): {"VGPU": 3}, _u(101): {"VGPU": 2},
               _u(102): {"VGPU": 1}}
    planned = _plan(held, wanted, moves, on_root)
    # 3 stays, 2 does not fit beside it and moves, 1 stays.
    assert _moved(planned) == {_u(101): {_u(10): {"VGPU": 2}}}


def test_first_fit_respects_max_unit_and_step():
    wanted = _nested()
    wanted.update_inventories(_u(10), {"VGPU": {"total": 4, "max_unit": 1}})
    planned = _plan(_flat(), wanted, _split_moves(),
                    {_u(100): {"VGPU": 2}})
    assert _moved(planned) == {_u(100): {_u(11): {"VGPU": 2}}}


def test_a_named_assignment_wins_and_may_split_a_consumer():
    on_root = {_u(100): {"VCPU": 2, "VGPU": 4}, _u(101): {"VGPU": 2}}
    named = {_u(10): {_u(100): {"VGPU": 2}}, _u(11): {_u(100): {"VGPU": 2}}}
    planned = _plan(_flat(), _nested(), _split_moves(named), on_root)
    assert _moved(planned) == {
        _u(100): {ROOT: {"VCPU": 2}, _u(10): {"VGPU": 2},
                  _u(11): {"VGPU": 2}},
        _u(101): {_u(10): {"VGPU": 2}}}
    # The rest goes by first-fit, whole: 4 fits on neither GPU's 2 left.
    with pytest.raises(ReshapeError, match="fits on none"):
        _plan(_flat(), _nested(), _split_moves(named),
              {**on_root, _u(101): {"VGPU": 4}})


def _numa(nodes=((8, 16000), (8, 16384))):
    """The root's CPUs and memory on NUMA children: (VCPU, MEMORY_MB)
    per node; the nodes' memory need not add up to the root's."""
    tree = ProviderTree()
    tree.new_root("cn1", uuid=ROOT, inventories={"DISK_GB": 100})
    for i, (vcpu, memory) in enumerate(nodes):
        tree.new_child(f"cn1_NUMA_{i}", ROOT, uuid=_u(30 + i),
                       inventories={"VCPU": vcpu, "MEMORY_MB": memory})
    return tree


def _numa_flat(vcpu=16, memory=32768):
    tree = ProviderTree()
    tree.new_root("cn1", uuid=ROOT, inventories={
        "VCPU": vcpu, "MEMORY_MB": memory, "DISK_GB": 100})
    return tree


def test_derived_moves_follow_each_class_to_where_it_grows():
    moves = derive_moves(_numa_flat(), _numa())
    assert moves == [
        Move(ROOT, _u(30), {"MEMORY_MB": 16000, "VCPU": 8}),
        Move(ROOT, _u(31), {"MEMORY_MB": 16384, "VCPU": 8})]
    # And back: each node gives its classes to the root.
    assert derive_moves(_numa(), _numa_flat()) == [
        Move(_u(30), ROOT, {"MEMORY_MB": 32768, "VCPU": 16}),
        Move(_u(31), ROOT, {"MEMORY_MB": 32768, "VCPU": 16})]
    # No class changes place: nothing to move (a VF count that shrinks,
    # a class that goes with no one gaining it).
    assert derive_moves(_flat(), _flat(vgpu=4)) == []
    assert derive_moves(_nested(), _nested(vf=1)) == []
    assert derive_moves(_numa(), _numa()) == []


def test_derived_moves_keep_each_instance_whole_on_one_node():
    on_root = {_u(100 + i): {"VCPU": 2, "MEMORY_MB": 6000}
               for i in range(4)}
    held, wanted = _numa_flat(), _numa()
    moves = derive_moves(held, wanted)

    def plan_for(on_root):
        consumers = {c: _state(c, {ROOT: dict(a)})
                     for c, a in on_root.items()}
        return plan(held, wanted, moves, {ROOT: on_root}, consumers,
                    exact_totals=False)

    # Two by two: 12000 of node 0's 16000 MB, 12000 of node 1's 16384;
    # each instance's CPUs with its memory.
    assert _moved(plan_for(on_root)) == {
        c: {_u(30) if i < 2 else _u(31): {"VCPU": 2, "MEMORY_MB": 6000}}
        for i, c in enumerate(sorted(on_root))}
    # A fifth fits on neither node whole or in part: refused, naming it.
    with pytest.raises(ReshapeError, match=f"consumer {_u(104)}: its 6000 "
                       "MEMORY_MB .* fits on none .*4000 left.*4384 left"):
        plan_for({**on_root, _u(104): {"VCPU": 2, "MEMORY_MB": 6000}})


def test_derived_moves_split_an_instance_only_when_nothing_holds_it_whole():
    # Node 0 has the memory, node 1 the CPUs: no node takes the instance
    # whole, so its classes go each where they fit.
    wanted = _numa(nodes=((1, 16384), (8, 2048)))
    held = _numa_flat(vcpu=9, memory=20000)
    on_root = {_u(100): {"VCPU": 4, "MEMORY_MB": 8192}}
    consumers = {c: _state(c, {ROOT: dict(a)}) for c, a in on_root.items()}
    planned = plan(held, wanted, derive_moves(held, wanted),
                   {ROOT: on_root}, consumers, exact_totals=False)
    assert _moved(planned) == {_u(100): {_u(30): {"MEMORY_MB": 8192},
                                         _u(31): {"VCPU": 4}}}
    # Derived moves do not conserve totals; given as moves of their own
    # they would be refused.
    with pytest.raises(ReshapeError, match="the moves take"):
        plan(held, wanted, derive_moves(held, wanted), {ROOT: on_root},
             consumers)


@pytest.mark.parametrize("moves, on_root, message", [
    ([Move(ROOT, _u(10), {"VGPU": 4})], {},
     "VGPU total 8 but the moves take 4 and it keeps 0"),
    ([Move(ROOT, _u(10), {"VGPU": 8}), Move(ROOT, _u(20),
                                           {"SRIOV_NET_VF": 2})], {},
     "destination .*cn1-gpu0.*: VGPU total 4 is less than the 8"),
    ([Move(_u(99), _u(10), {"VGPU": 4})], {}, "no such provider"),
    ([Move(ROOT, _u(98), {"VGPU": 4})], {}, "not in the wanted tree"),
    ([Move(ROOT, _u(20), {"VGPU": 4})], {}, "has no VGPU inventory"),
    ([Move(ROOT, _u(10), {"VGPU": 0})], {}, "not a positive integer"),
    (_split_moves()[:2], {_u(100): {"SRIOV_NET_VF": 1}},
     "gives up its SRIOV_NET_VF .* no move takes it"),
    (_split_moves(), {_u(100): {"VGPU": 5}}, "fits on none"),
    (_split_moves({_u(10): {_u(100): {"VGPU": 2}}}), {_u(100): {"VGPU": 1}},
     "the moves assign more"),
    (_split_moves({_u(10): {_u(100): {"SRIOV_NET_VF": 1}}}),
     {_u(100): {"SRIOV_NET_VF": 1}}, "not among the resources"),
    (_split_moves({_u(10): {_u(100): {"VGPU": 3}, _u(101): {"VGPU": 3}}}),
     {_u(100): {"VGPU": 3}, _u(101): {"VGPU": 3}}, "exceeds its capacity"),
])
def test_bad_moves_are_refused(moves, on_root, message):
    with pytest.raises(ReshapeError, match=message):
        _plan(_flat(), _nested(), moves, on_root)


# through the report client (embedded and HTTP, every engine)


def _report_flat(port, placement, instances):
    """The flat tree in placement, and instances on it: {consumer:
    {rc: n}} (VCPU 1 each besides)."""
    client = ReportClient(port)
    client.update_from_provider_tree(_flat())
    made = {}
    for amounts in instances:
        consumer = allocate(placement, {ROOT: {"VCPU": 1, **amounts}})
        made[consumer] = amounts
    return client, made


def test_split_the_example_of_the_issue(port, placement, store):
    client, made = _report_flat(port, placement, [
        {"VGPU": 2}, {"VGPU": 2}, {"VGPU": 3, "SRIOV_NET_VF": 1}])
    vm1, vm2, vm3 = made
    # The driver knows vm1's and vm2's VGPUs sit on the second GPU.
    named = {_u(11): {vm1: {"VGPU": 2}, vm2: {"VGPU": 2}}}
    client.update_from_provider_tree(_nested(), moves=_split_moves(named))
    assert totals(placement, ROOT) == {"VCPU": 16}
    assert totals(placement, _u(10)) == {"VGPU": 4}
    assert totals(placement, _u(20)) == {"SRIOV_NET_VF": 2}
    assert resources_of(placement, vm1) == {ROOT: {"VCPU": 1},
                                            _u(11): {"VGPU": 2}}
    assert resources_of(placement, vm3) == {
        ROOT: {"VCPU": 1}, _u(10): {"VGPU": 3}, _u(20): {"SRIOV_NET_VF": 1}}
    assert placement.get_provider_usages(ROOT)[1] == {"VCPU": 3}
    # A node that restarts and gives the same moves again: the tree is
    # already there, nothing more is written.
    before = snapshot(store)
    ReportClient(port).update_from_provider_tree(
        _nested(), moves=_split_moves(named))
    assert snapshot(store) == before


def test_a_numa_split_without_moves_is_a_derived_reshape(port, placement,
                                                        store):
    counting = CountingPort(port)
    client = ReportClient(counting)
    client.update_from_provider_tree(_numa_flat())
    vms = [allocate(placement, {ROOT: {"VCPU": 2, "MEMORY_MB": 6000,
                                       "DISK_GB": 10}}) for _ in range(4)]
    counting.calls.clear()
    client.update_from_provider_tree(_numa())
    assert "reshape" in counting.calls
    for vm in vms:
        [node] = set(resources_of(placement, vm)) - {ROOT}
        assert resources_of(placement, vm) == {
            ROOT: {"DISK_GB": 10}, node: {"VCPU": 2, "MEMORY_MB": 6000}}
    assert totals(placement, ROOT) == {"DISK_GB": 100}
    # Too much for the nodes: refused with everything as it was.
    client.update_from_provider_tree(_numa_flat())
    allocate(placement, {ROOT: {"VCPU": 2, "MEMORY_MB": 6000}})
    before = snapshot(store)
    with pytest.raises(ReshapeError, match="fits on none"):
        client.update_from_provider_tree(_numa())
    assert snapshot(store) == before


def test_a_class_that_changes_place_unused_is_a_plain_update(port,
                                                             placement):
    counting = CountingPort(port)
    client = ReportClient(counting)
    client.update_from_provider_tree(_numa_flat())
    # Allocations of a class that stays put do not make a reshape.
    allocate(placement, {ROOT: {"DISK_GB": 10}})
    counting.calls.clear()
    client.update_from_provider_tree(_numa())
    assert "reshape" not in counting.calls
    assert totals(placement, _u(30)) == {"VCPU": 8, "MEMORY_MB": 16000}


def test_merge_two_children_into_one(port, placement):
    client = ReportClient(port)
    client.update_from_provider_tree(_nested())
    vm1 = allocate(placement, {_u(10): {"VGPU": 3}})
    vm2 = allocate(placement, {_u(11): {"VGPU": 4}})
    merged = ProviderTree(p.copy() for p in _nested() if p.uuid != _u(11))
    merged.update_inventories(_u(10), {"VGPU": 8})
    # gpu1 gives all its VGPU to gpu0, then goes.
    client.update_from_provider_tree(
        merged, moves=[Move(_u(11), _u(10), {"VGPU": 4})])
    assert totals(placement, _u(10)) == {"VGPU": 8}
    assert resources_of(placement, vm1) == {_u(10): {"VGPU": 3}}
    assert resources_of(placement, vm2) == {_u(10): {"VGPU": 4}}
    assert [p.name for p in placement.provider_tree(ROOT)] == [
        "cn1", "cn1-gpu0", "cn1-pf0"]


def test_move_to_a_new_provider(port, placement):
    counting = CountingPort(port)
    client = ReportClient(counting)
    client.update_from_provider_tree(_nested())
    # The allocation moves the generations the client has cached.
    vm = allocate(placement, {ROOT: {"VCPU": 2}, _u(20): {"SRIOV_NET_VF": 2}})
    counting.calls.clear()
    moved = ProviderTree(p.copy() for p in _nested() if p.uuid != _u(20))
    moved.new_child("cn1-pf1", ROOT, uuid=_u(21),
                    inventories={"SRIOV_NET_VF": 2})
    client.update_from_provider_tree(
        moved, moves=[Move(_u(20), _u(21), {"SRIOV_NET_VF": 2})])
    assert resources_of(placement, vm) == {ROOT: {"VCPU": 2},
                                           _u(21): {"SRIOV_NET_VF": 2}}
    assert {p.name for p in placement.provider_tree(ROOT)} == {
        "cn1", "cn1-gpu0", "cn1-gpu1", "cn1-pf1"}
    # Read afresh first, so no conflict and no retry: one creation, one
    # reshape, one deletion (the old PF, once empty).
    assert counting.writes() == ["create_provider", "reshape",
                                 "delete_provider"]


@pytest.mark.parametrize("moves, message", [
    # 4 of 8 accounted for
    ([Move(ROOT, _u(10), {"VGPU": 4}), Move(ROOT, _u(20),
                                           {"SRIOV_NET_VF": 2})],
     "moves take 4 and it keeps 0"),
    # the VFs in use, and no move for them
    (_split_moves()[:2], "no move takes it"),
    # a named assignment over the destination's capacity
    (_split_moves({_u(10): "all"}), "exceeds its capacity"),
])
def test_bad_moves_change_nothing(port, placement, store, moves, message):
    client, made = _report_flat(port, placement, [
        {"VGPU": 3}, {"VGPU": 3, "SRIOV_NET_VF": 1}])
    if moves[0].allocations == "all":
        moves = [Move(ROOT, _u(10), {"VGPU": 4},
                      {c: {"VGPU": 3} for c in made})] + moves[1:]
    before = snapshot(store)
    with pytest.raises(ReshapeError, match=message):
        client.update_from_provider_tree(_nested(), moves=moves)
    assert snapshot(store) == before


def test_a_consumer_changed_during_a_reshape_is_retried(port, placement,
                                                         store):
    client, made = _report_flat(port, placement, [{"VGPU": 2}])
    vm = next(iter(made))
    before = snapshot(store)

    # A consumer changes between the plan and the POST: the reshaper
    # refuses (consumer generation), the client retries with fresh state.
    real = client.port.reshape
    raced = []

    def racing_reshape(inventories, consumers):
        if not raced:
            raced.append(1)
            placement.put_allocations(vm, {ROOT: {"VCPU": 1, "VGPU": 1}},
                                      "project-1", "user-1")
        return real(inventories, consumers)
    client.port.reshape = racing_reshape
    client.update_from_provider_tree(_nested(), moves=_split_moves())
    assert raced and resources_of(placement, vm) == {
        ROOT: {"VCPU": 1}, _u(10): {"VGPU": 1}}
    assert snapshot(store) != before


def test_a_refused_reshaper_removes_the_providers_it_made(port, placement,
                                                          store):
    # A named assignment off the destination's step size passes the
    # plan (the driver's word is taken) but not placement.
    client, made = _report_flat(port, placement, [{"VGPU": 3}])
    wanted = _nested()
    wanted.update_inventories(_u(10), {"VGPU": {"total": 4,
                                                "step_size": 2}})
    before = _state_of(store)
    with pytest.raises(ReportError, match="reshape of tree .* refused"):
        client.update_from_provider_tree(wanted, moves=_split_moves(
            {_u(10): {c: {"VGPU": 3} for c in made}}))
    # The providers came and went: only the index's change log says so.
    assert _state_of(store) == before


def _state_of(store):
    return {table: rows for table, rows in snapshot(store).items()
            if table != "provider_changes"}


def test_typed_consumers_keep_their_type(port, placement):
    client = ReportClient(port)
    client.update_from_provider_tree(_flat())
    vm = str(uuid.uuid4())
    placement.put_allocations(vm, {ROOT: {"VGPU": 2}}, "project-1",
                              "user-1", consumer_generation=None,
                              consumer_type="INSTANCE")
    client.update_from_provider_tree(_nested(), moves=_split_moves())
    assert resources_of(placement, vm) == {_u(10): {"VGPU": 2}}
    assert placement.get_consumer(vm).consumer_type == "INSTANCE"


# the upgrade paths


def _node(n):
    """Node ``n``'s flat tree and its split (uuids offset by n * 1000)."""
    root, gpu0, gpu1 = _u(n * 1000 + 1), _u(n * 1000 + 10), _u(n * 1000 + 11)
    flat = ProviderTree()
    flat.new_root(f"cn{n}", uuid=root, inventories={"VCPU": 4, "VGPU": 8})
    nested = ProviderTree()
    nested.new_root(f"cn{n}", uuid=root, inventories={"VCPU": 4})
    nested.new_child(f"cn{n}-gpu0", root, uuid=gpu0,
                     inventories={"VGPU": 4})
    nested.new_child(f"cn{n}-gpu1", root, uuid=gpu1,
                     inventories={"VGPU": 4})
    moves = [Move(root, gpu0, {"VGPU": 4}), Move(root, gpu1, {"VGPU": 4})]
    return root, flat, upgrade.NodeReshape(nested, moves)


def _two_nodes(port, placement, second_is_bad):
    client = ReportClient(port)
    nodes = []
    for n in (1, 2):
        root, flat, node = _node(n)
        client.update_from_provider_tree(flat)
        allocate(placement, {root: {"VGPU": 3}})
        if n == 2 and second_is_bad:
            node = upgrade.NodeReshape(node.tree, node.moves[:1])
        nodes.append(node)
    return client, nodes


def test_offline_reshapes_every_node(port, placement):
    client, nodes = _two_nodes(port, placement, second_is_bad=False)
    outcomes = upgrade.reshape_offline(client, nodes)
    assert [o.ok for o in outcomes] == [True, True]
    assert placement.get_provider_usages(_u(1010))[1] == {"VGPU": 3}
    assert placement.get_provider_usages(_u(2010))[1] == {"VGPU": 3}


def test_offline_refuses_all_when_one_node_is_bad(port, placement, store):
    client, nodes = _two_nodes(port, placement, second_is_bad=True)
    before = snapshot(store)
    with pytest.raises(ReshapeError, match="cn2"):
        upgrade.reshape_offline(client, nodes)
    assert snapshot(store) == before


def test_rolling_goes_on_past_a_bad_node(port, placement):
    client, nodes = _two_nodes(port, placement, second_is_bad=True)
    # A claim on node 1 while the cloud runs, between the nodes' turns.
    allocate(placement, {_u(1001): {"VCPU": 1}})
    outcomes = upgrade.reshape_rolling(client, nodes)
    assert [o.ok for o in outcomes] == [True, False]
    assert "moves take 4 and it keeps 0" in outcomes[1].error
    assert totals(placement, _u(1001)) == {"VCPU": 4}
    assert totals(placement, _u(2001)) == {"VCPU": 4, "VGPU": 8}


# the command


def _document(nodes):
    return {"nodes": [{
        "tree": [{"uuid": p.uuid, "name": p.name,
                  "parent_uuid": p.parent_uuid,
                  "inventories": p.inventories,
                  "traits": sorted(p.traits)} for p in node.tree],
        "moves": [{"source": m.source, "destination": m.destination,
                   "resources": dict(m.resources)} for m in node.moves]}
        for node in nodes]}


@pytest.mark.parametrize("extra, status, reshaped", [
    # Offline: one bad node, nothing written; its moves cannot be used
    # (exit 2, as for any input that cannot be used).
    ([], 2, False),
    (["--check"], 2, False),
    (["--rolling"], 1, True),     # the good node goes through
], ids=["offline", "check", "rolling"])
def test_the_command(placement, store, tmp_path, capsys, extra, status,
                     reshaped):
    url, _, stop = serve_http(store)
    try:
        _, nodes = _two_nodes(HttpPort(url), placement,
                                   second_is_bad=True)
        path = tmp_path / "nodes.json"
        path.write_text(json.dumps(_document(nodes)))
        code = reshape_command.main([str(path), "--endpoint", url, *extra])
    finally:
        stop()
    assert code == status
    printed = capsys.readouterr()
    assert "(cn2)" in printed.err + printed.out
    assert (totals(placement, _u(1001)) == {"VCPU": 4}) is reshaped


def _module_command(path, config):
    return reshape_command.main([str(path), "--config-file", str(config)])


def _manage_command(path, config):
    from gantt.cmd import manage
    return manage.main(["--config-file", str(config), "compute", "reshape",
                        str(path)])


@pytest.mark.parametrize("command", [_module_command, _manage_command],
                         ids=["module", "gantt-manage"])
def test_the_command_on_the_embedded_placement(placement, db_url, store,
                                               tmp_path, capsys, command):
    _, nodes = _two_nodes(DirectPort(placement), placement,
                          second_is_bad=False)
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(_document(nodes)))
    config = tmp_path / "gantt.conf"
    config.write_text(f"[placement_database]\nconnection = {db_url}\n")
    assert command(path, config) == 0
    assert [o["error"] for o in json.loads(capsys.readouterr().out)] == [
        None, None]
    assert placement.get_provider_usages(_u(2010))[1] == {"VGPU": 3}


@pytest.mark.parametrize("content, says", [
    (None, "No such file or directory"),
    ("{not json", "not JSON"),
    ('{"nodes": [{"moves": []}]}', "missing field 'tree'"),
], ids=["missing", "not-json", "no-tree"])
def test_a_bad_nodes_file_is_one_line_exit_2(tmp_path, capsys, content,
                                             says):
    path = tmp_path / "nodes.json"
    if content is not None:
        path.write_text(content)
    assert reshape_command.main([str(path), "--endpoint",
                                 "http://127.0.0.1:1"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{reshape_command.PROG}: {path}: {says}"), line


def test_gantt_manage_compute_reshape_errors_are_one_line(tmp_path, capsys):
    from gantt.cmd import manage
    path = tmp_path / "nodes.json"
    path.write_text("{not json")
    assert manage.main(["compute", "reshape", str(path), "--endpoint",
                        "http://127.0.0.1:1"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"gantt-manage: {path}: not JSON"), line
