"""Small clouds and workloads for the simulation tests, built in code so
that each test shows the figures it checks."""

from cloudfile import loader
from simulation import config, runner
from simulation import workload as workload_mod


def flat_cloud(hosts, zones=None, path="<test cloud>"):
    """A cloud of flat compute hosts: ``hosts`` is {name: {class:
    total}}; ``zones`` {name: zone}."""
    zones = zones or {}
    aggregates = {f"az-{z}": {"metadata": {"availability_zone": z}}
                  for z in sorted(set(zones.values()))}
    providers = []
    for name, inventories in hosts.items():
        entry = {"name": name, "inventories": dict(inventories),
                 "compute": {"cell": "cell1"}}
        if name in zones:
            entry["aggregates"] = [f"az-{zones[name]}"]
        providers.append(entry)
    return loader.parse({"aggregates": aggregates, "providers": providers},
                        path)


def workload(flavors, events=None, groups=None, synthetic=None):
    doc = {"flavors": flavors}
    if synthetic is not None:
        doc["synthetic"] = synthetic
    else:
        doc["events"] = events
        if groups:
            doc["groups"] = groups
    return workload_mod.parse(doc, "<test workload>")


def creates(flavor, count, start=0, **extra):
    return [{"time": start + i, "action": "create",
             "instance": f"vm{start + i}", "flavor": flavor, **extra}
            for i in range(count)]


def simulate(cloud, wl, schedulers=1, seed=0, check_every=1, conf=None):
    options = runner.Options(schedulers=schedulers, seed=seed,
                             check_every=check_every)
    return runner.Simulation(conf or config.load(None), cloud, wl,
                             options).run()


def opened(cloud, conf=None):
    """A Simulation with its cloud loaded (close() it)."""
    sim = runner.Simulation(conf or config.load(None), cloud, None)
    sim.open_cloud()
    return sim
