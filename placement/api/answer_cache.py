"""Answers of GET /allocation_candidates, reused while nothing they were
computed from has changed.

An answer is a function of the request and of the candidates index, whose
version moves on every change it takes in: commits of this process, and
other processes' commits, which it reads from the store's provider_changes
log when it syncs (including sequence numbers that commit out of order).
An answer is stored with the index version read, after a sync, *before*
it was computed, and served again only while a fresh sync leaves the
version (and this process's count of resource class and trait changes)
the same: a write that lands while an answer is being computed moves the
version, so that answer is never served. Identical queries between
writes, which is what schedulers send for servers of one flavor, then cost
one indexed read instead of a search and a large JSON document.

Answers depend on nothing else (policy is checked before the cache is
asked), except with [placement] randomize_allocation_candidates, where
the cache is off.
"""

import collections
import threading


class AnswerCache:
    def __init__(self, store, engine, entries, max_bytes=64 * 2**20):
        self.store = store
        self.engine = engine
        self.entries = entries
        self.max_bytes = max_bytes
        self._answers = collections.OrderedDict()
        self._bytes = 0
        self._catalog_changes = 0
        self._lock = threading.Lock()
        store.add_listener(self._on_commit)

    def close(self):
        self.store.remove_listener(self._on_commit)

    def _on_commit(self, changes):
        if changes.catalog:
            with self._lock:
                self._catalog_changes += 1

    def position(self):
        """Where the data stands now (read before computing)."""
        return self.engine.state_version(), self._catalog_changes

    def get(self, key, position):
        with self._lock:
            found = self._answers.get(key)
            if found is None or found[0] != position:
                return None
            self._answers.move_to_end(key)
            return found[1]

    def put(self, key, position, body):
        if len(body) > self.max_bytes:
            return
        with self._lock:
            old = self._answers.pop(key, None)
            if old is not None:
                self._bytes -= len(old[1])
            self._answers[key] = (position, body)
            self._bytes += len(body)
            while (len(self._answers) > self.entries
                   or self._bytes > self.max_bytes):
                _key, (_pos, dropped) = self._answers.popitem(last=False)
                self._bytes -= len(dropped)
