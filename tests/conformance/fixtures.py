"""Fixtures the upstream gabbi files name, on gantt's own objects.

Each YAML file lists fixtures by class name; each starts a fresh
application (see harness), sets the $ENVIRON values the file uses and
writes the same providers, inventories, traits, aggregates and
allocations OpenStack Placement's fixtures write, so that generations
come out the same (aggregates are set without moving the generation, as
upstream's fixtures do).
"""

import os
import types
import uuid as uuidlib

from gabbi import fixture

from placement.objects import (
    aggregates,
    allocations,
    inventories,
    providers,
    resource_classes,
    traits,
)

ENVIRON_UUIDS = (
    "RP_UUID", "RP_NAME", "RP_UUID1", "RP_NAME1", "RP_UUID2", "RP_NAME2",
    "PROJECT_ID", "ADMIN_PROJECT_ID", "SERVICE_PROJECT_ID", "USER_ID",
    "PROJECT_ID_ALT", "USER_ID_ALT", "INSTANCE_UUID", "MIGRATION_UUID",
    "CONSUMER_UUID", "PARENT_PROVIDER_UUID", "ALT_PARENT_PROVIDER_UUID")


def new_uuid():
    return str(uuidlib.uuid4())


class Seed:
    """Writes through placement.objects on the running application's
    store."""

    def __init__(self, store):
        self.store = store

    def provider(self, name, *aggs, uuid=None, parent=None):
        rp = providers.create(self.store, name, uuid=uuid or new_uuid(),
                              parent_uuid=parent)
        if aggs:
            self.aggregates(rp.uuid, aggs)
        return rp.uuid

    def aggregates(self, rp, aggs):
        aggregates.set_for_provider(self.store, rp, list(aggs))

    def inventory(self, rp, rc, total, **fields):
        if rc.startswith("CUSTOM_"):
            resource_classes.ensure(self.store, rc)
        fields.setdefault("max_unit", total)
        inventories.add(self.store, rp,
                        inventories.Inventory(rc, total, **fields))

    def traits(self, rp, *names):
        for name in names:
            if name.startswith("CUSTOM_"):
                traits.ensure(self.store, name)
        traits.set_for_provider(self.store, rp, None, list(names))

    def allocation(self, rp, consumer, user, project, used):
        allocations.replace(self.store, [allocations.ConsumerAllocations(
            consumer, {rp: dict(used)}, project_id=project, user_id=user,
            consumer_generation=None)])


class APIFixture(fixture.GabbiFixture):
    policy = "legacy"
    cors = False
    harness = None  # set by bind()

    def start_fixture(self):
        self.harness.start(self.policy, self.cors)
        self.seed = Seed(self.harness.store)
        for key in ENVIRON_UUIDS:
            os.environ[key] = new_uuid()
        os.environ["CUSTOM_RES_CLASS"] = "CUSTOM_IRON_NFV"
        os.environ["CUSTOM_RES_CLASS1"] = "CUSTOM_IRON_NFV1"
        os.environ["CUSTOM_RES_CLASS2"] = "CUSTOM_IRON_NFV2"

    def stop_fixture(self):
        self.harness.stop()


class OpenPolicyFixture(APIFixture):
    policy = "open"


class SecureRBACPolicyFixture(APIFixture):
    policy = "secure"


class LegacyRBACPolicyFixture(APIFixture):
    policy = "legacy"


class CORSFixture(APIFixture):
    cors = True


class AllocationFixture(APIFixture):
    """One provider with DISK_GB and VCPU and three consumers' usage."""

    def start_fixture(self):
        super().start_fixture()
        s = self.seed
        env = os.environ
        env["ALT_USER_ID"] = new_uuid()
        rp = s.provider(env["RP_NAME"], uuid=env["RP_UUID"])
        s.inventory(rp, "DISK_GB", 2048, step_size=10, min_unit=10,
                    max_unit=1000)
        s.inventory(rp, "VCPU", 10, max_unit=10)
        env["CONSUMER_0"] = new_uuid()
        s.allocation(rp, env["CONSUMER_0"], env["USER_ID"],
                     env["PROJECT_ID"], {"DISK_GB": 1000})
        env["CONSUMER_ID"] = new_uuid()
        s.allocation(rp, env["CONSUMER_ID"], env["USER_ID"],
                     env["PROJECT_ID"], {"VCPU": 6})
        env["ALT_CONSUMER_ID"] = new_uuid()
        s.allocation(rp, env["ALT_CONSUMER_ID"], env["ALT_USER_ID"],
                     env["PROJECT_ID"], {"DISK_GB": 20, "VCPU": 1})
        env["ALT_RP_UUID"] = new_uuid()
        env["ALT_RP_NAME"] = new_uuid()


class SharedStorageFixture(APIFixture):
    """Two compute nodes with NUMA children and PFs below them, and two
    sharing storage providers, all in one aggregate."""

    def start_fixture(self):
        super().start_fixture()
        s = self.seed
        agg = new_uuid()
        cn1 = s.provider("cn1", agg)
        cn2 = s.provider("cn2", agg)
        ss = s.provider("ss", agg)
        ss2 = s.provider("ss2", agg)
        numa = {name: s.provider(name, parent=parent) for name, parent in (
            ("numa1_1", cn1), ("numa1_2", cn1), ("numa2_1", cn2),
            ("numa2_2", cn2))}
        pfs = {f"pf{n}": s.provider(f"pf{n}", parent=numa[f"numa{n}"])
               for n in ("1_1", "1_2", "2_1", "2_2")}
        os.environ.update(AGG_UUID=agg, CN1_UUID=cn1, CN2_UUID=cn2,
                          SS_UUID=ss, SS2_UUID=ss2)
        for name, uuid in {**numa, **pfs}.items():
            os.environ[f"{name.upper()}_UUID"] = uuid
        for cn in (cn1, cn2):
            s.inventory(cn, "VCPU", 24, allocation_ratio=16.0)
            s.inventory(cn, "MEMORY_MB", 128 * 1024, allocation_ratio=1.5)
        s.traits(cn1, "HW_CPU_X86_SSE", "HW_CPU_X86_SSE2")
        s.inventory(cn2, "DISK_GB", 2000, reserved=100,
                    allocation_ratio=1.0)
        for shared in (ss, ss2):
            s.inventory(shared, "DISK_GB", 2000, reserved=100,
                        allocation_ratio=1.0)
            s.traits(shared, "MISC_SHARES_VIA_AGGREGATE")
        for pf in pfs.values():
            s.inventory(pf, "SRIOV_NET_VF", 8, allocation_ratio=1.0)


class NUMAAggregateFixture(APIFixture):
    """Compute nodes whose NUMA children hold the VCPU, and sharing
    storage in and out of their aggregates."""

    def start_fixture(self):
        super().start_fixture()
        s = self.seed
        a, b, c = new_uuid(), new_uuid(), new_uuid()
        cn1 = s.provider("cn1", a)
        cn2 = s.provider("cn2", a, b)
        ss1 = s.provider("ss1", a)
        ss2 = s.provider("ss2", c)
        n11 = s.provider("numa1_1", c, parent=cn1)
        n12 = s.provider("numa1_2", parent=cn1)
        n21 = s.provider("numa2_1", parent=cn2)
        n22 = s.provider("numa2_2", parent=cn2)
        os.environ.update(
            AGGA_UUID=a, AGGB_UUID=b, AGGC_UUID=c, CN1_UUID=cn1,
            CN2_UUID=cn2, SS1_UUID=ss1, SS2_UUID=ss2, NUMA1_1_UUID=n11,
            NUMA1_2_UUID=n12, NUMA2_1_UUID=n21, NUMA2_2_UUID=n22)
        for numa in (n11, n12, n21, n22):
            s.inventory(numa, "VCPU", 24, allocation_ratio=16.0)
        for ss in (ss1, ss2):
            s.inventory(ss, "DISK_GB", 2000, reserved=100,
                        allocation_ratio=1.0)
            s.traits(ss, "MISC_SHARES_VIA_AGGREGATE")


class NUMANetworkFixture(APIFixture):
    """Two compute nodes with NUMA, FPGA, GPU, SR-IOV and OVS subtrees,
    one sharing disk, and some usage."""

    cn1 = None
    cn2 = None

    def start_fixture(self):
        super().start_fixture()
        self.cn1 = self.cn2 = None
        self.make_entities()

    def make_entities(self):
        s = self.seed
        env = os.environ
        agg_a = new_uuid()
        env["AGGA_UUID"] = agg_a
        ss1 = s.provider("ss1", agg_a)
        s.traits(ss1, "MISC_SHARES_VIA_AGGREGATE")
        s.inventory(ss1, "DISK_GB", 2000)
        env["SS1_UUID"] = ss1
        if not self.cn1:
            self.cn1 = s.provider("cn1", agg_a)
        s.aggregates(self.cn1, [agg_a])
        s.traits(self.cn1, "COMPUTE_VOLUME_MULTI_ATTACH")
        env["CN1_UUID"] = self.cn1
        numas = []
        for i in (0, 1):
            numa = s.provider(f"numa{i}", parent=self.cn1)
            s.traits(numa, "HW_NUMA_ROOT", *(["CUSTOM_FOO"] if i else []))
            s.inventory(numa, "VCPU", 4)
            numas.append(numa)
            env[f"NUMA{i}_UUID"] = numa
        s.inventory(numas[0], "MEMORY_MB", 2048, min_unit=512,
                    step_size=256)
        s.inventory(numas[1], "MEMORY_MB", 2048, min_unit=256,
                    max_unit=1024)
        user, project = "numafx-user", "numafx-project"
        s.allocation(numas[0], new_uuid(), user, project, {"VCPU": 2})
        fpga = s.provider("fpga0", parent=numas[0])
        s.inventory(fpga, "FPGA", 1)
        env["FPGA0_UUID"] = fpga
        pgpu = s.provider("pgpu0", parent=numas[0])
        s.inventory(pgpu, "VGPU", 8)
        env["PGPU0_UUID"] = pgpu
        for i in (0, 1):
            fpga = s.provider(f"fpga1_{i}", parent=numas[1])
            s.inventory(fpga, "FPGA", 1)
            env[f"FPGA1_{i}_UUID"] = fpga
        agent = s.provider("sriov_agent", parent=self.cn1)
        s.traits(agent, "CUSTOM_VNIC_TYPE_DIRECT")
        env["SRIOV_AGENT_UUID"] = agent
        for i in (1, 2):
            dev = s.provider(f"esn{i}", parent=agent)
            s.traits(dev, f"CUSTOM_PHYSNET{i}")
            s.inventory(dev, "NET_BW_EGR_KILOBIT_PER_SEC", 10000 * i)
            env[f"ESN{i}_UUID"] = dev
        agent = s.provider("ovs_agent", parent=self.cn1)
        s.traits(agent, "CUSTOM_VNIC_TYPE_NORMAL")
        env["OVS_AGENT_UUID"] = agent
        dev = s.provider("br_int", parent=agent)
        s.traits(dev, "CUSTOM_PHYSNET0")
        s.inventory(dev, "NET_BW_EGR_KILOBIT_PER_SEC", 1000)
        env["BR_INT_UUID"] = dev
        if not self.cn2:
            self.cn2 = s.provider("cn2")
        s.aggregates(self.cn2, [agg_a])
        s.inventory(self.cn2, "VCPU", 8)
        s.allocation(self.cn2, new_uuid(), user, project, {"VCPU": 3})
        s.inventory(self.cn2, "MEMORY_MB", 2048, min_unit=1024,
                    step_size=128)
        s.inventory(self.cn2, "DISK_GB", 1000)
        s.traits(self.cn2, "CUSTOM_FOO")
        env["CN2_UUID"] = self.cn2
        nics = []
        for i in (1, 2, 3):
            nic = s.provider(f"nic{i}", parent=self.cn2)
            s.traits(nic, "CUSTOM_HW_NIC_ROOT")
            nics.append(nic)
            env[f"NIC{i}_UUID"] = nic
        pfs = [("1_1", nics[0], 1, 4), ("1_2", nics[0], 2, 4),
               ("2_1", nics[1], 1, 2), ("2_2", nics[1], 2, 2),
               ("2_3", nics[1], 1, 2), ("2_4", nics[1], 2, 2),
               ("3_1", nics[2], 1, 8)]
        for suffix, nic, physnet, vfs in pfs:
            pf = s.provider(f"pf{suffix}", parent=nic)
            s.traits(pf, f"CUSTOM_PHYSNET{physnet}")
            s.inventory(pf, "CUSTOM_VF", vfs)
            env[f"PF{suffix}_UUID"] = pf


class DeepNUMANetworkFixture(NUMANetworkFixture):
    """The same, with the compute nodes two levels down a tree."""

    def make_entities(self):
        s = self.seed
        gp1 = s.provider("gp1")
        p1 = s.provider("p1", parent=gp1)
        p2 = s.provider("p2", parent=gp1)
        self.cn1 = s.provider("cn1", parent=p1)
        self.cn2 = s.provider("cn2", parent=p2)
        super().make_entities()


class NonSharedStorageFixture(APIFixture):
    """Three compute nodes with local VCPU, memory and disk."""

    def start_fixture(self):
        super().start_fixture()
        s = self.seed
        for key in ("AGGA_UUID", "AGGB_UUID", "AGGC_UUID"):
            os.environ[key] = new_uuid()
        for i in (1, 2, 3):
            os.environ[f"CN{i}_UUID"] = s.provider(f"cn{i}")
        for i in (1, 2, 3):
            cn = os.environ[f"CN{i}_UUID"]
            s.inventory(cn, "VCPU", 24)
            s.inventory(cn, "MEMORY_MB", 128 * 1024)
            s.inventory(cn, "DISK_GB", 2000)


class GranularFixture(APIFixture):
    """Three compute nodes and sharing disk and network providers across
    three aggregates, with traits for granular requests."""

    def start_fixture(self):
        super().start_fixture()
        s = self.seed
        resource_classes.ensure(self.harness.store, "CUSTOM_NET_MBPS")
        a, b, c = new_uuid(), new_uuid(), new_uuid()
        os.environ.update(AGGA=a, AGGB=b, AGGC=c)
        left = s.provider("cn_left", a)
        os.environ["CN_LEFT"] = left
        for rc, total in (("VCPU", 8), ("MEMORY_MB", 4096),
                          ("DISK_GB", 500), ("VGPU", 8),
                          ("SRIOV_NET_VF", 8), ("CUSTOM_NET_MBPS", 4000)):
            s.inventory(left, rc, total)
        s.traits(left, "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2",
                 "HW_GPU_API_DXVA", "HW_NIC_DCB_PFC", "CUSTOM_FOO")
        middle = s.provider("cn_middle", a, b)
        os.environ["CN_MIDDLE"] = middle
        for rc, total in (("VCPU", 8), ("MEMORY_MB", 4096),
                          ("SRIOV_NET_VF", 8), ("CUSTOM_NET_MBPS", 4000)):
            s.inventory(middle, rc, total)
        s.traits(middle, "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2",
                 "HW_CPU_X86_SSE", "HW_NIC_ACCEL_TLS")
        right = s.provider("cn_right", b, c)
        os.environ["CN_RIGHT"] = right
        s.inventory(right, "VCPU", 8)
        s.inventory(right, "MEMORY_MB", 4096)
        s.inventory(right, "DISK_GB", 500)
        s.inventory(right, "VGPU", 8, max_unit=2)
        s.traits(right, "HW_CPU_X86_MMX", "HW_GPU_API_DXVA",
                 "CUSTOM_DISK_SSD")
        disk1 = s.provider("shr_disk_1", a)
        os.environ["SHR_DISK_1"] = disk1
        s.inventory(disk1, "DISK_GB", 1000)
        s.traits(disk1, "MISC_SHARES_VIA_AGGREGATE", "CUSTOM_DISK_SSD")
        disk2 = s.provider("shr_disk_2", a, b)
        os.environ["SHR_DISK_2"] = disk2
        s.inventory(disk2, "DISK_GB", 1000)
        s.traits(disk2, "MISC_SHARES_VIA_AGGREGATE")
        net = s.provider("shr_net", c)
        os.environ["SHR_NET"] = net
        s.inventory(net, "SRIOV_NET_VF", 16)
        s.inventory(net, "CUSTOM_NET_MBPS", 40000)
        s.traits(net, "MISC_SHARES_VIA_AGGREGATE")


class NeutronQoSMultiSegmentFixture(APIFixture):
    """Four compute nodes with OVS bridges and SR-IOV PFs on physical
    networks of a multi-segment network."""

    VNIC = ("CUSTOM_VNIC_TYPE_DIRECT", "CUSTOM_VNIC_TYPE_DIRECT_PHYSICAL",
            "CUSTOM_VNIC_TYPE_MACVTAP")

    def _compute(self, n, bridges, pf_physnets, bw_bridge=5000,
                 bw_pf=10000):
        s = self.seed
        env = os.environ
        cn = s.provider(f"compute{n}")
        env[f"compute{n}"] = cn
        s.inventory(cn, "VCPU", 8)
        s.inventory(cn, "MEMORY_MB", 4096)
        s.inventory(cn, "DISK_GB", 500)
        ovs = s.provider(f"compute{n}:Open vSwitch agent", parent=cn)
        env[f"compute{n}:ovs_agent"] = ovs
        s.inventory(ovs, "NET_PACKET_RATE_KILOPACKET_PER_SEC", 1000)
        s.traits(ovs, "CUSTOM_VNIC_TYPE_NORMAL")
        for name, key, physnet in bridges:
            br = s.provider(f"compute{n}:Open vSwitch agent:{name}",
                            parent=ovs)
            env[f"compute{n}:{key}"] = br
            s.inventory(br, "NET_BW_EGR_KILOBIT_PER_SEC", bw_bridge)
            s.inventory(br, "NET_BW_IGR_KILOBIT_PER_SEC", bw_bridge)
            s.traits(br, "CUSTOM_VNIC_TYPE_NORMAL", physnet)
        sriov = s.provider(f"compute{n}:NIC Switch agent", parent=cn)
        s.traits(sriov, *self.VNIC)
        for i, physnet in enumerate(pf_physnets):
            pf = s.provider(f"compute{n}:NIC Switch agent:enp129s0f{i}",
                            parent=sriov)
            env[f"compute{n}:pf{i}"] = pf
            s.inventory(pf, "NET_BW_EGR_KILOBIT_PER_SEC", bw_pf)
            s.inventory(pf, "NET_BW_IGR_KILOBIT_PER_SEC", bw_pf)
            s.traits(pf, *(self.VNIC + (physnet,)))
        return sriov

    def start_fixture(self):
        super().start_fixture()
        for n, physnet in ((0, "CUSTOM_PHYSNET_OTHER"),
                           (1, "CUSTOM_PHYSNET_MSN_S1"),
                           (2, "CUSTOM_PHYSNET_MSN_S2")):
            sriov = self._compute(n, [("br-ex", "br_ex", physnet)],
                                  [physnet])
            os.environ[f"compute{n}:sriov_agent"] = sriov
        self._compute(
            3, [("br-ex", "br_ex", "CUSTOM_PHYSNET_MSN_S1"),
                ("br-ex2", "br_ex2", "CUSTOM_PHYSNET_MSN_S2")],
            ["CUSTOM_PHYSNET_MSN_S1", "CUSTOM_PHYSNET_MSN_S2"],
            bw_bridge=1000, bw_pf=1000)
        # As upstream's fixture leaves it: compute3's agent variable names
        # compute2's agent.
        os.environ["compute3:sriov_agent"] = os.environ[
            "compute2:sriov_agent"]


FIXTURES = (
    APIFixture, OpenPolicyFixture, SecureRBACPolicyFixture,
    LegacyRBACPolicyFixture, CORSFixture, AllocationFixture,
    SharedStorageFixture, NUMAAggregateFixture, NUMANetworkFixture,
    DeepNUMANetworkFixture, NonSharedStorageFixture, GranularFixture,
    NeutronQoSMultiSegmentFixture)


def bind(harness):
    """The fixture classes, by name, starting applications on
    ``harness`` (gabbi looks fixture names up as attributes)."""
    return types.SimpleNamespace(**{
        cls.__name__: type(cls.__name__, (cls,), {"harness": harness})
        for cls in FIXTURES})
