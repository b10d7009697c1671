"""Server-group races on the Nova stack: many anti-affinity and affinity
groups filled at once, members deleted and replaced while other groups
fill, and what Nova's own records say came of it.

The burst (``Burst.run``): every group is driven by one client thread
of a pool; a group's requests (single creates and multi-creates, e.g.
2 + 1 for a group of three) are sent together, behind a barrier, so that
the scheduler decides members of one group at the same moment, in
different workers when it has several. Once they have settled, members
are deleted and, once Nova has deleted them, as many are created again,
together, and so on for a number of cycles. Group sizes always fit the
three compute hosts (anti-affinity: at most hosts x max_server_per_host
members), so a scheduler that keeps the policies never needs to fail a
create.

What is counted (``Burst.report``), all from Nova:

- outcomes: each server's first settled status in Nova's API (ACTIVE,
  or ERROR with its fault: NoValidHost, retries exhausted, other);
- violations at the end: each group's live members (Nova's API, which
  lists the members not deleted) on their hosts (the servers' host in
  the API): anti-affinity counts the members beyond max_server_per_host
  on a host, affinity the members off the host holding most of them;
- violations at any time: the same over the members' lifetimes, from
  Nova's databases (the API database's group members and policies, the
  cell databases' instances: host, launched_at, deleted_at), so that a
  violation whose member was deleted later still counts;
- late-check reschedules: nova-compute checks the policy again after
  its claim ([workarounds] disable_group_policy_check_upcall false, the
  default) and sends a build that breaks it back to the conductor,
  which tries an alternate. Counted as the build attempts beyond the
  first (``reschedules``, ``servers_rescheduled``): the
  ``compute__do_build_and_run_instance`` events of each server's create
  action in the cell database's instance_actions_events, one per
  attempt; and, as a second count, the failed checks in the computes'
  logs (``failed_checks_logged``): nova-compute logs "[instance: UUID]
  Failed to build and run instance:
  nova.exception.GroupAffinityViolation: Anti-affinity (or Affinity)
  instance group policy was violated" at ERROR each time. The two
  differ by one for each server whose last allowed attempt failed the
  check (no retry left: ERROR, retries exhausted).
"""

import collections
import concurrent.futures
import dataclasses
import datetime
import json
import random
import re
import threading
import time

import sqlalchemy as sa

from tests.nova_stack import clients, standins
from tests.nova_stack import stack as stack_mod

ANTI = "anti-affinity"
AFFINITY = "affinity"
HOSTS = len(stack_mod.COMPUTES)
# A flavor small enough that capacity never limits the groups: the
# small hosts hold 40 vCPUs (ratio 4) and 7,680 MB (8 GB less 512 MB
# reserved) each.
FLAVOR = {"vcpus": 1, "ram": 64, "disk": 1}
# Most servers one request creates.
MOST_PER_REQUEST = 3
UNLIMITED = {"instances": -1, "cores": -1, "ram": -1, "server_groups": -1,
             "server_group_members": -1}
SETTLE_TIMEOUT = 240
# The line nova-compute logs (at ERROR) when its late check fails.
RESCHEDULED = re.compile(
    r"\[instance: ([0-9a-f-]{36})\] Failed to build and run instance: "
    r"nova.exception.GroupAffinityViolation: (Anti-affinity|Affinity) "
    r"instance group policy was violated")
NEVER = datetime.datetime.max


@dataclasses.dataclass
class Group:
    """One server group of the burst and what is done with it."""

    name: str
    policy: str
    limit: int  # max_server_per_host (anti-affinity); 0 for affinity
    size: int
    fill: list  # request sizes of the first fill, sent together
    cycles: list  # (members deleted, request sizes of the refill)
    rule: bool = False  # max_server_per_host given as a rule
    id: str = None

    @property
    def kind(self):
        """The label figures are reported under."""
        if self.policy == AFFINITY:
            return AFFINITY
        return f"{ANTI} max_server_per_host={self.limit}" if self.rule \
            else ANTI


def split(size, rng):
    """Request sizes adding up to ``size``, at least two requests when
    ``size`` > 1 (so that they race), none above MOST_PER_REQUEST."""
    while True:
        parts, left = [], size
        while left:
            part = rng.randint(1, min(MOST_PER_REQUEST, left))
            parts.append(part)
            left -= part
        if size == 1 or len(parts) > 1:
            return parts


def plan(groups, cycles, seed):
    """``groups`` groups, two fifths anti-affinity (2 to 3 members),
    one fifth anti-affinity with max_server_per_host=2 (3 to 5), two
    fifths affinity (2 to 4); each filled, then ``cycles`` times two
    members or all of them deleted and replaced."""
    rng = random.Random(seed)
    made = []
    for n in range(groups):
        kind = n % 5
        if kind in (0, 1):
            policy, limit, rule, size = ANTI, 1, False, rng.randint(2, HOSTS)
        elif kind == 2:
            policy, limit, rule = ANTI, 2, True
            size = rng.randint(3, 2 * HOSTS - 1)
        else:
            policy, limit, rule, size = AFFINITY, 0, False, rng.randint(2, 4)
        steps = []
        for _ in range(cycles):
            deleted = rng.choice([2, size]) if size > 2 else 2
            steps.append((deleted, split(deleted, rng)))
        made.append(Group(f"g{n:02d}-{policy}-{limit}", policy, limit, size,
                          split(size, rng), steps, rule))
    return made


class Watcher(threading.Thread):
    """Lists every server every ``interval`` seconds (one call serves
    all the clients' waits) and keeps each server's first settled
    status."""

    def __init__(self, nova, interval=1.0):
        super().__init__(name="burst-watcher", daemon=True)
        self.nova = nova
        self.interval = interval
        self.servers = {}
        self.settled = {}  # id: the server as first seen settled
        self.generation = 0
        self.errors = 0
        self.changed = threading.Condition()
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                found = self.nova.get("/servers/detail?all_tenants=1")[
                    "servers"]
            except Exception:  # a busy API: try again next round
                self.errors += 1
            else:
                with self.changed:
                    self.servers = {s["id"]: s for s in found}
                    for server in found:
                        if _settled(server):
                            self.settled.setdefault(server["id"], server)
                    self.generation += 1
                    self.changed.notify_all()
            self.done.wait(self.interval)

    def stop(self):
        self.done.set()
        self.join(30)

    def wait(self, check, timeout):
        """Wait for a listing made after this call for which
        ``check(servers)`` is true; whether one came in time."""
        end = time.monotonic() + timeout
        with self.changed:
            first = self.generation + 1
            while True:
                if self.generation > first and check(self.servers):
                    return True
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(min(left, 5))

    def wait_settled(self, ids, timeout=SETTLE_TIMEOUT):
        return self.wait(lambda servers: all(
            i in self.settled for i in ids), timeout)

    def wait_gone(self, ids, timeout=SETTLE_TIMEOUT):
        return self.wait(lambda servers: not set(ids) & set(servers),
                         timeout)


def _settled(server):
    return server["status"] == "ERROR" or (
        server["status"] == "ACTIVE"
        and server.get("OS-EXT-STS:task_state") is None)


class Burst:
    """One burst on a running stack (stack.Stack)."""

    def __init__(self, stack, groups, threads=8, seed=0):
        self.stack = stack
        self.nova = clients.NovaApi(stack.api_url)
        self.groups = groups
        self.threads = threads
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.created = {}  # server id: group
        self.deleted = set()
        self.requests = 0  # create requests sent
        self.failed_requests = []  # create requests Nova's API refused
        self.delete_errors = []
        self.timeouts = []
        self.flavor = None
        self.quotas = None  # the default quota class before the burst
        self.watcher = None
        self.wall = None

    # -- set-up ------------------------------------------------------

    def prepare(self):
        """Quotas out of the way, the flavor, the groups."""
        self.quotas = self.nova.default_quotas()
        self.nova.set_default_quotas(**UNLIMITED)
        self.flavor = self.nova.create_flavor(
            f"burst-{self.rng.getrandbits(32):08x}", **FLAVOR)["id"]
        for group in self.groups:
            rules = {"max_server_per_host": group.limit} if group.rule \
                else None
            group.id = self.nova.create_group(
                f"burst-{group.name}", group.policy, rules)["id"]

    # -- the burst ---------------------------------------------------

    def run(self):
        """Drive every group to its end; the wall time (s)."""
        self.watcher = Watcher(self.nova)
        self.watcher.start()
        began = time.monotonic()
        order = list(self.groups)
        self.rng.shuffle(order)
        try:
            with concurrent.futures.ThreadPoolExecutor(
                    self.threads, thread_name_prefix="burst") as pool:
                for future in [pool.submit(self._drive, g) for g in order]:
                    future.result()
            self.watcher.wait_settled(list(self.created))
            self.wall = time.monotonic() - began
        finally:
            self.watcher.stop()
        return self.wall

    def _drive(self, group):
        members = self._create_together(group, group.fill)
        for deleted, refill in group.cycles:
            live = [i for i in members if i not in self.deleted]
            with self.lock:
                victims = self.rng.sample(live, min(deleted, len(live)))
            self._delete(victims)
            members += self._create_together(group, refill)

    def _create_together(self, group, counts):
        """Send one create per count at once (behind a barrier); wait
        until every server they made has settled; their ids."""
        barrier = threading.Barrier(len(counts))
        made = []

        def create(n, count):
            barrier.wait(30)
            with self.lock:
                self.requests += 1
            try:
                ids = self.nova.create_server(
                    f"burst-{group.name}-{n}", self.flavor,
                    standins.IMAGE_ID, count=count, group=group.id)
            except (clients.ApiError, OSError) as exc:
                with self.lock:
                    self.failed_requests.append(
                        f"{type(exc).__name__}: {str(exc)[:300]}")
                return
            with self.lock:
                for server_id in ids:
                    self.created[server_id] = group
                made.extend(ids)

        threads = [threading.Thread(target=create, args=(n, count))
                   for n, count in enumerate(counts)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if not self.watcher.wait_settled(made):
            with self.lock:
                self.timeouts.append(f"{group.name}: create not settled")
        return made

    def _delete(self, ids):
        for server_id in ids:
            try:
                self.nova.delete_server(server_id)
            except clients.ApiError as exc:
                if exc.status != 404:
                    with self.lock:
                        self.delete_errors.append(str(exc)[:300])
        if not self.watcher.wait_gone(ids):
            with self.lock:
                self.timeouts.append(f"delete of {ids} not done")
        with self.lock:
            self.deleted.update(ids)

    def delete_everything(self, timeout=SETTLE_TIMEOUT):
        """Delete every server and group of the burst, all at once."""
        live = {s["id"] for s in self.nova.servers()} & set(self.created)
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(self._delete_quietly, live))
        watcher = Watcher(self.nova, interval=0.5)
        watcher.start()
        try:
            gone = watcher.wait_gone(live, timeout)
        finally:
            watcher.stop()
        for group in self.groups:
            if group.id:
                self._quietly("DELETE", f"/os-server-groups/{group.id}")
        if self.flavor:
            self._quietly("DELETE", f"/flavors/{self.flavor}")
        if self.quotas:
            self.nova.set_default_quotas(**{
                name: self.quotas[name] for name in UNLIMITED})
        return gone

    def _delete_quietly(self, server_id):
        self._quietly("DELETE", f"/servers/{server_id}")

    def _quietly(self, method, path):
        try:
            self.nova.request(method, path)
        except clients.ApiError as exc:
            if exc.status != 404:
                raise

    # -- what Nova's records say -------------------------------------

    def report(self):
        """The figures, as a dict (see the module's docstring)."""
        servers = {s["id"]: s for s in self.nova.servers()}
        ids = sorted(self.created)
        outcomes = self._outcomes(ids)
        groups = collections.Counter(g.kind for g in self.groups)
        return {
            "groups": dict(groups),
            "create_requests": self.requests,
            "create_requests_failed": len(self.failed_requests),
            "servers_created": len(ids),
            **outcomes,
            "violations": {
                "at_end": self._violations_at_end(servers),
                "at_any_time": self._violations_at_any_time()},
            "late_check": self._late_checks(ids),
            "wall_s": round(self.wall, 1) if self.wall else None,
            "problems": {
                "watcher_errors": self.watcher.errors,
                "timeouts": self.timeouts[:10],
                "delete_errors": self.delete_errors[:3],
                "failed_requests": self.failed_requests[:3]},
        }

    def _outcomes(self, ids):
        """Each server's first settled status in Nova's API; ERROR by
        fault and by the kind of its group."""
        errors = collections.Counter()
        by_kind = collections.Counter()
        samples = []
        active = 0
        for server_id in ids:
            server = self.watcher.settled.get(server_id)
            if server is None:
                continue
            if server["status"] == "ACTIVE":
                active += 1
                continue
            by_kind[self.created[server_id].kind] += 1
            message = (server.get("fault") or {}).get("message", "")
            if "No valid host" in message:
                errors["no_valid_host"] += 1
            elif "xceeded maximum number of retries" in message \
                    or "Exhausted all hosts" in message:
                errors["retries_exhausted"] += 1
            else:
                errors["other"] += 1
                samples.append(message[:200])
        settled = sum(1 for i in ids if i in self.watcher.settled)
        return {"active": active,
                "error": {"total": sum(errors.values()), **errors,
                          "by_group_kind": dict(by_kind),
                          "other_faults": samples[:3]},
                "never_settled": len(ids) - settled}

    def _violations_at_end(self, servers):
        """Per group kind: groups in violation and members in excess,
        from Nova's API (live members, their servers' hosts); and
        ``where``: each such group's members per host."""
        found = _zero_violations(self.groups)
        where = {}
        for group in self.groups:
            members = self.nova.group(group.id)["members"]
            hosts = [servers[m]["OS-EXT-SRV-ATTR:host"] for m in members
                     if m in servers
                     and servers[m]["status"] == "ACTIVE"
                     and servers[m].get("OS-EXT-SRV-ATTR:host")]
            per_host = collections.Counter(hosts)
            excess = _excess(group.policy, group.limit, per_host)
            if excess:
                found[group.kind]["groups"] += 1
                found[group.kind]["members"] += excess
                where[group.name] = dict(sorted(per_host.items()))
        return {**found, "where": where}

    def _violations_at_any_time(self):
        """Per group kind: groups whose members were, at some moment,
        placed against the policy, and the most members in excess at
        once, summed over those groups; from Nova's databases (members
        launched on a host until deleted)."""
        members = _group_members(self.stack.urls["api_db"],
                                 [g.id for g in self.groups])
        uuids = sorted({m for ms in members.values() for m in ms})
        lives = {}
        for key in ("cell_db", "cell0_db"):
            lives.update(_lifetimes(self.stack.urls[key], uuids))
        found = _zero_violations(self.groups)
        for group in self.groups:
            worst = _worst_excess(group, [lives[m] for m in
                                          members.get(group.id, ())
                                          if m in lives])
            if worst:
                found[group.kind]["groups"] += 1
                found[group.kind]["members"] += worst
        return found

    def _late_checks(self, ids):
        """Build attempts beyond the first (instance actions:
        ``reschedules``, ``servers_rescheduled``), and the computes'
        log lines of a late group check that failed
        (``failed_checks_logged``: one more than the reschedules of a
        server whose last attempt failed it, as no retry is left)."""
        attempts = _build_attempts(self.stack.urls["cell_db"], ids)
        extra = {i: n - 1 for i, n in attempts.items() if n > 1}
        wanted = set(ids)
        logged = collections.Counter()
        for host, _ in stack_mod.COMPUTES:
            for line in self.stack.log_lines(host, RESCHEDULED.pattern):
                match = RESCHEDULED.search(line)
                if match and match.group(1) in wanted:
                    logged[match.group(2).lower()] += 1
        return {"reschedules": sum(extra.values()),
                "servers_rescheduled": len(extra),
                "failed_checks_logged": {ANTI: logged["anti-affinity"],
                                         AFFINITY: logged["affinity"]}}


def _zero_violations(groups):
    return {kind: {"groups": 0, "members": 0}
            for kind in sorted({g.kind for g in groups})}


def _excess(policy, limit, per_host):
    """Members placed against the policy: beyond ``limit`` on a host
    (anti-affinity), or off the host holding most (affinity)."""
    if not per_host:
        return 0
    if policy == ANTI:
        return sum(max(0, n - limit) for n in per_host.values())
    return sum(per_host.values()) - max(per_host.values())


def _worst_excess(group, lives):
    """The most members in excess at one moment, over the members'
    lives ((host, launched, deleted or NEVER)): each launch is checked
    with the members alive then (a member deleted in the same second
    has gone: Nova stamps to the second, and the burst replaces a
    member only once Nova has deleted it)."""
    worst = 0
    for _, start, _ in lives:
        alive = collections.Counter(
            h for h, s, e in lives if s <= start < e)
        worst = max(worst, _excess(group.policy, group.limit, alive))
    return worst


def _engine(url):
    return sa.create_engine(url, connect_args={"connect_timeout": 5})


def _rows(url, sql):
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            return conn.exec_driver_sql(sql).fetchall()
    finally:
        engine.dispose()


def _group_members(api_url, group_uuids):
    """{group uuid: [instance uuid]} from Nova's API database, deleted
    instances included (Nova removes a member only when its instance is
    archived)."""
    if not group_uuids:
        return {}
    rows = _rows(api_url, f"""
        SELECT g.uuid, m.instance_uuid FROM instance_groups g
        JOIN instance_group_member m ON m.group_id = g.id
        WHERE g.uuid IN {_in_list(group_uuids)}""")
    found = collections.defaultdict(list)
    for group, member in rows:
        found[group].append(member)
    return found


def _lifetimes(cell_url, uuids):
    """{instance uuid: (host, launched_at, deleted_at or NEVER)} of the
    instances of a cell database that were launched on a host."""
    if not uuids:
        return {}
    rows = _rows(cell_url, f"""
        SELECT uuid, host, launched_at, deleted_at, deleted FROM instances
        WHERE uuid IN {_in_list(uuids)}""")
    return {uuid: (host, launched, deleted_at if deleted else NEVER)
            for uuid, host, launched, deleted_at, deleted in rows
            if host and launched}


def _build_attempts(cell_url, uuids):
    """{instance uuid: build attempts}: the compute's
    do_build_and_run_instance events of each create action."""
    if not uuids:
        return {}
    rows = _rows(cell_url, f"""
        SELECT a.instance_uuid, COUNT(*) FROM instance_actions a
        JOIN instance_actions_events e ON e.action_id = a.id
        WHERE a.action = 'create'
          AND e.event = 'compute__do_build_and_run_instance'
          AND a.instance_uuid IN {_in_list(uuids)}
        GROUP BY a.instance_uuid""")
    return dict(rows)


def _in_list(uuids):
    """A SQL list of uuids (checked to be uuids: they are inlined)."""
    for value in uuids:
        if not re.fullmatch(r"[0-9a-f-]{36}", value):
            raise ValueError(f"not a uuid: {value!r}")
    return "(" + ", ".join(f"'{value}'" for value in uuids) + ")"


def dumps(result):
    return json.dumps(result, indent=2, sort_keys=False)
