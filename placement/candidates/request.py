"""What a caller asks for: request groups and request-wide parameters, as
parsed from a GET /allocation_candidates query (placement/api does the
parsing and the per-microversion validation) or built by the scheduler.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class RequestGroup:
    """One group of a request.

    The unsuffixed group (suffix "") may be spread over the providers of
    one tree plus sharing providers, one provider per resource class;
    a suffixed (granular) group must come from a single provider.
    """

    suffix: str = ""
    # {resource class: amount}; empty for a resourceless group
    resources: dict = dataclasses.field(default_factory=dict)
    # Each set is any-of; the sets are ANDed: [{A, B}, {C}] = (A or B) and C
    required_traits: tuple = ()
    forbidden_traits: frozenset = frozenset()
    # Each set is any-of aggregate uuids; the sets are ANDed.
    member_of: tuple = ()
    forbidden_aggs: frozenset = frozenset()
    # A provider uuid: only its tree may satisfy the group.
    in_tree: str | None = None

    @property
    def use_same_provider(self):
        return bool(self.suffix)


@dataclasses.dataclass(frozen=True)
class CandidatesRequest:
    groups: tuple
    limit: int | None = None
    # None, "none" or "isolate" (isolate: no two suffixed groups on one
    # provider)
    group_policy: str | None = None
    # Traits the root of each candidate tree must have / must not have.
    root_required: frozenset = frozenset()
    root_forbidden: frozenset = frozenset()
    # Each set of suffixes must be satisfied under one common provider.
    same_subtrees: tuple = ()
    # Before microversion 1.29 only trees of a single provider (plus sharing
    # providers) can answer.
    nested_aware: bool = True

    def group(self, suffix):
        for group in self.groups:
            if group.suffix == suffix:
                return group
        raise KeyError(suffix)
