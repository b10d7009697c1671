"""What select_destinations returns per instance: the chosen host and its
alternates, each a Selection with its own allocation request, as Nova's
Selection objects carry them."""

import dataclasses
import json

# The allocation request format version (mappings since 1.34; the query
# features used are of 1.39).
ALLOCATION_REQUEST_VERSION = "1.39"


@dataclasses.dataclass(frozen=True)
class Selection:
    compute_node_uuid: str
    service_host: str
    nodename: str
    cell_uuid: str | None
    availability_zone: str | None
    # JSON text of {"allocations": {rp: {"resources": {rc: n}}},
    # "mappings": {suffix: [rp, ...]}}; None for a rebuild.
    allocation_request: str | None
    allocation_request_version: str | None
    limits: dict = dataclasses.field(default_factory=lambda: {
        "numa_topology": None, "vcpu": None, "disk_gb": None,
        "memory_mb": None})

    def to_dict(self):
        return dataclasses.asdict(self)

    def host_dict(self):
        """The old form (return_objects=False): host, nodename, limits."""
        return {"host": self.service_host, "nodename": self.nodename,
                "limits": dict(self.limits)}


def allocation_request_json(request):
    """JSON text of a placement.candidates AllocationRequest."""
    return json.dumps({
        "allocations": {rp: {"resources": res}
                        for rp, res in request.allocations.items()},
        "mappings": request.mappings,
    }, sort_keys=True)
