"""Cloud templates: what a compact template expands to, and its errors."""

import pytest

from cloudfile import loader
from simulation import cloud


def _template(**hosts):
    return {"template": {
        "shapes": {"S": {"inventories": {
            "VCPU": {"total": 33, "allocation_ratio": 4.0},
            "MEMORY_MB": {"total": 65537, "reserved": 3},
            "DISK_GB": 1000}, "numa_nodes": 2}},
        "hosts": [{"count": 6, "shape": "S", **hosts}]}}


def test_hosts_go_round_robin_over_zones_and_cells():
    c = cloud.parse(_template(zones=3, cells=["c1", "c2"], prefix="cn"))
    names = [h.name for h in c.providers if h.compute is not None]
    assert names == [f"cn{i}" for i in range(1, 7)]
    zone_of = {}
    for spec in c.providers:
        if spec.compute is not None:
            zone_of[spec.name] = spec.aggregates
    assert len({a for aggs in zone_of.values() for a in aggs}) == 3
    # cn1 and cn4 share a zone; cn1 and cn2 do not.
    assert zone_of["cn1"] == zone_of["cn4"] != zone_of["cn2"]
    meta = {a.name: a.metadata for a in c.aggregates}
    assert meta["az-1"] == {"availability_zone": "az-1"}
    cells = {h.host: h.cell_uuid for h in c.hosts}
    assert cells["cn1"] == cells["cn3"] != cells["cn2"]


def test_numa_nodes_split_cpus_and_memory_and_keep_disk_on_the_host():
    c = cloud.parse(_template(prefix="h"))
    by_name = {p.name: p for p in c.providers}
    root = by_name["h1"]
    assert [i.resource_class for i in root.inventories] == ["DISK_GB"]
    kids = [by_name["h1-numa0"], by_name["h1-numa1"]]
    assert all(k.parent == "h1" for k in kids)
    vcpu = [next(i for i in k.inventories if i.resource_class == "VCPU")
            for k in kids]
    # 33 does not halve: the first node gets the odd one.
    assert [v.total for v in vcpu] == [17, 16]
    assert all(v.allocation_ratio == 4.0 for v in vcpu)
    mem = [next(i for i in k.inventories
                if i.resource_class == "MEMORY_MB") for k in kids]
    assert [m.total for m in mem] == [32769, 32768]
    assert [m.reserved for m in mem] == [2, 1]


def test_a_cloud_file_passes_through_unchanged(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("providers:\n  - name: h1\n    inventories: {VCPU: 4}\n"
                    "    compute: {}\n")
    c = cloud.read(str(path))
    assert [p.name for p in c.providers] == ["h1"]
    assert c.hosts[0].host == "h1"


@pytest.mark.parametrize("doc, field, words", [
    ({"template": {"hosts": [{"count": 2, "shape": "X"}]}},
     "template.hosts[0].shape", "unknown shape"),
    ({"template": {"hosts": [{"count": 0, "shape": {"inventories": {
        "VCPU": 1}}}]}}, "template.hosts[0].count", "minimum"),
    ({"template": {"hosts": []}}, "template.hosts", "non-empty"),
    ({"template": {"hosts": [{"count": 1, "shape": {"inventories": {
        "VCPU": 1}}, "colour": "red"}]}}, "template.hosts[0]",
     "colour"),
    ({"template": {"hosts": [
        {"count": 2, "shape": {"inventories": {"VCPU": 1}}, "prefix": "a"},
        {"count": 2, "shape": {"inventories": {"VCPU": 1}},
         "prefix": "a"}]}}, "template.hosts[1].prefix", "used twice"),
    # Checked by the cloud file rules once expanded.
    ({"template": {"hosts": [{"count": 1, "shape": {"inventories": {
        "VCPU": {"total": -1}}}}]}}, "providers[0].inventories.VCPU",
     ""),
], ids=["unknown-shape", "zero-count", "no-hosts", "unknown-key",
        "names-twice", "bad-inventory"])
def test_template_errors_name_the_field(doc, field, words):
    with pytest.raises(loader.CloudFileError) as caught:
        cloud.parse(doc, "t.yaml")
    assert caught.value.path == "t.yaml"
    assert caught.value.field.startswith(field)
    assert words in caught.value.message


def test_unreadable_files_name_the_path(tmp_path):
    with pytest.raises(loader.CloudFileError) as caught:
        cloud.read(str(tmp_path / "missing.yaml"))
    assert "missing.yaml" in str(caught.value)
    bad = tmp_path / "bad.yaml"
    bad.write_text("template: [unclosed\n")
    with pytest.raises(loader.CloudFileError) as caught:
        cloud.read(str(bad))
    assert "not valid YAML" in str(caught.value)
