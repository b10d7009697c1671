"""The compute options make the DiscoveryConfig discovery runs with; a
nova-compute's nova.conf gives them with Nova's names."""

import pytest
from oslo_config import cfg

from compute import conf as compute_conf


def _conf(tmp_path, text):
    path = tmp_path / "nova.conf"
    path.write_text(text)
    conf = cfg.ConfigOpts()
    compute_conf.register_opts(conf)
    conf(["--config-file", str(path)], default_config_files=[])
    return conf


def test_a_nova_compute_conf_makes_the_discovery_config(tmp_path):
    conf = _conf(tmp_path, """\
[DEFAULT]
reserved_host_memory_mb = 4096
reserved_host_disk_mb = 10240
[compute]
cpu_shared_set = 0-3
cpu_dedicated_set = 4-15,^8
numa_providers = true
sriov_physnets = ens1f0=physnet1,0000:3b:00.1=physnet2
disk_path = /var/lib/nova/instances
traits = CUSTOM_RACK_A,HW_CPU_X86_AVX2
[devices]
enabled_mdev_types = nvidia-35,nvidia-36
""")
    got = compute_conf.discovery_config(conf)
    assert got.cpu_shared_set == "0-3"
    assert got.cpu_dedicated_set == "4-15,^8"
    assert got.reserved_host_memory_mb == 4096
    assert got.reserved_host_disk_mb == 10240
    assert got.numa_providers is True
    assert got.physnets == {"ens1f0": "physnet1",
                            "0000:3b:00.1": "physnet2"}
    assert got.disk_path == "/var/lib/nova/instances"
    assert got.traits == ["CUSTOM_RACK_A", "HW_CPU_X86_AVX2"]
    assert got.enabled_mdev_types == ["nvidia-35", "nvidia-36"]
    assert conf.compute.report_interval == 10


def test_defaults_are_novas(tmp_path):
    got = compute_conf.discovery_config(_conf(tmp_path, ""))
    assert got.reserved_host_memory_mb == 512
    assert got.reserved_host_disk_mb == 0
    assert got.cpu_shared_set is None and got.cpu_dedicated_set is None
    assert got.physnets == {} and got.numa_providers is False


@pytest.mark.parametrize("item", ["ens1f0", "=physnet1", "ens1f0="],
                         ids=["no-equals", "no-interface", "no-physnet"])
def test_a_bad_physnet_item_names_the_option(tmp_path, item):
    conf = _conf(tmp_path, f"[compute]\nsriov_physnets = {item}\n")
    with pytest.raises(compute_conf.ComputeConfigError) as caught:
        compute_conf.discovery_config(conf)
    assert str(caught.value) == (
        f"[compute] sriov_physnets: {item!r} is not INTERFACE=PHYSNET or "
        "PCI_ADDRESS=PHYSNET")
