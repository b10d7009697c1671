"""What select_destinations returns per instance: the chosen host and its
alternates, each a Selection with its own allocation request, as Nova's
Selection objects carry them."""

import dataclasses

import orjson

# The placement microversion a caller claims an allocation request at
# (the body has mappings since 1.34). Nova 34's scheduler says 1.36 and
# its conductor claims at that version; from 1.38 a claim would also need
# a consumer_type, which Nova's alternates path does not send.
ALLOCATION_REQUEST_VERSION = "1.36"


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
        # Nova's legacy reply leaves unset limits out: {} when none is.
        return {"host": self.service_host, "nodename": self.nodename,
                "limits": {k: v for k, v in self.limits.items()
                           if v is not None}}


def allocation_request_json(request):
    """JSON text of a placement.candidates AllocationRequest (compact;
    orjson: a tenth of json's time, and every decision encodes one per
    selection)."""
    return orjson.dumps({
        "allocations": {rp: {"resources": res}
                        for rp, res in request.allocations.items()},
        "mappings": request.mappings,
    }, option=orjson.OPT_SORT_KEYS).decode()
