"""SimpleCIDRAffinityFilter: with the hint build_near_host_ip, only hosts
whose host_ip lies in that address's network pass. The network is the
address followed by the hint cidr (default "/24"), glued together as
text as Nova does, so cidr must carry its slash. Host bits in the address
are ignored (10.1.2.3/24 means 10.1.2.0/24). A host with no host_ip
never passes."""

import ipaddress

import numpy as np

from filters import base


class SimpleCIDRAffinityFilter(base.BaseFilter):
    name = "SimpleCIDRAffinityFilter"
    # Host addresses do not change within a request.
    run_filter_once_per_request = True

    @staticmethod
    def _network(request):
        """The wanted network; None without the hint; ValueError when the
        hint is not a network."""
        near = request.hint("build_near_host_ip")
        if not near:
            return None
        return ipaddress.ip_network(near + request.hint("cidr", "/24"),
                                    strict=False)

    @staticmethod
    def _inside(network, host_ip):
        try:
            return ipaddress.ip_address(host_ip) in network
        except ValueError:  # None or not an address
            return False

    def mask(self, request, rows):
        try:
            network = self._network(request)
        except ValueError:
            return np.zeros(len(rows), bool)
        if network is None:
            return np.ones(len(rows), bool)
        # One address per compute node record: no column to vectorise on.
        nodes = request.table.nodes
        return np.fromiter((self._inside(network, nodes[r].host_ip)
                            for r in rows), bool, count=len(rows))

    def why(self, request, row):
        try:
            network = self._network(request)
        except ValueError as exc:
            return f"hints build_near_host_ip and cidr: {exc}"
        host_ip = request.table.node(row).host_ip
        if host_ip is None:
            return "host reports no host_ip"
        return f"host_ip {host_ip} is outside {network}"
