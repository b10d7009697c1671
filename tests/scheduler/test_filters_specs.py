"""Filters that match flavor extra specs, image properties, NUMA and PCI
requests against what hosts report. Each table row: what the request
asks, and the nodenames that pass."""

import pytest

from filters import aggregate_image_properties_isolation as aipi
from filters import aggregate_instance_extra_specs as aies
from filters import compute_capabilities as cc
from filters import image_properties as ip
from filters import numa_fit
from filters import numa_topology as nt
from filters import pci_passthrough as pp

FILTERS = [cc.ComputeCapabilitiesFilter,
           aies.AggregateInstanceExtraSpecsFilter,
           ip.ImagePropertiesFilter,
           aipi.AggregateImagePropertiesIsolation,
           nt.NUMATopologyFilter,
           pp.PciPassthroughFilter]


def run(cloud, cls, spec):
    request = cloud.request(spec)
    rows = cloud.rows()
    return cloud.names(rows, cls(cloud.conf).mask(request, rows))


def why(cloud, cls, spec, name):
    request = cloud.request(spec)
    return cls(cloud.conf).why(request, cloud.rows(name)[0])


def flavor(**extra_specs):
    return {"flavor": {"vcpus": 1, "memory_mb": 512, "root_gb": 1,
                       "extra_specs": extra_specs}}


def image(**props):
    return {"image": {"properties": props}}


# -- flags and the fast path ----------------------------------------------

FLAGS = {
    "ComputeCapabilitiesFilter": (True, False),
    "AggregateInstanceExtraSpecsFilter": (True, False),
    "ImagePropertiesFilter": (True, True),
    "AggregateImagePropertiesIsolation": (True, True),
    "NUMATopologyFilter": (False, False),
    "PciPassthroughFilter": (False, False),
}


@pytest.mark.parametrize("cls", FILTERS, ids=[c.name for c in FILTERS])
def test_flags_as_nova(cls):
    assert (cls.run_filter_once_per_request,
            cls.RUN_ON_REBUILD) == FLAGS[cls.name]


@pytest.mark.parametrize("cls", FILTERS, ids=[c.name for c in FILTERS])
def test_plain_request_passes_everything(cloud, cls):
    # Hosts that would fail any real requirement: nothing reported, no
    # aggregates with metadata.
    cloud.node("bare1")
    cloud.node("bare2")
    cloud.aggregate("meta", ["bare1"], ssd="true", os_distro="linux")
    assert run(cloud, cls, {}) == ["bare1", "bare2"]


# -- ComputeCapabilitiesFilter ----------------------------------------------


@pytest.fixture
def capable(cloud):
    cloud.node("n1", memory_mb=8192, hypervisor_type="QEMU",
               hypervisor_version=6000000,
               cpu_info={"arch": "x86_64", "features": ["sse", "avx"],
                         "topology": {"cores": 4}},
               stats={"trust": "yes"})
    cloud.node("n2", memory_mb=2048, hypervisor_type="ironic",
               hypervisor_version=1,
               cpu_info='{"arch": "aarch64", "features": ["sse"]}',
               cpu_allocation_ratio=16.0)
    cloud.node("n3", memory_mb=4096)
    return cloud


CAPABILITIES = {
    "no-extra-specs": ({}, ["n1", "n2", "n3"]),
    "other-scope-ignored": ({"hw:cpu_policy": "dedicated"},
                            ["n1", "n2", "n3"]),
    "unknown-bare-key-ignored": ({"foo": "bar"}, ["n1", "n2", "n3"]),
    # A bare stats key counts only on hosts that report it.
    "bare-stats-key": ({"trust": "no"}, ["n2", "n3"]),
    "scoped-stats-key": ({"capabilities:trust": "yes"}, ["n1"]),
    "hypervisor-type": ({"capabilities:hypervisor_type": "QEMU"}, ["n1"]),
    "bare-hypervisor-type": ({"hypervisor_type": "s== ironic"}, ["n2"]),
    "hypervisor-version": ({"capabilities:hypervisor_version": ">= 2000"},
                           ["n1"]),
    "free-ram-at-least": ({"free_ram_mb": "= 4096"}, ["n1", "n3"]),
    "free-ram-or": ({"free_ram_mb": "<or> 2048 <or> 4096"}, ["n2", "n3"]),
    "ratio-as-python-prints-it": ({"cpu_allocation_ratio": "4.0"},
                                  ["n1", "n3"]),
    "cpu-arch": ({"capabilities:cpu_info:arch": "x86_64"}, ["n1"]),
    "cpu-feature-in": ({"capabilities:cpu_info:features": "<in> avx"},
                       ["n1"]),
    "cpu-features-all-in": ({"capabilities:cpu_info:features":
                             "<all-in> sse"}, ["n1", "n2"]),
    "nested-dict": ({"capabilities:cpu_info:topology:cores": ">= 4"},
                    ["n1"]),
    "path-past-a-value": ({"capabilities:cpu_info:arch:bits": "64"}, []),
    "path-past-a-column": ({"capabilities:free_ram_mb:x": "1"}, []),
    "missing-scoped-key": ({"capabilities:nothing": "1"}, []),
    "every-spec-must-match": ({"capabilities:cpu_info:features":
                               "<in> sse", "free_ram_mb": "<= 4096"},
                              ["n2"]),
}


@pytest.mark.parametrize("specs, expected", CAPABILITIES.values(),
                         ids=CAPABILITIES.keys())
def test_compute_capabilities(capable, specs, expected):
    assert run(capable, cc.ComputeCapabilitiesFilter,
               flavor(**specs)) == expected


CAPABILITY_WHY = {
    "value-differs": ({"capabilities:cpu_info:arch": "x86_64"}, "n2",
                      "extra spec capabilities:cpu_info:arch wants "
                      "'x86_64', the host has 'aarch64'"),
    "nothing-there": ({"capabilities:cpu_info:arch": "x86_64"}, "n3",
                      "extra spec capabilities:cpu_info:arch: the host has "
                      "no such capability"),
    "column": ({"free_ram_mb": ">= 4096"}, "n2",
               "extra spec free_ram_mb wants '>= 4096', the host has "
               "'2048'"),
}


@pytest.mark.parametrize("specs, name, text", CAPABILITY_WHY.values(),
                         ids=CAPABILITY_WHY.keys())
def test_compute_capabilities_why(capable, specs, name, text):
    assert why(capable, cc.ComputeCapabilitiesFilter, flavor(**specs),
               name) == text


# -- AggregateInstanceExtraSpecsFilter --------------------------------------


@pytest.fixture
def aggregated(cloud):
    for name in ("n1", "n2", "n3"):
        cloud.node(name)
    cloud.aggregate("agg1", ["n1", "n2"], ssd="true", gpu="a100, h100")
    cloud.aggregate("agg2", ["n2"], ssd="false", speed="10")
    cloud.aggregate("empty", ["n3"])
    return cloud


AGGREGATE_SPECS = {
    "no-extra-specs": ({}, ["n1", "n2", "n3"]),
    "other-scope-ignored": ({"capabilities:ssd": "false"},
                            ["n1", "n2", "n3"]),
    "bare-key": ({"ssd": "true"}, ["n1", "n2"]),
    "values-of-all-aggregates": ({"aggregate_instance_extra_specs:ssd":
                                  "false"}, ["n2"]),
    "comma-list": ({"gpu": "h100"}, ["n1", "n2"]),
    "comma-list-substring": ({"gpu": "<in> 100"}, ["n1", "n2"]),
    "numeric": ({"speed": ">= 5"}, ["n2"]),
    "numeric-too-low": ({"speed": "= 20"}, []),
    # Unlike ComputeCapabilitiesFilter, a key nobody sets fails.
    "bare-key-no-aggregate-sets": ({"missing": "x"}, []),
    "or": ({"aggregate_instance_extra_specs:ssd": "<or> false <or> maybe"},
           ["n2"]),
    "every-spec-must-match": ({"ssd": "true", "speed": "10"}, ["n2"]),
}


@pytest.mark.parametrize("specs, expected", AGGREGATE_SPECS.values(),
                         ids=AGGREGATE_SPECS.keys())
def test_aggregate_instance_extra_specs(aggregated, specs, expected):
    assert run(aggregated, aies.AggregateInstanceExtraSpecsFilter,
               flavor(**specs)) == expected


def test_aggregate_instance_extra_specs_scope_keeps_colons(cloud):
    cloud.node("n1")
    cloud.node("n2")
    cloud.aggregate("a", ["n1"], **{"x:y": "1"})
    specs = {"aggregate_instance_extra_specs:x:y": "1"}
    assert run(cloud, aies.AggregateInstanceExtraSpecsFilter,
               flavor(**specs)) == ["n1"]


AGGREGATE_WHY = {
    "not-set": ({"speed": "10"}, "n3",
                "extra spec speed: no aggregate of the host sets speed"),
    "no-match": ({"ssd": "false"}, "n1",
                 "extra spec ssd wants 'false', the host's aggregates give "
                 "['true']"),
}


@pytest.mark.parametrize("specs, name, text", AGGREGATE_WHY.values(),
                         ids=AGGREGATE_WHY.keys())
def test_aggregate_instance_extra_specs_why(aggregated, specs, name, text):
    assert why(aggregated, aies.AggregateInstanceExtraSpecsFilter,
               flavor(**specs), name) == text


# -- ImagePropertiesFilter ----------------------------------------------------


@pytest.fixture
def hypervisors(cloud):
    cloud.node("i1", hypervisor_version=6000000, supported_instances=[
        ["x86_64", "kvm", "hvm"], ["i686", "kvm", "hvm"]])
    cloud.node("i2", hypervisor_version=4002000,
               supported_instances=[["aarch64", "qemu", "hvm"]])
    cloud.node("i3", supported_instances=[["x86_64", "xen", "xen"]])
    cloud.node("i4")
    cloud.node("i5", supported_instances=[["x86_64", "xen", "hvm"]])
    return cloud


IMAGES = {
    "no-properties": ({}, ["i1", "i2", "i3", "i4", "i5"]),
    "unrelated-property": ({"os_distro": "linux"},
                           ["i1", "i2", "i3", "i4", "i5"]),
    "arch": ({"hw_architecture": "x86_64"}, ["i1", "i3", "i5"]),
    "arch-alias-amd64": ({"hw_architecture": "AMD64"}, ["i1", "i3", "i5"]),
    "arch-alias-i386": ({"hw_architecture": "i386"}, ["i1"]),
    "hv-type": ({"img_hv_type": "qemu"}, ["i2"]),
    "hv-type-alias-xapi": ({"img_hv_type": "xapi"}, ["i3", "i5"]),
    "vm-mode-alias-pv": ({"hw_vm_mode": "pv"}, ["i3", "i5"]),
    "vm-mode-alias-hv": ({"hw_vm_mode": "hv"}, ["i1", "i2", "i5"]),
    "all-three": ({"hw_architecture": "x86_64", "img_hv_type": "kvm",
                   "hw_vm_mode": "hvm"}, ["i1"]),
    "no-entry-has-all": ({"hw_architecture": "aarch64",
                          "img_hv_type": "kvm"}, []),
    "version-at-least": ({"hw_architecture": "x86_64",
                          "img_hv_requested_version": ">= 6.0"},
                         ["i1", "i3", "i5"]),
    # Hosts that report no version are not checked.
    "version-below": ({"hw_architecture": "x86_64",
                       "img_hv_requested_version": "< 6"}, ["i3", "i5"]),
    "version-range": ({"img_hv_type": "qemu",
                       "img_hv_requested_version": ">= 4.1, < 5"}, ["i2"]),
    "version-range-missed": ({"img_hv_type": "qemu",
                              "img_hv_requested_version": ">= 4.3"}, []),
    "version-alone-not-checked": ({"img_hv_requested_version": ">= 99"},
                                  ["i1", "i2", "i3", "i4", "i5"]),
    "version-unreadable": ({"hw_architecture": "x86_64",
                            "img_hv_requested_version": "new"},
                           ["i3", "i5"]),
}


@pytest.mark.parametrize("props, expected", IMAGES.values(),
                         ids=IMAGES.keys())
def test_image_properties(hypervisors, props, expected):
    assert run(hypervisors, ip.ImagePropertiesFilter,
               image(**props)) == expected


DEFAULT_ARCH = {
    "image-without-arch": ({}, ["i2"]),
    "image-arch-wins": ({"hw_architecture": "x86_64"}, ["i1", "i3", "i5"]),
}


@pytest.mark.parametrize("props, expected", DEFAULT_ARCH.values(),
                         ids=DEFAULT_ARCH.keys())
def test_image_properties_default_architecture(hypervisors, props,
                                               expected):
    hypervisors.set("filter_scheduler",
                    "image_properties_default_architecture", "aarch64")
    assert run(hypervisors, ip.ImagePropertiesFilter,
               image(**props)) == expected


IMAGE_WHY = {
    "no-supported-instances": ({"hw_architecture": "x86_64"}, "i4",
                               "image needs x86_64/*/*; the host lists no "
                               "supported instances"),
    "unsupported": ({"img_hv_type": "kvm"}, "i2",
                    "image needs */kvm/*; the host supports "
                    "[['aarch64', 'qemu', 'hvm']]"),
    "version": ({"hw_architecture": "x86_64",
                 "img_hv_requested_version": "< 6"}, "i1",
                "image needs hypervisor version '< 6'; the host has 6.0.0"),
}


@pytest.mark.parametrize("props, name, text", IMAGE_WHY.values(),
                         ids=IMAGE_WHY.keys())
def test_image_properties_why(hypervisors, props, name, text):
    assert why(hypervisors, ip.ImagePropertiesFilter, image(**props),
               name) == text


# -- AggregateImagePropertiesIsolation ---------------------------------------


@pytest.fixture
def isolated(cloud):
    for name in ("p1", "p2", "p3"):
        cloud.node(name)
    cloud.aggregate("g1", ["p1"], os_distro="windows", hw_numa_nodes="2")
    cloud.aggregate("g2", ["p2"], **{"os_distro": "linux, bsd",
                                     "ns.hw_disk_bus": "scsi"})
    return cloud


ISOLATION = {
    "no-properties": ({}, ["p1", "p2", "p3"]),
    "value-of-one-aggregate": ({"os_distro": "windows"}, ["p1", "p3"]),
    "comma-list": ({"os_distro": "bsd"}, ["p2", "p3"]),
    "value-nobody-lists": ({"os_distro": "hurd"}, ["p3"]),
    "property-no-aggregate-names": ({"foo": "x"}, ["p1", "p2", "p3"]),
    "false-value-ignored": ({"os_distro": ""}, ["p1", "p2", "p3"]),
    "number-compared-as-text": ({"hw_numa_nodes": 2}, ["p1", "p2", "p3"]),
    "number-differs": ({"hw_numa_nodes": 3}, ["p2", "p3"]),
    "several-properties": ({"os_distro": "linux", "ns.hw_disk_bus": "ide"},
                           ["p3"]),
}


@pytest.mark.parametrize("props, expected", ISOLATION.values(),
                         ids=ISOLATION.keys())
def test_aggregate_image_properties_isolation(isolated, props, expected):
    assert run(isolated, aipi.AggregateImagePropertiesIsolation,
               image(**props)) == expected


NAMESPACED = {
    "outside-namespace-ignored": (".", {"os_distro": "hurd"},
                                  ["p1", "p2", "p3"]),
    "inside-namespace": (".", {"ns.hw_disk_bus": "ide"}, ["p1", "p3"]),
    "inside-namespace-matches": (".", {"ns.hw_disk_bus": "scsi"},
                                 ["p1", "p2", "p3"]),
    "other-separator": ("_", {"ns.hw_disk_bus": "ide"},
                        ["p1", "p2", "p3"]),
}


@pytest.mark.parametrize("separator, props, expected", NAMESPACED.values(),
                         ids=NAMESPACED.keys())
def test_aggregate_image_properties_isolation_namespace(
        isolated, separator, props, expected):
    isolated.set("filter_scheduler",
                 "aggregate_image_properties_isolation_namespace", "ns")
    isolated.set("filter_scheduler",
                 "aggregate_image_properties_isolation_separator", separator)
    assert run(isolated, aipi.AggregateImagePropertiesIsolation,
               image(**props)) == expected


def test_aggregate_image_properties_isolation_why(isolated):
    assert why(isolated, aipi.AggregateImagePropertiesIsolation,
               image(os_distro="linux"), "p1") == (
        "image property os_distro=linux is not among the host's aggregate "
        "values ['windows']")


# -- NUMATopologyFilter -------------------------------------------------------


def _cell(id, cpuset=(), pcpuset=(), memory=4096, **more):
    return {"id": id, "cpuset": list(cpuset), "pcpuset": list(pcpuset),
            "memory": memory, **more}


def _wrapped(fields):
    return {"nova_object.name": "X", "nova_object.data": fields}


@pytest.fixture
def numa(cloud):
    cloud.node("m1", numa_topology={"cells": [
        _cell(0, range(4), range(4, 8), siblings=[[4, 5], [6, 7]]),
        _cell(1, range(8, 12), range(12, 16), siblings=[[12, 13]])]})
    # As a Nova compute reports it: versioned-object primitives.
    cloud.node("m2", ram_allocation_ratio=1.5, numa_topology=_wrapped(
        {"cells": [_wrapped(_cell(0, [0, 1], [2, 3], memory=2048,
                                  pinned_cpus=[2], cpu_usage=7,
                                  memory_usage=1024))]}))
    cloud.node("m3")
    # Older report: no pcpuset, so the cpuset serves pinning too.
    cloud.node("m4", numa_topology={"cells": [{
        "id": 0, "cpuset": [0, 1, 2, 3], "pinned_cpus": [0, 1],
        "memory": 8192, "mempages": [
            {"size_kb": 4, "total": 2097152, "used": 0, "reserved": 0},
            {"size_kb": 2048, "total": 1024, "used": 512,
             "reserved": 0}]}]})
    # A big and a small cell: the guest's order must not matter.
    cloud.node("m5", numa_topology={"cells": [
        _cell(0, (), range(4)), _cell(1, (), [4])]})
    return cloud


def topology(*cells, policy=None, threads=None):
    return {"numa_topology": {"cells": list(cells), "cpu_policy": policy,
                              "cpu_thread_policy": threads}}


def shared(id, cpus, memory):
    return {"id": id, "cpuset": list(range(cpus)), "memory": memory}


def pinned(id, cpus, memory=1024):
    return {"id": id, "pcpuset": list(range(cpus)), "memory": memory}


NUMA = {
    "no-topology": ({}, ["m1", "m2", "m3", "m4", "m5"]),
    "shared-small": (topology(shared(0, 1, 1024)), ["m1", "m2", "m4"]),
    "shared-more-cpus-than-cell": (topology(shared(0, 3, 512)),
                                   ["m1", "m4"]),
    # m2: 1024 used + 1536 is within 2048 x 1.5.
    "ram-ratio": (topology(shared(0, 1, 1536)), ["m1", "m2", "m4"]),
    "no-overcommit-against-itself": (topology(shared(0, 1, 2100)),
                                     ["m1", "m4"]),
    # m2: 7 used + 2 is over 2 x 4.0.
    "cpu-ratio": (topology(shared(0, 2, 256)), ["m1", "m4"]),
    "pinned": (topology(pinned(0, 2), policy="dedicated"),
               ["m1", "m4", "m5"]),
    "pinned-more-than-free": (topology(pinned(0, 3), policy="dedicated"),
                              ["m1", "m5"]),
    "pinned-memory-not-overcommitted": (
        topology(pinned(0, 1, 1536), policy="dedicated"), ["m1", "m4",
                                                           "m5"]),
    "pinned-two-cells": (topology(pinned(0, 2), pinned(1, 2),
                                  policy="dedicated"), ["m1"]),
    "pinned-cells-any-order": (topology(pinned(0, 1), pinned(1, 4),
                                        policy="dedicated"), ["m1", "m5"]),
    "more-cells-than-host": (topology(shared(0, 1, 256),
                                      shared(1, 1, 256),
                                      shared(2, 1, 256)), []),
    "legacy-dedicated-cpuset": (topology(shared(0, 3, 512),
                                         policy="dedicated"),
                                ["m1", "m5"]),
    # Shared and pinned CPUs each against their own set (Nova 34 agrees
    # on m1, m2 and m5: nova_agreement/numa.json, numa-mixed-cell).
    "mixed-cell": (topology({"id": 0, "cpuset": [0, 1],
                             "pcpuset": [2, 3], "memory": 1024},
                            policy="mixed"), ["m1", "m4"]),
    "huge-pages": (topology({"id": 0, "cpuset": [0], "memory": 1024,
                             "pagesize": 2048}), ["m4"]),
    "huge-pages-too-few": (topology({"id": 0, "cpuset": [0],
                                     "memory": 1026, "pagesize": 2048}),
                           []),
    "page-size-not-offered": (topology({"id": 0, "cpuset": [0],
                                        "memory": 1024,
                                        "pagesize": 1048576}), []),
    # Nova's symbolic sizes, on m4's 4 KiB and 2 MiB (512 free) pages;
    # hosts that list no page sizes fail every page size request.
    "large-pages": (topology({"id": 0, "cpuset": [0], "memory": 1024,
                              "pagesize": -2}), ["m4"]),
    "large-pages-too-few": (topology({"id": 0, "cpuset": [0],
                                      "memory": 1026, "pagesize": -2}),
                            []),
    "any-pages-falls-to-small": (topology({"id": 0, "cpuset": [0],
                                           "memory": 1026,
                                           "pagesize": -3}), ["m4"]),
    "small-pages": (topology({"id": 0, "cpuset": [0], "memory": 1024,
                              "pagesize": -1}), ["m4"]),
    "thread-require": (topology(pinned(0, 1), policy="dedicated",
                                threads="require"), ["m1"]),
    "thread-require-by-extra-specs": (
        {**topology(pinned(0, 1), policy="dedicated"),
         **flavor(**{"hw:cpu_thread_policy": "require"})}, ["m1"]),
    "thread-require-needs-dedicated": (
        topology(shared(0, 1, 256), threads="require"), ["m1", "m2",
                                                         "m4"]),
}


@pytest.mark.parametrize("spec, expected", NUMA.values(), ids=NUMA.keys())
def test_numa_topology(numa, spec, expected):
    assert run(numa, nt.NUMATopologyFilter, spec) == expected


NUMA_WHY = {
    "no-host-topology": (topology(shared(0, 1, 256)), "m3",
                         "the guest asks for a NUMA topology; the host "
                         "reports none"),
    "too-many-cells": (topology(pinned(0, 1), pinned(1, 1),
                                policy="dedicated"), "m4",
                       "the guest has 2 NUMA cells; the host only 1"),
    "cell-fits-nowhere": (topology(pinned(0, 2), policy="dedicated"), "m2",
                          "guest NUMA cell 0 (0 shared CPUs, 2 pinned "
                          "CPUs, 1024 MB) fits no host cell"),
    "no-distinct-cells": (topology(pinned(0, 2), pinned(1, 2),
                                   policy="dedicated"), "m5",
                          "the guest NUMA cells do not fit on distinct "
                          "host cells"),
    "no-threads": (topology(pinned(0, 1), policy="dedicated",
                            threads="require"), "m4",
                   "cpu_thread_policy require wants hyperthreads; the "
                   "host has no sibling threads"),
}


@pytest.mark.parametrize("spec, name, text", NUMA_WHY.values(),
                         ids=NUMA_WHY.keys())
def test_numa_topology_why(numa, spec, name, text):
    assert why(numa, nt.NUMATopologyFilter, spec, name) == text


def test_numa_assignment_is_not_greedy():
    big = numa_fit.HostCell(0, 0, 4, 4, 0, 4096, 0, (), False)
    small = numa_fit.HostCell(1, 0, 1, 1, 0, 4096, 0, (), False)
    one = numa_fit.GuestCell(0, 0, 1, 512, None)
    four = numa_fit.GuestCell(1, 0, 4, 512, None)
    assert numa_fit.assign([one, four], [big, small], 1.0, 1.0) == {
        0: 1, 1: 0}


# -- PciPassthroughFilter -----------------------------------------------------


@pytest.fixture
def devices(cloud):
    cloud.node("c1", pci_device_pools=[
        {"count": 2, "vendor_id": "8086", "product_id": "1520",
         "dev_type": "type-VF", "physical_network": "physnet1",
         "numa_node": 0, "capabilities_network": ["rx", "tx", "tso"]},
        {"count": 1, "vendor_id": "8086", "product_id": "1521",
         "dev_type": "type-PF"}])
    # Tags nested as Nova's PciDevicePool object keeps them.
    cloud.node("c2", pci_device_pools=[
        {"count": 1, "vendor_id": "8086", "product_id": "1520",
         "tags": {"dev_type": "type-VF", "physical_network": "PhysNet1"}},
        {"count": 4, "vendor_id": "10de", "product_id": "1eb8",
         "dev_type": "type-PCI"}])
    cloud.node("c3")
    cloud.node("c4", pci_device_pools=[
        {"count": 2, "vendor_id": "15b3", "product_id": "101e",
         "dev_type": "type-VF", "remote_managed": "true"},
        {"count": 1, "vendor_id": "1af4", "product_id": "1041",
         "dev_type": "vdpa"}])
    return cloud


def pci(*requests):
    return {"pci_requests": [{"count": count, "spec": list(specs)}
                             for count, *specs in requests]}


VF = {"vendor_id": "8086", "product_id": "1520"}

PCI = {
    "no-requests": ({}, ["c1", "c2", "c3", "c4"]),
    "one-vf": (pci((1, VF)), ["c1", "c2"]),
    "two-vfs": (pci((2, VF)), ["c1"]),
    "pools-of-hosts-not-summed": (pci((3, VF)), []),
    "tag-case-insensitive": (pci((1, {"physical_network": "physnet1"})),
                             ["c1", "c2"]),
    "any-of-specs-summed": (pci((3, {"vendor_id": "10de"}, VF)), ["c2"]),
    "pf-not-asked": (pci((1, {"vendor_id": "8086",
                              "product_id": "1521"})), []),
    "pf-asked": (pci((1, {"product_id": "1521", "dev_type": "type-PF"})),
                 ["c1"]),
    "every-request": (pci((1, VF), (1, {"vendor_id": "10DE"})), ["c2"]),
    "remote-managed-not-asked": (pci((1, {"vendor_id": "15b3"})), []),
    "remote-managed-asked": (pci((1, {"vendor_id": "15b3",
                                      "remote_managed": "True"})),
                             ["c4"]),
    "vdpa-not-asked": (pci((1, {"vendor_id": "1af4"})), []),
    "vdpa-asked": (pci((1, {"vendor_id": "1af4", "dev_type": "vdpa"})),
                   ["c4"]),
    "no-spec-matches-nothing": (pci((1,)), []),
    "number-tag": (pci((2, {"numa_node": 0})), ["c1"]),
    "list-tag-subset": (pci((1, {"capabilities_network": ["tso", "rx"]})),
                        ["c1"]),
    "list-tag-not-subset": (pci((1, {"capabilities_network": ["gso"]})),
                            []),
}


@pytest.mark.parametrize("spec, expected", PCI.values(), ids=PCI.keys())
def test_pci_passthrough(devices, spec, expected):
    assert run(devices, pp.PciPassthroughFilter, spec) == expected


def test_pci_passthrough_why(devices):
    spec = {"pci_requests": [
        {"count": 1, "spec": [VF]},
        {"count": 2, "spec": [{"vendor_id": "10de"}], "alias_name": "gpu"}]}
    assert why(devices, pp.PciPassthroughFilter, spec, "c1") == (
        "PCI request gpu wants 2 devices; the host has 0 that match")
    assert why(devices, pp.PciPassthroughFilter, spec, "c3") == (
        "PCI request [{'vendor_id': '8086', 'product_id': '1520'}] wants 1 "
        "devices; the host has 0 that match")
