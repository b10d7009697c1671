"""Name <-> id caches of resource classes and traits.

Ids are never reused (custom resource class ids come from a counter, trait
ids from an autoincrement that does not recycle), so a cached pair can only
be missing, never wrong: a miss reloads the whole catalog (a few hundred
rows). A name deleted by another process makes the write that uses it fail
its foreign key; the store then clears this cache and retries, and the
retry reports the name as unknown.
"""

import threading

import sqlalchemy as sa

from placement import errors
from placement.db import tables


class Catalog:
    def __init__(self):
        self._lock = threading.Lock()
        self._rc_ids = {}
        self._rc_names = {}
        self._trait_ids = {}
        self._trait_names = {}

    def clear(self):
        with self._lock:
            self._rc_ids, self._rc_names = {}, {}
            self._trait_ids, self._trait_names = {}, {}

    def _reload(self, conn):
        rcs = conn.execute(sa.select(tables.resource_classes.c.id,
                                     tables.resource_classes.c.name)).all()
        trs = conn.execute(sa.select(tables.traits.c.id,
                                     tables.traits.c.name)).all()
        with self._lock:
            self._rc_ids = {name: id_ for id_, name in rcs}
            self._rc_names = dict(rcs)
            self._trait_ids = {name: id_ for id_, name in trs}
            self._trait_names = dict(trs)

    # resource classes

    def rc_id(self, txn, name):
        rc_id = self._rc_ids.get(name)
        if rc_id is None:
            self._reload(txn.conn)
            rc_id = self._rc_ids.get(name)
            if rc_id is None:
                raise errors.ResourceClassNotFound(name)
        return rc_id

    def rc_ids(self, txn, names):
        return {name: self.rc_id(txn, name) for name in names}

    def rc_name(self, txn, rc_id):
        name = self._rc_names.get(rc_id)
        if name is None:
            self._reload(txn.conn)
            name = self._rc_names[rc_id]
        return name

    def rc_names(self, txn):
        """Every resource class name, standard ones first, by id."""
        self._reload(txn.conn)
        return [self._rc_names[i] for i in sorted(self._rc_names)]

    # traits

    def trait_ids(self, txn, names):
        """{name: id} for ``names``; TraitNotFound lists the unknown ones."""
        found = {n: self._trait_ids.get(n) for n in names}
        if None in found.values():
            self._reload(txn.conn)
            found = {n: self._trait_ids.get(n) for n in names}
            missing = [n for n, i in found.items() if i is None]
            if missing:
                raise errors.TraitNotFound(missing)
        return found

    def trait_name(self, txn, trait_id):
        name = self._trait_names.get(trait_id)
        if name is None:
            self._reload(txn.conn)
            name = self._trait_names[trait_id]
        return name

    def forget_rc(self, name):
        with self._lock:
            rc_id = self._rc_ids.pop(name, None)
            self._rc_names.pop(rc_id, None)

    def forget_trait(self, name):
        with self._lock:
            trait_id = self._trait_ids.pop(name, None)
            self._trait_names.pop(trait_id, None)
