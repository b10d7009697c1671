"""A random cloud as OpenStack Placement REST requests, for the import
round trips: nested trees (roots, NUMA children, PF grandchildren),
sharing providers in aggregates, custom classes and traits, consumers of
several types (and untyped ones, written before microversion 1.38), and
allocations that leave some providers full. The same seed gives the same
requests."""

import random
import uuid

NEW = "1.39"
# Consumers written without a type: the microversion before types.
UNTYPED = "1.37"
CUSTOM_CLASSES = ("CUSTOM_FPGA_X", "CUSTOM_LICENSE")
CUSTOM_TRAITS = ("CUSTOM_RACK_A", "CUSTOM_GOLD")
STANDARD_TRAITS = ("HW_CPU_X86_AVX2", "COMPUTE_VOLUME_MULTI_ATTACH",
                   "HW_NIC_SRIOV")


class _Cloud:
    def __init__(self, rng):
        self.rng = rng
        self.requests = []
        self.generation = {}
        # (provider, class) -> room left
        self.room = {}

    def _id(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def add(self, method, path, body=None, version=NEW):
        self.requests.append([method, path, version, body])

    def provider(self, name, parent=None):
        rp = self._id()
        body = {"name": name, "uuid": rp}
        if parent:
            body["parent_provider_uuid"] = parent
        self.add("POST", "/resource_providers", body)
        self.generation[rp] = 0
        return rp

    def inventory(self, rp, inventories):
        self.add("PUT", f"/resource_providers/{rp}/inventories",
                 {"resource_provider_generation": self.generation[rp],
                  "inventories": inventories})
        self.generation[rp] += 1
        for rc, inv in inventories.items():
            self.room[(rp, rc)] = int((inv["total"] - inv.get("reserved", 0))
                                      * inv.get("allocation_ratio", 1.0))

    def traits(self, rp, names):
        self.add("PUT", f"/resource_providers/{rp}/traits",
                 {"resource_provider_generation": self.generation[rp],
                  "traits": sorted(names)})
        self.generation[rp] += 1

    def aggregates(self, rp, aggs):
        self.add("PUT", f"/resource_providers/{rp}/aggregates",
                 {"resource_provider_generation": self.generation[rp],
                  "aggregates": sorted(aggs)})
        self.generation[rp] += 1

    def allocate(self, consumer, wants, project, user, ctype):
        """``wants``: {provider: {class: amount}}, within room."""
        body = {"allocations": {rp: {"resources": res}
                                for rp, res in wants.items()},
                "project_id": project, "user_id": user,
                "consumer_generation": None}
        version = NEW
        if ctype is None:
            version = UNTYPED
        else:
            body["consumer_type"] = ctype
        self.add("PUT", f"/allocations/{consumer}", body, version)
        for rp, res in wants.items():
            self.generation[rp] += 1
            for rc, amount in res.items():
                self.room[(rp, rc)] -= amount


def random_cloud(seed):
    """The requests that build the cloud of ``seed``, in order."""
    rng = random.Random(seed)
    c = _Cloud(rng)
    for rc in CUSTOM_CLASSES:
        c.add("PUT", f"/resource_classes/{rc}")
    for trait in CUSTOM_TRAITS:
        c.add("PUT", f"/traits/{trait}")
    aggs = [c._id() for _ in range(3)]
    trees = []  # (root, [providers with VCPU and MEMORY_MB])
    for i in range(rng.randint(4, 7)):
        root = c.provider(f"cn{i}")
        compute = [root]
        c.inventory(root, {
            "DISK_GB": {"total": rng.choice((100, 200, 400))},
            "CUSTOM_FPGA_X": {"total": rng.randint(1, 2)}})
        if rng.random() < 0.5:
            compute = []
            for n in range(rng.randint(1, 2)):
                numa = c.provider(f"cn{i}-numa{n}", parent=root)
                c.inventory(numa, {
                    "VCPU": {"total": rng.choice((4, 8)),
                             "allocation_ratio": rng.choice((1.0, 2.0))},
                    "MEMORY_MB": {"total": 8192, "reserved": 512}})
                compute.append(numa)
                if rng.random() < 0.5:
                    pf = c.provider(f"cn{i}-numa{n}-pf", parent=numa)
                    c.inventory(pf, {"SRIOV_NET_VF": {"total": 4}})
                    c.traits(pf, {"HW_NIC_SRIOV"})
        else:
            c.add("PUT", f"/resource_providers/{root}/inventories",
                  {"resource_provider_generation": c.generation[root],
                   "inventories": {
                       "DISK_GB": {"total": 200},
                       "CUSTOM_FPGA_X": {"total": 1},
                       "VCPU": {"total": 16},
                       "MEMORY_MB": {"total": 16384}}})
            c.generation[root] += 1
            c.room.update({(root, "DISK_GB"): 200,
                           (root, "CUSTOM_FPGA_X"): 1,
                           (root, "VCPU"): 16, (root, "MEMORY_MB"): 16384})
        traits = set(rng.sample(STANDARD_TRAITS + CUSTOM_TRAITS,
                                rng.randint(0, 3)))
        if traits:
            c.traits(root, traits)
        member = set(rng.sample(aggs, rng.randint(0, 2)))
        if member:
            c.aggregates(root, member)
        trees.append((root, compute))
    shared = []
    for s in range(rng.randint(1, 2)):
        rp = c.provider(f"shared{s}")
        c.inventory(rp, {"DISK_GB": {"total": 1000},
                         "CUSTOM_LICENSE": {"total": 10}})
        c.traits(rp, {"MISC_SHARES_VIA_AGGREGATE"})
        c.aggregates(rp, {aggs[s]})
        shared.append(rp)
    _consumers(c, rng, trees, shared)
    return c.requests


def _consumers(c, rng, trees, shared):
    projects = [c._id() for _ in range(3)]
    users = [c._id() for _ in range(2)]
    for k in range(rng.randint(8, 16)):
        root, compute = rng.choice(trees)
        host = rng.choice(compute)
        wants = {host: {}}
        for rc, most in (("VCPU", 4), ("MEMORY_MB", 4096)):
            room = c.room[(host, rc)]
            # The first consumers of a host may take all of it.
            amount = room if k % 5 == 0 else min(room, rng.randint(1, most))
            if amount > 0:
                wants[host][rc] = amount
        disk_on = rng.choice([root] + shared)
        if c.room[(disk_on, "DISK_GB")] >= 10:
            wants.setdefault(disk_on, {})["DISK_GB"] = 10
        if rng.random() < 0.3 and c.room[(root, "CUSTOM_FPGA_X")] > 0:
            wants.setdefault(root, {})["CUSTOM_FPGA_X"] = 1
        wants = {rp: res for rp, res in wants.items() if res}
        if not wants:
            continue
        ctype = rng.choice(("INSTANCE", "INSTANCE", "MIGRATION", None))
        c.allocate(c._id(), wants, rng.choice(projects), rng.choice(users),
                   ctype)
