"""Names of a request resolved to the ids the index uses."""


class Resolved:
    """Resource class and trait ids for the names of one request; an
    unknown name raises ResourceClassNotFound / TraitNotFound."""

    def __init__(self, txn, request):
        catalog = txn.catalog
        rcs = set()
        traits = set(request.root_required) | set(request.root_forbidden)
        for group in request.groups:
            rcs.update(group.resources)
            for any_of in group.required_traits:
                traits.update(any_of)
            traits.update(group.forbidden_traits)
        self._rc = {rc: catalog.rc_id(txn, rc) for rc in sorted(rcs)}
        self._trait = catalog.trait_ids(txn, traits) if traits else {}

    def rc(self, name):
        return self._rc[name]

    def traits(self, names):
        return [self._trait[n] for n in names]


class _Miss(Exception):
    pass


class _CacheOnly:
    """Stands in for a transaction while every name is in the catalog
    cache; touching the database means a miss."""

    def __init__(self, store):
        self.catalog = store.catalog

    @property
    def conn(self):
        raise _Miss()


def resolve(store, request):
    """Resolved names; a read transaction only when the catalog cache
    lacks one of them."""
    try:
        return Resolved(_CacheOnly(store), request)
    except _Miss:
        return store.read(Resolved, request)
