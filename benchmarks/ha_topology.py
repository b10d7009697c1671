"""Hosts for the three-controller runs (issue 40): network namespaces
joined by veth pairs to one bridge, on this machine only.

    with Topology(["c1", "c2", "c3", "client"]) as net:
        net.run("c1", ["ip", "addr"])          # in namespace gantt-c1
        net.address("c2")                      # "10.77.0.12"
        net.cut("c1", "c2")                    # drop traffic both ways
        net.heal("c1", "c2")

Each host gets 10.77.0.<10 + its position>/24 and the bridge
10.77.0.1; nothing is routed out of the bridge. Partitions are iptables
DROP rules inside the namespaces, so that a process keeps its sockets
and sees its peer go silent, as on a real network. Needs root (CI runs
as root).
"""

import subprocess

PREFIX = "gantt-"
BRIDGE = "gantt-br0"
NETWORK = "10.77.0"


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True,
                          text=True)


class Topology:
    def __init__(self, hosts):
        self.hosts = list(hosts)

    def namespace(self, host):
        return PREFIX + host

    def address(self, host):
        return f"{NETWORK}.{10 + self.hosts.index(host) + 1}"

    def __enter__(self):
        self.tear_down()  # what an interrupted run left behind
        _ip("link", "add", BRIDGE, "type", "bridge")
        _ip("addr", "add", f"{NETWORK}.1/24", "dev", BRIDGE)
        _ip("link", "set", BRIDGE, "up")
        for host in self.hosts:
            ns = self.namespace(host)
            outside, inside = f"gv-{host}"[:15], "eth0"
            _ip("netns", "add", ns)
            _ip("link", "add", outside, "type", "veth", "peer", "name",
                f"gp-{host}"[:15])
            _ip("link", "set", f"gp-{host}"[:15], "netns", ns)
            _ip("-n", ns, "link", "set", f"gp-{host}"[:15], "name", inside)
            _ip("-n", ns, "addr", "add", f"{self.address(host)}/24", "dev",
                inside)
            _ip("-n", ns, "link", "set", inside, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("link", "set", outside, "master", BRIDGE)
            _ip("link", "set", outside, "up")
        return self

    def __exit__(self, *exc):
        self.tear_down()

    def tear_down(self):
        for host in self.hosts:
            _ip("netns", "del", self.namespace(host), check=False)
            _ip("link", "del", f"gv-{host}"[:15], check=False)
        _ip("link", "del", BRIDGE, check=False)

    def command(self, host, argv):
        """``argv`` as run inside ``host``'s namespace."""
        return ["ip", "netns", "exec", self.namespace(host), *argv]

    def run(self, host, argv, **kwargs):
        kwargs.setdefault("check", True)
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        return subprocess.run(self.command(host, argv), **kwargs)

    def popen(self, host, argv, **kwargs):
        return subprocess.Popen(self.command(host, argv), **kwargs)

    def cut(self, host, peer):
        """Drop everything between ``host`` and ``peer``, both ways."""
        for a, b in ((host, peer), (peer, host)):
            self.run(a, ["iptables", "-I", "INPUT", "-s", self.address(b),
                         "-j", "DROP"])
            self.run(a, ["iptables", "-I", "OUTPUT", "-d", self.address(b),
                         "-j", "DROP"])

    def heal(self, host, peer):
        for a, b in ((host, peer), (peer, host)):
            self.run(a, ["iptables", "-D", "INPUT", "-s", self.address(b),
                         "-j", "DROP"], check=False)
            self.run(a, ["iptables", "-D", "OUTPUT", "-d", self.address(b),
                         "-j", "DROP"], check=False)
