"""Hosts for the three-controller runs (issue 40): network namespaces
joined by veth pairs to one bridge, on this machine only.

    with Topology(["c1", "c2", "c3", "client"]) as net:
        net.run("c1", ["ip", "addr"])          # in namespace gantt-c1
        net.address("c2")                      # "10.77.0.12"
        net.cut("c1", "c2")                    # drop traffic both ways
        net.heal("c1", "c2")

Each host gets 10.77.0.<10 + its position>/24 and the bridge
10.77.0.1 (the root namespace: HAProxy and the machine's RabbitMQ are
reached there); nothing is routed out of the bridge. ``name`` and
``network`` keep two topologies on one machine apart. Partitions are iptables
DROP rules inside the namespaces, so that a process keeps its sockets
and sees its peer go silent, as on a real network. Needs root (CI runs
as root).
"""

import pathlib
import subprocess

NAME = "gantt"
NETWORK = "10.77.0"


def open_parents(path):
    """Let other users (the servers' own: mysql, postgres) search the
    directories above ``path``, adding the bit only (/tmp keeps its
    sticky bit)."""
    for parent in pathlib.Path(path).parents:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o005)


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True,
                          text=True)


class Topology:
    def __init__(self, hosts, name=NAME, network=NETWORK):
        self.hosts = list(hosts)
        self.name = name
        self.network = network
        self.bridge = f"{name}-br0"
        # The root namespace's address on the bridge.
        self.gateway = f"{network}.1"

    def namespace(self, host):
        return f"{self.name}-{host}"

    def address(self, host):
        if host is None:
            return self.gateway
        return f"{self.network}.{10 + self.hosts.index(host) + 1}"

    def _veth(self, host, side):
        return f"{self.name[:3]}{side}-{host}"[:15]

    def __enter__(self):
        self.tear_down()  # what an interrupted run left behind
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for host in self.hosts:
            ns = self.namespace(host)
            outside, inside = self._veth(host, "v"), "eth0"
            peer = self._veth(host, "p")
            _ip("netns", "add", ns)
            _ip("link", "add", outside, "type", "veth", "peer", "name",
                peer)
            _ip("link", "set", peer, "netns", ns)
            _ip("-n", ns, "link", "set", peer, "name", inside)
            _ip("-n", ns, "addr", "add", f"{self.address(host)}/24", "dev",
                inside)
            _ip("-n", ns, "link", "set", inside, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("link", "set", outside, "master", self.bridge)
            _ip("link", "set", outside, "up")
        return self

    def __exit__(self, *exc):
        self.tear_down()

    def tear_down(self):
        for host in self.hosts:
            _ip("netns", "del", self.namespace(host), check=False)
            _ip("link", "del", self._veth(host, "v"), check=False)
        _ip("link", "del", self.bridge, check=False)

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

    def _block_rules(self, address, port):
        if address is None and port is None:
            # Everything on the wire; the namespace's loopback still works.
            return [["OUTPUT", "-o", "eth0"], ["INPUT", "-i", "eth0"]]
        out, back = ["OUTPUT"], ["INPUT"]
        if address is not None:
            out += ["-d", address]
            back += ["-s", address]
        if port is not None:
            out += ["-p", "tcp", "--dport", str(port)]
            back += ["-p", "tcp", "--sport", str(port)]
        return [out, back]

    def block(self, host, address=None, port=None):
        """Inside ``host``: drop its traffic to and from ``address``
        (default: every address; the gateway is the root namespace) and
        ``port`` (default: every port). With neither, the host is cut
        off from the bridge entirely."""
        for rule in self._block_rules(address, port):
            self.run(host, ["iptables", "-I", *rule, "-j", "DROP"])

    def unblock(self, host, address=None, port=None):
        for rule in self._block_rules(address, port):
            self.run(host, ["iptables", "-D", *rule, "-j", "DROP"],
                     check=False)
