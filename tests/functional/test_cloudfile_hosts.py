"""The host records a cloud file's load writes (cloudfile.hosts): a
compute node's figures add up its tree, its instances are the consumers
of type INSTANCE (or untyped) with an allocation in its tree, counted
once however many of its providers they use."""

import pytest
import yaml

from cloudfile import loader
from scheduler import host_reads

CLOUD = {
    "aggregates": {"shared": {}},
    "providers": [
        {"name": "cn1", "compute": {},
         "inventories": {"DISK_GB": {"total": 100, "reserved": 10}},
         "children": [
             {"name": "cn1-numa0",
              "inventories": {"VCPU": 8, "MEMORY_MB": {
                  "total": 4096, "reserved": 512}},
              "children": [{"name": "cn1-numa0-pf",
                            "inventories": {"SRIOV_NET_VF": 8}}]},
             {"name": "cn1-numa1",
              "inventories": {"VCPU": 8, "MEMORY_MB": 4096}}]},
        {"name": "cn2", "compute": {}, "aggregates": ["shared"],
         "inventories": {"VCPU": 4, "MEMORY_MB": 2048}},
        {"name": "not-a-node",
         "inventories": {"VCPU": 4, "DISK_GB": 1000}}],
    "allocations": [
        # On three providers of cn1's tree: one instance of cn1.
        {"consumer": "vm-1", "project_id": "p1", "user_id": "u",
         "consumer_type": "INSTANCE",
         "resources": {"cn1-numa0": {"VCPU": 2, "MEMORY_MB": 1024},
                       "cn1-numa0-pf": {"SRIOV_NET_VF": 1},
                       "cn1": {"DISK_GB": 20}}},
        # Untyped: an instance too.
        {"consumer": "vm-2", "project_id": "p2", "user_id": "u",
         "resources": {"cn1-numa1": {"VCPU": 1}}},
        {"consumer": "vm-4", "project_id": "p2", "user_id": "u",
         "consumer_type": "INSTANCE", "resources": {"cn2": {"VCPU": 1}}},
        # A migration holds resources but is no instance of the host.
        {"consumer": "migration-1", "project_id": "p1", "user_id": "u",
         "consumer_type": "MIGRATION",
         "resources": {"cn2": {"VCPU": 2, "MEMORY_MB": 512}}},
        # Off every compute node.
        {"consumer": "vm-3", "project_id": "p3", "user_id": "u",
         "consumer_type": "INSTANCE",
         "resources": {"not-a-node": {"VCPU": 1}}}]}


@pytest.fixture
def loaded(sqlite_store, tmp_path):
    path = tmp_path / "cloud.yaml"
    path.write_text(yaml.safe_dump(CLOUD))
    summary = loader.load(sqlite_store, loader.read(str(path)))
    assert (summary.hosts, summary.host_aggregates) == (2, 1)
    return sqlite_store


def test_figures_add_up_the_tree(loaded):
    nodes = {n.host: n for n in host_reads.compute_nodes(loaded)}
    cn1, cn2 = nodes["cn1"], nodes["cn2"]
    assert (cn1.vcpus, cn1.vcpus_used) == (16, 3)
    assert (cn1.memory_mb, cn1.memory_mb_used) == (8192, 512 + 1024)
    assert cn1.free_ram_mb == 8192 - 512 - 1024
    assert (cn1.local_gb, cn1.local_gb_used) == (100, 10 + 20)
    # The migration's usage counts.
    assert (cn2.vcpus, cn2.vcpus_used, cn2.memory_mb_used) == (4, 3, 512)


def test_instances_of_each_node(loaded):
    instances = host_reads.instances(loaded)
    assert sorted(instances) == ["cn1", "cn2"]
    vm1, vm2, vm4 = (loader.stable_uuid("consumer", name)
                     for name in ("vm-1", "vm-2", "vm-4"))
    assert sorted(instances["cn1"]) == sorted([vm1, vm2])
    assert list(instances["cn2"]) == [vm4]
    assert instances["cn1"][vm1].project_id == "p1"
    nodes = {n.host: n for n in host_reads.compute_nodes(loaded)}
    assert nodes["cn1"].stats == {"num_instances": "2", "io_workload": "0"}
    assert nodes["cn2"].stats["num_instances"] == "1"


def test_host_aggregate_members(loaded):
    [agg] = host_reads.aggregates(loaded).values()
    assert (agg.name, agg.hosts) == ("shared", {"cn2"})
