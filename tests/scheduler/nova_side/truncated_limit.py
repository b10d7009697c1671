"""Nova 34's scheduler on a cloud whose first placement candidates all
fail a host filter. Run by the Python of the Nova functional-test
virtualenv (tests/nova_functional/install.py), never imported by gantt's
tests::

    python truncated_limit.py HOSTS UP_HOST OUT.json

In Nova's own functional-test environment (nova.test.TestCase: the API
and cell databases; Nova's PlacementFixture serving OpenStack Placement
16 in process), it writes HOSTS compute nodes ``host-0000`` ... with
their nova-compute services to cell1 and a resource provider per node
(same uuid, 8 VCPU, 8192 MEMORY_MB, 100 DISK_GB, trait OWNER_NOVA as
nova-compute reports it) to placement, in that order. Every service but
UP_HOST's had its last heartbeat an hour ago: down, not disabled, so no
placement prefilter takes them out and ComputeFilter does. Then Nova's
SchedulerManager.select_destinations places one instance of a 1 vCPU /
512 MB / 1 GB flavor; then, as a control, once more after the host
placement answered first came up too.

OUT.json: per call ("answer", "control"), what it answered (the chosen
host, or the exception's class and message), the queries Nova sent
placement with the hosts placement answered, in its order, and the
filter results Nova logged; "errors": the test's own failures.
"""

import datetime
import json
import logging
import sys
import unittest
import uuid

import fixtures
import sqlalchemy as sa
from nova import context, objects, test
from nova.db.main import api as main_db
from nova.scheduler import manager
from nova.tests.functional import fixtures as func_fixtures
from oslo_messaging import ExpectedException

# OpenStack Placement 16's package, from Nova's virtualenv.
from placement import db_api as placement_db

FLAVOR = {"vcpus": 1, "memory_mb": 512, "root_gb": 1}
HOST = {"vcpus": 8, "memory_mb": 8192, "local_gb": 100}


def host_name(i):
    return f"host-{i:04d}"


def node_uuid(name):
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, name))


def _table(engine, name):
    return sa.Table(name, sa.MetaData(), autoload_with=engine)


def _ids(engine, name, column, value):
    table = _table(engine, name)
    with engine.connect() as conn:
        return [row.id for row in conn.execute(
            sa.select(table.c.id).where(table.c[column] == value))]


def _copy(engine, name, key, value, changes, root=None):
    """Copies of the rows of table ``name`` whose ``key`` is ``value``,
    one set per entry of ``changes`` (columns to change), with new ids
    when the table has its own (``root``: a column that holds the row's
    own id); the new ids, in order."""
    table = _table(engine, name)
    with engine.begin() as conn:
        rows = [dict(r._mapping) for r in conn.execute(
            table.select().where(table.c[key] == value))]
        own_id = "id" in table.c and key == "id"
        next_id = (conn.execute(sa.select(sa.func.max(table.c.id)))
                   .scalar() or 0) + 1 if "id" in table.c else None
        new, ids = [], []
        for change in changes:
            if own_id:
                ids.append(next_id)
            for row in rows:
                copy = dict(row, **change)
                if "id" in table.c:
                    copy["id"] = next_id
                    next_id += 1
                if root:
                    copy[root] = copy["id"]
                new.append(copy)
        conn.execute(table.insert(), new)
    return ids


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


class TruncatedLimit(test.TestCase):
    HOSTS = 1001
    UP = None
    OUT = None

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(func_fixtures.PlacementFixture())
        self.ctxt = context.get_admin_context()

    def _cloud(self):
        """The first host through Nova's objects and placement's API,
        the others as copies of the rows those wrote (their own ids,
        uuids and names): 1,001 hosts through the API cost over a
        minute."""
        first = host_name(0)
        cell = self.cell_mappings["cell1"]
        with context.target_cell(self.ctxt, cell) as cctxt:
            service = objects.Service(
                context=cctxt, host=first, binary="nova-compute",
                topic="compute", report_count=1, disabled=False)
            service.create()
            node = objects.ComputeNode(
                context=cctxt, uuid=node_uuid(first), host=first,
                hypervisor_hostname=first, service_id=service.id,
                vcpus=HOST["vcpus"], memory_mb=HOST["memory_mb"],
                local_gb=HOST["local_gb"], vcpus_used=0,
                memory_mb_used=0, local_gb_used=0,
                free_ram_mb=HOST["memory_mb"],
                free_disk_gb=HOST["local_gb"],
                disk_available_least=HOST["local_gb"],
                hypervisor_type="fake", hypervisor_version=1000,
                cpu_info="{}", current_workload=0, running_vms=0,
                cpu_allocation_ratio=1.0, ram_allocation_ratio=1.0,
                disk_allocation_ratio=1.0, host_ip="192.0.2.1",
                supported_hv_specs=[], stats={}, metrics="[]")
            node.create()
            nova_engine = main_db.get_engine(context=cctxt)
        self.cell_ctxt = cctxt
        api = self.placement.api
        rp = node_uuid(first)
        for method, path, body in (
                ("post", "/resource_providers", {"name": first, "uuid": rp}),
                ("put", f"/resource_providers/{rp}/inventories", {
                    "resource_provider_generation": 0,
                    "inventories": {
                        "VCPU": {"total": HOST["vcpus"]},
                        "MEMORY_MB": {"total": HOST["memory_mb"]},
                        "DISK_GB": {"total": HOST["local_gb"]}}}),
                # What nova-compute reports on its root at this version
                # (Nova 34's query requires it).
                ("put", f"/resource_providers/{rp}/traits", {
                    "resource_provider_generation": 1,
                    "traits": ["OWNER_NOVA"]})):
            resp = getattr(api, method)(path, body, version="1.20")
            assert resp.status == 200, (path, resp.body)
        names = [host_name(i) for i in range(1, self.HOSTS)]
        services = _copy(nova_engine, "services", "id", service.id, [
            {"host": n, "uuid": str(uuid.uuid4())} for n in names])
        _copy(nova_engine, "compute_nodes", "id", node.id, [
            {"host": n, "hypervisor_hostname": n, "uuid": node_uuid(n),
             "service_id": sid}
            for n, sid in zip(names, services, strict=True)])
        placement_engine = placement_db.placement_context_manager.writer \
            .get_engine()
        [rp_id] = _ids(placement_engine, "resource_providers", "uuid", rp)
        providers = _copy(
            placement_engine, "resource_providers", "id", rp_id,
            [{"name": n, "uuid": node_uuid(n)} for n in names],
            root="root_provider_id")
        for table in ("inventories", "resource_provider_traits"):
            _copy(placement_engine, table, "resource_provider_id", rp_id,
                  [{"resource_provider_id": p} for p in providers])
        # Every service down but UP's: its last heartbeat an hour ago.
        stale = (datetime.datetime.now(datetime.timezone.utc)
                 - datetime.timedelta(hours=1)).replace(tzinfo=None)
        services_table = _table(nova_engine, "services")
        with nova_engine.begin() as conn:
            conn.execute(services_table.update().where(
                services_table.c.host != self.UP).values(
                    last_seen_up=stale))

    def test_select_destinations(self):
        self._cloud()
        # What Nova asks placement and what placement answers, seen on
        # the report client's way through (the call goes on unchanged).
        self.asked = []
        original = self.placement._fake_get

        def get(client, url, *args, **kwargs):
            resp = original(client, url, *args, **kwargs)
            if url.startswith("/allocation_candidates"):
                body = resp.json()
                self.asked.append({
                    "url": url, "status": resp.status_code,
                    "candidates": [list(ar["allocations"])[0]
                                   for ar in body["allocation_requests"]]})
            return resp

        self.useFixture(fixtures.MonkeyPatch(
            "nova.scheduler.client.report.SchedulerReportClient.get", get))
        self.lines = _Lines()
        logging.getLogger("nova.filters").addHandler(self.lines)
        self.addCleanup(logging.getLogger("nova.filters").removeHandler,
                        self.lines)
        scheduler = manager.SchedulerManager()
        out = {"hosts": self.HOSTS, "up": self.UP,
               "answer": self._select(scheduler)}
        # The control: the host placement answered first comes up too;
        # the same request lands there.
        queries = out["answer"]["queries"]
        if queries and queries[0]["hosts_in_order"]:
            first = queries[0]["hosts_in_order"][0]
            services = _table(main_db.get_engine(context=self.cell_ctxt),
                              "services")
            with main_db.get_engine(context=self.cell_ctxt).begin() as conn:
                conn.execute(services.update().where(
                    services.c.host == first).values(last_seen_up=None))
            out["control"] = dict(self._select(scheduler), up=first)
        TruncatedLimit.OUT = out

    def _select(self, scheduler):
        """One instance of FLAVOR through select_destinations: the chosen
        host or the error, the queries Nova sent placement (with the
        hosts answered, in order) and the filter results Nova logged."""
        del self.asked[:], self.lines.lines[:]
        flavor = objects.Flavor(
            id=1, flavorid="1", name="small", vcpus=FLAVOR["vcpus"],
            memory_mb=FLAVOR["memory_mb"], root_gb=FLAVOR["root_gb"],
            ephemeral_gb=0, swap=0, extra_specs={}, rxtx_factor=1.0,
            vcpu_weight=0, disabled=False, is_public=True)
        image = objects.ImageMeta.from_dict({"properties": {}})
        instance = str(uuid.uuid4())
        spec = objects.RequestSpec.from_components(
            self.ctxt, instance, image, flavor, None, None, {}, None, None,
            project_id="p1", user_id="u1")
        out = {}
        try:
            [[chosen, *_]] = scheduler.select_destinations(
                self.ctxt, spec_obj=spec, instance_uuids=[instance],
                return_objects=True, return_alternates=True)
            out["chosen"] = chosen.service_host
        except ExpectedException as exc:
            error = exc.exc_info[1]
            out["error"] = {"class": type(error).__name__,
                            "message": str(error)}
        names = {node_uuid(host_name(i)): host_name(i)
                 for i in range(self.HOSTS)}
        out["queries"] = [
            {"url": q["url"], "status": q["status"],
             "candidates": len(q["candidates"]),
             # The hosts in the order placement answered them.
             "hosts_in_order": [names[c] for c in q["candidates"]]}
            for q in self.asked]
        out["filter_log"] = [line for line in self.lines.lines
                             if "Filtering removed" in line]
        return out


def main():
    TruncatedLimit.HOSTS = int(sys.argv[1])
    TruncatedLimit.UP = sys.argv[2]
    suite = unittest.TestSuite(
        [TruncatedLimit("test_select_destinations")])
    result = unittest.TextTestRunner(stream=sys.stderr).run(suite)
    out = TruncatedLimit.OUT or {}
    out["errors"] = [text for _, text in result.errors + result.failures]
    with open(sys.argv[3], "w") as f:
        json.dump(out, f, indent=1)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
