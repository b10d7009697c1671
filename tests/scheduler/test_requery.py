"""No NoValidHost while a valid host exists: when the filters leave no
host among the ``[scheduler] max_placement_results`` candidates
placement answered, and the answer was cut at that limit, gantt asks
placement again without it (scheduler.pipeline.requery).

The issue's cloud (1,001 hosts, every one down but the one the limit of
1,000 leaves out) runs here through the Scheduler, the Nova-shaped
select_destinations, ``gantt-manage schedule --explain`` and a real
gantt-scheduler over RPC. The same cloud on Nova 34's own scheduler, in
Nova's functional-test environment with OpenStack Placement 16, answers
NoValidHost (test_nova_answers_no_valid_host). Smaller clouds with a
small limit check when a re-query happens and when it does not.
"""

import datetime
import json
import os
import pathlib
import random
import subprocess
import uuid as uuidlib

import pytest

from gantt.cmd import manage
from placement import direct
from placement.db import migration
from placement.db import store as store_mod
from scheduler import errors, manager
from tests import databases
from tests.scheduler import cloud as cloud_mod

HOSTS = 1001
LIMIT = 1000  # Nova's [scheduler] max_placement_results default
# The host OpenStack Placement 16 leaves out of its first 1,000
# candidates on this cloud, in Nova's functional-test environment
# (PYTHONHASHSEED=0: Placement 16 orders its answer by hashes of
# strings). test_nova_answers_no_valid_host checks that it still is;
# gantt's hosts are created with it last, so that gantt's answer (in
# provider order) leaves the same host out.
UP = "host-0341"
# 1 vCPU, 512 MB, 1 GB: the Nova side's flavor too.
FLAVOR = cloud_mod.FLAVOR
NOVA_SIDE = pathlib.Path(__file__).parent / "nova_side" / "truncated_limit.py"


def host_name(i):
    return f"host-{i:04d}"


def spec(instances=1):
    """A request for ``instances`` instances of FLAVOR (gantt's JSON
    form)."""
    return {"flavor": dict(FLAVOR), "num_instances": instances,
            "project_id": "p1", "user_id": "u1"}


def ids(n):
    """Instance uuids to claim for."""
    return [str(uuidlib.uuid4()) for _ in range(n)]


def stale(seconds=3600):
    """A heartbeat ``seconds`` ago, in real time (the commands run on
    the real clock)."""
    return datetime.datetime.now(datetime.timezone.utc) - \
        datetime.timedelta(seconds=seconds)


def build(cloud, placement, names, up, **host):
    """Hosts ``names``, in that order (placement answers in provider
    order), 8 vCPUs each unless said; each one's service down (its last
    heartbeat an hour ago: down, not disabled, so not a placement
    prefilter), those in ``up`` up."""
    for name in names:
        cloud_mod.add_host(cloud, placement, name, **host)
        cloud.heartbeat(name, None if name in up else stale())


class Big:
    """The issue's cloud: the config file args of ``gantt-manage`` on
    its database, its store and its host records."""

    def __init__(self, config, store, cloud):
        self.config, self.store, self.cloud = config, store, cloud

    def up(self):
        """The store, after a fresh heartbeat of UP (the module's tests
        take longer than service_down_time)."""
        self.cloud.heartbeat(UP, None)
        return self.store


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """The issue's cloud in a SQLite file: HOSTS hosts, UP created last
    and the only one up."""
    folder = tmp_path_factory.mktemp("requery")
    url = f"sqlite:///{folder / 'placement.sqlite'}"
    conf = databases.make_conf(url)
    setup = store_mod.Store(conf)
    migration.sync(setup.engine)
    setup.dispose()
    store = store_mod.Store.open(conf)
    cloud = cloud_mod.Cloud(store)
    names = [host_name(i) for i in range(HOSTS) if host_name(i) != UP]
    build(cloud, direct.PlacementDirect(store), names + [UP], {UP})
    path = folder / "gantt.conf"
    path.write_text(f"[placement_database]\nconnection = {url}\n")
    yield Big(["--config-file", str(path)], store, cloud)
    cloud.close()
    store.dispose()


def real_clock_scheduler(store, overrides=None):
    """A Scheduler over ``store`` on the real clock, after setting
    {(group, option): value}."""
    for (group, name), value in (overrides or {}).items():
        store.conf.set_override(name, value, group=group)
    return manager.Scheduler(store.conf, store=store, rng=random.Random(7))


def test_places_the_host_beyond_the_limit(big):
    s = real_clock_scheduler(big.up())
    try:
        decision = s.schedule(spec(), None, explain=True)
        [[chosen, *alternates]] = decision.selections
        assert chosen.nodename == UP
        assert alternates == []
        explain = decision.explain
        # Placement's first answer: LIMIT candidates, UP not among them;
        # ComputeFilter took every one out.
        assert explain["candidates"] == LIMIT
        assert "limit=1000" in explain["query"]
        [first] = explain["requery"]["instances"]
        [compute] = [f for f in first["filters"]
                     if f["name"] == "ComputeFilter"]
        assert (compute["before"], compute["after"]) == (LIMIT, 0)
        assert UP not in compute["rejected"]
        assert all("compute service is down" in why
                   for why in compute["rejected"].values())
        record = {k: v for k, v in explain["requery"].items()
                  if k not in ("instances", "query")}
        assert record == {
            "limit": LIMIT, "candidates_before": LIMIT,
            "candidates_after": HOSTS, "hosts_before": LIMIT,
            "hosts_new": 1, "hosts_not_ranked": LIMIT}
        assert "limit=" not in explain["requery"]["query"]
        # The second pass ranked the new host only.
        [second] = explain["instances"]
        assert second["candidate_hosts"] == 1
        assert second["passed"] == [UP]
        assert s.stats["requeries"] == 1
    finally:
        s.close()


def test_select_destinations_claims_the_host_beyond_the_limit(big):
    """The Nova-shaped call (one instance: the queued request path),
    claiming: the allocation lands on UP."""
    s = real_clock_scheduler(big.up())
    try:
        [uuid] = ids(1)
        [[chosen, *_]] = s.select_destinations(None, spec(), [uuid])
        assert chosen.nodename == UP
        held = direct.PlacementDirect(big.store).get_allocations(uuid)
        assert list(held.allocations) == [cloud_mod.uuid_of(UP)]
        assert s.stats["requeries"] == 1
    finally:
        s.close()


def test_manage_schedule_explain_says_it_asked_again(big, tmp_path,
                                                     capsys):
    big.up()
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec()))
    assert manage.main(big.config + ["schedule", str(path),
                                     "--explain"]) == 0
    out = capsys.readouterr().out
    assert f"instance 1: {UP} / {UP}" in out
    assert ("re-queried: placement's answer was cut at the limit (1000) "
            "and left no valid host; asked again without it: 1001 "
            "candidates, 1 more host; the 1000 candidate hosts the "
            "filters rejected first were not ranked again") in out


def test_gantt_scheduler_over_rpc_places_beyond_the_limit(big, tmp_path):
    """A gantt-scheduler process on the issue's cloud, over RabbitMQ,
    called as a Nova conductor calls it."""
    from tests.rpc import helpers
    from tests.rpc.service_process import Service

    helpers.require_rabbit()
    store = big.up()
    service = Service(tmp_path, str(store.engine.url))
    try:
        instance = str(uuidlib.uuid4())
        answer = service.client(timeout=60).call(
            helpers.CONTEXT, "select_destinations",
            spec_obj=helpers.request_spec(),
            instance_uuids=[instance], return_objects=True,
            return_alternates=True)
        [[chosen]] = [[p["nova_object.data"] for p in per]
                      for per in answer]
        assert chosen["service_host"] == UP
        claimed = direct.PlacementDirect(store).get_allocations(instance)
        assert list(claimed.allocations) == [cloud_mod.uuid_of(UP)]
    finally:
        service.close()


def test_nova_answers_no_valid_host():
    """The same cloud on Nova 34's scheduler: Nova's SchedulerManager,
    HostManager, filters and weighers in Nova's functional-test
    environment (its cell and API databases, its PlacementFixture
    serving OpenStack Placement 16), the compute nodes and services in
    the cell database, a provider per node in placement. Nova asks
    placement with limit=1000, ComputeFilter removes all 1,000
    candidates, and the answer is NoValidHost; the control (the host
    placement answered first comes up too) lands there."""
    from tests.nova_functional import install, workers

    try:
        venv = install.nova_venv()
    except RuntimeError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"Nova's functional-test virtualenv: {exc}")
    out_path = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / \
        f"gantt-requery-nova-{os.getpid()}.json"
    env = {k: v for k, v in os.environ.items()
           if k not in workers.DROPPED_ENV}
    env.update(workers.NOVA_TEST_ENV)
    try:
        done = subprocess.run(
            [str(pathlib.Path(venv) / "bin" / "python"), str(NOVA_SIDE),
             str(HOSTS), UP, str(out_path)],
            env=env, capture_output=True, text=True, timeout=300,
            cwd=out_path.parent)
        assert done.returncode == 0, done.stderr[-5000:]
        out = json.loads(out_path.read_text())
    finally:
        out_path.unlink(missing_ok=True)
    assert out["errors"] == []
    answer = out["answer"]
    assert answer["error"] == {
        "class": "NoValidHost",
        "message": "No valid host was found. There are not enough hosts "
                   "available."}
    [query] = answer["queries"]
    assert query["url"].startswith("/allocation_candidates?limit=1000&")
    assert query["candidates"] == LIMIT
    # Every host but UP came back; UP is the one the limit cut off.
    assert sorted(query["hosts_in_order"]) == sorted(
        host_name(i) for i in range(HOSTS) if host_name(i) != UP)
    assert len(answer["filter_log"]) == 1
    assert "['ComputeFilter: (start: 1000, end: 0)']" in \
        answer["filter_log"][0]
    control = out["control"]
    assert control["chosen"] == control["up"] == \
        query["hosts_in_order"][0]
    print(f"\nNova 34: {answer['error']['message']} "
          f"({answer['filter_log'][0].split('Filter results: ')[1]})")


# -- when a re-query happens, and when not (a small limit) ---------------

@pytest.fixture
def small(cloud, placement):
    """small(count, up, limit, **host): ``count`` hosts n0, n1, ...
    (the indices in ``up`` up) and a Scheduler on the real clock asking
    placement for ``limit`` candidates."""
    made = []

    def make(count, up, limit, **host):
        names = [f"n{i}" for i in range(count)]
        build(cloud, placement, names, {names[i] for i in up}, **host)
        made.append(real_clock_scheduler(
            cloud.store, {("scheduler", "max_placement_results"): limit}))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_no_requery_when_the_answer_was_not_cut(small):
    s = small(3, up=(), limit=4)
    with pytest.raises(errors.NoValidHost) as caught:
        s.schedule(spec(), ids(1))
    assert caught.value.message == ("no valid host for instance 1 of 1: "
                                    "3 candidate hosts; ComputeFilter "
                                    "removed 3")
    assert caught.value.cause == "filtered"
    assert s.stats["requeries"] == 0


def test_no_requery_when_a_host_passed(small):
    s = small(4, up=(1,), limit=2)
    decision = s.schedule(spec(), ids(1), explain=True)
    assert decision.selections[0][0].nodename == "n1"
    assert "requery" not in decision.explain
    assert s.stats["requeries"] == 0


def test_full_list_without_a_valid_host_counts_every_host(small):
    """Asked again, still nothing: the message counts the hosts of both
    answers once each (the first answer's were not ranked again)."""
    s = small(5, up=(), limit=3)
    with pytest.raises(errors.NoValidHost) as caught:
        s.schedule(spec(), ids(1), explain=True)
    assert caught.value.message == ("no valid host for instance 1 of 1: "
                                    "5 candidate hosts; ComputeFilter "
                                    "removed 5")
    assert caught.value.cause == "filtered"
    assert s.stats["requeries"] == 1
    requery = caught.value.explain["requery"]
    assert (requery["candidates_before"], requery["candidates_after"],
            requery["hosts_new"], requery["hosts_not_ranked"]) == (3, 5, 2, 3)


def test_multi_create_asks_again_for_its_later_instances(small, cloud):
    """Three instances, room for one per host: the first answer (limit
    3) holds one host that is up; the request is all or nothing, so it
    is placed again on the full answer, the first host kept."""
    s = small(6, up=(0, 4, 5), limit=3, vcpus=1)
    uuids = ids(3)
    out = s.select_destinations(None, spec(3), uuids)
    assert sorted(sel[0].nodename for sel in out) == ["n0", "n4", "n5"]
    reader = direct.PlacementDirect(cloud.store)
    for uuid, sel in zip(uuids, out, strict=True):
        assert list(reader.get_allocations(uuid).allocations) == [
            sel[0].compute_node_uuid]
    assert s.stats["requeries"] == 1


def test_claims_all_lost_in_the_first_answer(small, cloud, placement):
    """The hosts of the first answer pass the filters, but another
    writer fills them before the claims: the host beyond the limit takes
    the instance."""
    s = small(3, up=(0, 1, 2), limit=2)
    filled = []
    original = s.engine.find

    def find_then_fill(request, lean=False, sync=True):
        result = original(request, lean=lean, sync=sync)
        if not filled:
            # Another scheduler takes n0 and n1 between search and claim.
            for name in ("n0", "n1"):
                placement.put_allocations(
                    str(uuidlib.uuid4()),
                    {cloud_mod.uuid_of(name): {"VCPU": 8}},
                    project_id="other", user_id="other")
            filled.append(True)
        return result

    s.engine.find = find_then_fill
    [[chosen, *_]] = s.select_destinations(None, spec(), ids(1))
    assert chosen.nodename == "n2"
    assert s.stats["requeries"] == 1
    assert s.stats["claims_lost"] >= 2
