"""The candidates engine: a provider index kept in sync with a store, and
searches against it."""

import dataclasses
import random

from placement.candidates import index as index_mod
from placement.candidates import names as names_mod
from placement.candidates import providers_filter
from placement.candidates import request as request_mod
from placement.candidates import search as search_mod


class CandidatesEngine:
    def __init__(self, store, conf=None, rng=None):
        self.store = store
        self.index = index_mod.ProviderIndex(store)
        conf = conf or store.conf
        self.options = search_mod.Options(
            max_candidates=conf.placement.max_allocation_candidates,
            breadth_first=(
                conf.placement.allocation_candidates_generation_strategy
                == "breadth-first"),
            randomize=conf.placement.randomize_allocation_candidates,
            rng=rng or random.Random())

    def close(self):
        self.index.close()

    def find(self, request, lean=False, sync=True):
        """A CandidateResult for ``request`` (a CandidatesRequest) on the
        current state of the database. Unknown resource classes or traits
        raise ResourceClassNotFound / TraitNotFound. ``lean``: a result
        without provider summaries, for callers that only claim.
        ``sync=False``: search the index as it stands (the caller has
        just brought it up to date with ``index.sync_in``)."""
        names = names_mod.resolve(self.store, request)
        options = self.options
        if lean:
            options = dataclasses.replace(options, lean=True)
        with self.index.lock:
            if sync:
                self.index.sync()
            return search_mod.search(self.index, request, names, options)

    def state_version(self):
        """A number that moves whenever the data searches read changes,
        after bringing the index up to date: equal numbers mean equal
        answers."""
        with self.index.lock:
            self.index.sync()
            return self.index.version

    def provider_ids(self, filters):
        """Internal ids of the providers matching ``filters`` (a
        ProviderFilters), oldest first."""
        request = request_mod.CandidatesRequest(groups=(
            request_mod.RequestGroup(
                resources=filters.resources,
                required_traits=filters.required_traits,
                forbidden_traits=filters.forbidden_traits),))
        names = names_mod.resolve(self.store, request)
        with self.index.lock:
            self.index.sync()
            return providers_filter.matching_ids(self.index, filters, names)
